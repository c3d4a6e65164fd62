/* translator.c: batched translation in input order (translator.h). */
#include "translator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bleu_io.h"
#include "check.h"
#include "clean.h"
#include "progress.h"
#include "files.h"
#include "status.h"
#include "text.h"
#include "utf8.h"

enum { MAX_BATCH_SENTENCES = 256 };

// The model's special ids are the ones `prepare` gives the SentencePiece model.
_Static_assert((int)TOKEN_PAD == (int)SPM_PAD_ID && (int)TOKEN_UNK == (int)SPM_UNK_ID &&
                   (int)TOKEN_BOS == (int)SPM_BOS_ID && (int)TOKEN_EOS == (int)SPM_EOS_ID,
               "special token ids of the model and of SentencePiece differ");

SearchOptions translator_options(const DecodeConfig *dc, int beam) {
    SearchOptions o = {beam, (float)dc->lenpen, dc->lenpen_form == LENPEN_GNMT,
                       (float)dc->max_len_a, dc->max_len_b, 0};
    return o;
}

/* The decoder capacity for batches of at most batch_tokens source tokens (or one longer
 * sentence of max_src tokens). */
static DecodeCapacity capacity(const SearchOptions *o, int batch_tokens, int max_src) {
    DecodeCapacity cap;
    cap.sents = MAX_BATCH_SENTENCES;
    cap.beam = o->beam;
    cap.src_tokens = batch_tokens > max_src ? batch_tokens : max_src;
    int longest_out = search_max_len(o, max_src);
    // A batch of B sentences of at most S tokens with B * S <= src_tokens needs
    // B * beam * (a * S + b) <= beam * (a * src_tokens + b * B) row-steps.
    long rows = (long)o->beam * ((long)(o->max_len_a * cap.src_tokens) + 1 +
                                 (long)o->max_len_b * cap.sents);
    if (o->fixed_len > 0) rows = (long)o->beam * cap.sents * o->fixed_len;
    long one = (long)o->beam * longest_out;
    cap.row_steps = (int)(rows > one ? rows : one);
    cap.max_len = longest_out > max_src ? longest_out : max_src;
    return cap;
}

void translator_needs(const SearchOptions *o, int batch_tokens, int max_src, int *plan_tokens,
                      int *plan_len) {
    DecodeCapacity cap = capacity(o, batch_tokens, max_src);
    *plan_tokens = cap.src_tokens;
    *plan_len = cap.max_len;
}

size_t translator_state_bytes(Model *m, const SearchOptions *o, int batch_tokens, int max_src) {
    DecodeCapacity cap = capacity(o, batch_tokens, max_src);
    return decode_state_bytes(m, &cap);
}

void translator_init(Translator *t, Model *m, const SpmModel *spm, const SearchOptions *o,
                     int batch_tokens, int max_src) {
    translator_init_ensemble(t, &m, 1, spm, o, batch_tokens, max_src);
}

void translator_init_ensemble(Translator *t, Model *const *models, int n, const SpmModel *spm,
                              const SearchOptions *o, int batch_tokens, int max_src) {
    memset(t, 0, sizeof *t);
    t->spm = spm, t->opt = *o, t->batch_tokens = batch_tokens, t->max_src = max_src;
    t->n_models = n;
    t->st = xcalloc((size_t)n, sizeof(DecodeState));
    DecodeCapacity cap = capacity(o, batch_tokens, max_src);
    for (int e = 0; e < n; e++) decode_init(&t->st[e], models[e], &cap);
}

void translator_free(Translator *t) {
    for (int e = 0; e < t->n_models; e++) decode_free(&t->st[e]);
    free(t->st);
    memset(t, 0, sizeof *t);
}

static int by_length(const void *a, const void *b) {
    const ByLength *x = a, *y = b;
    if (x->len != y->len) return x->len - y->len;
    return (x->index > y->index) - (x->index < y->index);
}

void translator_sort_by_length(ByLength *v, long n) {
    qsort(v, (size_t)n, sizeof *v, by_length);
}

void translator_run_ids(Translator *t, const Ctx *c, const int32_t *const *src,
                        const int *src_len, long n, int32_t **out, int *out_len) {
    translator_run_nbest(t, c, src, src_len, n, 1, out, out_len, NULL, NULL);
}

