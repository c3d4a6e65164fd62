/* test_gemm_warning.c: run with OPENBLAS_CORETYPE=Prescott (see CMakeLists.txt), i.e. OpenBLAS
 * forced onto its SSE3 kernels. The openblas backend must name that core in its detail and, on a
 * CPU with AVX2 or AVX-512, warn that the environment chose it, with the OPENBLAS_CORETYPE remedy
 * for that CPU; our own backends never warn. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "gemm.h"
#include "test_util.h"

int main(void) {
    const char *forced = getenv("OPENBLAS_CORETYPE");
    EXPECT(forced && !strcmp(forced, "Prescott"), "run me with OPENBLAS_CORETYPE=Prescott");
    const GemmImpl *ob = gemm_lookup("openblas");
    EXPECT(strstr(ob->detail, "core Prescott") != NULL, "openblas detail '%s' lacks the core",
           ob->detail);
    const char *warning = gemm_warning(ob);
    if (cpu_has_avx512() || cpu_has_avx2_fma()) {
        const char *remedy =
            cpu_has_avx512() ? "OPENBLAS_CORETYPE=SkylakeX" : "OPENBLAS_CORETYPE=Haswell";
        EXPECT(warning && strstr(warning, remedy) && strstr(warning, "Prescott") &&
                   strstr(warning, "the environment sets OPENBLAS_CORETYPE=Prescott"),
               "warning '%s' should name the Prescott kernels, the variable that chose them "
               "and %s",
               warning ? warning : "(none)", remedy);
    } else {
        EXPECT(warning == NULL, "no better OpenBLAS core on this CPU, yet: %s", warning);
    }
    EXPECT(gemm_warning(gemm_lookup("blocked")) == NULL, "the blocked backend warns");
    EXPECT(gemm_warning(gemm_lookup("ref")) == NULL, "the ref backend warns");
    return test_finish();
}
