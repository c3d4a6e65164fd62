/* gemm_backends.h: the backend tables behind gemm_lookup (internal to kernels/). */
#ifndef NMT_GEMM_BACKENDS_H
#define NMT_GEMM_BACKENDS_H

#include "gemm.h"

extern const GemmImpl gemm_ref;
const GemmImpl *gemm_openblas_get(void);  // detail names the core OpenBLAS picked
const char *gemm_openblas_warning(void);  // see gemm_warning
void gemm_openblas_set_threads(int n);
const GemmImpl *gemm_blocked_best(void);  // the widest micro-kernel this CPU runs
/* The revision of the blocked kernels and blocking, part of the key under which `auto` caches its
 * measured choice: raise it with every change that can move their speed. */
enum { GEMM_BLOCKED_REVISION = 5 };
/* The blocked backend with a given micro-kernel ("avx512", "avx2", "portable"); NULL if this CPU
 * cannot run it. */
const GemmImpl *gemm_blocked_variant(const char *ukernel);
/* p->packed with room for `floats` floats (grown as needed; contents not kept). */
float *gemm_packed_b_reserve(GemmPackedB *p, size_t floats);

#endif
