/* train.c: the training loop of train.h. */
#include "train.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "batcher.h"
#include "bleu.h"
#include "check.h"
#include "checkpoint.h"
#include "files.h"
#include "model.h"
#include "optimizer.h"
#include "paths.h"
#include "prepare.h"
#include "spm.h"
#include "status.h"
#include "strbuf.h"
#include "timer.h"
#include "tokcache.h"
#include "translator.h"

enum { MAX_NONFINITE_IN_A_ROW = 5 };

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

typedef struct Trainer {
    Config *cfg;
    char *config_text;
    const char *run_dir;
    // data
    char *spm_bytes;
    size_t spm_len;
    SpmModel *spm;
    TokCache train_cache, valid_cache;
    Batcher train_batches, valid_batches;
    char **valid_refs;  // (n_valid) normalized references
    long n_valid;
    // model and optimization
    Model m;
    Ctx ctx;
    AdamHyper adam;
    Translator valid_translator;
    TrainState st;
    int nonfinite_in_a_row;
    // logging
    FILE *log, *jsonl;
    double t_start, t_disp;
    LossStats disp;  // since the last log line
    double disp_gnorm;
    long disp_updates;
} Trainer;

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

static void logf_both(Trainer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_both(Trainer *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    vfprintf(t->log, fmt, ap);
    va_end(ap);
    fflush(t->log);
}

static double elapsed(const Trainer *t) { return t->st.train_seconds + now_seconds() - t->t_start; }

/* ---------------------------------------------------------------- set-up */

static void open_data(Trainer *t) {
    const DataConfig *d = &t->cfg->data;
    prepare_run(d);
    char *spm_path = path_join(d->dir, PREPARE_SPM_MODEL);
    t->spm_bytes = file_read(spm_path, &t->spm_len);
    if (!t->spm_bytes) FATAL("%s", status_message());
    CHECK(spm_load_bytes(&t->spm, t->spm_bytes, t->spm_len) == 0, "%s: %s", spm_path,
          status_message());
    free(spm_path);
    int vocab = spm_vocab_size(t->spm);
    uint64_t fp = tokcache_fingerprint(t->spm_bytes, t->spm_len);
    char *train = prepare_split_path(d->dir, SPLIT_TRAIN, "tok");
    char *valid = prepare_split_path(d->dir, SPLIT_VALID, "tok");
    char *refs = prepare_split_path(d->dir, SPLIT_VALID, "tgt");
    CHECK(tokcache_open(&t->train_cache, train, vocab, fp) == 0, "%s", status_message());
    CHECK(tokcache_open(&t->valid_cache, valid, vocab, fp) == 0, "%s", status_message());
    CHECK(t->train_cache.npairs > 0, "%s holds no training pairs", train);
    t->valid_refs = file_read_lines(refs, &t->n_valid);  // the normalized references
    if (!t->valid_refs) FATAL("%s", status_message());
    CHECK(t->n_valid == t->valid_cache.npairs, "%s has %ld lines, %s %ld pairs", refs,
          t->n_valid, valid, t->valid_cache.npairs);
    free(train), free(valid), free(refs);
}

static int newest_first(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x < y) - (x > y);
}

/* Stops a run whose checkpoint.last cannot be resumed (`why`), leaving it as it is. Only
 * checkpoint.last holds the training state (Adam moments, data position, dropout counter, best
 * metric and patience); checkpoint.uN and checkpoint.best hold parameters only, so nothing else
 * can continue the run exactly and nothing is resumed silently from an older state. The message
 * says which of those load intact (checkpoint.uN newest first, then checkpoint.best) and how to
 * go on from the newest: train.init_from in a new run directory. */
