/* translator.h: translation of many sentences with a trained model or an ensemble of models
 * (one decoder state each): the sources are sorted by length and cut into batches that fit the
 * decoders' capacity (decode.h), searched (search.h) and written back in input order, the best
 * hypothesis or the n best of each. Text goes in raw (normalized as `prepare` normalizes
 * corpora, then SentencePiece-encoded) and comes out detokenized. Used by `nmt translate`,
 * `nmt eval` and validation during training. */
#ifndef NMT_TRANSLATOR_H
#define NMT_TRANSLATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "model_config.h"
#include "search.h"
#include "spm.h"

typedef struct Translator {
    const SpmModel *spm;
    SearchOptions opt;
    int batch_tokens;  // source tokens per batch
    int max_src;       // longest source the decoder states were sized for
    int n_models;      // more than 1: an ensemble (search_ensemble)
    DecodeState *st;   // (n_models) one decoder state per model, of one capacity
    bool progress;     // report on stderr
} Translator;

/* A sentence (or pair) by its length in tokens, for processing in order of length. */
typedef struct ByLength {
    long index;
    int len;
} ByLength;
/* Sorts v[n] by length, ties in input order. */
void translator_sort_by_length(ByLength *v, long n);

/* Search options from the decode config with the given beam. */
SearchOptions translator_options(const DecodeConfig *dc, int beam);
/* What the model must be planned for (model_plan) to translate sources of up to max_src tokens
 * (incl. EOS) with these options. */
void translator_needs(const SearchOptions *o, int batch_tokens, int max_src, int *plan_tokens,
                      int *plan_len);

/* The memory of a translator's decoder state, per model (what translator_init allocates). */
size_t translator_state_bytes(Model *m, const SearchOptions *o, int batch_tokens, int max_src);
/* A translator with one model (each model must be planned: translator_needs, model_plan). */
void translator_init(Translator *t, Model *m, const SpmModel *spm, const SearchOptions *o,
                     int batch_tokens, int max_src);
/* A translator with an ensemble of n models of the vocabulary of spm. */
void translator_init_ensemble(Translator *t, Model *const *models, int n, const SpmModel *spm,
                              const SearchOptions *o, int batch_tokens, int max_src);
void translator_free(Translator *t);

/* Translates n sources given as ids (without EOS; NULL or length 0 = empty output).
 * out[i] receives malloc'd ids (without EOS) and out_len[i] their count. */
void translator_run_ids(Translator *t, const Ctx *c, const int32_t *const *src,
                        const int *src_len, long n, int32_t **out, int *out_len);
/* The nbest (<= beam) best hypotheses of each source, best first: out[i * nbest + j] (malloc'd
 * ids, without EOS), out_len and score (normalized; may be NULL) likewise, for j < count[i]
 * (the hypotheses found: nbest but for degenerate searches, 1 for an empty source, whose only
 * output is empty: NULL, length 0, score 0); entries past count[i] are NULL. */
void translator_run_nbest(Translator *t, const Ctx *c, const int32_t *const *src,
                          const int *src_len, long n, int nbest, int32_t **out, int *out_len,
                          float *score, int *count);

/* What translate_lines runs. */
typedef struct TranslateJob {
    Model *const *models;  // (n_models) an ensemble when n_models > 1
    int n_models;
    const SpmModel *spm;   // the vocabulary of every model
    SearchOptions opt;
    int nbest;             // hypotheses per line, 1 <= nbest <= opt.beam
    int batch_tokens;      // source tokens per batch
    int max_src_len;       // longer lines are cut to their first max_src_len tokens
    bool progress;         // report on stderr
} TranslateJob;
/* Translations of n lines: text[i * nbest + j] for j < count[i], best first. */
typedef struct Translations {
    long n;
    int nbest;
    char **text;   // (n, nbest) malloc'd detokenized hypotheses; NULL past count[i]
    float *score;  // (n, nbest) their normalized scores
    int *count;    // (n)
    long tokens;   // tokens of the best hypotheses
} Translations;
/* The whole job for raw text: encodes the lines, cuts each to its first max_src_len tokens
 * (with a warning on stderr naming `what`, the input, and the line), plans every model's memory
 * for them (so it is bounded by batch_tokens and max_src_len, never by the input) and translates
 * (an empty line gives one empty hypothesis). */
void translate_lines(const TranslateJob *job, const Ctx *c, char *const *lines, long n,
                     const char *what, Translations *out);
void translations_free(Translations *tr);
/* Encodes raw lines as `prepare` does (normalize, SentencePiece); fatal on invalid UTF-8. */
void translator_encode(const SpmModel *spm, char *const *lines, long n, int32_t **ids, int *len,
                       const char *what);
/* The records of a text file (plain, .gz or WMT .sgm; "-" is standard input), raw; free them
 * with file_free_lines (files.h), as the lines of translate_lines. Each must be valid UTF-8
 * without NUL bytes, as `nmt bleu` reads files (bleu_check_line); otherwise NULL after
 * status_fail naming the file (or <stdin>) and line. */
char **translator_read_lines(const char *path, long *n);
/* Two parallel files, read as translator_read_lines reads one; their record counts must agree.
 * 0, or -1 after status_fail naming the file and line, or both files and their counts. */
int translator_read_parallel(const char *src_path, const char *ref_path, char ***src,
                             char ***ref, long *n);
/* Detokenized text of ids as one line of valid UTF-8: a byte piece that forms no valid sequence
 * becomes U+FFFD, and line breaks and NULs (byte pieces an undertrained model may emit) spaces,
 * so an output file keeps one line per input. */
char *translator_decode(const SpmModel *spm, const int32_t *ids, int n);

#endif
