/* analyze.h: how redundant are the key/query projections of a trained concat model (`nmt
 * analyze`)? For every attention module the spectra of spectra.h, the ranks that keep 90, 95 and
 * 99 % of their energy (uncentered: the operator spectrum), optionally the CP reconstruction
 * error of [P_1..P_H] at given ranks; then the same for Gaussian W_Q, W_K as a reference. */
#ifndef NMT_ANALYZE_H
#define NMT_ANALYZE_H

#include <stdbool.h>

#include "model_config.h"
#include "params.h"
#include "spectra.h"

enum { ANALYZE_MATRICES = 3, ANALYZE_FRACTIONS = 3 };
/* The matrices of a module, in the order of ModuleSpectra: "W_Q", "W_K", "P". */
extern const char *const analyze_matrix_names[ANALYZE_MATRICES];

/* One module: its spectra and the ranks reaching 90, 95 and 99 % of the energy. */
typedef struct ModuleAnalysis {
    const char *name;  // the parameter prefix (e.g. "enc.0.self_attn"), or "gaussian"
    ModuleSpectra s;
    double head_rank[ANALYZE_MATRICES][ANALYZE_FRACTIONS];  // per head: mean over heads
    double head_pct[ANALYZE_MATRICES][ANALYZE_FRACTIONS];   // ... as % of d
    int cat_rank[ANALYZE_MATRICES][ANALYZE_FRACTIONS];      // concatenated over heads
    double cat_pct[ANALYZE_MATRICES][ANALYZE_FRACTIONS];    // ... as % of its length
    double *cp_error;  // (nranks) relative CP reconstruction error of [P_1..P_H] at each rank
} ModuleAnalysis;

/* The key/query shapes of a model. */
QkShape analyze_shape(const ModelConfig *m);

/* Analyzes every attention module of pt (a concat model's table of shape sh) in table order,
 * then the Gaussian reference module (reference true), handing each to fn, which may keep
 * nothing of it. ranks[nranks]: the CP ranks. */
void analyze_modules(const ParamTable *pt, QkShape sh, const int *ranks, int nranks,
                     void (*fn)(const ModuleAnalysis *a, bool reference, void *ctx), void *ctx);

#endif