static void cannot_resume(const Trainer *t, const char *why) __attribute__((noreturn));
static void cannot_resume(const Trainer *t, const char *why) {
    StrBuf msg = {0};  // first, as why may be the status message the loads below replace
    strbuf_addf(&msg, "%s\n  checkpoint.last is left as it is; no other checkpoint holds the "
                "training state (Adam moments,\n  data position, dropout counter), so the run "
                "cannot continue exactly.\n", why);
    long *updates = NULL;
    int n = 0;
    DIR *d = opendir(t->run_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        long u;
        char extra;
        if (sscanf(e->d_name, "checkpoint.u%ld%c", &u, &extra) == 1) {
            updates = xrealloc(updates, sizeof *updates * (size_t)(n + 1));
            updates[n++] = u;
        }
    }
    if (d) closedir(d);
    qsort(updates, (size_t)n, sizeof *updates, newest_first);
    StrBuf intact = {0}, damaged = {0};
    char *newest = NULL;
    for (int i = 0; i <= n; i++) {
        char name[64];
        if (i < n)
            snprintf(name, sizeof name, "checkpoint.u%ld", updates[i]);
        else
            snprintf(name, sizeof name, "checkpoint.best");
        char *path = path_join(t->run_dir, name);
        Checkpoint ck;
        bool present = file_exists(path), ok = present && checkpoint_load(path, &ck) == 0;
        if (ok) checkpoint_free(&ck);
        if (present) {
            StrBuf *list = ok ? &intact : &damaged;
            strbuf_addf(list, "%s%s%s", list->len ? ", " : "", name,
                        ok && !newest ? " (newest)" : "");
        }
        if (ok && !newest)
            newest = path;
        else
            free(path);
    }
    free(updates);
    if (newest)
        strbuf_addf(&msg, "  In %s, parameters only, intact: %s%s%s.\n  To go on from %s, with "
                    "a fresh optimizer and learning-rate schedule:\n"
                    "    nmt train ... --set train.init_from=%s --set train.run_dir=NEW_DIR\n",
                    t->run_dir, intact.s, damaged.len ? "; damaged: " : "",
                    damaged.len ? damaged.s : "", newest, newest);
    else
        strbuf_addf(&msg, "  %s holds no intact checkpoint.uN or checkpoint.best%s%s%s.\n",
                    t->run_dir, damaged.len ? " (damaged: " : "", damaged.len ? damaged.s : "",
                    damaged.len ? ")" : "");
    strbuf_addf(&msg, "  To start this run over, move %s/checkpoint.last away.", t->run_dir);
    strbuf_free(&intact), strbuf_free(&damaged), free(newest);
    FATAL("%s", msg.s);
}

/* Restores a run directory's checkpoint.last, checking that the model is the same. */
static bool resume(Trainer *t, const char *last) {
    Checkpoint ck;
    if (checkpoint_load(last, &ck)) cannot_resume(t, status_message());
    Config saved;
    config_init(&saved);
    CHECK(config_load_string(&saved, ck.config, strlen(ck.config), last) == 0, "%s",
          status_message());
    char diff[2048];
    if (config_differences(&saved, t->cfg, "model.", diff, sizeof diff))
        FATAL("%s was trained with a different model (%s); use another train.run_dir", last, diff);
    if (config_differences(&saved, t->cfg, "train.", diff, sizeof diff))
        fprintf(stderr, "[train] resuming with changed training options: %s\n", diff);
    if (ck.spm_len != t->spm_len || memcmp(ck.spm, t->spm_bytes, t->spm_len))
        FATAL("%s was trained with another SentencePiece model than %s/spm.model now holds; "
              "use another train.run_dir", last, t->cfg->data.dir);
    if (!ck.has_state || !ck.has_optimizer) {
        char why[4096];
        snprintf(why, sizeof why, "%s holds parameters only, no training state", last);
        cannot_resume(t, why);
    }
    if (checkpoint_restore(&ck, &t->m.params, true)) FATAL("%s: %s", last, status_message());
    t->st = ck.state;
    checkpoint_free(&ck);
    config_free(&saved);
    return true;
}

static void init_from(Trainer *t, const char *path) {
    Checkpoint ck;
    if (checkpoint_load(path, &ck)) FATAL("train.init_from: %s", status_message());
    if (ck.spm_len != t->spm_len || memcmp(ck.spm, t->spm_bytes, t->spm_len))
        FATAL("train.init_from %s: trained with another SentencePiece model than %s/spm.model; "
              "its token ids would not match",
              path, t->cfg->data.dir);
    if (checkpoint_restore(&ck, &t->m.params, false))
        FATAL("train.init_from %s: %s", path, status_message());
    checkpoint_free(&ck);
    fprintf(stderr, "[train] parameters from %s; optimizer and schedule start fresh\n", path);
}

