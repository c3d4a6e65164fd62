/* train.c: the training loop of train.h. */
#include "train.h"

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
#include <zlib.h>

#include "arena.h"
#include "atomic.h"
#include "batcher.h"
#include "bleu.h"
#include "check.h"
#include "checkpoint.h"
#include "dist.h"
#include "files.h"
#include "grad_sync.h"
#include "model.h"
#include "optimizer.h"
#include "paths.h"
#include "prepare.h"
#include "sha256.h"
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
    int rank, nranks;  // this process among the ranks of a data-parallel run (dist.h)
    bool lead;         // rank 0: the one that writes logs and checkpoints
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
    SearchOptions valid_search;  // validation decoding (its translator exists while it runs)
    int valid_max_src;           // the longest validation source, +1 for EOS
    GradSync sync;
    float *averaged;  // (params numel) moving average of the parameters (train.ema_decay) or NULL
    TrainState st;
    int nonfinite_in_a_row;
    // logging (rank 0 only; NULL on the others)
    FILE *log, *jsonl;
    double t_start, t_disp;
    LossStats disp;  // since the last log line
    double disp_gnorm;
    long disp_updates;
    double disp_wait;  // seconds waiting for the gradient sums of the other ranks
} Trainer;

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

static void logf_both(Trainer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_both(Trainer *t, const char *fmt, ...) {
    if (!t->lead) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    vfprintf(t->log, fmt, ap);
    va_end(ap);
    fflush(t->log);
}

/* A line of train.jsonl (rank 0). */
static void jsonl_printf(Trainer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jsonl_printf(Trainer *t, const char *fmt, ...) {
    if (!t->lead) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->jsonl, fmt, ap);
    va_end(ap);
    fflush(t->jsonl);
}

static double elapsed(const Trainer *t) { return t->st.train_seconds + now_seconds() - t->t_start; }

/* ---------------------------------------------------------------- set-up */

/* Rank 0 prepares the data directory (or finds it up to date); the others wait and read it. */
static void open_data(Trainer *t) {
    const DataConfig *d = &t->cfg->data;
    if (t->lead) prepare_run(d);
    dist_barrier(false, "waiting for rank 0 to prepare the data");
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
    long *updates;  // (n) the N of every checkpoint.uN, oldest first
    int n;
    if (checkpoint_periodic(t->run_dir, &updates, &n)) updates = NULL, n = 0;
    StrBuf intact = {0}, damaged = {0};
    char *newest = NULL;
    for (int i = 0; i <= n; i++) {
        char name[64];
        if (i < n)  // newest first
            snprintf(name, sizeof name, "checkpoint.u%ld", updates[n - 1 - i]);
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
    Config now = *t->cfg;  // compared with dk spelled out: dk 0 is d_model, the same model
    saved.model.dk = config_model_dk(&saved.model), now.model.dk = config_model_dk(&now.model);
    if (config_differences(&saved, &now, "model.", diff, sizeof diff))
        FATAL("%s was trained with a different model (%s); use another train.run_dir", last, diff);
    if (config_differences(&saved, &now, "train.", diff, sizeof diff))
        fprintf(stderr, "[train] resuming with changed training options: %s\n", diff);
    if (ck.spm_len != t->spm_len || memcmp(ck.spm, t->spm_bytes, t->spm_len))
        FATAL("%s was trained with another SentencePiece model than %s/spm.model now holds; "
              "use another train.run_dir", last, t->cfg->data.dir);
    if (!ck.has_state || !ck.has_optimizer) {
        char why[4096];
        snprintf(why, sizeof why, "%s holds parameters only, no training state", last);
        cannot_resume(t, why);
    }
    if (checkpoint_restore(&ck, &t->m.params, true, t->averaged))
        FATAL("%s: %s", last, status_message());
    if (ck.has_training && !t->averaged)
        fprintf(stderr, "[train] train.ema_decay is 0: training continues from the training "
                "weights of %s, its moving average is dropped\n", last);
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
    if (checkpoint_restore(&ck, &t->m.params, false, NULL))
        FATAL("train.init_from %s: %s", path, status_message());
    checkpoint_free(&ck);
    fprintf(stderr, "[train] parameters from %s; optimizer and schedule start fresh\n", path);
}

/* ---------------------------------------------------------------- checkpoints */

static void save(Trainer *t, const char *name, bool full) {
    if (!t->lead) return;
    char *path = path_join(t->run_dir, name);
    CheckpointData d = {t->config_text, t->spm_bytes, t->spm_len, &t->m.params, full,
                        full ? &t->st : NULL, t->averaged};
    checkpoint_save(path, &d);
    free(path);
}

static void save_periodic(Trainer *t) {
    t->st.train_seconds = elapsed(t), t->t_start = now_seconds();
    save(t, "checkpoint.last", true);
    char name[64];
    snprintf(name, sizeof name, "checkpoint.u%ld", t->st.update);
    save(t, name, false);
    if (!t->lead) return;
    // Only the newest keep_checkpoints stay, whichever updates wrote them: save_freq ones, and
    // those of a stop by signal or max_time in between.
    long *updates;  // (n) the N of every checkpoint.uN, oldest first
    int n;
    if (checkpoint_periodic(t->run_dir, &updates, &n)) FATAL("%s", status_message());
    for (int i = 0; i < n - t->cfg->train.keep_checkpoints; i++) {
        snprintf(name, sizeof name, "checkpoint.u%ld", updates[i]);
        char *path = path_join(t->run_dir, name);
        unlink(path);
        free(path);
    }
    free(updates);
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

/* Exchanges the parameters with their moving average, element by element: validation runs the
 * average, and a second call puts the training weights back. */
static void swap_average(Trainer *t) {
    if (!t->averaged) return;
    float *p = t->m.params.param, *a = t->averaged;
    long n = (long)t->m.params.numel;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        float x = p[i];
        p[i] = a[i], a[i] = x;
    }
}

/* The validation set's NLL per token and BLEU (0 when decode.valid_beam is 0) of the model's
 * current parameters. */
static void evaluate(Trainer *t, double *nll_out, double *bleu_out) {
    Ctx eval = t->ctx;
    eval.train = false;
    // Each rank takes every nranks-th batch and sentence; the sums of the loss and of the BLEU
    // statistics over the ranks are those of the whole set.
    LossStats ls = {0};
    const Batch *b;
    for (long i = 0; (b = batcher_next(&t->valid_batches)); i++) {
        if (i % t->nranks != t->rank) continue;
        ModelBatch mb = model_batch(b);
        model_step(&t->m, &eval, &mb, &ls, false, 0.0f);
    }
    double loss_sums[2] = {ls.nll, (double)ls.ntok};
    dist_allreduce(loss_sums, 2, DIST_SUM, "the validation loss");
    double nll = loss_sums[0] / (loss_sums[1] ? loss_sums[1] : 1), bleu = 0.0;
    bool want_bleu = t->cfg->decode.valid_beam > 0;
    if (want_bleu) {
        long n = 0, cap = t->n_valid / t->nranks + 1;
        const int32_t **src = xmalloc(sizeof(int32_t *) * cap);     // (n) this rank's sentences
        const char **ref = xmalloc(sizeof(char *) * cap);           // (n)
        int *len = xmalloc(sizeof(int) * cap), *out_len = xmalloc(sizeof(int) * cap);
        int32_t **out = xmalloc(sizeof(int32_t *) * cap);
        for (long i = t->rank; i < t->n_valid; i += t->nranks, n++) {
            src[n] = tokcache_src(&t->valid_cache, i), len[n] = tokcache_src_len(&t->valid_cache, i);
            ref[n] = t->valid_refs[i];
        }
        // The training activations are idle until the next update: their pages go back to the
        // kernel while the decoder's caches are allocated, so the two never add up.
        model_release_memory(&t->m);
        Translator tr;
        translator_init(&tr, &t->m, t->spm, &t->valid_search, t->cfg->decode.batch_tokens,
                        t->valid_max_src);
        translator_run_ids(&tr, &eval, src, len, n, out, out_len);
        translator_free(&tr);
        char **hyp = xmalloc(sizeof(char *) * cap);
        for (long i = 0; i < n; i++) hyp[i] = translator_decode(t->spm, out[i], out_len[i]), free(out[i]);
        BleuMetric metric = bleu_metric_bleu(BLEU_TOKENIZE_13A, false);
        const int nstats = bleu_metric_nstats(&metric);
        int64_t *sums = xcalloc((size_t)nstats, sizeof *sums);  // (nstats)
        double *dsums = xcalloc((size_t)nstats, sizeof *dsums);  // (nstats)
        BleuCorpusStats stats;
        const char *const *refs[1] = {ref};
        CHECK(bleu_corpus_stats(&metric, (const char *const *)hyp, refs, 1, n, &stats),
              "scoring the validation set");
        bleu_corpus_stats_sum(&stats, sums);
        for (int k = 0; k < nstats; k++) dsums[k] = (double)sums[k];  // counts, exact below 2^53
        dist_allreduce(dsums, nstats, DIST_SUM, "the validation BLEU statistics");
        for (int k = 0; k < nstats; k++) sums[k] = (int64_t)dsums[k];
        bleu = bleu_score(&metric, sums).score;
        bleu_corpus_stats_free(&stats);
        for (long i = 0; i < n; i++) free(hyp[i]);
        free(hyp), free(src), free(ref), free(len), free(out), free(out_len), free(sums), free(dsums);
    }
    *nll_out = nll, *bleu_out = bleu;
}

/* Validates the moving average of the parameters if there is one, else the parameters; saves
 * checkpoint.best on a new best. Returns the metric where higher is better. */
static double validate(Trainer *t) {
    const TrainConfig *tc = &t->cfg->train;
    const bool want_bleu = t->cfg->decode.valid_beam > 0;
    double t0 = now_seconds(), nll, bleu;
    swap_average(t);
    evaluate(t, &nll, &bleu);
    swap_average(t);
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
    jsonl_printf(t,
            "{\"type\":\"valid\",\"epoch\":%d,\"update\":%ld,\"nll\":%.6f,\"ppl\":%.4f,"
            "\"bleu\":%.4f,\"beam\":%d,\"best\":%s,\"stalls\":%d,\"elapsed\":%.1f,\"seconds\":%.2f}\n",
            st->epoch, st->update, nll, exp(nll), bleu, t->cfg->decode.valid_beam,
            best ? "true" : "false", st->stalls, elapsed(t), secs);
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
    // under mpirun: the share of the time spent waiting for the gradient sums
    char wait_text[64] = "", wait[64] = "";
    if (t->nranks > 1) {
        snprintf(wait_text, sizeof wait_text, " | sync wait %.1f%%", 100.0 * t->disp_wait / secs);
        snprintf(wait, sizeof wait, ",\"sync_wait\":%.4f", t->disp_wait / secs);
    }
    logf_both(t, "ep %d | up %ld | loss %.3f nll %.3f ppl %.2f | lr %.3e | gnorm %.3f | "
              "tgt tok/s %.0f%s | elapsed %.0fs\n",
              st->epoch, st->update, loss, nll, exp(nll), lr, gnorm, t->disp.ntok / secs, wait_text,
              elapsed(t));
    jsonl_printf(t,
            "{\"type\":\"train\",\"epoch\":%d,\"update\":%ld,\"loss\":%.6f,\"nll\":%.6f,"
            "\"ppl\":%.4f,\"lr\":%.6e,\"gnorm\":%.5f,\"tokens_per_s\":%.1f,\"elapsed\":%.1f%s}\n",
            st->epoch, st->update, loss, nll, exp(nll), lr, gnorm, t->disp.ntok / secs, elapsed(t),
            wait);
    t->disp = (LossStats){0}, t->disp_gnorm = 0, t->disp_updates = 0, t->t_disp = now;
    t->disp_wait = 0;
}

/* One optimizer update from accum x nranks batches. They are dealt out in turn (batch i of the
 * update to rank i % nranks), each with the dropout masks of its place in the update, so the
 * ranks together see the batches of one rank with accum x nranks; the gradients and the loss
 * are summed over the ranks and the gradient divided by the update's target tokens on all of
 * them. Returns false if the update was skipped. */
static bool update(Trainer *t, double *lr_out) {
    const TrainConfig *tc = &t->cfg->train;
    ParamTable *pt = &t->m.params;
    params_zero_grad(pt);
    LossStats ls = {0};
    const int n = tc->accum * t->nranks;
    for (int i = 0; i < n; i++) {
        const Batch *b = next_batch(t);
        if (i % t->nranks != t->rank) continue;
        ModelBatch mb = model_batch(b);
        t->ctx.step = (uint64_t)(t->st.micro_step + i);
        if (i + t->nranks >= n) grad_sync_arm(&t->sync);  // this rank's last batch
        model_step(&t->m, &t->ctx, &mb, &ls, true, (float)tc->label_smoothing);
    }
    t->st.micro_step += n;
    grad_sync_finish(&t->sync);
    t->disp_wait += t->sync.wait_s, t->sync.wait_s = 0;
    double sums[3] = {ls.loss, ls.nll, (double)ls.ntok};
    dist_allreduce(sums, 3, DIST_SUM, "the update's loss");
    ls = (LossStats){sums[0], sums[1], (long)sums[2]};
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
    if (t->averaged) ema_update(pt, t->averaged, tc->ema_decay, t->st.update);
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

/* Why the run stops now, or NULL. The ranks agree: a signal to any of them stops all, and the
 * time limit is read on rank 0's clock. */
static const char *stop_reason(Trainer *t) {
    const TrainConfig *tc = &t->cfg->train;
    double local[2] = {stop_signal != 0,
                       t->lead && tc->max_time > 0 && elapsed(t) >= tc->max_time * 60.0};
    dist_allreduce(local, 2, DIST_MAX, "the stopping rules");
    if (local[0]) return "signal";
    if (tc->max_updates && t->st.update >= tc->max_updates) return "max_updates";
    if (tc->max_epochs && epochs_done(t) >= tc->max_epochs) return "max_epochs";
    if (local[1]) return "max_time";
    if (tc->patience && t->st.stalls >= tc->patience) return "patience";
    return NULL;
}

/* ---------------------------------------------------------------- ranks */

/* Every rank learns whether any found a problem (it prints its own first, naming it); if one
 * did, all stop, saying in what the ranks differ. */
static void agree(const Trainer *t, const char *problem, const char *what) {
    if (problem) fprintf(stderr, "nmt: error: rank %d of %d: %s\n", t->rank, t->nranks, problem);
    double bad = problem != NULL;
    dist_allreduce(&bad, 1, DIST_MAX, what);
    if (bad)
        FATAL("the ranks of this job differ in %s (the rank that differs says how above); "
              "every rank must run the same nmt on the same configuration and data", what);
}

/* Rank 0's copy of `mine` (bytes) on every rank, in `lead`. */
static void lead_copy(const void *mine, void *lead, size_t bytes, const char *what) {
    memcpy(lead, mine, bytes);
    dist_bcast(lead, bytes, 0, what);
}

/* What identifies the prepared data: the manifest (inputs, sizes, checksums, counts) and the
 * token caches. */
typedef struct DataIdentity {
    uint32_t manifest_crc;
    uint64_t spm_fingerprint;
    long train_pairs, train_tokens, valid_pairs;
} DataIdentity;

static DataIdentity data_identity(const Trainer *t) {
    char *path = path_join(t->cfg->data.dir, PREPARE_MANIFEST);
    size_t n;
    char *text = file_read(path, &n);
    if (!text) FATAL("%s", status_message());
    DataIdentity id;
    memset(&id, 0, sizeof id);  // padding too: the ranks compare the bytes
    id.manifest_crc = (uint32_t)crc32_z(0, (const Bytef *)text, n);
    id.spm_fingerprint = t->train_cache.spm_fingerprint;
    id.train_pairs = t->train_cache.npairs, id.valid_pairs = t->valid_cache.npairs;
    id.train_tokens = t->train_cache.src_tokens + t->train_cache.tgt_tokens;
    free(text), free(path);
    return id;
}

/* At start-up the ranks compare their binary, configuration and data with rank 0's. */
static void check_same_job(Trainer *t) {
    if (t->nranks == 1) return;
    char problem[4096];
    size_t n;
    char *exe = file_read("/proc/self/exe", &n);
    if (!exe) FATAL("%s", status_message());
    char mine[65], lead[65];
    sha256_hex(exe, n, mine);
    free(exe);
    lead_copy(mine, lead, sizeof lead, "comparing the nmt binaries");
    snprintf(problem, sizeof problem, "runs another nmt binary than rank 0 (SHA-256 %.16s..., "
             "rank 0's %.16s...)", mine, lead);
    agree(t, strcmp(mine, lead) ? problem : NULL, "their nmt binary");

    long len = (long)strlen(t->config_text), lead_len;
    lead_copy(&len, &lead_len, sizeof len, "comparing the configurations");
    char *lead_text = xmalloc((size_t)lead_len + 1);
    if (t->lead) memcpy(lead_text, t->config_text, (size_t)len + 1);
    dist_bcast(lead_text, (size_t)lead_len + 1, 0, "comparing the configurations");
    const char *differs = NULL;
    if (strcmp(lead_text, t->config_text)) {
        Config lead_cfg;
        config_init(&lead_cfg);
        CHECK(config_load_string(&lead_cfg, lead_text, (size_t)lead_len, "rank 0's configuration") == 0,
              "%s", status_message());
        char diff[2048];
        config_differences(&lead_cfg, t->cfg, "", diff, sizeof diff);
        snprintf(problem, sizeof problem, "its configuration differs from rank 0's (rank 0 -> this "
                 "rank): %s", diff);
        config_free(&lead_cfg);
        differs = problem;
    }
    free(lead_text);
    agree(t, differs, "their configuration");

    DataIdentity id = data_identity(t), lead_id;
    lead_copy(&id, &lead_id, sizeof id, "comparing the data");
    snprintf(problem, sizeof problem, "reads other data than rank 0 from %s: %s %08x, %ld training "
             "pairs, %ld tokens, %ld validation pairs; rank 0: %s %08x, %ld, %ld, %ld",
             t->cfg->data.dir, PREPARE_MANIFEST, id.manifest_crc, id.train_pairs, id.train_tokens,
             id.valid_pairs, PREPARE_MANIFEST, lead_id.manifest_crc, lead_id.train_pairs,
             lead_id.train_tokens, lead_id.valid_pairs);
    agree(t, memcmp(&id, &lead_id, sizeof id) ? problem : NULL, "their data");
}

/* Every train.check_freq updates: the ranks' parameters must still be bit-identical. */
static void check_params_agree(Trainer *t) {
    if (t->nranks == 1) return;
    const ParamTable *pt = &t->m.params;
    uint32_t crc = (uint32_t)crc32_z(0, (const Bytef *)pt->param, sizeof(float) * pt->numel), lead;
    lead_copy(&crc, &lead, sizeof crc, "comparing the parameters");
    char problem[256];
    snprintf(problem, sizeof problem, "its parameters differ from rank 0's after update %ld "
             "(CRC-32 %08x, rank 0's %08x)", t->st.update, crc, lead);
    agree(t, crc != lead ? problem : NULL, "their parameters, which diverged");
}

/* Rank 0's parameters, Adam moments and training state (fresh, resumed or from init_from) on
 * every rank: only rank 0 reads the run directory. */
static void share_state(Trainer *t, bool *resumed) {
    if (t->nranks == 1) return;
    const ParamTable *pt = &t->m.params;
    int flag = *resumed;
    dist_bcast(&flag, sizeof flag, 0, "sharing the training state");
    *resumed = flag;
    dist_bcast(&t->st, sizeof t->st, 0, "sharing the training state");
    float *arenas[4] = {pt->param, pt->adam_m, pt->adam_v, t->averaged};
    const size_t chunk = (size_t)1 << 28;  // bytes per broadcast
    for (int a = 0; a < 4 && arenas[a]; a++)
        for (size_t off = 0; off < sizeof(float) * pt->numel; off += chunk) {
            size_t left = sizeof(float) * pt->numel - off;
            dist_bcast((char *)arenas[a] + off, left < chunk ? left : chunk, 0,
                       "sharing the parameters");
        }
}

int train_run(Config *cfg) {
    Trainer T = {0}, *t = &T;
    t->cfg = cfg;
    const TrainConfig *tc = &cfg->train;
    t->run_dir = tc->run_dir;
    t->nranks = dist_init(tc->dist_timeout), t->rank = dist_rank(), t->lead = t->rank == 0;
    CHECK(*cfg->data.dir, "data.dir is not set (the prepared data directory)");
    int lock_fd = -1;
    if (t->lead) {  // the run directory is rank 0's alone
        struct stat st;
        if (stat(t->run_dir, &st) == 0 && !S_ISDIR(st.st_mode))
            FATAL("train.run_dir %s is not a directory", t->run_dir);
        if (!make_dirs(t->run_dir))
            FATAL("cannot create directory %s: %s", t->run_dir, strerror(errno));
        char *lock = path_join(t->run_dir, "lock");
        lock_fd = open(lock, O_WRONLY | O_CREAT, 0644);
        if (lock_fd < 0) FATAL("cannot open %s: %s", lock, strerror(errno));
        if (flock(lock_fd, LOCK_EX | LOCK_NB))
            FATAL("another nmt train is using the run directory %s", t->run_dir);
        free(lock);
        atomic_remove_stale(t->run_dir, "[train]");  // what killed runs left: checkpoint.last.tmp.PID
        char *log_path = path_join(t->run_dir, "train.log"), *json_path = path_join(t->run_dir, "train.jsonl");
        t->log = xfopen(log_path, "a");
        t->jsonl = xfopen(json_path, "a");
        free(log_path), free(json_path);
    }

    open_data(t);
    const GemmImpl *gemm = gemm_select(gemm_backend_name(tc->gemm));
    model_build(&t->m, &cfg->model, spm_vocab_size(t->spm));
    const size_t param_bytes = sizeof(float) * t->m.params.numel;
    if (tc->ema_decay > 0) t->averaged = aligned_alloc_zeroed(param_bytes);
    t->config_text = config_dump_string(cfg);
    check_same_job(t);
    char *last = path_join(t->run_dir, "checkpoint.last");
    bool resumed = false;
    if (t->lead) {
        resumed = file_exists(last) && resume(t, last);
        if (!resumed) {
            model_init_params(&t->m, (uint64_t)tc->seed);
            if (*tc->init_from) init_from(t, tc->init_from);
            if (t->averaged) memcpy(t->averaged, t->m.params.param, param_bytes);
            t->st.epoch = 1;
        }
        char *dump = path_join(t->run_dir, "config.yaml");
        atomic_write_file(dump, t->config_text, strlen(t->config_text));
        free(dump);
    }
    share_state(t, &resumed);
    const int saved_ranks = t->st.ranks ? t->st.ranks : 1;
    t->st.ranks = t->nranks;
    // memory: the largest training batch, validation batches, and validation decoding
    int max_src = t->train_cache.max_src_len, max_tgt = t->train_cache.max_tgt_len;
    if (t->valid_cache.max_src_len > max_src) max_src = t->valid_cache.max_src_len;
    if (t->valid_cache.max_tgt_len > max_tgt) max_tgt = t->valid_cache.max_tgt_len;
    int max_len = (max_src > max_tgt ? max_src : max_tgt) + 1;
    const int valid_beam = cfg->decode.valid_beam ? cfg->decode.valid_beam : 1;
    t->valid_search = translator_options(&cfg->decode, valid_beam);
    t->valid_max_src = t->valid_cache.max_src_len + 1;
    int dec_tokens, dec_len;
    translator_needs(&t->valid_search, cfg->decode.batch_tokens, t->valid_max_src, &dec_tokens,
                     &dec_len);
    int plan_tokens = tc->batch_tokens > dec_tokens ? tc->batch_tokens : dec_tokens;
    model_plan(&t->m, plan_tokens, max_len > dec_len ? max_len : dec_len);
    batcher_init(&t->train_batches, &t->train_cache,
                 &(BatcherOptions){tc->batch_tokens, tc->sort_pool, (uint64_t)tc->seed, true});
    batcher_init(&t->valid_batches, &t->valid_cache,
                 &(BatcherOptions){tc->batch_tokens, tc->sort_pool, 0, false});
    if (resumed)
        batcher_seek(&t->train_batches, (BatchCursor){t->st.epoch - 1, t->st.batch_in_epoch});
    t->ctx = (Ctx){.gemm = gemm, .seed = (uint64_t)tc->seed, .train = true};
    grad_sync_init(&t->sync, &t->m, tc->dist_overlap);
    t->adam = (AdamHyper){tc->beta1, tc->beta2, tc->eps, tc->weight_decay};

    size_t nparams = params_count(&t->m.params);
    char ranks_text[96] = "";
    if (t->nranks > 1)
        snprintf(ranks_text, sizeof ranks_text, "%d ranks (%s) x ", t->nranks, dist_library());
    logf_both(t,
              "[train] %s: %s attention (dk %d), %zu parameters (%.2fM), vocabulary %d, "
              "%ld training pairs, %ld validation pairs, %s%d threads, gemm %s\n",
              resumed ? "resuming" : "starting", attention_mode_name(cfg->model.attention),
              config_model_dk(&cfg->model), nparams, nparams / 1e6, t->m.V, t->train_cache.npairs,
              t->valid_cache.npairs, ranks_text, t->m.nthreads, gemm->name);
    ModelMemory mem = model_memory(&t->m);
    char mem_text[256];
    model_memory_text(&mem, mem_text, sizeof mem_text);
    char valid_text[160] = "";
    if (cfg->decode.valid_beam > 0)
        snprintf(valid_text, sizeof valid_text,
                 "; validation decoding %.0f MB, allocated while it runs (the activations' pages "
                 "are released meanwhile)",
                 translator_state_bytes(&t->m, &t->valid_search, cfg->decode.batch_tokens,
                                        t->valid_max_src) / (double)(1 << 20));
    char average_text[64] = "";
    if (t->averaged)
        snprintf(average_text, sizeof average_text, ", moving average %.0f MB",
                 param_bytes / (double)(1 << 20));
    logf_both(t, "[train] memory: %s%s (for batches of %d tokens, sentences of up to %d)%s\n",
              mem_text, average_text, t->m.max_tokens, t->m.max_len, valid_text);
    if (resumed)
        logf_both(t, "[train] resumed at update %ld, epoch %d, batch %ld of the epoch\n",
                  t->st.update, t->st.epoch, t->st.batch_in_epoch);
    if (resumed && saved_ranks != t->nranks)
        logf_both(t, "[train] checkpoint.last was written by a run on %d rank%s, this one has %d: "
                  "an update now takes %d batches (accum %d per rank) from the same data position\n",
                  saved_ranks, saved_ranks > 1 ? "s" : "", t->nranks, tc->accum * t->nranks, tc->accum);
    jsonl_printf(t,
            "{\"type\":\"%s\",\"update\":%ld,\"attention\":\"%s\",\"dk\":%d,\"params\":%zu}\n",
            resumed ? "resume" : "start", t->st.update, attention_mode_name(cfg->model.attention),
            config_model_dk(&cfg->model), nparams);

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
        if (tc->check_freq && t->st.update % tc->check_freq == 0) check_params_agree(t);
        if (tc->valid_freq && t->st.update % tc->valid_freq == 0) {
            validate(t);
            last_valid = t->st.update;
        }
        if (t->st.update % tc->save_freq == 0) {
            save_periodic(t);
            last_save = t->st.update;
        }
    }
    const bool interrupted = !strcmp(why, "signal");
    if (t->disp_updates) log_progress(t, lr);
    check_params_agree(t);
    if (last_valid != t->st.update && !interrupted) validate(t);
    if (last_save != t->st.update || (t->lead && !file_exists(last))) save_periodic(t);
    logf_both(t, "[train] stopped (%s) at update %ld, epoch %d after %.0fs; checkpoints in %s\n",
              why, t->st.update, t->st.epoch, t->st.train_seconds, t->run_dir);
    if (interrupted)
        logf_both(t, "[train] resume with the same command: the run continues from "
                  "%s/checkpoint.last\n", t->run_dir);
    batcher_free(&t->train_batches), batcher_free(&t->valid_batches);
    tokcache_close(&t->train_cache), tokcache_close(&t->valid_cache);
    file_free_lines(t->valid_refs, t->n_valid);
    free(t->config_text), free(t->spm_bytes), free(last);
    spm_free(t->spm);
    model_free(&t->m);
    aligned_free(t->averaged);
    if (t->lead) fclose(t->log), fclose(t->jsonl), close(lock_fd);
    dist_finalize();
    return interrupted ? TRAIN_INTERRUPTED : 0;
}
