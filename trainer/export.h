/* export.h: a checkpoint's parameters in formats other tools load. safetensors: an 8-byte
 * little-endian header length, a JSON header (padded with spaces to a multiple of 8 bytes) with
 * dtype, shape and byte offsets per tensor under its registry name, then the raw little-endian
 * data: the float32 parameters in registry order, then the SentencePiece model's bytes as the
 * uint8 tensor "sentencepiece.model". One file holds everything needed to translate.
 * __metadata__ (a map of strings, as safetensors requires) holds:
 *   format "pt", producer "nmt", nmt_format_version "1";
 *   config: the checkpoint's YAML config, as written (what nmt reads back);
 *   nmt_config: the resolved config as a JSON object in a string, every key with its effective
 *     value (model.vocab_size the vocabulary size, model.dk the key width D~k);
 *   vocab_size, pad_id, unk_id, bos_id, eos_id: decimal integers;
 *   sentencepiece_sha256: the SHA-256 of the SentencePiece model bytes (hex). */
#ifndef NMT_EXPORT_H
#define NMT_EXPORT_H

#include <stddef.h>

#include "checkpoint.h"

#define EXPORT_SPM_TENSOR "sentencepiece.model"

/* Writes every tensor of ck and its SentencePiece model to path (atomically; I/O errors are
 * fatal and name the path). *bytes receives the bytes of float32 parameter data written. 0, or -1
 * after status_fail (status.h) when ck's config does not load (the message does not name ck's file). */
int export_safetensors(const Checkpoint *ck, const char *path, size_t *bytes);

/* Reads an export mapped at map[0 .. size) (checkpoint_load's second format) into ck: config,
 * SentencePiece model and parameters point into the mapping (ck->map is left to the caller).
 * 0, or -1 after status_fail naming path. */
int export_read(const char *path, const char *map, size_t size, Checkpoint *ck);

#endif
