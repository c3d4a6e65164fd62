/* bleu.c: sacreBLEU's text preprocessing (str.lower(), the 13a / intl / none tokenizers, chrF's
 * whitespace removal and chrF++ word splitting), n-gram matching into per-segment statistics, and
 * the BLEU and chrF formulas on summed statistics, with the same floating-point operations in the
 * same order as sacreBLEU's Python so that scores agree to the last bit. */
#include "bleu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bleu_internal.h"
#include "check.h"
#include "unicode.h"

/* ---- growable uint32 vectors (code points or token ids) ---- */

typedef struct U32Vec {
    uint32_t *v;
    size_t n, cap;
} U32Vec;

static void u32_reserve(U32Vec *b, size_t cap) {
    if (cap <= b->cap) return;
    b->cap = cap < 2 * b->cap ? 2 * b->cap : cap;
    b->v = xrealloc(b->v, b->cap * sizeof *b->v);
}

static void u32_push(U32Vec *b, uint32_t x) {
    if (b->n == b->cap) u32_reserve(b, b->n + 16);
    b->v[b->n++] = x;
}

static void u32_swap(U32Vec *a, U32Vec *b) {
    U32Vec t = *a;
    *a = *b;
    *b = t;
}

/* ---- hashing of uint32 sequences (tokens, n-grams) ---- */

static const uint64_t HASH_SEED = 0x243F6A8885A308D3ULL;

