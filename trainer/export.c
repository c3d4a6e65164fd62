/* export.c: the safetensors writer (export.h). */
#include "export.h"

#include <stdint.h>

#include "atomic.h"
#include "json.h"
#include "strbuf.h"

size_t export_safetensors(const Checkpoint *ck, const char *path) {
    StrBuf h = {0};  // the JSON header, padded with spaces to a multiple of 8 bytes
    strbuf_add(&h, "{\"__metadata__\":{\"format\":\"pt\",\"producer\":\"nmt\",\"config\":");
    json_add_string(&h, ck->config, JSON_ESCAPE_NEWLINE);
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
    strbuf_add(&h, "}");
    while (h.len % 8) strbuf_add(&h, " ");  // the data starts 8-byte aligned
    AtomicFile f;
    atomic_open(&f, path);
    uint64_t header_len = h.len;
    atomic_write(&f, &header_len, 8);
    atomic_write(&f, h.s, h.len);
    for (int t = 0; t < ck->nparams; t++)
        atomic_write(&f, ck->tensors[t].value, 4 * ck->tensors[t].numel);
    atomic_commit(&f);
    strbuf_free(&h);
    return offset;
}
