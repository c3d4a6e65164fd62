/* fuzz_checkpoint.c: the checkpoint loader (trainer/checkpoint.h) on the input as a file.
 * The harness rewrites the header's CRC-32 to match the payload before writing the file, so that
 * mutations reach the section parser behind the checksum instead of being refused by it (the
 * refusal of a wrong CRC is tested in test_checkpoint). A loaded checkpoint must keep every
 * section and tensor inside the mapped file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "checkpoint.h"
#include "fuzz_util.h"

enum { HEADER_BYTES = 32, CRC_AT = 24 };

/* Whether [p, p + bytes) lies within ck's mapped file. */
static bool inside(const Checkpoint *ck, const void *p, size_t bytes) {
    uintptr_t lo = (uintptr_t)ck->map, at = (uintptr_t)p;
    return at >= lo && at <= lo + ck->map_size && bytes <= lo + ck->map_size - at;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *file = xmalloc(size);
    if (size) memcpy(file, data, size);
    if (size >= HEADER_BYTES) {
        uint32_t crc = (uint32_t)crc32(0L, file + HEADER_BYTES, (uInt)(size - HEADER_BYTES));
        memcpy(file + CRC_AT, &crc, 4);
    }
    char *path = fuzz_write(file, size, ".ckpt");
    free(file);
    Checkpoint ck;
    if (checkpoint_load(path, &ck) == 0) {
        FUZZ_ASSERT(ck.config && ck.nparams >= 0, "no config or a negative tensor count");
        FUZZ_ASSERT(!ck.spm || inside(&ck, ck.spm, ck.spm_len), "the SentencePiece section");
        for (int i = 0; i < ck.nparams; i++) {
            const struct CkptTensor *t = &ck.tensors[i];
            FUZZ_ASSERT(t->rows >= 0 && t->cols >= 0, "tensor %d is %dx%d", i, t->rows, t->cols);
            FUZZ_ASSERT(inside(&ck, t->value, sizeof(float) * t->numel),
                        "tensor %d (%zu floats) lies outside the file", i, t->numel);
            FUZZ_ASSERT(!ck.has_optimizer || (inside(&ck, t->adam_m, sizeof(float) * t->numel) &&
                                              inside(&ck, t->adam_v, sizeof(float) * t->numel)),
                        "the moments of tensor %d lie outside the file", i);
        }
        checkpoint_free(&ck);
    }
    fuzz_remove(path);
    return 0;
}
