/* cmd_score.c: `nmt score -m CKPT --src F --ref F`: forced decoding. For every pair the log-
 * probability of the reference (natural log, EOS included) and its token count, in input order
 * on stdout; the corpus NLL per token and perplexity on stderr (Marian's scorer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "cmd.h"
#include "files.h"
#include "loaded_model.h"
#include "translator.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt score -m CHECKPOINT --src FILE --ref FILE [--batch-tokens N]\n\n"
            "Prints \"log-probability<TAB>tokens\" of each reference given its source (EOS\n"
            "included), then the corpus NLL per token and perplexity on stderr.\n");
    fputs(args_model_help, out);
}

typedef struct Pair {
    long index;
    int len;  // max(source, target) + 1
} Pair;

static int by_len(const void *a, const void *b) {
    const Pair *x = a, *y = b;
    return x->len != y->len ? x->len - y->len : (x->index > y->index) - (x->index < y->index);
}

int cmd_score(int argc, char **argv) {
    const char *cmd = "score", *src_path = NULL, *ref_path = NULL;
    ModelArgs ma = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (args_wants_help(a)) {
            usage(stdout);
            return 0;
        } else if (args_is(a, NULL, "--src")) {
            src_path = args_value(cmd, argc, argv, &i);
        } else if (args_is(a, NULL, "--ref")) {
            ref_path = args_value(cmd, argc, argv, &i);
        } else if (!args_model(cmd, &ma, argc, argv, &i)) {
            args_usage_error(cmd, "unknown option '%s'", a);
        }
    }
    if (!src_path || !ref_path) args_usage_error(cmd, "--src and --ref are required");
    LoadedModel lm;
    args_model_open(cmd, &ma, &lm);
    long n;
    char **src, **ref;
    translator_read_parallel(src_path, ref_path, &src, &ref, &n);
    size_t cnt = (size_t)(n ? n : 1);
    int32_t **sid = xmalloc(sizeof(int32_t *) * cnt), **rid = xmalloc(sizeof(int32_t *) * cnt);
    int *slen = xmalloc(sizeof(int) * cnt), *rlen = xmalloc(sizeof(int) * cnt);
    translator_encode(lm.spm, src, n, sid, slen, src_path);
    translator_encode(lm.spm, ref, n, rid, rlen, ref_path);
    Pair *order = xmalloc(sizeof(Pair) * cnt);
    int longest = 1;
    for (long i = 0; i < n; i++) {
        int l = (slen[i] > rlen[i] ? slen[i] : rlen[i]) + 1;
        order[i] = (Pair){i, l};
        longest = l > longest ? l : longest;
    }
    qsort(order, (size_t)n, sizeof *order, by_len);
    const int budget = lm.cfg.decode.batch_tokens > longest ? lm.cfg.decode.batch_tokens : longest;
    Model *m = &lm.m;
    model_plan(m, budget, longest);
    Ctx c = {gemm_select(gemm_backend_name(lm.cfg.train.gemm)), 0, 0, false};
    double *logp = xcalloc(cnt, sizeof(double)), *rows = xmalloc(sizeof(double) * budget);
    int32_t *bs = xmalloc(sizeof(int32_t) * budget), *bin = xmalloc(sizeof(int32_t) * budget),
            *bout = xmalloc(sizeof(int32_t) * budget);
    int *bsl = xmalloc(sizeof(int) * budget), *btl = xmalloc(sizeof(int) * budget);
    float *work = xmalloc(sizeof(float) * loss_work_floats(m->V));
    long tokens = 0;
    double total = 0;
    for (long first = 0; first < n;) {
        long end = first + 1;
        while (end < n && (end + 1 - first) * order[end].len <= budget) end++;
        int B = (int)(end - first), S = 1, T = 1;
        for (long k = first; k < end; k++) {
            long i = order[k].index;
            S = slen[i] + 1 > S ? slen[i] + 1 : S;
            T = rlen[i] + 1 > T ? rlen[i] + 1 : T;
        }
        memset(bs, 0, sizeof(int32_t) * B * S), memset(bin, 0, sizeof(int32_t) * B * T);
        memset(bout, 0, sizeof(int32_t) * B * T);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            memcpy(bs + b * S, sid[i], sizeof(int32_t) * slen[i]);
            bs[b * S + slen[i]] = TOKEN_EOS;
            bin[b * T] = TOKEN_BOS;
            memcpy(bin + b * T + 1, rid[i], sizeof(int32_t) * rlen[i]);
            memcpy(bout + b * T, rid[i], sizeof(int32_t) * rlen[i]);
            bout[b * T + rlen[i]] = TOKEN_EOS;
            bsl[b] = slen[i] + 1, btl[b] = rlen[i] + 1;
        }
        ModelBatch mb = {B, S, T, bs, bin, bout, bsl, btl};
        model_forward(m, &c, &mb);
        loss_target_logprobs(&c, rows, m->dec_out, bout, m->emb, B * T, m->D, m->V, TOKEN_PAD, work);
        for (int b = 0; b < B; b++) {
            long i = order[first + b].index;
            for (int t = 0; t < T; t++) logp[i] += rows[b * T + t];
            tokens += btl[b];
            total += logp[i];
        }
        first = end;
    }
    for (long i = 0; i < n; i++) printf("%.6f\t%d\n", logp[i], rlen[i] + 1);
    double nll = tokens ? -total / tokens : 0;
    fprintf(stderr, "[score] %ld sentences, %ld target tokens: NLL %.4f per token, perplexity %.3f\n",
            n, tokens, nll, exp(nll));
    for (long i = 0; i < n; i++) free(sid[i]), free(rid[i]);
    free(sid), free(rid), free(slen), free(rlen), free(order), free(logp), free(rows);
    free(bs), free(bin), free(bout), free(bsl), free(btl), free(work);
    file_free_lines(src, n), file_free_lines(ref, n);
    loaded_model_close(&lm);
    return 0;
}
