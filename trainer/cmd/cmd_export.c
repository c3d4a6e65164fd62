/* cmd_export.c: `nmt export -m CKPT --format safetensors -o OUT`: the parameters by registry
 * name in the safetensors format (8-byte header length, a JSON header with dtype, shape and
 * byte offsets per tensor and the resolved config in __metadata__, then the raw little-endian
 * float32 data), loadable by other tools. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "atomic.h"
#include "check.h"
#include "checkpoint.h"
#include "cmd.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt export -m CHECKPOINT --format safetensors -o OUTPUT\n\n"
                 "Writes the parameters under their registry names (emb.shared, enc.0.self_attn.w_q,\n"
                 "...) with the model's config in the metadata.\n");
}

/* Appends s as a JSON string to buf. */
static void json_string(char **buf, size_t *len, size_t *cap, const char *s) {
    for (size_t need = *len + 2 * strlen(s) * 6 + 3; need > *cap;) *buf = xrealloc(*buf, *cap *= 2);
    char *p = *buf + *len;
    *p++ = '"';
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') *p++ = '\\', *p++ = (char)ch;
        else if (ch == '\n') *p++ = '\\', *p++ = 'n';
        else if (ch < 0x20) p += sprintf(p, "\\u%04x", ch);
        else *p++ = (char)ch;
    }
    *p++ = '"';
    *len = (size_t)(p - *buf);
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *buf = xrealloc(*buf, *cap *= 2);
    }
}

int cmd_export(int argc, char **argv) {
    const char *cmd = "export", *model = NULL, *output = NULL, *format = "safetensors";
    for (int i = 1; i < argc; i++) {
        if (args_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (args_is(argv[i], "-m", "--model")) {
            model = args_value(cmd, argc, argv, &i);
        } else if (args_is(argv[i], "-o", "--output")) {
            output = args_value(cmd, argc, argv, &i);
        } else if (args_is(argv[i], NULL, "--format")) {
            format = args_value(cmd, argc, argv, &i);
        } else {
            args_usage_error(cmd, "unknown option '%s'", argv[i]);
        }
    }
    if (!model || !output) args_usage_error(cmd, "-m CHECKPOINT and -o OUTPUT are required");
    if (strcmp(format, "safetensors")) args_usage_error(cmd, "unknown format '%s' (safetensors)", format);
    Checkpoint ck;
    if (checkpoint_load(model, &ck)) FATAL("%s", status_message());
    size_t cap = 1 << 16, len = 0;
    char *h = xmalloc(cap);
    append(&h, &len, &cap, "{\"__metadata__\":{\"format\":\"pt\",\"producer\":\"nmt\",\"config\":");
    json_string(&h, &len, &cap, ck.config);
    append(&h, &len, &cap, "}");
    size_t offset = 0;
    for (int t = 0; t < ck.nparams; t++) {
        const struct CkptTensor *x = &ck.tensors[t];
        append(&h, &len, &cap, ",");
        json_string(&h, &len, &cap, x->name);
        if (x->cols)
            append(&h, &len, &cap, ":{\"dtype\":\"F32\",\"shape\":[%d,%d],", x->rows, x->cols);
        else
            append(&h, &len, &cap, ":{\"dtype\":\"F32\",\"shape\":[%d],", x->rows);
        append(&h, &len, &cap, "\"data_offsets\":[%zu,%zu]}", offset, offset + 4 * x->numel);
        offset += 4 * x->numel;
    }
    append(&h, &len, &cap, "}");
    while (len % 8) append(&h, &len, &cap, " ");  // the data starts 8-byte aligned
    AtomicFile f;
    atomic_open(&f, output);
    uint64_t header_len = len;
    atomic_write(&f, &header_len, 8);
    atomic_write(&f, h, len);
    for (int t = 0; t < ck.nparams; t++)
        atomic_write(&f, ck.tensors[t].value, 4 * ck.tensors[t].numel);
    atomic_commit(&f);
    fprintf(stderr, "[export] %d tensors (%zu bytes of float32) -> %s\n", ck.nparams, offset, output);
    free(h);
    checkpoint_free(&ck);
    return 0;
}