void translator_run_nbest(Translator *t, const Ctx *c, const int32_t *const *src,
                          const int *src_len, long n, int nbest, int32_t **out, int *out_len,
                          float *score, int *count) {
    const SearchOptions *o = &t->opt;
    const DecodeState *st0 = &t->st[0];
    CHECK(nbest >= 1 && nbest <= o->beam, "%d best translations asked of a beam of %d", nbest,
          o->beam);
    ByLength *order = xmalloc(sizeof(ByLength) * (n ? n : 1));
    long m = 0;
    for (long i = 0; i < n; i++) {
        for (int j = 0; j < nbest; j++) {
            out[i * nbest + j] = NULL, out_len[i * nbest + j] = 0;
            if (score) score[i * nbest + j] = 0.0f;
        }
        if (count) count[i] = 1;  // an empty source: one empty output
        if (src_len[i] > 0) {
            CHECK(src_len[i] + 1 <= t->max_src, "source %ld has %d tokens; the translator was "
                  "sized for %d", i, src_len[i], t->max_src - 1);
            order[m++] = (ByLength){i, src_len[i] + 1};
        }
    }
    translator_sort_by_length(order, m);
    int32_t *batch = xmalloc(sizeof(int32_t) * (size_t)st0->cap.src_tokens);  // (B, S)
    int *lens = xmalloc(sizeof(int) * MAX_BATCH_SENTENCES);                     // (B)
    int stride = st0->cap.max_len;
    int32_t *hyp = xmalloc(sizeof(int32_t) * MAX_BATCH_SENTENCES * nbest * stride);  // (B, nbest, stride)
    int *hyp_len = xmalloc(sizeof(int) * MAX_BATCH_SENTENCES * nbest);               // (B, nbest)
    float *hyp_score = xmalloc(sizeof(float) * MAX_BATCH_SENTENCES * nbest);         // (B, nbest)
    int *found = xmalloc(sizeof(int) * MAX_BATCH_SENTENCES);                          // (B)
    SearchResult res = {hyp, stride, hyp_len, hyp_score, nbest, found};
    DecodeState **states = xmalloc(sizeof(DecodeState *) * t->n_models);
    for (int e = 0; e < t->n_models; e++) states[e] = &t->st[e];
    Progress bar = progress_start("[translate]", "sentences");
    for (long first = 0; first < m;) {
        // the longest run of sentences (sorted by length) that fits the decoder
        long end = first + 1;
        while (end < m) {
            int S = order[end].len, B = (int)(end + 1 - first);
            if (!decode_fits(st0, B, S, search_max_len(o, S)) || (long)B * S > t->batch_tokens)
                break;
            end++;
        }
        int B = (int)(end - first), S = order[end - 1].len;
        memset(batch, 0, sizeof(int32_t) * B * S);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            memcpy(batch + (size_t)b * S, src[i], sizeof(int32_t) * src_len[i]);
            batch[(size_t)b * S + src_len[i]] = TOKEN_EOS;
            lens[b] = src_len[i] + 1;
        }
        search_ensemble(states, t->n_models, c, o, batch, lens, B, S, &res);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            if (count) count[i] = found[b];
            for (int j = 0; j < found[b]; j++) {
                int l = hyp_len[b * nbest + j];
                out_len[i * nbest + j] = l;
                out[i * nbest + j] = xmalloc(sizeof(int32_t) * (l ? l : 1));
                memcpy(out[i * nbest + j], hyp + ((size_t)b * nbest + j) * stride,
                       sizeof(int32_t) * l);
                if (score) score[i * nbest + j] = hyp_score[b * nbest + j];
            }
        }
        first = end;
        if (t->progress) progress_tick(&bar, first, m);
    }
    if (t->progress) progress_end(&bar);
    free(order), free(batch), free(lens), free(hyp), free(hyp_len), free(hyp_score), free(found);
    free(states);
}

void translator_encode(const SpmModel *spm, char *const *lines, long n, int32_t **ids, int *len,
                       const char *what) {
    SpmIds tmp = {0};
    for (long i = 0; i < n; i++) {
        size_t l = strlen(lines[i]);
        char *text = xmalloc(l + 1);
        memcpy(text, lines[i], l + 1);
        if (clean_normalize(text, &l) == CLEAN_INVALID_UTF8)
            FATAL("%s: line %ld is not valid UTF-8 (at byte %zu)", what, i + 1, l);
        CHECK(spm_encode(spm, text, l, &tmp) == 0, "%s: line %ld: %s", what, i + 1,
              status_message());
        ids[i] = xmalloc(sizeof(int32_t) * (tmp.n ? tmp.n : 1));
        if (tmp.n) memcpy(ids[i], tmp.ids, sizeof(int32_t) * tmp.n);  // no ids yet: NULL
        len[i] = tmp.n;
        free(text);
    }
    spm_ids_free(&tmp);
}

