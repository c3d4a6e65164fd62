/* test_tools.c: `nmt average` gives the element-wise mean of checkpoints and refuses a
 * checkpoint of another model or SentencePiece model (checkpoint_average: a status naming both); `nmt export --format
 * safetensors` round-trips every tensor by name, shape and value, with the config in the
 * metadata (export_safetensors writes the same bytes and returns the data size). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "average.h"
#include "check.h"
#include "checkpoint.h"
#include "cmd.h"
#include "export.h"
#include "files.h"
#include "model.h"
#include "status.h"
#include "test_util.h"

static void tiny(Model *m, int d) {
    ModelConfig cfg = {0};
    cfg.d_model = d, cfg.heads = 2, cfg.ffn = 16, cfg.enc_layers = 1, cfg.dec_layers = 1;
    cfg.norm = NORM_POST, cfg.attention = ATTENTION_COLLAB, cfg.dk = 4;
    cfg.collab_bias = COLLAB_BIAS_QUERY;
    model_build(m, &cfg, 12);
}

static void save_with_spm(Model *m, const char *path, uint64_t seed, const char *spm) {
    model_init_params(m, seed);
    CheckpointData d = {"model:\n  d_model: 8\n", spm, strlen(spm), &m->params, false, NULL};
    checkpoint_save(path, &d);
}

static void save(Model *m, const char *path, uint64_t seed) { save_with_spm(m, path, seed, "SPM"); }

/* Runs a command in a child process; returns its exit status. */
static int run(int (*fn)(int, char **), char **argv) {
    int argc = 0;
    while (argv[argc]) argc++;
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        _exit(fn(argc, argv));
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(void) {
    char dir[] = "/tmp/nmt-tools-XXXXXX", a[256], b[256], c[256], avg[256], other[256], st[256];
    CHECK(mkdtemp(dir), "mkdtemp");
    snprintf(a, sizeof a, "%s/a", dir), snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir), snprintf(avg, sizeof avg, "%s/avg", dir);
    snprintf(other, sizeof other, "%s/other", dir), snprintf(st, sizeof st, "%s/x.safetensors", dir);
    Model m, o;
    tiny(&m, 8), tiny(&o, 16);
    size_t n = m.params.numel;
    float *want = calloc(n, sizeof(float));
    const char *paths[] = {a, b, c};
    double *sum = calloc(n, sizeof(double));
    for (int k = 0; k < 3; k++) {
        save(&m, paths[k], (uint64_t)k + 1);
        for (size_t i = 0; i < n; i++) sum[i] += m.params.param[i];
    }
    for (size_t i = 0; i < n; i++) want[i] = (float)(sum[i] / 3);
    save(&o, other, 9);

    char *avg_argv[] = {"average", "-o", avg, a, b, c, NULL};
    EXPECT(run(cmd_average, avg_argv) == 0, "nmt average");
    Checkpoint ck;
    EXPECT(checkpoint_load(avg, &ck) == 0, "load the average: %s", status_message());
    Model r;
    tiny(&r, 8);
    EXPECT(checkpoint_restore(&ck, &r.params, false) == 0, "restore: %s", status_message());
    check_close("average", r.params.param, want, (long)n, 0, 0);
    EXPECT(ck.spm_len == 3 && !memcmp(ck.spm, "SPM", 3) && strstr(ck.config, "d_model: 8"),
           "the average keeps the config and SentencePiece model");
    checkpoint_free(&ck);
    char *bad_argv[] = {"average", "-o", avg, a, other, NULL};
    EXPECT(run(cmd_average, bad_argv) != 0, "averaging different models must fail");
    const char *bad[] = {a, other};
    size_t params = 0;
    EXPECT(checkpoint_average(bad, 2, avg, &params) == -1 && strstr(status_message(), other) &&
               strstr(status_message(), "does not match"),
           "the status names the odd checkpoint: %s", status_message());

    // the same shapes, another SentencePiece model: its token ids mean other pieces
    char spx[256];
    snprintf(spx, sizeof spx, "%s/spx", dir);
    save_with_spm(&m, spx, 4, "SPX");
    const char *other_spm[] = {a, b, spx};
    unlink(avg);
    EXPECT(checkpoint_average(other_spm, 3, avg, &params) == -1 && strstr(status_message(), a) &&
               strstr(status_message(), spx) && strstr(status_message(), "SentencePiece") &&
               access(avg, F_OK) != 0,
           "another SentencePiece model is refused, naming both files: %s", status_message());
    unlink(spx);

    char *exp_argv[] = {"export", "-m", a, "--format", "safetensors", "-o", st, NULL};
    EXPECT(run(cmd_export, exp_argv) == 0, "nmt export");
    FILE *f = fopen(st, "rb");
    uint64_t hlen = 0;
    EXPECT(f && fread(&hlen, 8, 1, f) == 1 && hlen % 8 == 0, "safetensors header length");
    char *header = calloc(hlen + 1, 1);
    EXPECT(fread(header, 1, hlen, f) == hlen, "safetensors header");
    long data_start = ftell(f);
    EXPECT(strstr(header, "\"__metadata__\"") && strstr(header, "d_model: 8"), "config in metadata");
    save(&m, a, 1);  // the values of checkpoint a again
    for (int t = 0; t < m.params.count; t++) {
        const ParamInfo *p = &m.params.info[t];
        char key[128];
        snprintf(key, sizeof key, "\"%s\":{\"dtype\":\"F32\",\"shape\":[", p->name);
        const char *at = strstr(header, key);
        EXPECT(at != NULL, "%s is in the header", p->name);
        if (!at) continue;
        int rows = 0, cols = 0;
        size_t begin = 0, end = 0;
        at += strlen(key);
        int got = p->shape[1] ? sscanf(at, "%d,%d],\"data_offsets\":[%zu,%zu]", &rows, &cols, &begin, &end)
                              : sscanf(at, "%d],\"data_offsets\":[%zu,%zu]", &rows, &begin, &end);
        EXPECT(got == (p->shape[1] ? 4 : 3) && rows == p->shape[0] && cols == p->shape[1] &&
                   end - begin == 4 * p->numel, "%s: shape and offsets", p->name);
        float *v = malloc(4 * p->numel);
        fseek(f, data_start + (long)begin, SEEK_SET);
        EXPECT(fread(v, 4, p->numel, f) == p->numel && !memcmp(v, m.params.param + p->offset, 4 * p->numel),
               "%s: values", p->name);
        free(v);
    }
    fclose(f);
    char st2[300];
    snprintf(st2, sizeof st2, "%s.2", st);
    EXPECT(checkpoint_load(a, &ck) == 0, "load a: %s", status_message());
    size_t data = export_safetensors(&ck, st2), want_data = 0;
    for (int t = 0; t < m.params.count; t++) want_data += 4 * m.params.info[t].numel;
    EXPECT(data == want_data, "the data bytes: %zu, want %zu", data, want_data);
    checkpoint_free(&ck);
    size_t len1, len2;
    char *bytes1 = file_read(st, &len1), *bytes2 = file_read(st2, &len2);
    EXPECT(bytes1 && bytes2 && len1 == len2 && !memcmp(bytes1, bytes2, len1),
           "export_safetensors writes what nmt export does");
    free(bytes1), free(bytes2);
    unlink(st2);
    free(header), free(want), free(sum);
    model_free(&m), model_free(&o), model_free(&r);
    const char *files[] = {a, b, c, avg, other, st};
    for (int i = 0; i < 6; i++) unlink(files[i]);
    EXPECT(rmdir(dir) == 0, "no leftovers in %s", dir);
    return test_finish();
}
