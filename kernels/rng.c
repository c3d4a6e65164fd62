/* rng.c: the sequential helpers of rng.h. */
#include "rng.h"

#include <math.h>

uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // reject the biased tail
    uint64_t x;
    do x = rng_next(r);
    while (x >= limit);
    return x % n;
}

double rng_normal(Rng *r) {
    double u1 = rng_next_double(r), u2 = rng_next_double(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void rng_shuffle_u32(Rng *r, uint32_t *v, uint64_t n) {
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = rng_below(r, i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}
