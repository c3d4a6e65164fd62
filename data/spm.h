/* spm.h: the C interface to SentencePiece 0.1.97 (Debian libsentencepiece), implemented by the
 * project's only C++ file, spm.cc. Every function that can fail returns 0 on success or the
 * SentencePiece util::StatusCode (1..16; 13 "internal" also stands for a caught C++ exception)
 * and leaves a message in status_message(). No C++ exception crosses this interface.
 *
 * Project conventions, fixed here:
 * - Special ids pad 0, unk 1, bos 2, eos 3. Loading a model with other ids is an error.
 * - Models are trained with normalization_rule_name=identity and byte_fallback=true. Our own
 *   clean_normalize() (clean.h) has already normalized whitespace; SentencePiece's default NFKC
 *   would rewrite characters (ﬁ -> fi, ² -> 2, full-width forms), so decode(encode(x)) would not
 *   give x back and BLEU references would drift. Byte fallback encodes a character that is not in
 *   the vocabulary as its UTF-8 bytes (<0xC3><0xA9>) instead of <unk>, so every valid UTF-8
 *   string round-trips exactly and <unk> never appears in our data.
 * - The processor is thread-safe: encode/decode may run concurrently on one model. */
#ifndef NMT_DATA_SPM_H
#define NMT_DATA_SPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SPM_PAD_ID = 0, SPM_UNK_ID = 1, SPM_BOS_ID = 2, SPM_EOS_ID = 3 };

typedef struct SpmModel SpmModel;  // a loaded SentencePieceProcessor

typedef struct SpmTrainOptions {
    int vocab_size;             // all pieces: the 4 specials, 256 bytes, the learned pieces
    const char *model_type;     // "unigram" or "bpe"
    double character_coverage;  // 1.0 keeps every character of the sample
    long input_sentences;       // SentencePiece samples this many sentences (0 = all)
    uint32_t seed;              // SentencePiece's random generator (its own sampling)
    int threads;                // unigram training threads (BPE training is single-threaded)
    bool verbose;               // SentencePiece's own progress log on stderr
} SpmTrainOptions;

/* The training sentences: 1 with the next one in *text / *len (valid until the next call), 0 at
 * the end. Lines longer than 4192 bytes are skipped by SentencePiece. */
typedef int (*SpmNextSentence)(void *ctx, const char **text, size_t *len);

/* Trains a model on the sentences next() yields; *model (malloc'd, *model_len bytes) is the
 * serialized model, i.e. the bytes of a .model file. */
int spm_train(const SpmTrainOptions *opt, SpmNextSentence next, void *ctx, char **model,
              size_t *model_len);

int spm_load_file(SpmModel **model, const char *path);
int spm_load_bytes(SpmModel **model, const void *bytes, size_t len);  // e.g. from a checkpoint
void spm_free(SpmModel *model);

typedef struct SpmIds {
    int32_t *ids;  // (cap) grown on demand; reuse one SpmIds across calls, free with spm_ids_free
    int n, cap;
} SpmIds;
void spm_ids_free(SpmIds *ids);
void spm_ids_reserve(SpmIds *ids, int n);  // room for n ids

/* The best segmentation of text[0 .. len) as piece ids (no BOS/EOS). For the models `nmt prepare`
 * trains (unigram, identity normalizer, byte fallback) and valid UTF-8 it comes from unigram.h's
 * encoder, which gives the library's ids without its per-piece objects; otherwise from the
 * library, as spm_encode_library. */
int spm_encode(const SpmModel *model, const char *text, size_t len, SpmIds *out);
/* The same from SentencePiece's own Encode, for any model and input. */
int spm_encode_library(const SpmModel *model, const char *text, size_t len, SpmIds *out);
/* A sampled segmentation (subword regularization). Unigram: nbest < 0 samples from the whole
 * lattice, alpha is the inverse temperature; BPE: alpha is the merge dropout probability.
 * Samples come from SentencePiece's per-thread generator, so sampled segmentations are random
 * but not reproducible across runs. */
int spm_sample_encode(const SpmModel *model, const char *text, size_t len, int nbest, float alpha,
                      SpmIds *out);

/* Text of ids[0 .. n) (special ids decode to nothing); *text is malloc'd and NUL-terminated. */
int spm_decode(const SpmModel *model, const int32_t *ids, int n, char **text, size_t *len);

int spm_vocab_size(const SpmModel *model);
int spm_piece_to_id(const SpmModel *model, const char *piece);  // SPM_UNK_ID if not a piece
const char *spm_id_to_piece(const SpmModel *model, int id);     // NULL if id is out of range

#ifdef __cplusplus
}
#endif

#endif
