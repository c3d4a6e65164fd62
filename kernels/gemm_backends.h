/* gemm_backends.h: the backend tables behind gemm_lookup (internal to kernels/). */
#ifndef NMT_GEMM_BACKENDS_H
#define NMT_GEMM_BACKENDS_H

#include "gemm.h"

extern const GemmImpl gemm_ref;
extern const GemmImpl gemm_openblas;
const GemmImpl *gemm_blocked_best(void);  // the widest micro-kernel this CPU runs
/* The blocked backend with a given micro-kernel ("avx512", "avx2", "portable"); NULL if this CPU
 * cannot run it. */
const GemmImpl *gemm_blocked_variant(const char *ukernel);

#endif
