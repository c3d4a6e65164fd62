/* model.h: the encoder-decoder Transformer (Vaswani et al. 2017) with hand-written backprop.
 *   shared embedding (source, target and output projection tied), scaled by sqrt(D), plus
 *   sinusoidal positions; N encoder layers (self-attention, FFN), N decoder layers (causal
 *   self-attention, cross-attention, FFN); post-LN (default) or pre-LN with final LayerNorms;
 *   dropout on embeddings, residual branches, attention probabilities and FFN activations.
 * Parameters live in one ParamTable (params.h) with names shared with checkpoints and the
 * PyTorch reference (scripts/make_reference.py). Activations are planned once for the largest
 * batch (model_plan) and bound per batch, so a training step never allocates.
 * Dimension letters: B sentences, S / T padded source / target length, D model width, H heads,
 * F FFN width, V vocabulary. */
#ifndef NMT_MODEL_H
#define NMT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "attention.h"
#include "ffn.h"
#include "loss.h"
#include "model_config.h"
#include "ops.h"
#include "params.h"

enum { TOKEN_PAD = 0, TOKEN_UNK = 1, TOKEN_BOS = 2, TOKEN_EOS = 3 };

/* One batch as the model sees it (data/batcher.h builds these). */
typedef struct ModelBatch {
    int B, S, T;
    const int32_t *src;      // (B, S) source ids + EOS, PAD-padded
    const int32_t *tgt_in;   // (B, T) BOS + target ids, PAD-padded
    const int32_t *tgt_out;  // (B, T) target ids + EOS, PAD-padded
    const int *src_len;      // (B) source lengths incl. EOS
    const int *tgt_len;      // (B) target lengths incl. BOS
} ModelBatch;

typedef struct NormParams { float *g, *b; } NormParams;             // (D), (D)

/* Saved state of one residual sublayer (see model.c: block_*). */
typedef struct Block {
    float *ln_in;        // (N, D) post-LN: x + dropout(f(x)); pre-LN: NULL (the block input)
    float *f_in;         // (N, D) pre-LN: LN(x); post-LN: NULL (the block input)
    float *mean, *rstd;  // (N)
    float *out;          // (N, D) the block output
} Block;

typedef struct EncLayer {
    Attention self_attn;
    NormParams ln1, ln2, dln1, dln2;  // values, gradients
    FfnParams ffn, dffn;
    int site;                         // dropout sites site .. site+3
    // activations
    AttnCache att;
    Block b_att, b_ffn;
    float *ffn_pre;                   // (N, F) FFN pre-activation
} EncLayer;

typedef struct DecLayer {
    Attention self_attn, cross_attn;
    NormParams ln1, ln2, ln3, dln1, dln2, dln3;
    FfnParams ffn, dffn;
    int site;                         // dropout sites site .. site+5
    AttnCache self, cross;
    Block b_self, b_cross, b_ffn;
    float *ffn_pre;                   // (N, F)
} DecLayer;

typedef struct Model {
    int V, D, H, F, n_enc, n_dec;
    bool pre_norm;
    float dropout, ffn_dropout;
    const AttnImpl *impl;
    AttnDims ad;
    ParamTable params;
    float *emb, *demb;          // (V, D) the shared table and its gradient
    NormParams enc_final, dec_final, denc_final, ddec_final;  // pre-LN only
    EncLayer *enc;
    DecLayer *dec;
    // planning
    int max_tokens, max_len, nthreads;
    float *pe;                  // (max_len, D) position encodings
    Arena acts, work;           // saved activations; per-step workspace
    // activations bound for the current batch
    int B, S, T;
    float *enc_x0, *dec_x0;     // (B,S,D), (B,T,D) embeddings after dropout
    Block enc_fin, dec_fin;     // final LayerNorms (pre-LN)
    const float *enc_out;       // (B, S, D) encoder output
    const float *dec_out;       // (B, T, D) decoder output, input of the loss
    float *d_a, *d_b;           // (max(B*S, B*T), D) gradient ping-pong between layers
    float *d_enc;               // (B, S, D) gradient of the encoder output (all cross-attentions)
    struct ModelWork {          // per-step workspace slots
        float *f, *df, *dfin, *dmid;  // (N, D) branch output and gradients
        float *h, *dh;                // (N, F) FFN hidden and its gradient
        float *big;                   // attention or loss workspace
    } w;
} Model;

/* Declares every parameter of the model for cfg with vocabulary V into pt (no allocation). */
void model_declare(ParamTable *pt, const ModelConfig *cfg, int V);
/* Declares and allocates the parameters for cfg (vocab overrides cfg->vocab_size when > 0),
 * binds the layer views. Fatal on an invalid configuration. */
void model_build(Model *m, const ModelConfig *cfg, int vocab);
void model_free(Model *m);
/* Random initialization (fairseq's scheme), the PAD embedding row zeroed. */
void model_init_params(Model *m, uint64_t seed);
/* Allocates activations and workspace for batches with B*max(S,T) <= max_tokens and
 * S, T <= max_len (one sentence longer than max_tokens is allowed up to max_len). */
void model_plan(Model *m, int max_tokens, int max_len);
/* Bytes of the planned arenas (parameters excluded). */
size_t model_planned_bytes(const Model *m);

/* Forward through encoder and decoder (activations saved); then the loss (sums into st), with
 * backward when `backward`: gradients accumulate (+=) into m->params.grad. */
void model_forward(Model *m, const Ctx *c, const ModelBatch *b);
void model_loss(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing);
void model_backward(Model *m, const Ctx *c, const ModelBatch *b);
/* forward + loss (+ backward) */
void model_step(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing);
/* logits (B*T, V) of the last forward (tests and tools). */
void model_logits(Model *m, const Ctx *c, float *logits);

#endif
