/* cmd_export.c: `nmt export -m CKPT --format safetensors -o OUT`: the parameters by registry
 * name in the safetensors format (8-byte header length, a JSON header with dtype, shape and
 * byte offsets per tensor and the resolved config in __metadata__, then the raw little-endian
 * float32 data), loadable by other tools. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "atomic.h"
#include "check.h"
#include "checkpoint.h"
#include "cmd.h"
#include "json.h"
#include "strbuf.h"
#include "status.h"

static void usage(FILE *out) {
    fprintf(out, "usage: nmt export -m CHECKPOINT --format safetensors -o OUTPUT\n\n"
                 "Writes the parameters under their registry names (emb.shared, enc.0.self_attn.w_q,\n"
                 "...) with the model's config in the metadata.\n");
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
    StrBuf h = {0};  // the JSON header, padded with spaces to a multiple of 8 bytes
    strbuf_add(&h, "{\"__metadata__\":{\"format\":\"pt\",\"producer\":\"nmt\",\"config\":");
    json_add_string(&h, ck.config, JSON_ESCAPE_NEWLINE);
    strbuf_add(&h, "}");
    size_t offset = 0;
    for (int t = 0; t < ck.nparams; t++) {
        const struct CkptTensor *x = &ck.tensors[t];
        strbuf_add(&h, ",");
        json_add_string(&h, x->name, JSON_ESCAPE_NEWLINE);
        if (x->cols)
            strbuf_addf(&h, ":{\"dtype\":\"F32\",\"shape\":[%d,%d],", x->rows, x->cols);
        else
            strbuf_addf(&h, ":{\"dtype\":\"F32\",\"shape\":[%d],", x->rows);
        strbuf_addf(&h, "\"data_offsets\":[%zu,%zu]}", offset, offset + 4 * x->numel);
        offset += 4 * x->numel;
    }
    strbuf_add(&h, "}");
    while (h.len % 8) strbuf_add(&h, " ");  // the data starts 8-byte aligned
    AtomicFile f;
    atomic_open(&f, output);
    uint64_t header_len = h.len;
    atomic_write(&f, &header_len, 8);
    atomic_write(&f, h.s, h.len);
    for (int t = 0; t < ck.nparams; t++)
        atomic_write(&f, ck.tensors[t].value, 4 * ck.tensors[t].numel);
    atomic_commit(&f);
    fprintf(stderr, "[export] %d tensors (%zu bytes of float32) -> %s\n", ck.nparams, offset, output);
    strbuf_free(&h);
    checkpoint_free(&ck);
    return 0;
}
