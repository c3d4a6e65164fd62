/* bleu_tokenize.c: sacreBLEU's text preprocessing (bleu_tokenize.h): Python's str.lower() and
 * str.rstrip(), the mteval-v13a and mteval-v14 international tokenizers as sequences of
 * str.replace / re.sub passes over code points, str.split() into interned word ids, chrF's
 * whitespace removal and chrF++'s word splitting, and bleu_preprocess (bleu.h), which shows the
 * result of all that as text. */
#include "bleu_tokenize.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unicode.h"

void text_buf_free(TextBuf *t) {
    free(t->text.v);
    free(t->pass.v);
}

/* Decodes line into w->text, lowercased when asked (Python's str.lower()). */
static void load_text(TextBuf *w, const char *line, bool lowercase) {
    size_t len = strlen(line);
    w->text.n = 0;
    u32_reserve(&w->text, len + 1);
    w->text.n = utf8_decode_lenient(line, len, w->text.v);
    if (!lowercase) return;
    w->pass.n = 0;
    u32_reserve(&w->pass, w->text.n * UNICODE_LOWER_MAX_EXPANSION + 1);
    w->pass.n = unicode_lower(w->text.v, w->text.n, w->pass.v);
    u32_swap(&w->text, &w->pass);
}

static void rstrip_text(U32Vec *t) {
    while (t->n && unicode_is_space(t->v[t->n - 1])) t->n--;
}

/* str.replace(pattern, replacement) for ASCII strings no longer than the pattern. */
static void replace_ascii(TextBuf *w, const char *pattern, const char *replacement) {
    size_t plen = strlen(pattern), rlen = strlen(replacement);
    const U32Vec *in = &w->text;
    w->pass.n = 0;
    u32_reserve(&w->pass, in->n + 1);
    for (size_t i = 0; i < in->n;) {
        size_t k = 0;
        while (k < plen && i + k < in->n && in->v[i + k] == (unsigned char)pattern[k]) k++;
        if (k == plen) {
            for (size_t r = 0; r < rlen; r++)
                w->pass.v[w->pass.n++] = (unsigned char)replacement[r];
            i += plen;
        } else {
            w->pass.v[w->pass.n++] = in->v[i++];
        }
    }
    u32_swap(&w->text, &w->pass);
}

typedef bool (*CharClass)(uint32_t c);

/* re.sub(r'(X)', r' \1 ') for a one-character class X. */
static void pad_class(TextBuf *w, CharClass cls) {
    const U32Vec *in = &w->text;
    w->pass.n = 0;
    u32_reserve(&w->pass, 3 * in->n + 1);
    for (size_t i = 0; i < in->n; i++) {
        if (cls(in->v[i])) {
            w->pass.v[w->pass.n++] = ' ';
            w->pass.v[w->pass.n++] = in->v[i];
            w->pass.v[w->pass.n++] = ' ';
        } else {
            w->pass.v[w->pass.n++] = in->v[i];
        }
    }
    u32_swap(&w->text, &w->pass);
}

/* re.sub(r'(X)(Y)', r'\1 \2 ') (or r' \1 \2' with lead_space) for one-character classes X and Y:
 * matches are found left to right and do not overlap. */
static void split_pair(TextBuf *w, CharClass first, CharClass second, bool lead_space) {
    const U32Vec *in = &w->text;
    w->pass.n = 0;
    u32_reserve(&w->pass, 2 * in->n + 1);
    uint32_t *out = w->pass.v;
    size_t m = 0;
    for (size_t i = 0; i < in->n;) {
        if (i + 1 < in->n && first(in->v[i]) && second(in->v[i + 1])) {
            if (lead_space) out[m++] = ' ';
            out[m++] = in->v[i];
            out[m++] = ' ';
            out[m++] = in->v[i + 1];
            if (!lead_space) out[m++] = ' ';
            i += 2;
        } else {
            out[m++] = in->v[i++];
        }
    }
    w->pass.n = m;
    u32_swap(&w->text, &w->pass);
}

static bool is_ascii_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static bool not_ascii_digit(uint32_t c) { return !is_ascii_digit(c); }
static bool is_period_comma(uint32_t c) { return c == '.' || c == ','; }
static bool is_dash(uint32_t c) { return c == '-'; }
static bool not_number(uint32_t c) { return !unicode_is_number(c); }

/* 13a's first class [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and symbols except
 * ' , - . (space included, harmlessly). */
