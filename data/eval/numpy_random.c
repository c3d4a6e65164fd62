/* numpy_random.c: NumPy's SeedSequence, PCG64 and bounded-integer sampling (numpy_random.h). */
#include "numpy_random.h"

#include "check.h"

/* SeedSequence's hashing constants (from the randutils seed_seq design NumPy adopted). */
enum {
    POOL_SIZE = 4,
    XSHIFT = 16,
};
static const uint32_t INIT_A = 0x43b0d7e5, MULT_A = 0x931e8875;
static const uint32_t INIT_B = 0x8b51f9dd, MULT_B = 0x58f38ded;
static const uint32_t MIX_MULT_L = 0xca01f9dd, MIX_MULT_R = 0x4973f715;

static uint32_t hashmix(uint32_t value, uint32_t *hash_const) {
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    value ^= value >> XSHIFT;
    return value;
}

static uint32_t mix(uint32_t x, uint32_t y) {
    uint32_t result = MIX_MULT_L * x - MIX_MULT_R * y;
    result ^= result >> XSHIFT;
    return result;
}

void numpy_seed_sequence(uint64_t seed, uint32_t *words, int n_words) {
    /* The integer seed as little-endian 32-bit words (at least one). */
    uint32_t entropy[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    int n_entropy = seed >> 32 ? 2 : 1;

    uint32_t pool[POOL_SIZE];
    uint32_t hash_const = INIT_A;
    for (int i = 0; i < POOL_SIZE; i++)
        pool[i] = hashmix(i < n_entropy ? entropy[i] : 0, &hash_const);
    for (int src = 0; src < POOL_SIZE; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], &hash_const));

    hash_const = INIT_B;
    for (int i = 0; i < n_words; i++) {
        uint32_t v = pool[i % POOL_SIZE];
        v ^= hash_const;
        hash_const *= MULT_B;
        v *= hash_const;
        v ^= v >> XSHIFT;
        words[i] = v;
    }
}

#define PCG_MULTIPLIER                                                                             \
    (((unsigned __int128)0x2360ED051FC65DA4ULL << 64) | (unsigned __int128)0x4385DF649FCCF645ULL)

static void pcg_step(NumpyPcg64 *g) { g->state = g->state * PCG_MULTIPLIER + g->inc; }

void numpy_pcg64_seed(NumpyPcg64 *g, uint64_t seed) {
    uint32_t w[8]; /* generate_state(4, uint64): pairs of words, low word first */
    numpy_seed_sequence(seed, w, 8);
    uint64_t v[4];
    for (int i = 0; i < 4; i++) v[i] = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
    unsigned __int128 initstate = ((unsigned __int128)v[0] << 64) | v[1];
    unsigned __int128 initseq = ((unsigned __int128)v[2] << 64) | v[3];
    g->state = 0;
    g->inc = (initseq << 1) | 1;
    pcg_step(g);
    g->state += initstate;
    pcg_step(g);
    g->has_uint32 = false;
    g->uinteger = 0;
}

uint64_t numpy_pcg64_next64(NumpyPcg64 *g) {
    pcg_step(g);
    uint64_t x = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
    unsigned rot = (unsigned)(g->state >> 122);
    return (x >> rot) | (x << ((64 - rot) & 63));
}

uint32_t numpy_pcg64_next32(NumpyPcg64 *g) {
    if (g->has_uint32) {
        g->has_uint32 = false;
        return g->uinteger;
    }
    uint64_t next = numpy_pcg64_next64(g);
    g->has_uint32 = true;
    g->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)next;
}

uint64_t numpy_pcg64_below(NumpyPcg64 *g, uint64_t n) {
    CHECK(n >= 1 && n <= ((uint64_t)1 << 32), "bounded draw needs 1 <= n <= 2^32, got %llu",
          (unsigned long long)n);
    if (n == 1) return 0;
    if (n == ((uint64_t)1 << 32)) return numpy_pcg64_next32(g);
    uint32_t range = (uint32_t)n;
    uint64_t m = (uint64_t)numpy_pcg64_next32(g) * range;
    uint32_t leftover = (uint32_t)m;
    if (leftover < range) {
        uint32_t threshold = (uint32_t)(-range) % range; /* 2^32 mod range */
        while (leftover < threshold) {
            m = (uint64_t)numpy_pcg64_next32(g) * range;
            leftover = (uint32_t)m;
        }
    }
    return m >> 32;
}
