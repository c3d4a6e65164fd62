/* attention.h: multi-head attention, one shared module plus a small table of functions (AttnImpl)
 * for the part that differs between the two modes:
 *   concat (Vaswani et al.): head h scores its own slice of Q = X W_q^T + b_q and K = Y W_k^T + b_k
 *           (width W = D_k, per head W/H);
 *   collab (Cordonnier et al. 2020, collab-attention.md §2.5): all heads share Q~ = X W~_q^T and
 *           K~ = Y W~_k^T of width W = D~k, head h mixes the queries with its row m_h of M (H, W),
 *           plus either a content bias U (H, D) on the key side or query/key biases b~_q, b~_k.
 * The shared module owns the V projection, the fused core (scores, masking, softmax, dropout on
 * the probabilities, P·V, forward and backward) and the output projection; a mode only says which
 * columns a head scores and how its queries are formed. The scale is 1/sqrt(D/H) in both modes,
 * independent of W.
 * The mode is resolved once (attn_impl); nothing else in the model branches on it.
 *
 * Shapes: B sentences, Tq queries and Tk keys per sentence; key-side buffers hold kvs >= Tk rows
 * per sentence (kvs = Tk in training, the cache capacity when decoding). Masks: key k of sentence
 * b is visible to query q iff k < kv_len[b] and, when causal, k <= q + q_offset.
 * Backward accumulates (+=) into dxq, dxkv and the parameter gradients. */
#ifndef NMT_ATTENTION_H
#define NMT_ATTENTION_H

#include <stddef.h>

#include "arena.h"
#include "model_config.h"
#include "ops.h"
#include "params.h"

typedef struct AttnDims {
    int D, H, Dh;  // model width, heads, value width per head (D / H)
    int W;         // query/key width: concat D_k (W / H per head) or collab D~k (shared)
    float scale;   // 1 / sqrt(D / H)
    float dropout; // on the attention probabilities
} AttnDims;

typedef struct AttnParams {  // views into the value or the gradient arena
    float *w_q, *b_q;  // (W, D), (W) or NULL
    float *w_k, *b_k;  // (W, D), (W) or NULL
    float *mix;        // (H, W) collab mixing vectors, else NULL
    float *u;          // (H, D) collab content bias, else NULL
    float *w_v, *b_v;  // (D, D), (D)
    float *w_o, *b_o;  // (D, D), (D)
} AttnParams;

typedef struct AttnImpl {
    /* Declares and binds the Q/K-side parameters (w_q, b_q, w_k, b_k, mix, u) under prefix. */
    void (*declare)(ParamTable *pt, const char *prefix, const AttnDims *d, const ModelConfig *cfg);
    void (*bind)(AttnParams *p, const ParamTable *pt, const char *prefix, float *base);
    /* Key-side extra state, e.g. collab's content scores c = Y U^T (Nk, H); NULL if none. */
    void (*kv_extra_forward)(const Ctx *c, const AttnDims *d, const AttnParams *p, float *cs,
                             const float *xkv, int Nk);
    void (*kv_extra_backward)(const Ctx *c, const AttnDims *d, const AttnParams *p,
                              const AttnParams *g, float *dxkv, const float *dcs, const float *xkv,
                              int Nk);
    /* FLOPs (2 per multiply-add) of kv_extra_forward per key (kv_extra_backward does twice as
     * many); model/flops.c counts the rest. */
    double (*kv_extra_flops)(const AttnDims *d, const AttnParams *p);
    /* The scores of head h: scale * q^ k^T [+ scale * content], where q^ and k^ are columns
     * [*col, *col + *width) of the head's queries and of k (B, kvs, W). */
    void (*head_span)(const AttnDims *d, int h, int *col, int *width);
    /* Head h's queries for n rows of q (n, W): q itself (the caller offsets by col) or a mix
     * written to qm (n, W); rows W apart either way. */
    const float *(*head_queries)(const AttnDims *d, const AttnParams *p, float *qm,
                                 const float *q, int n, int h);
    /* From gq (n, width; rows W apart), the gradient of head h's queries for q (n, W):
     * dq (n, W) += and the sentence's own parameter gradients sent (sentence_floats) +=. */
    void (*head_queries_backward)(const AttnDims *d, const AttnParams *p, float *dq, float *sent,
                                  const float *gq, const float *q, int n, int h);
    /* Floats of parameter gradients kept per sentence (summed in sentence order at the end). */
    size_t (*sentence_floats)(const AttnDims *d);
    /* g += the per-sentence gradients sent (B, sentence_floats), NULL when there are none. */
    void (*sentence_grads_finish)(const AttnDims *d, const AttnParams *g, const float *sent, int B);
} AttnImpl;

