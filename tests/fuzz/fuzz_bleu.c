/* fuzz_bleu.c: the input readers of `nmt bleu` (data/eval/bleu_io.h, bleu_inputs.h). The first
 * byte picks the way the rest is read: byte % 4 = 0 a plain reference file, 1 the bytes as a
 * .gz file, 2 the bytes gzip-compressed (.gz), 3 standard input's tab-separated system columns;
 * for files, 1 + byte / 4 % 4 is --num-refs (tab-separated reference columns) and the file is
 * also added as a system and checked against the references, as `nmt bleu REF -i REF` would. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bleu_inputs.h"
#include "fuzz_util.h"

static void check_lines(const BleuLines *l) {
    for (long i = 0; i < l->n; i++) FUZZ_ASSERT(l->lines[i], "line %ld is missing", i + 1);
}

/* A reference file read as `nmt bleu` reads it, then the same file as a system. */
static void read_files(const char *path, int num_refs) {
    BleuRefs refs;
    if (bleu_refs_read(&refs, &path, 1) == 0 &&
        (num_refs == 1 || bleu_refs_split_columns(&refs, num_refs) == 0)) {
        FUZZ_ASSERT(refs.nstreams == num_refs, "%d streams for %d refs", refs.nstreams, num_refs);
        for (int k = 0; k < refs.nstreams; k++)
            for (long i = 0; i < refs.n; i++)
                FUZZ_ASSERT(refs.lines[k][i], "stream %d has no line %ld", k, i + 1);
        BleuSystems sys = {0};
        if (bleu_systems_add_file(&sys, path) == 0) {
            check_lines(&sys.lines[0]);
            FUZZ_ASSERT(bleu_systems_add_file(&sys, path) < 0, "a system name used twice");
            bleu_systems_check(&sys, &refs);
            bleu_systems_name_paired(&sys);
        }
        bleu_systems_free(&sys);
    }
    bleu_refs_free(&refs);
}

/* The tab-separated systems of a stream (stdin for `nmt bleu` without -i). */
static void read_columns(const char *path) {
    FILE *f = xfopen(path, "rb");
    BleuLines in;
    if (bleu_read_stream_lines(f, "<stdin>", &in) == 0) {
        check_lines(&in);
        BleuSystems sys = {0};
        if (bleu_systems_from_columns(&sys, &in, "<stdin>") == 0) {
            FUZZ_ASSERT(sys.n >= 1, "no system");
            for (int k = 0; k < sys.n; k++) {
                FUZZ_ASSERT(sys.lines[k].n == (in.n ? in.n : 1), "system %d has %ld lines of %ld",
                            k + 1, sys.lines[k].n, in.n);
                check_lines(&sys.lines[k]);
            }
            bleu_systems_name_paired(&sys);
        }
        bleu_systems_free(&sys);
        bleu_lines_free(&in);
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    int mode = data[0] % 4, num_refs = 1 + data[0] / 4 % 4;
    char *path = mode == 2 ? fuzz_write_gzip(data + 1, size - 1, ".gz")
                           : fuzz_write(data + 1, size - 1, mode == 1 ? ".gz" : ".txt");
    if (mode == 3) read_columns(path);
    else read_files(path, num_refs);
    fuzz_remove(path);
    return 0;
}
