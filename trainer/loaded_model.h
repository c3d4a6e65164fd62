/* loaded_model.h: a trained model opened from a checkpoint for translation, scoring or
 * conversion: its resolved config, the model with its parameters, and the SentencePiece model
 * embedded in the checkpoint. Errors are fatal and name the file. */
#ifndef NMT_LOADED_MODEL_H
#define NMT_LOADED_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "checkpoint.h"
#include "config.h"
#include "model.h"
#include "spm.h"
#include "translator.h"

typedef struct LoadedModel {
    const char *path;  // as given to loaded_model_open (not copied)
    Config cfg;
    Model m;
    SpmModel *spm;
    Checkpoint ck;  // keeps the mapped file (config text, SentencePiece bytes)
} LoadedModel;

void loaded_model_open(LoadedModel *lm, const char *path);
/* Opens the n checkpoints paths[n] into lms[n] for an ensemble: they may differ in architecture
 * but must share one vocabulary (the same SentencePiece model); fatal naming two files if not. */
void loaded_models_open(LoadedModel *lms, const char *const *paths, int n);
void loaded_model_close(LoadedModel *lm);
/* The context to run the model for inference, with its configured GEMM backend. */
Ctx loaded_model_ctx(const LoadedModel *lm);
/* Translates n raw lines of input `what` in context c with the models lms[n_models] (an
 * ensemble when more than one) and the decode config of the first (translate_lines, progress on
 * stderr), keeping the nbest best hypotheses of each line. */
void loaded_model_translate(LoadedModel *lms, int n_models, const Ctx *c, char *const *lines,
                            long n, const char *what, int nbest, Translations *out);
/* Whether two checkpoints hold the same SentencePiece model (byte for byte). */
bool checkpoint_same_spm(const Checkpoint *a, const Checkpoint *b);
/* The parameters of the attention modules (the tensors named "*_attn.*"). */
size_t loaded_model_attention_params(const LoadedModel *lm);

/* Only the parameters of a checkpoint, in a table declared from its config (tools that read
 * weights without running the model). */
typedef struct CheckpointParams {
    Config cfg;
    ParamTable pt;
    Checkpoint ck;
} CheckpointParams;

void checkpoint_params_open(CheckpointParams *cp, const char *path);
void checkpoint_params_close(CheckpointParams *cp);

#endif