extern const AttnImpl attn_concat, attn_collab;
const AttnImpl *attn_impl(AttentionMode mode);

typedef struct Attention {
    AttnDims d;
    const AttnImpl *impl;
    AttnParams p, g;  // parameter values and gradients
    int site;         // dropout site of the probabilities
    double *core_seconds;  // when set, forward and backward add the core's wall time here
} Attention;

typedef struct AttnMask {
    const int *kv_len;  // (B) visible keys per sentence
    bool causal;
    int q_offset;       // position of query 0 (incremental decoding)
} AttnMask;

/* Saved activations of one call. */
typedef struct AttnCache {
    float *q;   // (B, Tq, W)
    float *k;   // (B, kvs, W)
    float *cs;  // (B, kvs, H) key-side extra state
    float *v;   // (B, kvs, D)
    float *p;   // (B, H, Tq, Tk) probabilities before dropout
} AttnCache;
/* The heads' outputs o = dropout(p) v (B, Tq, D) are not kept: backward recomputes them. The
 * probabilities are kept rather than recomputed from saved row maxima and sums: recomputing would
 * add the score product (a sixth of the core's work) to backward to save B*H*Tq*Tk floats, which
 * at translation lengths are a small part of a layer's activations. */

AttnDims attn_dims(const ModelConfig *cfg);
void attention_declare(ParamTable *pt, const char *prefix, const AttnDims *d,
                       const AttnImpl *impl, const ModelConfig *cfg);
void attention_bind(Attention *a, const ParamTable *pt, const char *prefix, const AttnDims *d,
                    const AttnImpl *impl, int site);

/* Bump-allocates the cache for (B, Tq, Tk) from `arena` (measure mode returns NULL pointers). */
void attention_cache_alloc(AttnCache *s, Arena *arena, const AttnDims *d, int B, int Tq, int Tk);
/* Workspace floats attention_forward / attention_backward need for this shape. */
size_t attention_work_floats(const Attention *a, int B, int Tq, int Tk, int nthreads);
/* Workspace floats attention_core alone needs (incremental decoding). */
size_t attention_core_work_floats(const Attention *a, int B, int Tq, int Tk, int nthreads);

/* The stages of attention_forward, also used one step at a time by incremental decoding. */
void attention_project_q(const Ctx *c, const Attention *a, float *q, const float *xq, int Nq);
void attention_project_kv(const Ctx *c, const Attention *a, float *k, float *v, float *cs,
                          const float *xkv, int Nk);
/* o(B,Tq,D) from q, k, v, cs; probabilities p(B,H,Tq,Tk) saved. The keys are k (B, kvs, W), or
 * with k_transposed (B, W, kvs), as incremental decoding keeps them: the core then reads each
 * head's keys in place instead of transposing them into a tile, which for a few query rows costs
 * as much as the scores. v (B, kvs, D) and cs (B, kvs, H) likewise have kvs rows per sentence.
 * Transposed keys are read in whole blocks (of 16 or 32 keys): up to ATTN_KEY_SLACK - 1 floats
 * past the last visible key of a row (their values are ignored), so k's buffer must reach that far
 * past its end. */
enum { ATTN_KEY_SLACK = 32 };
void attention_core(const Ctx *c, const Attention *a, float *o, float *p, const float *q,
                    const float *k, bool k_transposed, const float *v, const float *cs,
                    AttnMask mask, int B, int Tq, int Tk, int kvs, float *work);

/* out(B,Tq,D) = attention of xq(B,Tq,D) over xkv(B,Tk,D) */
void attention_forward(const Ctx *c, const Attention *a, AttnCache *s, float *out,
                       const float *xq, const float *xkv, AttnMask mask, int B, int Tq, int Tk,
                       float *work);
/* dxq(B,Tq,D) = beta_q * dxq + the queries' gradient; then dxkv(B,Tk,D) += the keys' and values'
 * (dxkv may be dxq) */
void attention_backward(const Ctx *c, const Attention *a, const AttnCache *s, float *dxq,
                        float beta_q, float *dxkv, const float *dout, const float *xq,
                        const float *xkv, AttnMask mask, int B, int Tq, int Tk, float *work);

#endif
