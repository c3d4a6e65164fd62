/* test_checkpoint.c: checkpoint files: a full save/load round trip (parameters, Adam moments,
 * training state, config text, SentencePiece bytes), weights-only files, files with a moving
 * average of the parameters (its values and the training weights apart), and every kind of
 * damage (flipped byte, truncation, bad magic, a damaged version field, wrong shapes, missing file)
 * is rejected with a message that names the file and the problem; a file of another version is
 * told apart from a damaged version field. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "check.h"
#include "checkpoint.h"
#include "model.h"
#include "status.h"
#include "test_util.h"

static void tiny(Model *m, int d) {
    ModelConfig cfg = {0};
    cfg.d_model = d, cfg.heads = 4, cfg.ffn = 32, cfg.enc_layers = 1, cfg.dec_layers = 1;
    cfg.norm = NORM_PRE, cfg.attention = ATTENTION_COLLAB, cfg.dk = 8;
    cfg.collab_bias = COLLAB_BIAS_CONTENT;
    model_build(m, &cfg, 20);
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void expect_load_error(const char *path, const char *want) {
    Checkpoint ck;
    status_fail("stale");
    int rc = checkpoint_load(path, &ck);
    const char *err = status_message();
    EXPECT(rc != 0 && strstr(err, want) && strstr(err, path), "loading %s: '%s' lacks '%s'", path,
           err, want);
    if (rc == 0) checkpoint_free(&ck);
}

/* Whether two arenas of pt's layout hold the same tensors (the alignment padding aside). */
static bool same_tensors(const ParamTable *pt, const float *x, const float *y) {
    for (int i = 0; i < pt->count; i++) {
        const ParamInfo *p = &pt->info[i];
        if (memcmp(x + p->offset, y + p->offset, sizeof(float) * p->numel)) return false;
    }
    return true;
}

