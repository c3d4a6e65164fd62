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

typedef struct NormParams { float *g, *b; } NormParams;  // (D), (D)

/* A residual sublayer: a branch function f (attention or FFN) with its LayerNorm,
 *   post-LN:  out = LN(x + dropout(f(x)))      saved: x + dropout(f(x)), mean, rstd
 *   pre-LN:   out = x + dropout(f(LN(x)))      saved: out, mean, rstd of LN(x)
 * Only one (N, D) tensor is kept per sublayer: backward recomputes the other from it and the
 * LayerNorm statistics (bit-identical to the forward). */
typedef enum { SUB_SELF_ATTN, SUB_CAUSAL_ATTN, SUB_CROSS_ATTN, SUB_FFN } SubKind;

typedef struct Sublayer {
    SubKind kind;
    NormParams ln, dln;       // values, gradients
    Attention *attn;          // attention kinds
    FfnParams *ffn, *dffn;    // SUB_FFN
    int site;                 // dropout sites: branch (probabilities or hidden) and site + 1 (residual)
    // saved activations
    float *saved;             // (N, D) see above
    float *mean, *rstd;       // (N)
    AttnCache cache;          // attention kinds
    ParamRange layer_done;    // first sublayer of a layer: the layer's parameters (count 0 else)
    float *ffn_h;             // (N, F) SUB_FFN: the hidden layer
} Sublayer;

typedef struct EncLayer {
    Attention self_attn;
    FfnParams ffn, dffn;
} EncLayer;

typedef struct DecLayer {
    Attention self_attn, cross_attn;
    FfnParams ffn, dffn;
} DecLayer;

/* Where the time of forward and backward goes (model->seconds, accumulated until reset).
 * PHASE_ATTENTION is the projections of the attention sublayers, PHASE_ATTN_CORE their core
 * (scores, mask, softmax, dropout, P·V and its backward). */
enum { PHASE_EMBED, PHASE_ATTENTION, PHASE_ATTN_CORE, PHASE_FFN, PHASE_NORM, PHASE_LOSS, PHASE_COUNT };
extern const char *const model_phase_names[PHASE_COUNT];

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
    Sublayer *enc_sub, *dec_sub;  // (2 n_enc), (3 n_dec) in order
    // planning
    int max_tokens, max_len, nthreads;
    float *pe;                  // (max_len, D) position encodings
    Arena acts, work;           // saved activations; per-step workspace
    // activations bound for the current batch
    int B, S, T;
    float *enc_x0, *dec_x0;     // (B,S,D), (B,T,D) embeddings after dropout
    float *enc_out, *dec_out;   // (B,S,D), (B,T,D) stack outputs (after the final LN if pre-LN)
    float *enc_fin_stats, *dec_fin_stats;  // (2, N) mean and rstd of the final LayerNorms
    struct ModelWork {          // per-step workspace slots, (N, D) unless noted
        float *f;                     // branch output (forward) / its gradient (backward)
        float *fin, *dfin;            // branch input (pre-LN: recomputed LN(x)) and its gradient
        float *xin;                   // a sublayer's input, recomputed in backward (post-LN)
        float *xout[2];               // sublayer outputs in forward (post-LN); alias d_a, d_b
        float *d_a, *d_b, *d_enc;     // gradient ping-pong; encoder output gradient (B,S,D)
        float *h;                     // (N, F) the FFN hidden layer's gradient
        float *ln_grad;               // LayerNorm parameter gradients' blocks (ops.h)
        float *big;                   // attention or loss workspace
        GemmPackedB emb_packed[2];    // the output layer's packed operands (loss.h)
    } w;
    double seconds[PHASE_COUNT];  // wall time per phase, for benchmarks
    // Backward calls grads_done(grads_done_arg, span) as each block of parameters receives its
    // last gradient contribution (NULL: not at all): every decoder layer, last to first, then
    // every encoder layer likewise, the final LayerNorms (pre-LN) before their stacks, and the
    // shared embedding last. A data-parallel run starts summing a block over the ranks there.
    void (*grads_done)(void *arg, ParamRange span);
    void *grads_done_arg;
    ParamRange emb_span, enc_final_span, dec_final_span;  // final spans: count 0 without pre-LN
} Model;

/* The two halves of a sublayer around its branch f, shared by training and incremental decoding.
 * `st` says where this application keeps its residual tensor and LayerNorm statistics.
 *   sublayer_in:  the branch input: x (post-LN) or LN(x) written to fin (pre-LN)
 *   sublayer_out: st.saved = x + dropout(f); the output LN(st.saved) written to out (post-LN)
 *                 or st.saved itself (pre-LN) */
typedef struct SubState { float *saved, *mean, *rstd; } SubState;  // (N, D), (N), (N)
const float *sublayer_in(const Model *m, const Sublayer *s, SubState st, const float *x,
                         float *fin, int N);
const float *sublayer_out(const Model *m, const Sublayer *s, SubState st, const float *x,
                          const float *f, float *out, int N, Dropout mask);

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
/* Gives the pages of the activations and the workspace back to the kernel; nothing in them lives
 * from one step to the next, and the next step faults them in again. For a pause in training
 * that needs memory of its own (validation decoding). */
void model_release_memory(Model *m);

/* The memory a planned model holds, in bytes, by use: parameter values, their gradients, the two
 * Adam moments, the saved activations and the per-step workspace (both sized by model_plan for
 * its largest batch; the workspace includes the output layer's packed operands, at most what
 * gemm_pack_b allocates for them). */
typedef struct ModelMemory {
    size_t params, grads, adam, acts, work;
} ModelMemory;
ModelMemory model_memory(const Model *m);
/* The same as one log line: "parameters 231 MB, gradients 231 MB, ...". */
void model_memory_text(const ModelMemory *mm, char *out, size_t n);

/* Forward through encoder and decoder (activations saved); then the loss (sums into st), with
 * backward when `backward`: gradients accumulate (+=) into m->params.grad. */
void model_forward(Model *m, const Ctx *c, const ModelBatch *b);
/* The encoder alone: m->enc_out (B, S, D) for the source batch (decoding). */
void model_encode(Model *m, const Ctx *c, const int32_t *src, const int *src_len, int B, int S);
void model_loss(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing);
void model_backward(Model *m, const Ctx *c, const ModelBatch *b);
/* forward + loss (+ backward) */
void model_step(Model *m, const Ctx *c, const ModelBatch *b, LossStats *st, bool backward,
                float label_smoothing);
/* logits (B*T, V) of the last forward (tests and tools). */
void model_logits(Model *m, const Ctx *c, float *logits);

#endif