/* ---------------------------------------------------------------- checkpoints */

static void save(Trainer *t, const char *name, bool full) {
    char *path = path_join(t->run_dir, name);
    CheckpointData d = {t->config_text, t->spm_bytes, t->spm_len, &t->m.params, full,
                        full ? &t->st : NULL};
    checkpoint_save(path, &d);
    free(path);
}

static void save_periodic(Trainer *t) {
    t->st.train_seconds = elapsed(t), t->t_start = now_seconds();
    save(t, "checkpoint.last", true);
    char name[64];
    snprintf(name, sizeof name, "checkpoint.u%ld", t->st.update);
    save(t, name, false);
    int keep = t->cfg->train.keep_checkpoints, save_freq = t->cfg->train.save_freq;
    long old = t->st.update - (long)keep * save_freq;
    if (old > 0) {  // the periodic checkpoint that just fell out of the window
        snprintf(name, sizeof name, "checkpoint.u%ld", old);
        char *path = path_join(t->run_dir, name);
        unlink(path);
        free(path);
    }
}

/* ---------------------------------------------------------------- validation */

static ModelBatch model_batch(const Batch *b) {
    return (ModelBatch){b->B, b->S, b->T, b->src, b->tgt_in, b->tgt_out, b->src_len, b->tgt_len};
}

/* The value of train.valid_metric among the validation results, and in *sign the factor that
 * makes it a score where higher is better. */
static double metric_value(ValidMetric m, double bleu, double nll, double *sign) {
    switch (m) {
    case VALID_METRIC_BLEU: *sign = 1; return bleu;
    case VALID_METRIC_NLL: *sign = -1; return nll;
    }
    FATAL("%d is not a validation metric", (int)m);
}

/* Dev NLL per token and BLEU; returns the metric where higher is better. */
static double validate(Trainer *t) {
    const TrainConfig *tc = &t->cfg->train;
    double t0 = now_seconds();
    Ctx eval = t->ctx;
    eval.train = false;
    LossStats ls = {0};
    const Batch *b;
    while ((b = batcher_next(&t->valid_batches))) {
        ModelBatch mb = model_batch(b);
        model_step(&t->m, &eval, &mb, &ls, false, 0.0f);
    }
    double nll = ls.nll / (ls.ntok ? ls.ntok : 1), bleu = 0.0;
    bool want_bleu = t->cfg->decode.valid_beam > 0;
    if (want_bleu) {
        long n = t->n_valid;
        const int32_t **src = xmalloc(sizeof(int32_t *) * n);
        int *len = xmalloc(sizeof(int) * n), *out_len = xmalloc(sizeof(int) * n);
        int32_t **out = xmalloc(sizeof(int32_t *) * n);
        for (long i = 0; i < n; i++)
            src[i] = tokcache_src(&t->valid_cache, i), len[i] = tokcache_src_len(&t->valid_cache, i);
        translator_run_ids(&t->valid_translator, &eval, src, len, n, out, out_len);
        char **hyp = xmalloc(sizeof(char *) * n);
        for (long i = 0; i < n; i++) hyp[i] = translator_decode(t->spm, out[i], out_len[i]), free(out[i]);
        BleuMetric metric = bleu_metric_bleu(BLEU_TOKENIZE_13A, false);
        BleuScore score;
        CHECK(bleu_corpus_score(&metric, (const char *const *)hyp, (const char *const *)t->valid_refs,
                                n, &score), "scoring the validation set");
        bleu = score.score;
        for (long i = 0; i < n; i++) free(hyp[i]);
        free(hyp), free(src), free(len), free(out), free(out_len);
    }
    double sign, value = metric_value(tc->valid_metric, bleu, nll, &sign);
    double metric = sign * value;
    TrainState *st = &t->st;
    bool best = !st->has_best || metric > st->best_metric;
    char status[128];
    if (best) {
        st->best_metric = metric, st->has_best = 1, st->stalls = 0;
        snprintf(status, sizeof status, "new best");
        save(t, "checkpoint.best", false);
    } else {
        st->stalls++;
        snprintf(status, sizeof status, "stalled %d times (best %s %.4g)", st->stalls,
                 valid_metric_name(tc->valid_metric), sign * st->best_metric);
    }
    double secs = now_seconds() - t0;
    char bleu_text[64] = "";
    if (want_bleu) snprintf(bleu_text, sizeof bleu_text, " | bleu %.2f (beam %d)", bleu, t->cfg->decode.valid_beam);
    logf_both(t, "[valid] ep %d | up %ld | nll %.4f ppl %.2f%s | %.1fs | %s\n", st->epoch,
              st->update, nll, exp(nll), bleu_text, secs, status);
    fprintf(t->jsonl,
            "{\"type\":\"valid\",\"epoch\":%d,\"update\":%ld,\"nll\":%.6f,\"ppl\":%.4f,"
            "\"bleu\":%.4f,\"beam\":%d,\"best\":%s,\"stalls\":%d,\"elapsed\":%.1f,\"seconds\":%.2f}\n",
            st->epoch, st->update, nll, exp(nll), bleu, t->cfg->decode.valid_beam,
            best ? "true" : "false", st->stalls, elapsed(t), secs);
    fflush(t->jsonl);
    return metric;
}

