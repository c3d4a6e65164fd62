/* reparam.h: concat attention to collab attention (`nmt reparam`, collab-attention.md §4).
 * Every attention module of a trained concat model becomes collaborative with shared width R:
 *   R == D_k: an exact copy, W~_Q = W_Q, W~_K = W_K, block one-hot mixing;
 *   otherwise the CP decomposition of the heads' W_Q^h W_K^h^T (cp_als.h).
 * The query bias becomes the content bias u_h = W_K^h b_Q^h; the key bias is dropped (it cancels
 * in the softmax). Values, outputs, LayerNorms, FFNs and embeddings are copied. */
#ifndef NMT_REPARAM_H
#define NMT_REPARAM_H

#include "config.h"
#include "cp_als.h"
#include "loaded_model.h"
#include "params.h"

/* The collab model's config: `src` with attention collab, dk R and the content bias. */
void reparam_config(Config *dst, const Config *src, int R);

/* Fills `dst` (declared for the collab config) from `src` (a concat model's table). Reports
 * each module's relative reconstruction error through `report` (may be NULL); returns the
 * largest. */
double reparam_params(ParamTable *dst, const ParamTable *src, const ModelConfig *concat,
                      const CpOptions *o,
                      void (*report)(const char *module, const CpResult *r, void *ctx), void *ctx);

/* The whole conversion of a concat checkpoint (opened with checkpoint_params_open): the collab
 * model of width o->rank, written to `out` as a weights-only checkpoint with the source's
 * SentencePiece model. Reports as reparam_params does; returns the largest relative error and
 * the collab model's parameter count in *params. */
double reparam_checkpoint(const CheckpointParams *src, const CpOptions *o, const char *out,
                          void (*report)(const char *module, const CpResult *r, void *ctx),
                          void *ctx, size_t *params);

#endif
