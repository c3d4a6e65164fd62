/* export.c: the safetensors writer and reader (export.h). */
#include "export.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "check.h"
#include "config.h"
#include "json.h"
#include "model.h"
#include "sha256.h"
#include "status.h"
#include "strbuf.h"

#define EXPORT_FORMAT_VERSION "1"

/* ,"key":"value" with value escaped. */
static void add_meta(StrBuf *h, const char *key, const char *value) {
    strbuf_addf(h, ",\"%s\":", key);
    json_add_string(h, value, JSON_ESCAPE_NEWLINE);
}

static void add_meta_int(StrBuf *h, const char *key, long value) {
    strbuf_addf(h, ",\"%s\":\"%ld\"", key, value);
}

int export_safetensors(const Checkpoint *ck, const char *path, size_t *bytes) {
    Config cfg;
    config_init(&cfg);
    if (config_load_string(&cfg, ck->config, strlen(ck->config), "the checkpoint's config")) {
        config_free(&cfg);
        return -1;
    }
    int vocab = ck->nparams ? ck->tensors[0].rows : 0;  // emb.shared: (V, D)
    cfg.model.vocab_size = vocab;
    cfg.model.dk = config_model_dk(&cfg.model);
    char *resolved = config_dump_json(&cfg);
    config_free(&cfg);

    StrBuf h = {0};  // the JSON header, padded with spaces to a multiple of 8 bytes
    strbuf_add(&h, "{\"__metadata__\":{\"format\":\"pt\",\"producer\":\"nmt\"");
    add_meta(&h, "nmt_format_version", EXPORT_FORMAT_VERSION);
    add_meta(&h, "config", ck->config);
    add_meta(&h, "nmt_config", resolved);
    add_meta_int(&h, "vocab_size", vocab);
    add_meta_int(&h, "pad_id", TOKEN_PAD), add_meta_int(&h, "unk_id", TOKEN_UNK);
    add_meta_int(&h, "bos_id", TOKEN_BOS), add_meta_int(&h, "eos_id", TOKEN_EOS);
    free(resolved);
    if (ck->spm) {
        char hex[65];
        sha256_hex(ck->spm, ck->spm_len, hex);
        add_meta(&h, "sentencepiece_sha256", hex);
    }
    strbuf_add(&h, "}");
    size_t offset = 0;
    for (int t = 0; t < ck->nparams; t++) {
        const struct CkptTensor *x = &ck->tensors[t];
        strbuf_add(&h, ",");
        json_add_string(&h, x->name, JSON_ESCAPE_NEWLINE);
        if (x->cols)
            strbuf_addf(&h, ":{\"dtype\":\"F32\",\"shape\":[%d,%d],", x->rows, x->cols);
        else
            strbuf_addf(&h, ":{\"dtype\":\"F32\",\"shape\":[%d],", x->rows);
        strbuf_addf(&h, "\"data_offsets\":[%zu,%zu]}", offset, offset + 4 * x->numel);
        offset += 4 * x->numel;
    }
    if (ck->spm)
        strbuf_addf(&h, ",\"" EXPORT_SPM_TENSOR "\":{\"dtype\":\"U8\",\"shape\":[%zu],"
                        "\"data_offsets\":[%zu,%zu]}",
                    ck->spm_len, offset, offset + ck->spm_len);
    strbuf_add(&h, "}");
    while (h.len % 8) strbuf_add(&h, " ");  // the data starts 8-byte aligned
    AtomicFile f;
    atomic_open(&f, path);
    uint64_t header_len = h.len;
    atomic_write(&f, &header_len, 8);
    atomic_write(&f, h.s, h.len);
    for (int t = 0; t < ck->nparams; t++)
        atomic_write(&f, ck->tensors[t].value, 4 * ck->tensors[t].numel);
    if (ck->spm) atomic_write(&f, ck->spm, ck->spm_len);
    atomic_commit(&f);
    strbuf_free(&h);
    *bytes = offset;
    return 0;
}

/* ---- reading ---- */

typedef struct Span {
    const char *s;
    size_t n;
} Span;

/* The raw values of a tensor entry's members. */
typedef struct Fields {
    Span dtype, shape, offsets;
} Fields;

static int tensor_field(void *ctx, const char *key, const char *value, size_t n) {
    Fields *f = ctx;
    Span *to = !strcmp(key, "dtype") ? &f->dtype : !strcmp(key, "shape") ? &f->shape
               : !strcmp(key, "data_offsets") ? &f->offsets : NULL;
    if (to) *to = (Span){value, n};
    return 0;
}

/* Up to 2 non-negative integers. */
typedef struct Uints {
    uint64_t v[2];
    int n;
} Uints;