char *translator_decode(const SpmModel *spm, const int32_t *ids, int n) {
    char *text;
    size_t len;
    CHECK(spm_decode(spm, ids, n, &text, &len) == 0, "decoding a hypothesis: %s",
          status_message());
    // one line of valid UTF-8, whatever byte pieces the model chose
    char *line = xmalloc(3 * len + 1);  // (3 len + 1) at worst every byte becomes U+FFFD
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = utf8_next(text + i, len - i, &cp);
        if (k == 0) {
            memcpy(line + out, "\xEF\xBF\xBD", 3), out += 3, i++;
        } else if (cp == '\n' || cp == '\r' || cp == 0) {
            line[out++] = ' ', i++;
        } else {
            memcpy(line + out, text + i, (size_t)k), out += (size_t)k, i += (size_t)k;
        }
    }
    line[out] = 0;
    free(text);
    return line;
}

void translate_lines(const TranslateJob *job, const Ctx *c, char *const *lines, long n,
                     const char *what, Translations *tr) {
    const int N = job->nbest;
    size_t cnt = (size_t)(n ? n : 1);
    int32_t **ids = xmalloc(sizeof(int32_t *) * cnt), **out = xmalloc(sizeof(int32_t *) * cnt * N);
    int *len = xmalloc(sizeof(int) * cnt), *out_len = xmalloc(sizeof(int) * cnt * N);
    translator_encode(job->spm, lines, n, ids, len, what);
    int max_src = 1, plan_tokens, plan_len;
    for (long i = 0; i < n; i++) {
        if (len[i] > job->max_src_len) {
            fprintf(stderr, "[translate] warning: %s: line %ld has %d tokens; translating its "
                    "first %d (decode.max_src_len)\n", what, i + 1, len[i], job->max_src_len);
            len[i] = job->max_src_len;
        }
        max_src = len[i] + 1 > max_src ? len[i] + 1 : max_src;
    }
    translator_needs(&job->opt, job->batch_tokens, max_src, &plan_tokens, &plan_len);
    for (int e = 0; e < job->n_models; e++) model_plan(job->models[e], plan_tokens, plan_len);
    Translator t;
    translator_init_ensemble(&t, job->models, job->n_models, job->spm, &job->opt,
                             job->batch_tokens, max_src);
    t.progress = job->progress;
    tr->n = n, tr->nbest = N, tr->tokens = 0;
    tr->text = xcalloc(cnt * N, sizeof(char *));
    tr->score = xmalloc(sizeof(float) * cnt * N);
    tr->count = xmalloc(sizeof(int) * cnt);
    translator_run_nbest(&t, c, (const int32_t *const *)ids, len, n, N, out, out_len, tr->score,
                         tr->count);
    for (long i = 0; i < n; i++) {
        for (int j = 0; j < tr->count[i]; j++) {
            tr->text[i * N + j] = translator_decode(job->spm, out[i * N + j], out_len[i * N + j]);
            free(out[i * N + j]);
        }
        tr->tokens += out_len[i * N];
        free(ids[i]);
    }
    translator_free(&t);
    free(ids), free(out), free(len), free(out_len);
}

void translations_free(Translations *tr) {
    for (long i = 0; i < tr->n * tr->nbest; i++) free(tr->text[i]);
    free(tr->text), free(tr->score), free(tr->count);
    memset(tr, 0, sizeof *tr);
}

char **translator_read_lines(const char *path, long *n) {
    bool is_stdin = !strcmp(path, "-");
    const char *file = is_stdin ? "/dev/stdin" : path;
    TextReader r;
    if (text_open(&r, file)) return NULL;
    long count = 0, cap = 1024;
    char **lines = xmalloc(sizeof(char *) * cap), *rec;
    size_t len;
    int got;
    while ((got = text_next(&r, &rec, &len)) == 1) {
        if (bleu_check_line(is_stdin ? "<stdin>" : path, r.record_line, rec, len)) {
            got = -1;
            break;
        }
        if (count == cap) lines = xrealloc(lines, sizeof(char *) * (cap *= 2));
        lines[count++] = xstrdup(rec);
    }
    text_close(&r);
    if (got < 0) {
        file_free_lines(lines, count);
        return NULL;
    }
    *n = count;
    return lines;
}

int translator_read_parallel(const char *src_path, const char *ref_path, char ***src,
                             char ***ref, long *n) {
    long nref;
    *ref = NULL;
    *src = translator_read_lines(src_path, n);
    if (!*src) return -1;
    *ref = translator_read_lines(ref_path, &nref);
    if (*ref && *n == nref) return 0;
    int rc = *ref ? status_fail("%s has %ld lines but %s has %ld; they must be parallel", src_path,
                                *n, ref_path, nref)
                  : -1;
    file_free_lines(*src, *n);
    if (*ref) file_free_lines(*ref, nref);
    *src = *ref = NULL;
    return rc;
}