int main(void) {
    char dir[] = "/tmp/nmt-ckpt-XXXXXX", path[256], bad[256];
    CHECK(mkdtemp(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/checkpoint.last", dir);
    Model a, b;
    tiny(&a, 16), tiny(&b, 16);
    model_init_params(&a, 1);
    for (size_t i = 0; i < a.params.numel; i++)
        a.params.adam_m[i] = (float)i * 0.5f, a.params.adam_v[i] = (float)i * 0.25f;
    TrainState ts = {1234, 5678, 3, 17, 31.25, 1, 2, 3600.5, 999999, 1, 4};
    const char spm[] = "spm\0model\0bytes";
    CheckpointData d = {"model:\n  d_model: 16\n", spm, sizeof spm, &a.params, true, &ts, NULL};
    checkpoint_save(path, &d);
    Checkpoint ck;
    EXPECT(checkpoint_load(path, &ck) == 0, "load: %s", status_message());
    EXPECT(checkpoint_restore(&ck, &b.params, true, NULL) == 0, "restore: %s", status_message());
    EXPECT(same_tensors(&a.params, a.params.param, b.params.param) &&
               same_tensors(&a.params, a.params.adam_m, b.params.adam_m) &&
               same_tensors(&a.params, a.params.adam_v, b.params.adam_v),
           "parameters and moments survive the round trip");
    const TrainState *r = &ck.state;
    EXPECT(ck.has_state && r->update == ts.update && r->micro_step == ts.micro_step &&
               r->epoch == ts.epoch && r->batch_in_epoch == ts.batch_in_epoch &&
               r->best_metric == ts.best_metric && r->has_best == ts.has_best &&
               r->stalls == ts.stalls && r->train_seconds == ts.train_seconds &&
               r->tokens == ts.tokens && r->skipped == ts.skipped && r->ranks == ts.ranks,
           "training state round trip");
    EXPECT(!strcmp(ck.config, d.config), "config text round trip");
    EXPECT(ck.spm_len == sizeof spm && !memcmp(ck.spm, spm, sizeof spm), "spm bytes round trip");
    checkpoint_free(&ck);

    // weights only
    snprintf(bad, sizeof bad, "%s/checkpoint.u10", dir);
    CheckpointData w = {"x: 1\n", NULL, 0, &a.params, false, NULL, NULL};
    checkpoint_save(bad, &w);
    EXPECT(file_size(bad) < file_size(path) / 2, "weights-only file is smaller");
    EXPECT(checkpoint_load(bad, &ck) == 0 && !ck.has_optimizer && !ck.has_state,
           "weights-only load: %s", status_message());
    EXPECT(checkpoint_restore(&ck, &b.params, true, NULL) != 0 &&
               strstr(status_message(), "no optimizer state"),
           "restoring moments from weights only: %s", status_message());
    checkpoint_free(&ck);

    // with a moving average: the values are the average (what translating and averaging read),
    // and resuming restores the training weights, the moments and the average
    float *avg = aligned_alloc_zeroed(sizeof(float) * a.params.numel);  // (numel)
    float *avg_back = aligned_alloc_zeroed(sizeof(float) * a.params.numel);  // (numel)
    for (size_t i = 0; i < a.params.numel; i++) avg[i] = 0.5f * a.params.param[i] + 1.0f;
    snprintf(bad, sizeof bad, "%s/checkpoint.avg", dir);
    CheckpointData e = d;
    e.averaged = avg;
    checkpoint_save(bad, &e);
    EXPECT(checkpoint_load(bad, &ck) == 0 && ck.has_training && ck.has_optimizer,
           "averaged load: %s", status_message());
    EXPECT(checkpoint_restore(&ck, &b.params, false, NULL) == 0, "restore the values");
    EXPECT(same_tensors(&a.params, avg, b.params.param),
           "the values of a checkpoint with an average are the average");
    memset(b.params.param, 0, sizeof(float) * b.params.numel);
    memset(b.params.adam_v, 0, sizeof(float) * b.params.numel);
    EXPECT(checkpoint_restore(&ck, &b.params, true, avg_back) == 0, "resume: %s", status_message());
    EXPECT(same_tensors(&a.params, a.params.param, b.params.param) &&
               same_tensors(&a.params, a.params.adam_v, b.params.adam_v) &&
               same_tensors(&a.params, avg, avg_back),
           "resuming restores the training weights, the moments and the average");
    checkpoint_free(&ck);
    unlink(bad);
    EXPECT(checkpoint_load(path, &ck) == 0 && !ck.has_training, "reload");
    EXPECT(checkpoint_restore(&ck, &b.params, true, avg_back) == 0, "resume without an average");
    EXPECT(same_tensors(&a.params, a.params.param, avg_back),
           "without a saved average, the average starts at the training weights");
    checkpoint_free(&ck);
    aligned_free(avg), aligned_free(avg_back);

    // a model of another shape is refused by name
    Model c;
    tiny(&c, 32);
    EXPECT(checkpoint_load(path, &ck) == 0, "reload");
    EXPECT(checkpoint_restore(&ck, &c.params, false, NULL) != 0 &&
               strstr(status_message(), "emb.shared") && strstr(status_message(), "20x16"),
           "shape mismatch: %s", status_message());
    checkpoint_free(&ck);
    model_free(&c);

    // damage
    long size = file_size(path);
    FILE *f = fopen(path, "rb");
    char *bytes = malloc((size_t)size);
    CHECK(fread(bytes, 1, (size_t)size, f) == (size_t)size, "read back");
    fclose(f);
    struct { const char *what; long len; long flip; char byte; const char *want; } cases[] = {
        {"flipped", size, size / 2, 0, "corrupted: checksum"},
        {"truncated", size - 100, -1, 0, "truncated"},
        {"magic", size, 0, 'X', "bad magic"},
        // the CRC covers the payload, not the header: a version field that changed while the
        // rest verifies as a version-1 file is damage, not a checkpoint of another version
        {"version", size, 8, 9, "corrupted: its header says version 9"},
        {"version-bit", size, 8, 0, "corrupted: its header says version 0"},
        {"empty", 0, -1, 0, "bad magic"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(bad, sizeof bad, "%s/%s", dir, cases[i].what);
        f = fopen(bad, "wb");
        char saved = cases[i].flip >= 0 ? bytes[cases[i].flip] : 0;
        if (cases[i].flip >= 0) bytes[cases[i].flip] = cases[i].byte ? cases[i].byte : (char)(saved ^ 1);
        fwrite(bytes, 1, (size_t)cases[i].len, f);
        fclose(f);
        if (cases[i].flip >= 0) bytes[cases[i].flip] = saved;
        expect_load_error(bad, cases[i].want);
        unlink(bad);
    }
    // a file of another version: a later format's checksum does not verify as version 1's
    snprintf(bad, sizeof bad, "%s/version2", dir);
    bytes[8] = 2, bytes[24] ^= 0x5a;
    f = fopen(bad, "wb");
    fwrite(bytes, 1, (size_t)size, f);
    fclose(f);
    bytes[8] = 1, bytes[24] ^= 0x5a;
    expect_load_error(bad, "checkpoint version 2, this nmt reads version 1");
    unlink(bad);
    snprintf(bad, sizeof bad, "%s/missing", dir);
    expect_load_error(bad, "cannot open");
    // a write that cannot happen is fatal and names the file (checked in a child process)
    snprintf(bad, sizeof bad, "%s/no/such/dir/ckpt", dir);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        checkpoint_save(bad, &d);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) != 0, "saving into a missing directory fails");
    free(bytes);
    unlink(path);
    snprintf(bad, sizeof bad, "%s/checkpoint.u10", dir);
    unlink(bad);
    EXPECT(rmdir(dir) == 0, "no temporary files left behind in %s", dir);
    model_free(&a), model_free(&b);
    return test_finish();
}
