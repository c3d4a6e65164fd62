/* rng.h: counter-based random numbers.
 * rng_u64(key, counter) is a pure function (the SplitMix64 finalizer over key + counter * golden
 * ratio), so any value can be regenerated from its coordinates: dropout masks are recomputed in
 * backward from (seed, step, site, index) instead of being stored, and results never depend on
 * which thread drew them. Rng is a sequential stream over the same function whose whole state
 * (key, counter) is two integers, saved in checkpoints for exact resume. */
#ifndef NMT_RNG_H
#define NMT_RNG_H

#include <stdint.h>

static inline uint64_t rng_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rng_u64(uint64_t key, uint64_t counter) {
    return rng_mix64(key + counter * 0x9E3779B97F4A7C15ull);
}

/* A key for an independent stream derived from a seed and up to three coordinates. */
static inline uint64_t rng_key(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
    return rng_mix64(rng_mix64(rng_mix64(seed ^ 0x6A09E667F3BCC909ull) + a) + b) + c;
}

/* Uniform in [0, 1) with 24 bits: exact in float. */
static inline float rng_uniform(uint64_t key, uint64_t counter) {
    return (float)(rng_u64(key, counter) >> 40) * (1.0f / 16777216.0f);
}

typedef struct Rng {
    uint64_t key;
    uint64_t counter;
} Rng;

static inline Rng rng_init(uint64_t seed, uint64_t stream) {
    return (Rng){rng_key(seed, stream, 0, 0), 0};
}
static inline uint64_t rng_next(Rng *r) { return rng_u64(r->key, r->counter++); }
static inline double rng_next_double(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
uint64_t rng_below(Rng *r, uint64_t n);       // uniform in [0, n), unbiased
double rng_normal(Rng *r);                    // standard normal (Box-Muller)
void rng_shuffle_u32(Rng *r, uint32_t *v, uint64_t n);  // Fisher-Yates

#endif
