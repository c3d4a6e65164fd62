/* gemm_pack.c: the scalar packers of the blocked GEMM (layouts in ukernel.h), for micro-kernels
 * without vectorized ones. Each loop walks the source contiguously. */
#include <stddef.h>
#include <string.h>

#include "ukernel.h"

static int min_i(int a, int b) { return a < b ? a : b; }
static int round_up_i(int n, int to) { return (n + to - 1) / to * to; }

void pack_a_scalar(const Ukernel *uk, int mc, int kc, const float *a, long lda, bool ta,
                   float *out) {
    const int MR = uk->MR, KB = uk->KB, kp = round_up_i(kc, KB);
    for (int i0 = 0; i0 < mc; i0 += MR) {
        int h = min_i(MR, mc - i0);
        float *dst = out + (size_t)i0 * kp;  // (kp/KB, MR, KB)
        memset(dst, 0, (size_t)kp * MR * sizeof(float));
        if (ta) {  // walk each source row p contiguously
            for (int p = 0; p < kc; p++)
                for (int i = 0; i < h; i++)
                    dst[(size_t)(p / KB) * KB * MR + i * KB + p % KB] = a[(size_t)p * lda + i0 + i];
        } else {
            for (int i = 0; i < h; i++)
                for (int p = 0; p < kc; p++)
                    dst[(size_t)(p / KB) * KB * MR + i * KB + p % KB] = a[(size_t)(i0 + i) * lda + p];
        }
    }
}

void pack_b_scalar(const Ukernel *uk, int kc, int nc, const float *b, long ldb, bool tb,
                   float *out) {
    const int NR = uk->NR;
    for (int j0 = 0; j0 < nc; j0 += NR) {
        int w = min_i(NR, nc - j0);
        float *dst = out + (size_t)j0 * kc;  // (kc, NR)
        if (!tb) {
            for (int p = 0; p < kc; p++) {
                memcpy(dst + (size_t)p * NR, b + (size_t)p * ldb + j0, (size_t)w * sizeof(float));
                memset(dst + (size_t)p * NR + w, 0, (size_t)(NR - w) * sizeof(float));
            }
        } else {
            for (int j = 0; j < w; j++) {
                const float *src = b + (size_t)(j0 + j) * ldb;  // (kc,)
                for (int p = 0; p < kc; p++) dst[(size_t)p * NR + j] = src[p];
            }
            for (int p = 0; p < kc; p++)
                memset(dst + (size_t)p * NR + w, 0, (size_t)(NR - w) * sizeof(float));
        }
    }
}