/* ---------------------------------------------------------------- the loop */

/* The next training batch; moves to the next epoch at the end of one. */
static const Batch *next_batch(Trainer *t) {
    const Batch *b = batcher_next(&t->train_batches);
    if (!b) b = batcher_next(&t->train_batches);
    BatchCursor cur = batcher_cursor(&t->train_batches);
    t->st.epoch = (int)cur.epoch + 1, t->st.batch_in_epoch = cur.batch;
    return b;
}

static void log_progress(Trainer *t, double lr) {
    const TrainState *st = &t->st;
    double now = now_seconds(), secs = now - t->t_disp;
    long ntok = t->disp.ntok ? t->disp.ntok : 1;
    double loss = t->disp.loss / ntok, nll = t->disp.nll / ntok;
    double gnorm = t->disp_gnorm / (t->disp_updates ? t->disp_updates : 1);
    logf_both(t, "ep %d | up %ld | loss %.3f nll %.3f ppl %.2f | lr %.3e | gnorm %.3f | "
              "tgt tok/s %.0f | elapsed %.0fs\n",
              st->epoch, st->update, loss, nll, exp(nll), lr, gnorm, t->disp.ntok / secs, elapsed(t));
    fprintf(t->jsonl,
            "{\"type\":\"train\",\"epoch\":%d,\"update\":%ld,\"loss\":%.6f,\"nll\":%.6f,"
            "\"ppl\":%.4f,\"lr\":%.6e,\"gnorm\":%.5f,\"tokens_per_s\":%.1f,\"elapsed\":%.1f}\n",
            st->epoch, st->update, loss, nll, exp(nll), lr, gnorm, t->disp.ntok / secs, elapsed(t));
    fflush(t->jsonl);
    t->disp = (LossStats){0}, t->disp_gnorm = 0, t->disp_updates = 0, t->t_disp = now;
}

/* One optimizer update from `accum` batches. Returns false if it was skipped. */
static bool update(Trainer *t, double *lr_out) {
    const TrainConfig *tc = &t->cfg->train;
    ParamTable *pt = &t->m.params;
    params_zero_grad(pt);
    LossStats ls = {0};
    for (int a = 0; a < tc->accum; a++) {
        const Batch *b = next_batch(t);
        ModelBatch mb = model_batch(b);
        t->ctx.step = (uint64_t)t->st.micro_step++;
        model_step(&t->m, &t->ctx, &mb, &ls, true, (float)tc->label_smoothing);
    }
    grads_scale(pt, 1.0f / (float)(ls.ntok ? ls.ntok : 1));
    double gnorm = grads_clip(pt, tc->clip_norm);
    double lr = schedule_lr(tc, t->m.D, t->st.update + 1);
    *lr_out = lr;
    if (!isfinite(ls.loss) || !isfinite(gnorm)) {
        int bad = params_first_nonfinite(pt, false);
        t->st.skipped++;
        t->nonfinite_in_a_row++;
        logf_both(t, "[warn] update %ld skipped: non-finite %s (first tensor with NaN/Inf: %s)\n",
                  t->st.update + 1, isfinite(ls.loss) ? "gradient" : "loss",
                  bad >= 0 ? pt->info[bad].name : "none");
        if (t->nonfinite_in_a_row >= MAX_NONFINITE_IN_A_ROW)
            FATAL("%d updates in a row had a non-finite loss or gradient (update %ld, lr %.3e, "
                  "first tensor with NaN/Inf: %s); lower train.lr or set train.clip_norm. "
                  "checkpoint.last holds the last good state",
                  MAX_NONFINITE_IN_A_ROW, t->st.update + 1, lr, bad >= 0 ? pt->info[bad].name : "none");
        return false;
    }
    t->nonfinite_in_a_row = 0;
    adam_step(pt, &t->adam, lr, t->st.update + 1);
    t->st.update++;
    t->st.tokens += ls.ntok;
    t->disp.loss += ls.loss, t->disp.nll += ls.nll, t->disp.ntok += ls.ntok;
    t->disp_gnorm += gnorm, t->disp_updates++;
    return true;
}

