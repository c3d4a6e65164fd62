/* hash.h: a fast 64-bit hash of byte strings, for pair deduplication, the SentencePiece model
 * fingerprint and the prepare manifest keys. Each 8-byte word is folded in through the SplitMix64
 * finalizer (a bijection), so two inputs of equal length that differ in a single word never
 * collide; the length is mixed in first, so concatenations of different splits differ too.
 * Not cryptographic: a 64-bit value, so n distinct strings collide with probability ~n^2 / 2^65. */
#ifndef NMT_DATA_HASH_H
#define NMT_DATA_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"

static inline uint64_t hash64(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = rng_mix64(seed ^ ((uint64_t)len * 0x9E3779B97F4A7C15ull));
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        h = rng_mix64(h ^ word);
    }
    uint64_t tail = 0;
    memcpy(&tail, p, len);
    return rng_mix64(h ^ tail ^ 0x5851F42D4C957F2Dull);
}

#endif