static int uint_element(void *ctx, const char *key, const char *value, size_t n) {
    (void)key;
    Uints *u = ctx;
    char *end;
    unsigned long long v = strtoull(value, &end, 10);
    if (u->n >= 2 || value[0] < '0' || value[0] > '9' || end != value + n)
        return status_fail("expected at most 2 non-negative integers");
    u->v[u->n++] = v;
    return 0;
}

static bool read_uints(Span s, Uints *u) {
    u->n = 0;
    return s.s && s.s[0] == '[' && json_each(s.s, s.n, uint_element, u) == 0;
}

typedef struct Reading {
    const char *path;
    const char *data;  // the byte buffer after the header
    size_t data_len;
    Checkpoint *ck;
    int cap;  // tensors allocated in ck->tensors
} Reading;

static int read_metadata(Reading *r, const char *value, size_t n) {
    char *version = NULL;
    if (json_get_string(value, n, "nmt_format_version", &version) ||
        strcmp(version, EXPORT_FORMAT_VERSION)) {
        int rc = status_fail("%s: not an nmt export of format version " EXPORT_FORMAT_VERSION
                             " (__metadata__.nmt_format_version: %s)",
                             r->path, version ? version : "missing");
        free(version);
        return rc;
    }
    free(version);
    if (json_get_string(value, n, "config", &r->ck->config))
        return status_fail("%s: __metadata__ holds no config", r->path);
    return 0;
}

static int member(void *ctx, const char *key, const char *value, size_t n) {
    Reading *r = ctx;
    Checkpoint *ck = r->ck;
    if (!strcmp(key, "__metadata__")) return read_metadata(r, value, n);
    Fields f = {0};
    Uints shape, off;
    char *dtype = NULL;
    if (value[0] != '{' || json_each(value, n, tensor_field, &f) || !f.dtype.s ||
        json_get_string(f.dtype.s, f.dtype.n, "", &dtype) || !read_uints(f.shape, &shape) ||
        shape.n == 0 || !read_uints(f.offsets, &off) || off.n != 2) {
        free(dtype);
        return status_fail("%s: tensor '%s' needs a dtype, a shape of 1 or 2 sizes and 2 "
                           "data_offsets", r->path, key);
    }
    uint64_t numel = shape.v[0] * (shape.n == 2 ? shape.v[1] : 1);
    bool spm = !strcmp(key, EXPORT_SPM_TENSOR);
    bool right = spm ? !strcmp(dtype, "U8") && shape.n == 1 : !strcmp(dtype, "F32");
    free(dtype);
    if (!right)
        return status_fail("%s: tensor '%s' must be %s", r->path, key,
                           spm ? "a U8 vector" : "F32");
    if (off.v[0] > off.v[1] || off.v[1] > r->data_len || off.v[1] - off.v[0] != (spm ? 1 : 4) * numel ||
        shape.v[0] > INT32_MAX || (shape.n == 2 && shape.v[1] > INT32_MAX) ||
        (uintptr_t)(r->data + off.v[0]) % 4)
        return status_fail("%s: tensor '%s': its data_offsets [%llu,%llu] do not hold its shape "
                           "aligned in the %zu data bytes",
                           r->path, key, (unsigned long long)off.v[0],
                           (unsigned long long)off.v[1], r->data_len);
    if (spm) {
        ck->spm = r->data + off.v[0], ck->spm_len = (size_t)numel;
        return 0;
    }
    if (strlen(key) >= sizeof ck->tensors->name)
        return status_fail("%s: tensor name '%s' is too long", r->path, key);
    if (ck->nparams == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        ck->tensors = xrealloc(ck->tensors, sizeof *ck->tensors * (size_t)r->cap);
    }
    struct CkptTensor *t = &ck->tensors[ck->nparams++];
    memset(t, 0, sizeof *t);
    strcpy(t->name, key);
    t->rows = (int)shape.v[0], t->cols = shape.n == 2 ? (int)shape.v[1] : 0;
    t->numel = (size_t)numel;
    t->value = t->training = (const float *)(r->data + off.v[0]);
    return 0;
}

int export_read(const char *path, const char *map, size_t size, Checkpoint *ck) {
    uint64_t header_len = 0;
    if (size >= 8) memcpy(&header_len, map, 8);
    if (size < 8 || header_len > size - 8)
        return status_fail("%s: the safetensors header length %llu overruns the file (%zu bytes)",
                           path, (unsigned long long)header_len, size);
    Reading r = {path, map + 8 + header_len, size - 8 - header_len, ck, 0};
    if (json_each(map + 8, header_len, member, &r)) {
        if (strstr(status_message(), path)) return -1;
        char why[4096];
        snprintf(why, sizeof why, "%s", status_message());
        return status_fail("%s: the safetensors header: %s", path, why);
    }
    if (!ck->config) return status_fail("%s: the safetensors header has no __metadata__", path);
    if (!ck->nparams) return status_fail("%s holds no parameters", path);
    return 0;
}
