/* gemm_openblas.c: cblas_sgemm of OpenBLAS's OpenMP build. That build runs single-threaded when
 * called inside an OpenMP parallel region, so the same call serves as the serial entry point.
 * Also names the kernel set ("core") OpenBLAS picked for this CPU and warns when that is a
 * fallback far below what the CPU can do (OpenBLAS 0.3.21 does not recognise some newer CPUs
 * and then uses its SSE3 "Prescott" kernels). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "cpu.h"
#include "gemm_backends.h"

static void sgemm_openblas(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M,
                N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static char openblas_detail[128];  // filled by gemm_openblas_get
static const GemmImpl gemm_openblas = {"openblas", openblas_detail, sgemm_openblas,
                                       sgemm_openblas, NULL, NULL, NULL};

const GemmImpl *gemm_openblas_get(void) {
    if (!openblas_detail[0]) {
        char version[32] = "";  // OPENBLAS_VERSION is " OpenBLAS 0.3.21 "
        sscanf(OPENBLAS_VERSION, " OpenBLAS %31s", version);
        snprintf(openblas_detail, sizeof openblas_detail, "OpenBLAS %s, OpenMP build, core %s",
                 version, openblas_get_corename());
    }
    return &gemm_openblas;
}

static bool core_is_one_of(const char *core, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (!strcasecmp(core, names[i])) return true;
    return false;
}

const char *gemm_openblas_warning(void) {
    static const char *const avx512_cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    static const char *const avx2_cores[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                             "SapphireRapids"};
    static char text[256];
    const char *core = openblas_get_corename(), *want = NULL;
    if (cpu_has_avx512() && !core_is_one_of(core, avx512_cores, 3))
        want = "SkylakeX";
    else if (cpu_has_avx2_fma() && !core_is_one_of(core, avx2_cores, 5))
        want = "Haswell";
    if (!want) return NULL;
    const char *forced = getenv("OPENBLAS_CORETYPE");
    char why[96];
    if (forced && *forced)
        snprintf(why, sizeof why, "because the environment sets OPENBLAS_CORETYPE=%s; unset it or",
                 forced);
    else
        snprintf(why, sizeof why, "(it does not recognise it);");
    snprintf(text, sizeof text,
             "OpenBLAS uses its '%s' kernels on this %s CPU %s set OPENBLAS_CORETYPE=%s for "
             "OpenBLAS at full speed",
             core, cpu_has_avx512() ? "AVX-512" : "AVX2", why, want);
    return text;
}

void gemm_openblas_set_threads(int n) { openblas_set_num_threads(n); }
