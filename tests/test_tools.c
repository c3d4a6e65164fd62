/* test_tools.c: `nmt average` gives the element-wise mean of checkpoints and refuses a
 * checkpoint of another model or SentencePiece model (checkpoint_average: a status naming both); `nmt export --format
 * safetensors` round-trips every tensor by name, shape and value, with the config in the
 * metadata (export_safetensors writes the same bytes and returns the data size); the export
 * follows the safetensors rules (header, dtypes, contiguous offsets covering the data), carries
 * the resolved config, the SentencePiece model and its SHA-256, and loads back as a checkpoint. */
#include <stdbool.h>
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
#include "json.h"
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
    CheckpointData d = {"model:\n  d_model: 8\n", spm, strlen(spm), &m->params, false, NULL, NULL};
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

/* What the safetensors format requires of a file, read through json_each: the header length, a
 * header of valid JSON padded with spaces to a multiple of 8 bytes, __metadata__ a map of strings,
 * dtypes F32 or U8 and data_offsets that, sorted, are contiguous and cover the byte buffer. */
typedef struct StEntry {
    char name[64], dtype[8];
    unsigned long long begin, end, numel;
} StEntry;

typedef struct StHeader {
    StEntry e[256];
    int n, metadata_keys;
    bool metadata_strings, fields_ok;
} StHeader;

static int st_metadata(void *ctx, const char *key, const char *value, size_t len) {
    StHeader *h = ctx;
    (void)key, (void)len;
    h->metadata_keys++;
    h->metadata_strings &= value[0] == '"';
    return 0;
}

static int st_numbers(void *ctx, const char *key, const char *value, size_t len) {
    unsigned long long *v = ctx;  // v[0]: count, then the values
    (void)key, (void)len;
    v[1 + v[0]++ % 2] = strtoull(value, NULL, 10);
    return 0;
}

static int st_field(void *ctx, const char *key, const char *value, size_t len) {
    StHeader *h = ctx;
    StEntry *e = &h->e[h->n];
    unsigned long long v[3] = {0, 1, 1};
    if (!strcmp(key, "dtype")) {
        char *dt = NULL;
        h->fields_ok &= json_get_string(value, len, "", &dt) == 0 && strlen(dt) < 8;
        if (dt) snprintf(e->dtype, sizeof e->dtype, "%s", dt);
        free(dt);
    } else if (!strcmp(key, "shape")) {
        json_each(value, len, st_numbers, v);
        e->numel = v[0] == 1 ? v[1] : v[1] * v[2];
    } else if (!strcmp(key, "data_offsets")) {
        h->fields_ok &= json_each(value, len, st_numbers, v) == 0 && v[0] == 2;
        e->begin = v[1], e->end = v[2];
    } else {
        h->fields_ok = false;
    }
    return 0;
}

static int st_member(void *ctx, const char *key, const char *value, size_t len) {
    StHeader *h = ctx;
    if (!strcmp(key, "__metadata__")) return json_each(value, len, st_metadata, h);
    if (h->n == 256) return -1;
    snprintf(h->e[h->n].name, sizeof h->e[h->n].name, "%s", key);
    int rc = json_each(value, len, st_field, h);
    h->n++;
    return rc;
}

static int by_begin(const void *a, const void *b) {
    const StEntry *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static void check_safetensors_rules(const char *path, int nparams) {
    size_t len;
    char *bytes = file_read(path, &len);
    uint64_t hlen = 0;
    EXPECT(bytes && len >= 8, "read %s", path);
    if (!bytes || len < 8) return;
    memcpy(&hlen, bytes, 8);  // little-endian, as this machine
    EXPECT(hlen % 8 == 0 && hlen <= len - 8, "header length %llu", (unsigned long long)hlen);
    EXPECT(bytes[8] == '{', "the header starts with '{'");
    size_t end = hlen;
    while (end > 0 && bytes[8 + end - 1] == ' ') end--;
    EXPECT(bytes[8 + end - 1] == '}', "the header is padded with spaces only");
    StHeader *h = calloc(1, sizeof *h);
    h->metadata_strings = h->fields_ok = true;
    EXPECT(json_each(bytes + 8, hlen, st_member, h) == 0, "the header is valid JSON: %s",
           status_message());
    EXPECT(h->metadata_keys >= 10 && h->metadata_strings, "__metadata__: %d keys, all strings",
           h->metadata_keys);
    EXPECT(h->fields_ok && h->n == nparams + 1, "%d tensors with dtype, shape and data_offsets only",
           h->n);
    qsort(h->e, (size_t)h->n, sizeof *h->e, by_begin);
    unsigned long long at = 0;
    for (int i = 0; i < h->n; i++) {
        const StEntry *e = &h->e[i];
        int width = !strcmp(e->dtype, "F32") ? 4 : !strcmp(e->dtype, "U8") ? 1 : 0;
        EXPECT(width && e->begin == at && e->end - e->begin == width * e->numel,
               "%s: %s [%llu, %llu) contiguous from %llu", e->name, e->dtype, e->begin, e->end, at);
        at = e->end;
    }
    EXPECT(at == len - 8 - hlen, "the tensors cover the byte buffer: %llu of %zu", at, len - 8 - hlen);
    char *meta = NULL, *sha = NULL;
    EXPECT(json_get_string(bytes + 8, hlen, "__metadata__.nmt_config", &meta) == 0 &&
               strstr(meta, "\"vocab_size\":") && strstr(meta, "\"dk\":8,") &&
               strstr(meta, "\"d_model\":8,"),
           "the resolved config: %s", meta);
    // SHA-256 of "SPM"
    EXPECT(json_get_string(bytes + 8, hlen, "__metadata__.sentencepiece_sha256", &sha) == 0 &&
               !strcmp(sha, "82109517f7caad5a356bd7fb9c5a6b282b201836d86c91a1231cf77b086ad112"),
           "the SentencePiece model's SHA-256: %s", sha);
    free(meta), free(sha), free(h), free(bytes);
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
    EXPECT(checkpoint_restore(&ck, &r.params, false, NULL) == 0, "restore: %s", status_message());
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
    check_safetensors_rules(st, m.params.count);
    // the export reads back as a checkpoint: config, SentencePiece model and parameters
    EXPECT(checkpoint_load(st, &ck) == 0, "load the export: %s", status_message());
    Model x;
    tiny(&x, 8);
    EXPECT(checkpoint_restore(&ck, &x.params, false, NULL) == 0, "restore the export: %s", status_message());
    EXPECT(!memcmp(x.params.param, m.params.param, 4 * n), "the export's values are the checkpoint's");
    EXPECT(ck.spm_len == 3 && !memcmp(ck.spm, "SPM", 3) && strstr(ck.config, "d_model: 8") &&
               !ck.has_optimizer && !ck.has_state,
           "the export's config and SentencePiece model");
    checkpoint_free(&ck);
    model_free(&x);
    char st2[300];
    snprintf(st2, sizeof st2, "%s.2", st);
    EXPECT(checkpoint_load(a, &ck) == 0, "load a: %s", status_message());
    size_t data = 0, want_data = 0;
    EXPECT(export_safetensors(&ck, st2, &data) == 0, "export_safetensors: %s", status_message());
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
