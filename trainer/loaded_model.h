/* loaded_model.h: a trained model opened from a checkpoint for translation, scoring or
 * conversion: its resolved config, the model with its parameters, and the SentencePiece model
 * embedded in the checkpoint. Errors are fatal and name the file. */
#ifndef NMT_LOADED_MODEL_H
#define NMT_LOADED_MODEL_H

#include <stddef.h>

#include "checkpoint.h"
#include "config.h"
#include "model.h"
#include "spm.h"

typedef struct LoadedModel {
    Config cfg;
    Model m;
    SpmModel *spm;
    Checkpoint ck;  // keeps the mapped file (config text, SentencePiece bytes)
} LoadedModel;

void loaded_model_open(LoadedModel *lm, const char *path);
void loaded_model_close(LoadedModel *lm);
/* The context to run the model for inference, with its configured GEMM backend. */
Ctx loaded_model_ctx(const LoadedModel *lm);
/* Translates n raw lines of input `what` in context c with the model's decode config
 * (translate_lines, progress on stderr); the generated tokens go to *tokens when not NULL. */
char **loaded_model_translate(LoadedModel *lm, const Ctx *c, char *const *lines, long n,
                              const char *what, long *tokens);
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