static uint64_t hash_step(uint64_t h, uint32_t x) {
    h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

/* ---- token interning: equal tokens get equal ids within one corpus ---- */

typedef struct TokenTable {
    U32Vec text;     /* all distinct tokens back to back */
    size_t *start;   /* (ntokens) offset of each token in text */
    uint32_t *len;   /* (ntokens) */
    uint64_t *hash;  /* (ntokens) */
    uint32_t *slots; /* (nslots) token id + 1, 0 for empty */
    size_t ntokens, cap_tokens, nslots;
} TokenTable;

static void token_table_grow(TokenTable *t) {
    size_t nslots = t->nslots ? 2 * t->nslots : 1024;
    uint32_t *slots = xcalloc(nslots, sizeof *slots);
    for (size_t id = 0; id < t->ntokens; id++) {
        size_t s = t->hash[id] & (nslots - 1);
        while (slots[s]) s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
}

static uint32_t token_intern(TokenTable *t, const uint32_t *cps, size_t n) {
    if (2 * (t->ntokens + 1) > t->nslots) token_table_grow(t);
    uint64_t h = HASH_SEED;
    for (size_t i = 0; i < n; i++) h = hash_step(h, cps[i]);
    size_t s = h & (t->nslots - 1);
    for (; t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
        uint32_t id = t->slots[s] - 1;
        if (t->hash[id] == h && t->len[id] == n &&
            !memcmp(t->text.v + t->start[id], cps, n * sizeof *cps))
            return id;
    }
    if (t->ntokens == t->cap_tokens) {
        t->cap_tokens = t->cap_tokens ? 2 * t->cap_tokens : 1024;
        t->start = xrealloc(t->start, t->cap_tokens * sizeof *t->start);
        t->len = xrealloc(t->len, t->cap_tokens * sizeof *t->len);
        t->hash = xrealloc(t->hash, t->cap_tokens * sizeof *t->hash);
    }
    size_t id = t->ntokens++;
    t->start[id] = t->text.n;
    t->len[id] = (uint32_t)n;
    t->hash[id] = h;
    u32_reserve(&t->text, t->text.n + n);
    memcpy(t->text.v + t->text.n, cps, n * sizeof *cps);
    t->text.n += n;
    t->slots[s] = (uint32_t)id + 1;
    return (uint32_t)id;
}

static void token_table_free(TokenTable *t) {
    free(t->text.v);
    free(t->start);
    free(t->len);
    free(t->hash);
    free(t->slots);
}

/* ---- n-gram multisets of one segment ---- */

typedef struct NgramSlot {
    const uint32_t *seq; /* NULL for an empty slot */
    uint64_t hash;
    int32_t n, count;
} NgramSlot;

typedef struct NgramTable {
    NgramSlot *slots; /* (cap) open addressing, cap a power of two */
    size_t *used;     /* (cap) indices of the occupied slots */
    size_t cap, nused;
} NgramTable;

/* Empties the table and makes room for max_entries n-grams. */
static void ngram_table_reset(NgramTable *t, size_t max_entries) {
    if (2 * max_entries + 1 > t->cap) {
        size_t cap = 64;
        while (cap < 2 * max_entries + 1) cap *= 2;
        free(t->slots);
        free(t->used);
        t->slots = xcalloc(cap, sizeof *t->slots);
        t->used = xmalloc(cap * sizeof *t->used);
        t->cap = cap;
    } else {
        for (size_t i = 0; i < t->nused; i++) t->slots[t->used[i]].seq = NULL;
    }
    t->nused = 0;
}

/* The slot of n-gram seq[0..n) (hash h), added with count 0 when add is set, else NULL. */
static NgramSlot *ngram_table_get(NgramTable *t, const uint32_t *seq, int n, uint64_t h,
                                  bool add) {
    size_t s = h & (t->cap - 1);
    for (; t->slots[s].seq; s = (s + 1) & (t->cap - 1)) {
        NgramSlot *e = &t->slots[s];
        if (e->hash == h && e->n == n && !memcmp(e->seq, seq, (size_t)n * sizeof *seq)) return e;
    }
    if (!add) return NULL;
    CHECK(2 * (t->nused + 1) <= t->cap, "n-gram table over capacity");
    NgramSlot *e = &t->slots[s];
    *e = (NgramSlot){.seq = seq, .hash = h, .n = n, .count = 0};
    t->used[t->nused++] = s;
    return e;
}

static void ngram_table_free(NgramTable *t) {
    free(t->slots);
    free(t->used);
}

/* At most this many n-grams of orders 1..max_order in a sequence of len items. */
static size_t ngram_bound(size_t len, int max_order) {
    return len * (size_t)max_order;
}

/* Adds every n-gram of seq[0..len) with 1 <= n <= max_order to the table. */
static void ngram_table_add_all(NgramTable *t, const uint32_t *seq, size_t len, int max_order) {
    for (size_t i = 0; i < len; i++) {
        uint64_t h = HASH_SEED;
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            h = hash_step(h, seq[i + n - 1]);
            ngram_table_get(t, seq + i, n, h, true)->count++;
        }
    }
}

/* Counts the n-grams of hyp per order (hyp_total[n-1]) and how many of them the reference
 * multiset covers, each reference n-gram used at most as often as it occurs (matched[n-1]). */
static void ngram_match(NgramTable *hyp_counts, NgramTable *ref_counts, const uint32_t *seq,
                        size_t len, int max_order, int64_t *hyp_total, int64_t *matched) {
    ngram_table_reset(hyp_counts, ngram_bound(len, max_order));
    for (size_t i = 0; i < len; i++) {
        uint64_t h = HASH_SEED;
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            h = hash_step(h, seq[i + n - 1]);
            NgramSlot *mine = ngram_table_get(hyp_counts, seq + i, n, h, true);
            mine->count++;
            hyp_total[n - 1]++;
            NgramSlot *ref = ngram_table_get(ref_counts, seq + i, n, h, false);
            if (ref && mine->count <= ref->count) matched[n - 1]++;
        }
    }
}

/* ---- text preprocessing ---- */

/* Buffers reused across segments. */
typedef struct Workspace {
    U32Vec text, pass;    /* code points being transformed, and the next pass */
    U32Vec *seqs;         /* (1 + nrefs) token ids or characters of hyp and each reference */
    U32Vec *words;        /* (1 + nrefs) chrF++ word ids */
    int nseqs;
    TokenTable tokens;
    NgramTable ref_counts, ref_one, hyp_counts;
} Workspace;

static void workspace_init(Workspace *w, int nseqs) {
    memset(w, 0, sizeof *w);
    w->nseqs = nseqs;
    w->seqs = xcalloc((size_t)nseqs, sizeof *w->seqs);
    w->words = xcalloc((size_t)nseqs, sizeof *w->words);
}

