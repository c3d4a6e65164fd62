/* gemm_auto.h: the parts of the "auto" backend (gemm_auto.c) that gemm_dispatch.c and the tests
 * drive directly (internal to kernels/). */
#ifndef NMT_GEMM_AUTO_H
#define NMT_GEMM_AUTO_H

#include <stddef.h>

#include "gemm.h"

/* The auto backend, its choice made for the current thread count if none is in place yet. */
const GemmImpl *gemm_auto_get(void);

/* Called by gemm_set_threads: once auto is in use, takes its choice for `threads` (resolved
 * earlier in this process, else now). */
void gemm_auto_threads_changed(int threads);

/* Decides for the current thread count and puts that choice in use: NMT_GEMM_AUTOTUNE=0 takes the
 * default (blocked when a SIMD micro-kernel fits this CPU, else openblas), else the cache file for
 * this machine's key is read, or, when it is missing, unreadable or NMT_GEMM_AUTOTUNE=refresh, the
 * backends are measured and the file (re)written. Call it outside parallel regions. */
void gemm_auto_resolve(void);

/* Makes `c` the choice auto dispatches by (the tests' fake choices). */
void gemm_auto_install(const GemmAutoChoice *c);

/* The cache key: every input the choice depends on, as one line. */
void gemm_auto_key(char *out, size_t size, const char *cpu_model, const char *isa,
                   const char *blocked, const char *openblas, int threads);

/* This machine's key at `threads` threads: the CPU model (/proc/cpuinfo), the micro-kernel ISA
 * the blocked backend runs, both backends' details (OpenBLAS version and core) and the threads. */
void gemm_auto_machine_key(char *out, size_t size, int threads);

/* The cache file for `key`: $XDG_CACHE_HOME/nmt/gemm-auto-<hash of key> (~/.cache/nmt when unset);
 * false when neither XDG_CACHE_HOME nor HOME is set. */
bool gemm_auto_cache_path(char *out, size_t size, const char *key);

/* Reads the choice stored for `key` at path into c (backend, ms); false when the file is missing,
 * malformed, written for another key or names an unknown backend. */
bool gemm_auto_cache_read(const char *path, const char *key, GemmAutoChoice *c);

/* Writes c for `key` to path atomically (atomic.h: a temp file renamed over it), creating the
 * directories; false with errno set on failure (and no temp file left). */
bool gemm_auto_cache_write(const char *path, const char *key, const GemmAutoChoice *c);

#endif