/* Epochs whose every batch has been trained on. */
static long epochs_done(Trainer *t) {
    BatchCursor cur = batcher_cursor(&t->train_batches);
    return cur.epoch + (cur.batch >= batcher_epoch_batches(&t->train_batches));
}

static const char *stop_reason(Trainer *t) {
    const TrainConfig *tc = &t->cfg->train;
    if (stop_signal) return "signal";
    if (tc->max_updates && t->st.update >= tc->max_updates) return "max_updates";
    if (tc->max_epochs && epochs_done(t) >= tc->max_epochs) return "max_epochs";
    if (tc->max_time > 0 && elapsed(t) >= tc->max_time * 60.0) return "max_time";
    if (tc->patience && t->st.stalls >= tc->patience) return "patience";
    return NULL;
}

int train_run(Config *cfg) {
    Trainer T = {0}, *t = &T;
    t->cfg = cfg;
    const TrainConfig *tc = &cfg->train;
    t->run_dir = tc->run_dir;
    CHECK(*cfg->data.dir, "data.dir is not set (the prepared data directory)");
    struct stat st;
    if (stat(t->run_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        FATAL("train.run_dir %s is not a directory", t->run_dir);
    if (!make_dirs(t->run_dir))
        FATAL("cannot create directory %s: %s", t->run_dir, strerror(errno));
    char *lock = path_join(t->run_dir, "lock");
    int lock_fd = open(lock, O_WRONLY | O_CREAT, 0644);
    if (lock_fd < 0) FATAL("cannot open %s: %s", lock, strerror(errno));
    if (flock(lock_fd, LOCK_EX | LOCK_NB))
        FATAL("another nmt train is using the run directory %s", t->run_dir);
    free(lock);
    atomic_remove_stale(t->run_dir, "[train]");  // what killed runs left: checkpoint.last.tmp.PID
    char *log_path = path_join(t->run_dir, "train.log"), *json_path = path_join(t->run_dir, "train.jsonl");
    t->log = xfopen(log_path, "a");
    t->jsonl = xfopen(json_path, "a");
    free(log_path), free(json_path);

    open_data(t);
    const GemmImpl *gemm = gemm_select(gemm_backend_name(tc->gemm));
    model_build(&t->m, &cfg->model, spm_vocab_size(t->spm));
    t->config_text = config_dump_string(cfg);
    char *last = path_join(t->run_dir, "checkpoint.last");
    bool resumed = file_exists(last) && resume(t, last);
    if (!resumed) {
        model_init_params(&t->m, (uint64_t)tc->seed);
        if (*tc->init_from) init_from(t, tc->init_from);
        t->st.epoch = 1;
    }
    char *dump = path_join(t->run_dir, "config.yaml");
    atomic_write_file(dump, t->config_text, strlen(t->config_text));
    free(dump);

    // memory: the largest training batch, validation batches, and validation decoding
    int max_src = t->train_cache.max_src_len, max_tgt = t->train_cache.max_tgt_len;
    if (t->valid_cache.max_src_len > max_src) max_src = t->valid_cache.max_src_len;
    if (t->valid_cache.max_tgt_len > max_tgt) max_tgt = t->valid_cache.max_tgt_len;
    int max_len = (max_src > max_tgt ? max_src : max_tgt) + 1;
    SearchOptions vo = translator_options(&cfg->decode, cfg->decode.valid_beam ? cfg->decode.valid_beam : 1);
    int dec_tokens, dec_len;
    translator_needs(&vo, cfg->decode.batch_tokens, t->valid_cache.max_src_len + 1, &dec_tokens, &dec_len);
    int plan_tokens = tc->batch_tokens > dec_tokens ? tc->batch_tokens : dec_tokens;
    model_plan(&t->m, plan_tokens, max_len > dec_len ? max_len : dec_len);
    translator_init(&t->valid_translator, &t->m, t->spm, &vo, cfg->decode.batch_tokens,
                    t->valid_cache.max_src_len + 1);
    batcher_init(&t->train_batches, &t->train_cache,
                 &(BatcherOptions){tc->batch_tokens, tc->sort_pool, (uint64_t)tc->seed, true});
    batcher_init(&t->valid_batches, &t->valid_cache,
                 &(BatcherOptions){tc->batch_tokens, tc->sort_pool, 0, false});
    if (resumed)
        batcher_seek(&t->train_batches, (BatchCursor){t->st.epoch - 1, t->st.batch_in_epoch});
    t->ctx = (Ctx){gemm, (uint64_t)tc->seed, 0, true};
    t->adam = (AdamHyper){tc->beta1, tc->beta2, tc->eps, tc->weight_decay};

    size_t nparams = params_count(&t->m.params);
    logf_both(t,
              "[train] %s: %s attention (dk %d), %zu parameters (%.2fM), vocabulary %d, "
              "%ld training pairs, %ld validation pairs, %d threads, gemm %s\n",
              resumed ? "resuming" : "starting", attention_mode_name(cfg->model.attention),
              config_model_dk(&cfg->model), nparams, nparams / 1e6, t->m.V, t->train_cache.npairs,
              t->valid_cache.npairs, t->m.nthreads, gemm->name);
    if (resumed)
        logf_both(t, "[train] resumed at update %ld, epoch %d, batch %ld of the epoch\n",
                  t->st.update, t->st.epoch, t->st.batch_in_epoch);
    fprintf(t->jsonl,
            "{\"type\":\"%s\",\"update\":%ld,\"attention\":\"%s\",\"dk\":%d,\"params\":%zu}\n",
            resumed ? "resume" : "start", t->st.update, attention_mode_name(cfg->model.attention),
            config_model_dk(&cfg->model), nparams);
    fflush(t->jsonl);

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    t->t_start = t->t_disp = now_seconds();
    const char *why;
    long last_valid = t->st.update, last_save = t->st.update;
    double lr = 0;
    while (!(why = stop_reason(t))) {
        if (!update(t, &lr)) continue;
        if (t->st.update % tc->disp_freq == 0) log_progress(t, lr);
        if (tc->valid_freq && t->st.update % tc->valid_freq == 0) {
            validate(t);
            last_valid = t->st.update;
        }
        if (t->st.update % tc->save_freq == 0) {
            save_periodic(t);
            last_save = t->st.update;
        }
    }
    if (t->disp_updates) log_progress(t, lr);
    if (last_valid != t->st.update && !stop_signal) validate(t);
    if (last_save != t->st.update || !file_exists(last)) save_periodic(t);
    logf_both(t, "[train] stopped (%s) at update %ld, epoch %d after %.0fs; checkpoints in %s\n",
              why, t->st.update, t->st.epoch, t->st.train_seconds, t->run_dir);
    if (stop_signal)
        logf_both(t, "[train] resume with the same command: the run continues from "
                  "%s/checkpoint.last\n", t->run_dir);
    translator_free(&t->valid_translator);
    batcher_free(&t->train_batches), batcher_free(&t->valid_batches);
    tokcache_close(&t->train_cache), tokcache_close(&t->valid_cache);
    file_free_lines(t->valid_refs, t->n_valid);
    free(t->config_text), free(t->spm_bytes), free(last);
    spm_free(t->spm);
    model_free(&t->m);
    fclose(t->log), fclose(t->jsonl);
    close(lock_fd);
    return stop_signal ? TRAIN_INTERRUPTED : 0;
}
