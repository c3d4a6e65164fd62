/* loaded_model.c: opening checkpoints for use (loaded_model.h). */
#include "loaded_model.h"

#include <string.h>

#include "check.h"
#include "status.h"

void loaded_model_open(LoadedModel *lm, const char *path) {
    memset(lm, 0, sizeof *lm);
    char err[1024];
    if (checkpoint_load(path, &lm->ck, err, sizeof err)) FATAL("%s", err);
    config_init(&lm->cfg);
    ConfigError cerr;
    if (config_load_string(&lm->cfg, lm->ck.config, strlen(lm->ck.config), path, &cerr))
        FATAL("%s: the embedded config: %s", path, cerr.msg);
    CHECK(lm->ck.spm, "%s has no SentencePiece model", path);
    if (spm_load_bytes(&lm->spm, lm->ck.spm, lm->ck.spm_len))
        FATAL("%s: the embedded SentencePiece model: %s", path, data_last_error());
    model_build(&lm->m, &lm->cfg.model, spm_vocab_size(lm->spm));
    if (checkpoint_restore(&lm->ck, &lm->m.params, false, err, sizeof err))
        FATAL("%s: %s", path, err);
}

void loaded_model_close(LoadedModel *lm) {
    model_free(&lm->m);
    spm_free(lm->spm);
    config_free(&lm->cfg);
    checkpoint_free(&lm->ck);
    memset(lm, 0, sizeof *lm);
}
