/* numpy_random.h: NumPy's default random generator, bit for bit, so that bootstrap resampling
 * draws the same sample indices as `numpy.random.default_rng(seed).choice(n, size)`:
 * SeedSequence (entropy pool hashing) seeds a PCG64 (128-bit LCG, XSL-RR output), and bounded
 * integers use Lemire's multiply-and-reject on 32-bit draws when the range fits 32 bits. */
#ifndef NMT_NUMPY_RANDOM_H
#define NMT_NUMPY_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct NumpyPcg64 {
    unsigned __int128 state, inc;
    bool has_uint32;   /* the high half of the last 64-bit draw is still unused */
    uint32_t uinteger; /* that high half */
} NumpyPcg64;

/* SeedSequence(seed).generate_state(n_words, uint32) for a non-negative integer seed. */
void numpy_seed_sequence(uint64_t seed, uint32_t *words, int n_words);
/* PCG64(SeedSequence(seed)), i.e. the bit generator of numpy.random.default_rng(seed). */
void numpy_pcg64_seed(NumpyPcg64 *g, uint64_t seed);
uint64_t numpy_pcg64_next64(NumpyPcg64 *g);
uint32_t numpy_pcg64_next32(NumpyPcg64 *g);
/* Generator.integers(0, n) for 1 <= n <= 2^32 (also what Generator.choice(n) draws). */
uint64_t numpy_pcg64_below(NumpyPcg64 *g, uint64_t n);

#endif
