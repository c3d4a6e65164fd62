/* loaded_model.c: opening checkpoints for use (loaded_model.h). */
#include "loaded_model.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gemm.h"
#include "status.h"
#include "translator.h"

/* The checkpoint and the config embedded in it. */
static void open_with_config(Checkpoint *ck, Config *cfg, const char *path) {
    if (checkpoint_load(path, ck)) FATAL("%s", status_message());
    config_init(cfg);
    if (config_load_string(cfg, ck->config, strlen(ck->config), path))
        FATAL("%s: the embedded config: %s", path, status_message());
}

void checkpoint_params_open(CheckpointParams *cp, const char *path) {
    memset(cp, 0, sizeof *cp);
    open_with_config(&cp->ck, &cp->cfg, path);
    CHECK(cp->ck.nparams > 0 && !strcmp(cp->ck.tensors[0].name, "emb.shared"),
          "%s does not start with the embedding table", path);
    params_init(&cp->pt);
    model_declare(&cp->pt, &cp->cfg.model, cp->ck.tensors[0].rows);
    params_finalize(&cp->pt);
    if (checkpoint_restore(&cp->ck, &cp->pt, false, NULL)) FATAL("%s: %s", path, status_message());
}

void checkpoint_params_close(CheckpointParams *cp) {
    params_free(&cp->pt);
    config_free(&cp->cfg);
    checkpoint_free(&cp->ck);
    memset(cp, 0, sizeof *cp);
}

void loaded_model_open(LoadedModel *lm, const char *path) {
    memset(lm, 0, sizeof *lm);
    lm->path = path;
    open_with_config(&lm->ck, &lm->cfg, path);
    CHECK(lm->ck.spm, "%s has no SentencePiece model", path);
    if (spm_load_bytes(&lm->spm, lm->ck.spm, lm->ck.spm_len))
        FATAL("%s: the embedded SentencePiece model: %s", path, status_message());
    model_build(&lm->m, &lm->cfg.model, spm_vocab_size(lm->spm));
    if (checkpoint_restore(&lm->ck, &lm->m.params, false, NULL))
        FATAL("%s: %s", path, status_message());
}

bool checkpoint_same_spm(const Checkpoint *a, const Checkpoint *b) {
    return a->spm_len == b->spm_len && (!a->spm_len || !memcmp(a->spm, b->spm, a->spm_len));
}

void loaded_models_open(LoadedModel *lms, const char *const *paths, int n) {
    for (int e = 0; e < n; e++) {
        loaded_model_open(&lms[e], paths[e]);
        if (!checkpoint_same_spm(&lms[e].ck, &lms[0].ck))
            FATAL("%s and %s have different SentencePiece models (%zu and %zu bytes): the same "
                  "token id means another piece in each, so they cannot be ensembled",
                  paths[0], paths[e], lms[0].ck.spm_len, lms[e].ck.spm_len);
    }
}

void loaded_model_close(LoadedModel *lm) {
    model_free(&lm->m);
    spm_free(lm->spm);
    config_free(&lm->cfg);
    checkpoint_free(&lm->ck);
    memset(lm, 0, sizeof *lm);
}

Ctx loaded_model_ctx(const LoadedModel *lm) {
    Ctx c = {.gemm = gemm_select(gemm_backend_name(lm->cfg.train.gemm))};
    return c;
}

void loaded_model_translate(LoadedModel *lms, int n_models, const Ctx *c, char *const *lines,
                            long n, const char *what, int nbest, Translations *out) {
    const DecodeConfig *dc = &lms[0].cfg.decode;
    Model **models = xmalloc(sizeof(Model *) * n_models);
    for (int e = 0; e < n_models; e++) models[e] = &lms[e].m;
    TranslateJob job = {models, n_models, lms[0].spm, translator_options(dc, dc->beam), nbest,
                        dc->batch_tokens, dc->max_src_len, true};
    translate_lines(&job, c, lines, n, what, out);
    free(models);
}

size_t loaded_model_attention_params(const LoadedModel *lm) {
    size_t attn = 0;
    for (int i = 0; i < lm->m.params.count; i++)
        if (strstr(lm->m.params.info[i].name, "_attn.")) attn += lm->m.params.info[i].numel;
    return attn;
}
