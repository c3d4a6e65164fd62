/* clean.h: text normalization and the pair filters of `prepare`.
 *
 * Normalization (every split): the text must be valid UTF-8; every whitespace character becomes
 * one ASCII space, runs collapse to one space, and both ends are trimmed. "Whitespace" is exactly
 * the set Python's str.split() splits on (sacreBLEU's final step), so normalization never changes
 * what BLEU sees: ASCII \t \n \v \f \r, U+001C..U+001F, space, U+0085 NEL, U+00A0 NBSP, U+1680,
 * U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. U+2581 (SentencePiece's word-boundary
 * mark, which it would decode as a space anyway) is treated as whitespace too, so that
 * decode(encode(x)) == x holds for every normalized x. Zero-width and format characters (U+200B,
 * U+00AD, U+200E, U+FEFF inside a line) are kept: they are not whitespace to sacreBLEU either.
 * Control characters (C0 other than the whitespace above, DEL, C1 other than NEL) are kept by the
 * normalizer but reported, so the train filter can drop the pair while valid/test keep it.
 *
 * Train filters, each counted per reason: invalid UTF-8, control characters, an empty side, an
 * exact duplicate of an earlier (normalized) pair, and, on subword lengths, too short (min_len),
 * too long (max_len) and a length ratio over max_ratio. Duplicates are found through a hash set
 * of 64-bit pair hashes, so memory is 16 bytes per distinct pair and no text is kept. */
#ifndef NMT_DATA_CLEAN_H
#define NMT_DATA_CLEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum CleanStatus { CLEAN_OK, CLEAN_HAS_CONTROL, CLEAN_INVALID_UTF8 } CleanStatus;

/* Normalizes text[0 .. *len) in place (text must have room for *len + 1 bytes; the result is
 * NUL-terminated) and sets *len to the new length. On CLEAN_INVALID_UTF8 the text is unusable
 * and *len is the byte offset of the first invalid sequence in the original text. */
CleanStatus clean_normalize(char *text, size_t *len);

typedef enum DropReason {
    KEEP_PAIR,
    DROP_INVALID_UTF8,  // text stage, in this order of precedence
    DROP_CONTROL_CHAR,
    DROP_EMPTY,
    DROP_DUPLICATE,
    DROP_TOO_SHORT,  // subword stage
    DROP_TOO_LONG,
    DROP_LENGTH_RATIO,
    DROP_REASONS  // number of values, KEEP_PAIR included
} DropReason;

const char *drop_reason_name(DropReason reason);  // "invalid_utf8", "duplicate", ...

typedef struct PairDedup {
    uint64_t *slots;  // (cap) open addressing, 0 = empty
    size_t cap, count;
} PairDedup;

void dedup_init(PairDedup *d);
void dedup_free(PairDedup *d);

/* Normalizes both sides in place and returns KEEP_PAIR or the text-stage reason to drop the pair.
 * A kept pair is remembered in seen, so a later identical pair returns DROP_DUPLICATE. */
DropReason clean_train_pair(PairDedup *seen, char *src, size_t *src_len, char *tgt,
                            size_t *tgt_len);

typedef struct LengthLimits {
    int min_len;       // fewest subword tokens per side
    int max_len;       // most subword tokens per side (0 = no limit)
    double max_ratio;  // most max(src, tgt) / min(src, tgt) subword tokens (0 = no limit)
} LengthLimits;

/* KEEP_PAIR or the subword-stage reason for a pair of src_tokens and tgt_tokens tokens. */
DropReason clean_check_lengths(const LengthLimits *limits, int src_tokens, int tgt_tokens);

#endif