static bool is_13a_symbol(uint32_t c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* mteval-v13a: un-escape, pad, then split off punctuation and symbols. */
static void tokenize_13a(TextBuf *w) {
    replace_ascii(w, "<skipped>", "");
    replace_ascii(w, "-\n", "");
    replace_ascii(w, "\n", " ");
    replace_ascii(w, "&quot;", "\"");
    replace_ascii(w, "&amp;", "&");
    replace_ascii(w, "&lt;", "<");
    replace_ascii(w, "&gt;", ">");
    w->pass.n = 0;
    u32_reserve(&w->pass, w->text.n + 2);
    w->pass.v[w->pass.n++] = ' ';
    memcpy(w->pass.v + 1, w->text.v, w->text.n * sizeof *w->text.v);
    w->pass.n += w->text.n;
    w->pass.v[w->pass.n++] = ' ';
    u32_swap(&w->text, &w->pass);
    pad_class(w, is_13a_symbol);
    split_pair(w, not_ascii_digit, is_period_comma, false); /* period/comma after a non-digit */
    split_pair(w, is_period_comma, not_ascii_digit, true);  /* period/comma before a non-digit */
    split_pair(w, is_ascii_digit, is_dash, false);          /* dash after a digit */
}

/* mteval-v14 international: punctuation unless between digits, every symbol. */
static void tokenize_intl(TextBuf *w) {
    split_pair(w, not_number, unicode_is_punct, false);
    split_pair(w, unicode_is_punct, not_number, true);
    pad_class(w, unicode_is_symbol);
}

/* The next word of str.split() in text[*pos..): sets *start and *len and advances *pos; false
 * when no word is left. */
static bool next_word(const U32Vec *text, size_t *pos, size_t *start, size_t *len) {
    size_t i = *pos;
    while (i < text->n && unicode_is_space(text->v[i])) i++;
    if (i == text->n) return false;
    size_t j = i;
    while (j < text->n && !unicode_is_space(text->v[j])) j++;
    *start = i;
    *len = j - i;
    *pos = j;
    return true;
}

void split_words(const U32Vec *text, TokenTable *tokens, U32Vec *ids) {
    ids->n = 0;
    size_t pos = 0, start, len;
    while (next_word(text, &pos, &start, &len))
        u32_push(ids, token_intern(tokens, text->v + start, len));
}

void bleu_prepare_text(TextBuf *w, const BleuMetric *m, const char *line) {
    load_text(w, line, m->lowercase);
    rstrip_text(&w->text);
    if (m->tokenize == BLEU_TOKENIZE_13A) tokenize_13a(w);
    else if (m->tokenize == BLEU_TOKENIZE_INTL) tokenize_intl(w);
}

/* chrF's characters: the line without any whitespace unless whitespace is kept. */
static void chrf_characters(const U32Vec *text, bool keep_whitespace, U32Vec *chars) {
    chars->n = 0;
    u32_reserve(chars, text->n + 1);
    for (size_t i = 0; i < text->n; i++)
        if (keep_whitespace || !unicode_is_space(text->v[i])) chars->v[chars->n++] = text->v[i];
}

static bool is_ascii_punct(uint32_t c) {
    return c < 0x80 && c > ' ' && c != 0x7F && !(c >= '0' && c <= '9') &&
           !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* chrF++'s words: str.split(), then one punctuation character split off the end of each word of
 * two or more characters, or else off its start. */
static void chrf_words(const U32Vec *text, TokenTable *tokens, U32Vec *ids) {
    ids->n = 0;
    size_t pos = 0, start, len;
    while (next_word(text, &pos, &start, &len)) {
        const uint32_t *word = text->v + start;
        if (len > 1 && is_ascii_punct(word[len - 1])) {
            u32_push(ids, token_intern(tokens, word, len - 1));
            u32_push(ids, token_intern(tokens, word + len - 1, 1));
        } else if (len > 1 && is_ascii_punct(word[0])) {
            u32_push(ids, token_intern(tokens, word, 1));
            u32_push(ids, token_intern(tokens, word + 1, len - 1));
        } else {
            u32_push(ids, token_intern(tokens, word, len));
        }
    }
}

void chrf_prepare(TextBuf *w, TokenTable *tokens, const BleuMetric *m, const char *line,
                  U32Vec *chars, U32Vec *words) {
    load_text(w, line, m->lowercase);
    chrf_characters(&w->text, m->whitespace, chars);
    if (m->word_order > 0) chrf_words(&w->text, tokens, words);
}

char *bleu_preprocess(const BleuMetric *m, const char *line) {
    TextBuf w = {0};
    if (m->kind == BLEU_METRIC_BLEU) bleu_prepare_text(&w, m, line);
    else load_text(&w, line, m->lowercase);
    /* BLEU joins the tokens with single spaces; chrF's text is returned as it is. */
    char *out = xmalloc(4 * w.text.n + 1);
    size_t k = 0;
    bool pending_space = false;
    for (size_t i = 0; i < w.text.n; i++) {
        uint32_t c = w.text.v[i];
        if (m->kind == BLEU_METRIC_BLEU && unicode_is_space(c)) {
            pending_space = k > 0;
            continue;
        }
        if (pending_space) out[k++] = ' ';
        pending_space = false;
        k += (size_t)utf8_encode(c, out + k);
    }
    out[k] = '\0';
    text_buf_free(&w);
    return out;
}
