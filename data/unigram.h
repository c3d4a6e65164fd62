/* unigram.h: SentencePiece's best unigram segmentation without SentencePiece's per-piece objects.
 * The library's Encode builds a protobuf message with two strings per piece and copies the
 * sentence into a normalized string with an offset table; half of its time goes there, not into
 * the segmentation. This encoder reads the serialized model itself, keeps the normalizable pieces
 * in a double-array trie and runs the same Viterbi search as SentencePiece 0.1.97 (its
 * EncodeOptimized, with its ties: the earliest start wins, scores compared as it compares them),
 * writing ids only. It covers what `nmt prepare` trains: a unigram model with the identity
 * normalizer, SentencePiece's default whitespace handling, byte fallback and no user-defined
 * symbols; for any other model unigram_encoder_new() returns NULL and spm.cc uses the library.
 * tests/test_spm.c checks the ids against the library's on real corpora and edge cases. */
#ifndef NMT_DATA_UNIGRAM_H
#define NMT_DATA_UNIGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "spm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct UnigramEncoder UnigramEncoder;

/* An encoder for the serialized ModelProto proto[0 .. len) (the bytes of a .model file), or NULL
 * if the model is not one this encoder reproduces exactly. */
UnigramEncoder *unigram_encoder_new(const void *proto, size_t len);
void unigram_encoder_free(UnigramEncoder *enc);

/* The ids of text[0 .. len) into out, as SentencePiece's Encode gives them; returns false
 * (leaving out untouched) if text is not valid UTF-8, which the library replaces byte by byte, or
 * longer than 512 MiB. */
bool unigram_encode(const UnigramEncoder *enc, const char *text, size_t len, SpmIds *out);

#ifdef __cplusplus
}
#endif

#endif
