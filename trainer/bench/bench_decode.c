/* bench_decode.c: `nmt bench decode`, decoding speed with greedy and beam search. Without -m it
 * uses a randomly initialised model of the config, 500 synthetic sentences of 25 tokens in
 * batches of 100 and a fixed output length of 25 (EOS ignored), as the PyTorch anchor
 * (../shared/peers/torch_transformer_bench.py --decode) does, so the two compare; our warm-up is
 * one whole batch (the anchor's is 8 sentences of 3 tokens), as buffers become resident when
 * first touched. The work of
 * the matrix products (model/flops.h) gives GFLOP/s and the share of the FP32 FMA peak measured
 * on the same threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "bench_setup.h"
#include "check.h"
#include "config.h"
#include "cpu.h"
#include "flops.h"
#include "fma_peak.h"
#include "model.h"
#include "rng.h"
#include "search.h"
#include "timer.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: nmt bench decode -c CONFIG [-c MORE] [--set key=value] [--sentences 500]\n"
            "                        [--batch 100] [--len 25] [--beam 4] [--json]\n\n"
            "Sentences/s and tokens/s of greedy and beam search on synthetic sentences of --len\n"
            "tokens, emitting exactly --len tokens each (EOS ignored), with a random model of\n"
            "the config, and the matrix-product work as GFLOP/s and %% of the measured FP32\n"
            "FMA peak.\n");
}

int bench_decode(int argc, char **argv) {
    const char *cmd = "bench decode";
    int n_sent = 500, batch = 100, len = 25, beam = 4;
    bool json = false;
    const ArgsOption opts[] = {ARGS_OPT_INT(NULL, "--sentences", &n_sent, 1, 1000000),
                               ARGS_OPT_INT(NULL, "--batch", &batch, 1, 100000),
                               ARGS_OPT_INT(NULL, "--len", &len, 1, 4096),
                               ARGS_OPT_INT(NULL, "--beam", &beam, 1, 256),
                               ARGS_OPT_FLAG(NULL, "--json", &json)};
    Config cfg;
    Model m;
    const GemmImpl *gemm;
    if (!bench_setup(cmd, argc, argv, opts, ARGS_COUNT(opts), usage, &cfg, &m, &gemm)) return 0;
    const int V = cfg.model.vocab_size;
    model_plan(&m, batch * len, len + 1);
    int32_t *src = xmalloc(sizeof(int32_t) * n_sent * len);
    int *src_len = xmalloc(sizeof(int) * n_sent);
    Rng r = rng_init(1, 5);
    for (int i = 0; i < n_sent * len; i++) src[i] = 4 + (int32_t)rng_below(&r, V - 4);
    for (int s = 0; s < n_sent; s++) src_len[s] = len;
    Ctx c = {.gemm = gemm};
    const FmaPeak peak = fma_peak_measure(m.nthreads);
    if (!json) {
        printf("FP32 FMA peak %.1f GFLOP/s (%s loop, %d thread%s", peak.gflops, peak.isa,
               m.nthreads, m.nthreads > 1 ? "s" : "");
        if (m.nthreads > 1) printf(" %.0f%% apart", 100.0 * peak.spread);
        printf(", build %s)\n", cpu_build_arch());
    }
    const int beams[2] = {1, beam};
    for (int run = 0; run < 2; run++) {
        int k = beams[run];
        DecodeState st;
        DecodeCapacity cap = {batch, k, batch * len, batch * k * len, len};
        decode_init(&st, &m, &cap);
        SearchOptions o = {k, 0.6f, true, 0.0f, len, len};
        int32_t *out = xmalloc(sizeof(int32_t) * batch * (len + 1));
        int *out_len = xmalloc(sizeof(int) * batch);
        float *score = xmalloc(sizeof(float) * batch);
        SearchResult res = {out, len + 1, out_len, score, 1, NULL};
        // warm-up: one whole batch, so that the timed batches reuse memory already touched, as
        // every batch after the first of a long translation does
        search_batch(&st, &c, &o, src, src_len, batch < n_sent ? batch : n_sent, len, &res);
        double t0 = now_seconds();
        long tokens = 0;
        double flops = 0.0;
        for (int s0 = 0; s0 < n_sent; s0 += batch) {
            int n = n_sent - s0 < batch ? n_sent - s0 : batch;
            search_batch(&st, &c, &o, src + (size_t)s0 * len, src_len + s0, n, len, &res);
            for (int s = 0; s < n; s++) tokens += out_len[s];
            flops += model_flops_total(model_decode_flops(&m, n, len, len, k));
        }
        double dt = now_seconds() - t0, gflops = flops / dt / 1e9;
        const char *mode = k == 1 ? "greedy" : "beam";
        if (json)
            printf(
                "{\"bench\":\"decode\",\"attention\":\"%s\",\"dk\":%d,\"mode\":\"%s\",\"beam\":%d,"
                "\"sentences\":%d,\"batch\":%d,\"out_len\":%d,\"threads\":%d,\"seconds\":%.3f,"
                "\"sentences_per_s\":%.1f,\"tokens_per_s\":%.0f,\"gflop\":%.3f,\"gflops\":%.2f,"
                "\"pct_peak\":%.1f,\"peak_gflops\":%.2f,\"peak_isa\":\"%s\",\"arch\":\"%s\","
                "\"thread_spread_pct\":%.1f}\n",
                attention_mode_name(cfg.model.attention), config_model_dk(&cfg.model), mode, k,
                n_sent, batch, len, m.nthreads, dt, n_sent / dt, tokens / dt, flops / 1e9, gflops,
                100.0 * gflops / peak.gflops, peak.gflops, peak.isa, cpu_build_arch(),
                100.0 * peak.spread);
        else
            printf("decode %-6s beam %-2d %s attention (dk %d): %d sentences in %.2f s = %.1f "
                   "sentences/s, %.0f tokens/s, %.1f GFLOP/s = %.1f%% of the FMA peak (batch %d, "
                   "%d tokens out, %d threads)\n",
                   mode, k, attention_mode_name(cfg.model.attention), config_model_dk(&cfg.model),
                   n_sent, dt, n_sent / dt, tokens / dt, gflops, 100.0 * gflops / peak.gflops,
                   batch, len, m.nthreads);
        fflush(stdout);
        free(out), free(out_len), free(score);
        decode_free(&st);
    }
    free(src), free(src_len);
    model_free(&m);
    config_free(&cfg);
    return 0;
}
