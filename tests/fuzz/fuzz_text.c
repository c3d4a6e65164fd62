/* fuzz_text.c: the corpus readers (data/text.h). The first byte picks the format and the rest is
 * the file: 0 plain text (.txt), 1 the bytes as a .gz file (corrupt and truncated gzip), 2 the
 * bytes gzip-compressed (.gz, the line reader behind zlib), 3 SGM (.sgm), 4 XML (.xml), 5 SGM
 * gzip-compressed (.sgm.gz). Every record is read; each must be NUL-terminated at its length. */
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const char *const suffix[] = {".txt", ".gz", ".gz", ".sgm", ".xml", ".sgm.gz"};
    int format = data[0] % 6;
    bool compress = format == 2 || format == 5;
    char *path = compress ? fuzz_write_gzip(data + 1, size - 1, suffix[format])
                          : fuzz_write(data + 1, size - 1, suffix[format]);
    TextReader r;
    if (text_open(&r, path) == 0) {
        char *rec;
        size_t len;
        while (text_next(&r, &rec, &len) == 1) {
            FUZZ_ASSERT(rec[len] == 0, "record %ld is not terminated at its length", r.records);
            FUZZ_ASSERT(r.record_line >= 1 && r.record_line <= r.line,
                        "record %ld starts at line %ld of %ld", r.records, r.record_line, r.line);
        }
        text_close(&r);
    }
    fuzz_remove(path);
    return 0;
}
