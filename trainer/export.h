/* export.h: a checkpoint's parameters in formats other tools load. safetensors: an 8-byte
 * little-endian header length, a JSON header (padded with spaces to a multiple of 8 bytes) with
 * dtype, shape and byte offsets per tensor under its registry name and the resolved config in
 * __metadata__, then the raw little-endian float32 data. */
#ifndef NMT_EXPORT_H
#define NMT_EXPORT_H

#include <stddef.h>

#include "checkpoint.h"

/* Writes every tensor of ck to path (atomically; I/O errors are fatal and name the path).
 * Returns the bytes of tensor data written. */
size_t export_safetensors(const Checkpoint *ck, const char *path);

#endif
