/* params.h: the parameter registry. Every trainable tensor is declared once by name (the names
 * are identical in C, in checkpoints and in the PyTorch reference: "emb.shared",
 * "enc.0.self_attn.w_q", "dec.2.ffn.w_1" ...) and lives in four parallel flat arenas of the same
 * layout: values, gradients, Adam m and Adam v. Zero-grad, gradient norm, clipping, the optimizer,
 * averaging, an MPI allreduce and checkpointing are each one loop over a flat buffer.
 * Layers hold typed views: pointers bound to either the value or the gradient arena. */
#ifndef NMT_PARAMS_H
#define NMT_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    INIT_ZERO,
    INIT_ONE,
    INIT_NORMAL,         // N(0, scale^2)
    INIT_UNIFORM,        // U(-scale, scale)
} InitKind;

typedef struct ParamInfo {
    char name[64];
    int ndim, shape[2];
    size_t offset, numel;  // in floats, within each arena
    InitKind init;
    float scale;           // std (normal) or bound (uniform)
    bool decay;            // subject to weight decay (weights yes; biases, LayerNorm, mixing no)
} ParamInfo;

typedef struct ParamTable {
    ParamInfo *info;  // (count), declaration order = memory order = checkpoint order
    int count, cap;
    size_t numel;     // total floats
    float *param, *grad, *adam_m, *adam_v;  // (numel) each, 64-byte aligned; NULL until finalize
} ParamTable;

/* A span of the flat arenas: floats [offset, offset + count). */
typedef struct ParamRange {
    size_t offset, count;
} ParamRange;

void params_init(ParamTable *pt);
void params_free(ParamTable *pt);
/* Declares a tensor of shape (rows) or (rows, cols) (cols = 0 for a vector). Returns its index. */
int params_declare(ParamTable *pt, const char *name, int rows, int cols, InitKind init,
                   float scale, bool decay);
void params_finalize(ParamTable *pt);  // allocates the four arenas (zeroed)
size_t params_count(const ParamTable *pt);  // trainable floats (without alignment padding)
int params_find(const ParamTable *pt, const char *name);  // -1 if absent
/* The span of the tensors whose names start with `prefix` ("dec.2." is decoder layer 2), which
 * must be declared one after another; fatal if there are none. */
ParamRange params_prefix_range(const ParamTable *pt, const char *prefix);
/* Pointer to tensor `name` within arena `base` (pt->param, pt->grad, ...); fatal if absent. */
float *params_view(const ParamTable *pt, const char *name, float *base);
/* Fills the value arena from the declared init kinds, each tensor from its own RNG stream
 * keyed by (seed, tensor index), so the result does not depend on threads. */
void params_initialize(ParamTable *pt, uint64_t seed);
void params_zero_grad(ParamTable *pt);
/* Global L2 norm of the gradient arena (double accumulation). */
double params_grad_norm(const ParamTable *pt);
/* Index of the first tensor whose gradient (or value, if `values`) holds a NaN/Inf; -1 if none. */
int params_first_nonfinite(const ParamTable *pt, bool values);

#endif
