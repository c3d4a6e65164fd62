/* bleu_tokenize.h (internal to data/eval): sacreBLEU's preprocessing of one line into what its
 * metrics count: BLEU's lowercasing, rstrip and 13a / intl / none tokenization followed by
 * str.split(), and chrF's characters (whitespace removed unless kept) and chrF++ words. Lines are
 * decoded into code points; tokens are interned into ids of the corpus' token table. */
#ifndef NMT_BLEU_TOKENIZE_H
#define NMT_BLEU_TOKENIZE_H

#include "bleu.h"
#include "bleu_ngram.h"

/* A line being preprocessed: each pass reads text and writes pass, then the two are swapped. */
typedef struct TextBuf {
    U32Vec text, pass; /* code points, owned */
} TextBuf;

void text_buf_free(TextBuf *t);
/* sacreBLEU BLEU._preprocess_segment: leaves the tokenized line in t->text. */
void bleu_prepare_text(TextBuf *t, const BleuMetric *m, const char *line);
/* str.split(): the whitespace-separated words of text, interned into ids. */
void split_words(const U32Vec *text, TokenTable *tokens, U32Vec *ids);
/* chrF's view of a line: its characters, and its chrF++ word ids when m->word_order > 0. */
void chrf_prepare(TextBuf *t, TokenTable *tokens, const BleuMetric *m, const char *line,
                  U32Vec *chars, U32Vec *words);

#endif