static void workspace_free(Workspace *w) {
    free(w->text.v);
    free(w->pass.v);
    for (int i = 0; i < w->nseqs; i++) {
        free(w->seqs[i].v);
        free(w->words[i].v);
    }
    free(w->seqs);
    free(w->words);
    token_table_free(&w->tokens);
    ngram_table_free(&w->ref_counts);
    ngram_table_free(&w->ref_one);
    ngram_table_free(&w->hyp_counts);
}

/* Decodes line into w->text, lowercased when asked (Python's str.lower()). */
static void load_text(Workspace *w, const char *line, bool lowercase) {
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
static void replace_ascii(Workspace *w, const char *pattern, const char *replacement) {
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
static void pad_class(Workspace *w, CharClass cls) {
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
static void split_pair(Workspace *w, CharClass first, CharClass second, bool lead_space) {
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
static void tokenize_13a(Workspace *w) {
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
static void tokenize_intl(Workspace *w) {
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

/* str.split(): the whitespace-separated words of w->text, interned into ids. */
static void split_words(Workspace *w, U32Vec *ids) {
    ids->n = 0;
    size_t pos = 0, start, len;
    while (next_word(&w->text, &pos, &start, &len))
        u32_push(ids, token_intern(&w->tokens, w->text.v + start, len));
}

/* sacreBLEU BLEU._preprocess_segment leaves the tokenized line in w->text. */
static void bleu_prepare_text(Workspace *w, const BleuMetric *m, const char *line) {
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
static void chrf_words(Workspace *w, U32Vec *ids) {
    ids->n = 0;
    size_t pos = 0, start, len;
    while (next_word(&w->text, &pos, &start, &len)) {
        const uint32_t *word = w->text.v + start;
        if (len > 1 && is_ascii_punct(word[len - 1])) {
            u32_push(ids, token_intern(&w->tokens, word, len - 1));
            u32_push(ids, token_intern(&w->tokens, word + len - 1, 1));
        } else if (len > 1 && is_ascii_punct(word[0])) {
            u32_push(ids, token_intern(&w->tokens, word, 1));
            u32_push(ids, token_intern(&w->tokens, word + 1, len - 1));
        } else {
            u32_push(ids, token_intern(&w->tokens, word, len));
        }
    }
}

static void chrf_prepare(Workspace *w, const BleuMetric *m, const char *line, U32Vec *chars,
                         U32Vec *words) {
    load_text(w, line, m->lowercase);
    chrf_characters(&w->text, m->whitespace, chars);
    if (m->word_order > 0) chrf_words(w, words);
}

char *bleu_preprocess(const BleuMetric *m, const char *line) {
    Workspace w;
    workspace_init(&w, 1);
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
    workspace_free(&w);
    return out;
}

/* ---- metrics ---- */

BleuMetric bleu_metric_bleu(BleuTokenize tokenize, bool lowercase) {
    return (BleuMetric){.kind = BLEU_METRIC_BLEU, .lowercase = lowercase, .tokenize = tokenize};
}

BleuMetric bleu_metric_chrf(int word_order, bool lowercase) {
    return (BleuMetric){.kind = BLEU_METRIC_CHRF,
                        .lowercase = lowercase,
                        .char_order = 6,
                        .word_order = word_order,
                        .beta = 2};
}

int bleu_metric_nstats(const BleuMetric *m) {
    return m->kind == BLEU_METRIC_BLEU ? BLEU_NSTATS : 3 * (m->char_order + m->word_order);
}

void bleu_metric_name(const BleuMetric *m, char *buf, size_t cap) {
    if (m->kind == BLEU_METRIC_BLEU) {
        snprintf(buf, cap, "BLEU");
        return;
    }
    int k = snprintf(buf, cap, "chrF%d", m->beta);
    for (int i = 0; i < m->word_order && k + 1 < (int)cap; i++) buf[k++] = '+';
    if (k < (int)cap) buf[k] = '\0';
}

/* ---- BLEU ---- */

/* The reference length BLEU compares against: the closest to the hypothesis, the shorter on
 * ties. */
static int64_t closest_ref_len(int64_t hyp_len, const int64_t *ref_lens, int nrefs) {
    int64_t best_diff = -1, best_len = -1;
    for (int r = 0; r < nrefs; r++) {
        int64_t diff = llabs(hyp_len - ref_lens[r]);
        if (best_diff == -1 || diff < best_diff) {
            best_diff = diff;
            best_len = ref_lens[r];
        } else if (diff == best_diff && ref_lens[r] < best_len) {
            best_len = ref_lens[r];
        }
    }
    return best_len;
}

/* Segment statistics against nrefs references (sacreBLEU clips each n-gram by its
 * largest count in any one reference). */
static void bleu_segment(Workspace *w, const BleuMetric *m, const char *hyp,
                         const char *const *refs, int nrefs, int64_t *st) {
    int64_t ref_lens[nrefs];
    size_t max_ngrams = 0;
    for (int r = 0; r < nrefs; r++) {
        bleu_prepare_text(w, m, refs[r]);
        split_words(w, &w->seqs[1 + r]);
        ref_lens[r] = (int64_t)w->seqs[1 + r].n;
        max_ngrams += ngram_bound(w->seqs[1 + r].n, BLEU_MAX_NGRAM_ORDER);
    }
    ngram_table_reset(&w->ref_counts, max_ngrams);
    for (int r = 0; r < nrefs; r++) {
        const U32Vec *ids = &w->seqs[1 + r];
        if (nrefs == 1) {
            ngram_table_add_all(&w->ref_counts, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER);
            continue;
        }
        ngram_table_reset(&w->ref_one, ngram_bound(ids->n, BLEU_MAX_NGRAM_ORDER));
        ngram_table_add_all(&w->ref_one, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER);
        for (size_t i = 0; i < w->ref_one.nused; i++) {
            const NgramSlot *e = &w->ref_one.slots[w->ref_one.used[i]];
            NgramSlot *best = ngram_table_get(&w->ref_counts, e->seq, e->n, e->hash, true);
            if (e->count > best->count) best->count = e->count;
        }
    }
    bleu_prepare_text(w, m, hyp);
    U32Vec *ids = &w->seqs[0];
    split_words(w, ids);
    memset(st, 0, BLEU_NSTATS * sizeof *st);
    st[0] = (int64_t)ids->n;
    st[1] = closest_ref_len(st[0], ref_lens, nrefs);
    ngram_match(&w->hyp_counts, &w->ref_counts, ids->v, ids->n, BLEU_MAX_NGRAM_ORDER,
                st + 2 + BLEU_MAX_NGRAM_ORDER, st + 2);
}

/* math.log floored as sacreBLEU's my_log: log(0) counts as -9999999999. */
static double my_log(double x) {
    return x == 0.0 ? -9999999999.0 : log(x);
}

/* Python's sum() of floats: left to right, as CPython up to 3.11 adds (3.12 added Neumaier
 * compensation, which moves the last bits of some scores; the reference scores were made with
 * plain addition, and this matches them bit for bit). */
static double python_sum(const double *x, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += x[i];
    return sum;
}

/* An intermediate result as sacreBLEU holds it: a Python float (double), or a NumPy float32
 * scalar when the statistics came from a float32 array. Rounding the double result of one
 * + - * / of float32 operands to float32 gives exactly the float32 operation (53 >= 2 * 24 + 2),
 * so one code path serves both. */
static double held(double x, bool float32) {
    return float32 ? (double)(float)x : x;
}

/* BLEU.compute_bleu with 'exp' smoothing. */
static BleuScore bleu_compute(const double *st, bool float32) {
    BleuScore s = {0};
    const double *correct = st + 2, *total = st + 2 + BLEU_MAX_NGRAM_ORDER;
    s.sys_len = (int64_t)st[0];
    s.ref_len = (int64_t)st[1];
    s.ratio = s.ref_len ? (double)s.sys_len / (double)s.ref_len : 0.0;
    if (s.sys_len < s.ref_len)
        s.bp = s.sys_len > 0 ? exp(1.0 - (double)s.ref_len / (double)s.sys_len) : 0.0;
    else s.bp = 1.0;
    bool any_correct = false;
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) any_correct |= correct[n] != 0;
    if (!any_correct) return s;
    double smooth = 1.0;
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) {
        if (total[n] == 0) break;
        if (correct[n] == 0) {
            smooth *= 2;
            s.precisions[n] = held(100.0 / held(smooth * total[n], float32), float32);
        } else {
            s.precisions[n] = held(held(100.0 * correct[n], float32) / total[n], float32);
        }
    }
    double logs[BLEU_MAX_NGRAM_ORDER];
    for (int n = 0; n < BLEU_MAX_NGRAM_ORDER; n++) logs[n] = my_log(s.precisions[n]);
    s.score = s.bp * exp(python_sum(logs, BLEU_MAX_NGRAM_ORDER) / BLEU_MAX_NGRAM_ORDER);
    return s;
}

/* CHRF._compute_f_score without eps smoothing: precision and recall averaged over the orders
 * that have both hypothesis and reference n-grams, then F-beta, in percent. The Python float 0.0
 * it returns for a zero score is flagged in *python_zero (it makes NumPy's array float64). */
static double chrf_compute(const double *st, int norders, int beta, bool float32,
                           bool *python_zero) {
    const int factor = beta * beta;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (int i = 0; i < norders; i++) {
        double n_hyp = st[3 * i], n_ref = st[3 * i + 1], n_match = st[3 * i + 2];
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec = held(avg_prec + held(n_match / n_hyp, float32), float32);
            avg_rec = held(avg_rec + held(n_match / n_ref, float32), float32);
            effective_order++;
        }
    }
    *python_zero = true;
    if (effective_order == 0) return 0.0;
    avg_prec = held(avg_prec / effective_order, float32);
    avg_rec = held(avg_rec / effective_order, float32);
    if (held(avg_prec + avg_rec, float32) == 0.0) return 0.0;
    *python_zero = false;
    double score = held(held((1 + factor) * avg_prec, float32) * avg_rec, float32);
    score = held(score / held(held(factor * avg_prec, float32) + avg_rec, float32), float32);
    return held(100 * score, float32);
}

BleuScore bleu_score_held(const BleuMetric *m, const double *sums, bool float32,
                          bool *python_zero) {
    *python_zero = false;
    if (m->kind == BLEU_METRIC_BLEU) return bleu_compute(sums, float32);
    int norders = m->char_order + m->word_order;
    return (BleuScore){.score = chrf_compute(sums, norders, m->beta, float32, python_zero)};
}

/* Matches one sequence kind (characters or words) of orders 1..max_order into st (3 per order:
 * hyp n-grams, ref n-grams, matches; hyp n-grams count only where the reference has some). */
static void chrf_match(Workspace *w, const U32Vec *hyp, const U32Vec *ref, int max_order,
                       int64_t *st) {
    ngram_table_reset(&w->ref_counts, ngram_bound(ref->n, max_order));
    ngram_table_add_all(&w->ref_counts, ref->v, ref->n, max_order);
    int64_t hyp_total[CHRF_MAX_ORDERS] = {0}, matched[CHRF_MAX_ORDERS] = {0};
    ngram_match(&w->hyp_counts, &w->ref_counts, hyp->v, hyp->n, max_order, hyp_total, matched);
    for (int n = 1; n <= max_order; n++) {
        int64_t ref_total = ref->n >= (size_t)n ? (int64_t)(ref->n - (size_t)n + 1) : 0;
        st[3 * (n - 1)] = ref_total ? hyp_total[n - 1] : 0;
        st[3 * (n - 1) + 1] = ref_total;
        st[3 * (n - 1) + 2] = matched[n - 1];
    }
}

/* Segment statistics of the reference with the best chrF (the first on ties). */
static void chrf_segment(Workspace *w, const BleuMetric *m, const char *hyp,
                         const char *const *refs, int nrefs, int64_t *st) {
    int nstats = bleu_metric_nstats(m);
    for (int r = 0; r < nrefs; r++)
        chrf_prepare(w, m, refs[r], &w->seqs[1 + r], &w->words[1 + r]);
    chrf_prepare(w, m, hyp, &w->seqs[0], &w->words[0]);
    double best = -1.0;
    int64_t cand[3 * CHRF_MAX_ORDERS];
    for (int r = 0; r < nrefs; r++) {
        chrf_match(w, &w->seqs[0], &w->seqs[1 + r], m->char_order, cand);
        if (m->word_order > 0)
            chrf_match(w, &w->words[0], &w->words[1 + r], m->word_order,
                       cand + 3 * m->char_order);
        double counts[3 * CHRF_MAX_ORDERS];
        for (int j = 0; j < nstats; j++) counts[j] = (double)cand[j];
        bool python_zero;
        double f =
            chrf_compute(counts, m->char_order + m->word_order, m->beta, false, &python_zero);
        if (f > best) {
            best = f;
            memcpy(st, cand, (size_t)nstats * sizeof *st);
        }
    }
}

/* ---- corpus ---- */

bool bleu_corpus_stats(const BleuMetric *m, const char *const *hyps,
                       const char *const *const *refs, int nrefs, long n, BleuCorpusStats *out) {
    CHECK(m->kind == BLEU_METRIC_BLEU || (m->char_order >= 1 && m->word_order >= 0 &&
                                          m->char_order + m->word_order <= CHRF_MAX_ORDERS),
          "chrF orders must satisfy 1 <= char_order, 0 <= word_order, sum <= %d",
          CHRF_MAX_ORDERS);
    CHECK(nrefs >= 1, "need at least one reference stream");
    memset(out, 0, sizeof *out);
    out->nsegments = n;
    out->nstats = bleu_metric_nstats(m);
    out->no_reference = -1;
    /* How many references each segment has (NULL ones are missing). */
    int seen_nrefs = 0;
    for (long i = 0; i < n; i++) {
        int k = 0;
        for (int r = 0; r < nrefs; r++) k += refs[r][i] != NULL;
        if (k == 0) {
            out->no_reference = i;
            return false;
        }
        if (i == 0) seen_nrefs = k;
        else if (k != seen_nrefs) seen_nrefs = -1;
    }
    out->nrefs = seen_nrefs;
    out->seg = xcalloc((size_t)(n ? n : 1) * (size_t)out->nstats, sizeof *out->seg);
    Workspace w;
    workspace_init(&w, 1 + nrefs);
    const char *present[nrefs];
    for (long i = 0; i < n; i++) {
        int k = 0;
        for (int r = 0; r < nrefs; r++)
            if (refs[r][i]) present[k++] = refs[r][i];
        int64_t *st = out->seg + i * out->nstats;
        if (m->kind == BLEU_METRIC_BLEU) bleu_segment(&w, m, hyps[i], present, k, st);
        else chrf_segment(&w, m, hyps[i], present, k, st);
    }
    workspace_free(&w);
    return true;
}

void bleu_corpus_stats_free(BleuCorpusStats *s) {
    free(s->seg);
    s->seg = NULL;
}

void bleu_corpus_stats_sum(const BleuCorpusStats *s, int64_t *sums) {
    memset(sums, 0, (size_t)s->nstats * sizeof *sums);
    for (long i = 0; i < s->nsegments; i++)
        for (int j = 0; j < s->nstats; j++) sums[j] += s->seg[i * s->nstats + j];
}

BleuScore bleu_score(const BleuMetric *m, const int64_t *sums) {
    double exact[3 * CHRF_MAX_ORDERS]; /* Python ints, exact in double below 2^53 */
    for (int j = 0; j < bleu_metric_nstats(m); j++) exact[j] = (double)sums[j];
    bool python_zero;
    return bleu_score_held(m, exact, false, &python_zero);
}

bool bleu_corpus_score(const BleuMetric *m, const char *const *hyps, const char *const *refs,
                       long n, BleuScore *out) {
    BleuCorpusStats stats;
    if (!bleu_corpus_stats(m, hyps, &refs, 1, n, &stats)) return false;
    int64_t sums[3 * CHRF_MAX_ORDERS];
    bleu_corpus_stats_sum(&stats, sums);
    *out = bleu_score(m, sums);
    bleu_corpus_stats_free(&stats);
    return true;
}
