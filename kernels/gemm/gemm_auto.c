/* gemm_auto.c: the "auto" backend. Each product goes to the blocked backend or to OpenBLAS by its
 * shape class (gemm_class: a couple of comparisons per call), or, with B packed once, by the
 * packed class (gemm_pack_b), as chosen on this machine:
 *   - a short measurement at first use, per class, at the current thread count: two products
 *     typical of the class (the large ones through the threaded sgemm, the attention ones as
 *     attention runs them: a batch per thread through sgemm_serial inside a parallel region),
 *     both backends interleaved, a warm-up call then the best of up to TUNE_REPS calls within a
 *     time budget (0.3-0.4 s in all on a 2-core AVX2 EPYC);
 *   - OpenBLAS wins a class only when it is at least OPENBLAS_MARGIN faster: near ties go to
 *     blocked, whose results are bit-identical for any thread count;
 *   - the choice is cached per machine key (CPU model, the blocked backend's ISA, micro-kernel and
 *     revision, OpenBLAS version and core, thread count) in $XDG_CACHE_HOME/nmt/ and read back by
 *     later runs; an unreadable or foreign file is measured again and replaced.
 * NMT_GEMM_AUTOTUNE=0 skips measuring and cache (blocked when a SIMD micro-kernel fits this CPU,
 * else openblas), NMT_GEMM_AUTOTUNE=refresh measures again. Where no SIMD micro-kernel fits (arm64,
 * old x86), auto is OpenBLAS for every class, unmeasured. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "atomic.h"
#include "check.h"
#include "cpu.h"
#include "gemm_auto.h"
#include "gemm_backends.h"
#include "paths.h"
#include "timer.h"
#include "ukernel.h"

const char *const gemm_class_names[GEMM_CLASSES] = {"large", "wgrad", "attention", "packed"};

GemmClass gemm_class(bool ta, bool tb, int M, int N, int K) {
    if ((double)M * N * K <= GEMM_SMALL_WORK) return GEMM_CLASS_ATTENTION;
    if (ta && !tb && K >= M && K >= N) return GEMM_CLASS_WGRAD;
    return GEMM_CLASS_LARGE;
}

static GemmAutoChoice choice;  // what the entry points below dispatch by
static bool in_use;            // choice is set
enum { KNOWN = 8 };
static GemmAutoChoice known[KNOWN];  // the last choices resolved, for other thread counts
static int nknown;
static char auto_detail[1100];

static void auto_sgemm(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                       int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    choice.backend[gemm_class(ta, tb, M, N, K)]->sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb,
                                                       beta, C, ldc);
}

static void auto_sgemm_serial(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                              int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    choice.backend[gemm_class(ta, tb, M, N, K)]->sgemm_serial(ta, tb, M, N, K, alpha, A, lda, B,
                                                              ldb, beta, C, ldc);
}

static void auto_sgemm_ep(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                          int lda, const float *B, int ldb, float beta, float *C, int ldc,
                          const GemmEpilogue *ep) {
    sgemm_ep(choice.backend[gemm_class(ta, tb, M, N, K)], ta, tb, M, N, K, alpha, A, lda, B, ldb,
             beta, C, ldc, ep);
}

/* B packed once goes to the packed class's backend, which computes its products. */
static void auto_pack_b(GemmPackedB *p) {
    gemm_pack_b(p, choice.backend[GEMM_CLASS_PACKED], p->tb, p->K, p->N, p->B, p->ldb);
}

static const GemmImpl gemm_auto = {"auto",        auto_detail,    auto_sgemm, auto_sgemm_serial,
                                   auto_sgemm_ep, auto_pack_b, NULL};

/* The ISA of the micro-kernel the blocked backend runs here. */
static const char *blocked_isa(void) {
    const GemmImpl *best = gemm_blocked_best();
    return best == gemm_blocked_variant("avx512") ? "avx512"
           : best == gemm_blocked_variant("avx2") ? "avx2"
                                                  : "portable";
}

/* The CPU's name: /proc/cpuinfo's "model name", else its implementer and part (arm64). */
static void cpu_model(char *out, size_t size) {
    char line[512], implementer[64] = "", part[64] = "";
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *value = colon + 1 + strspn(colon + 1, " \t");
        value[strcspn(value, "\n")] = '\0';
        if (!strncmp(line, "model name", 10)) {
            snprintf(out, size, "%s", value);
            break;
        }
        if (!strncmp(line, "CPU implementer", 15) && !implementer[0])
            snprintf(implementer, sizeof implementer, "%s", value);
        if (!strncmp(line, "CPU part", 8) && !part[0]) snprintf(part, sizeof part, "%s", value);
    }
    fclose(f);
    if (!strcmp(out, "unknown") && implementer[0])
        snprintf(out, size, "implementer %s part %s", implementer, part);
}

void gemm_auto_key(char *out, size_t size, const char *cpu_model, const char *isa,
                   const char *blocked, const char *openblas, int threads) {
    snprintf(out, size, "cpu=%s; isa=%s; blocked=%s; openblas=%s; threads=%d", cpu_model, isa,
             blocked, openblas, threads);
}

void gemm_auto_machine_key(char *out, size_t size, int threads) {
    char model[256], blocked[256];
    cpu_model(model, sizeof model);
    snprintf(blocked, sizeof blocked, "%s r%d", gemm_blocked_best()->detail, GEMM_BLOCKED_REVISION);
    gemm_auto_key(out, size, model, blocked_isa(), blocked, gemm_openblas_get()->detail, threads);
}

static uint64_t fnv1a(const char *s) {
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The cache directory: $XDG_CACHE_HOME/nmt, else $HOME/.cache/nmt; false when neither is set. */
static bool cache_dir(char *out, size_t size) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(out, size, "%s/nmt", xdg);
    else if (home && *home)
        snprintf(out, size, "%s/.cache/nmt", home);
    else
        return false;
    return true;
}

bool gemm_auto_cache_path(char *out, size_t size, const char *key) {
    char dir[480];
    if (!cache_dir(dir, sizeof dir)) return false;
    snprintf(out, size, "%s/gemm-auto-%016llx", dir, (unsigned long long)fnv1a(key));
    return true;
}

enum { CACHE_FORMAT = 2 };  // 2: the packed class

/* The candidate backend called `name`; NULL for any other name. */
static const GemmImpl *candidate(const char *name) {
    if (!strcmp(name, "blocked")) return gemm_blocked_best();
    if (!strcmp(name, "openblas")) return gemm_openblas_get();
    return NULL;
}

bool gemm_auto_cache_read(const char *path, const char *key, GemmAutoChoice *c) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char text[2048];  // the whole file; a longer one is not ours
    size_t n = fread(text, 1, sizeof text - 1, f);
    bool whole = feof(f) && !ferror(f);
    fclose(f);
    if (!whole) return false;
    text[n] = '\0';
    char head[64];
    snprintf(head, sizeof head, "nmt gemm-auto %d\nkey ", CACHE_FORMAT);
    size_t hl = strlen(head), kl = strlen(key);
    if (strncmp(text, head, hl) || strncmp(text + hl, key, kl) || text[hl + kl] != '\n')
        return false;
    const char *p = text + hl + kl + 1;
    GemmAutoChoice got = {0};
    for (int k = 0; k < GEMM_CLASSES; k++) {
        char cls[32], backend[32];
        int used = 0;
        if (sscanf(p, "%31s %31s %lf %lf%n", cls, backend, &got.ms[k][0], &got.ms[k][1], &used) !=
                4 ||
            p[used] != '\n' || strcmp(cls, gemm_class_names[k]) || !candidate(backend) ||
            !(got.ms[k][0] >= 0 && got.ms[k][1] >= 0 && isfinite(got.ms[k][0]) &&
              isfinite(got.ms[k][1])))
            return false;
        got.backend[k] = candidate(backend);
        p += used + 1;
    }
    if (*p) return false;
    for (int k = 0; k < GEMM_CLASSES; k++) {
        c->backend[k] = got.backend[k];
        c->ms[k][0] = got.ms[k][0], c->ms[k][1] = got.ms[k][1];
    }
    return true;
}

bool gemm_auto_cache_write(const char *path, const char *key, const GemmAutoChoice *c) {
    if (!make_parent_dirs(path)) return false;
    const char *slash = strrchr(path, '/');
    if (slash) {  // the cache directory is nmt's: temporaries of killed processes go
        char *dir = xstrdup(path);
        dir[slash - path] = '\0';
        atomic_remove_stale(*dir ? dir : "/", "[gemm]");
        free(dir);
    }
    AtomicFile f;
    if (atomic_try_open(&f, path) != 0) return false;
    fprintf(f.f, "nmt gemm-auto %d\nkey %s\n", CACHE_FORMAT, key);
    for (int k = 0; k < GEMM_CLASSES; k++)
        fprintf(f.f, "%s %s %.4f %.4f\n", gemm_class_names[k], c->backend[k]->name, c->ms[k][0],
                c->ms[k][1]);
    return atomic_try_commit(&f) == 0;
}

/* ---- measuring ---- */

typedef struct {
    bool ta, tb;
    int M, N, K;
} TuneShape;

/* Two products per class: 512 tokens through a d 256 FFN up (NT) and a d 512 projection's
 * backward (NN); weight gradients of d 256 over 2048 and 1024 tokens; a score (NT, head dim 64)
 * and a P.V product (NN) of a 25-token sentence; with the weights (NT) packed once, a decoding
 * step's output layer (vocabulary 8000, d 256: 8 MB of weights, beyond L2 as the step's weights
 * are in all) for 100 greedy rows, and its FFN up for 400 beam rows. */
static const TuneShape tune_shapes[GEMM_CLASSES][2] = {
    [GEMM_CLASS_LARGE] = {{false, true, 512, 1024, 256}, {false, false, 512, 512, 512}},
    [GEMM_CLASS_WGRAD] = {{true, false, 256, 256, 2048}, {true, false, 256, 512, 1024}},
    [GEMM_CLASS_ATTENTION] = {{false, true, 25, 25, 64}, {false, false, 25, 64, 25}},
    [GEMM_CLASS_PACKED] = {{false, true, 100, 8000, 256}, {false, true, 400, 1024, 256}},
};

enum {
    TUNE_REPS = 5,
    ATTN_SETS = 16,      // operand sets per thread, used in turn
    ATTN_PRODUCTS = 256  // attention products per thread and call
};
static const double CLASS_BUDGET = 0.1;      // seconds per class (warm-up included) after which
                                             // no further rep starts; one rep always runs
static const double OPENBLAS_MARGIN = 0.02;  // OpenBLAS must be this much faster to win

typedef struct {
    float *A, *B, *C;  // (set, ...) operand sets, as large as the largest shape needs
    size_t sa, sb, sc; // floats per attention set
} TuneOperands;

static TuneOperands tune_operands_make(int threads) {
    TuneOperands o = {0};
    size_t na = 0, nb = 0, nc = 0;
    for (int k = 0; k < GEMM_CLASSES; k++)
        for (int s = 0; s < 2; s++) {
            const TuneShape *t = &tune_shapes[k][s];
            size_t a = (size_t)t->M * t->K, b = (size_t)t->K * t->N, c = (size_t)t->M * t->N;
            if (k == GEMM_CLASS_ATTENTION) {
                o.sa = a > o.sa ? a : o.sa, o.sb = b > o.sb ? b : o.sb, o.sc = c > o.sc ? c : o.sc;
                a *= (size_t)ATTN_SETS * threads, b *= (size_t)ATTN_SETS * threads;
                c *= (size_t)ATTN_SETS * threads;
            }
            na = a > na ? a : na, nb = b > nb ? b : nb, nc = c > nc ? c : nc;
        }
    o.A = aligned_alloc_zeroed(na * sizeof(float));
    o.B = aligned_alloc_zeroed(nb * sizeof(float));
    o.C = aligned_alloc_zeroed(nc * sizeof(float));
    for (size_t i = 0; i < na; i++) o.A[i] = (float)((i * 7919) % 2001) / 1000.0f - 1.0f;
    for (size_t i = 0; i < nb; i++) o.B[i] = (float)((i * 104729) % 1999) / 999.0f - 1.0f;
    return o;
}

static void tune_operands_free(TuneOperands *o) {
    aligned_free(o->A), aligned_free(o->B), aligned_free(o->C);
}

/* Seconds for one call of shape t in class k through backend g, as the model calls it (the
 * packed class with B packed by g in pk). */
static double time_call(const GemmImpl *g, GemmClass k, const TuneShape *t,
                        const TuneOperands *o, const GemmPackedB *pk, int threads) {
    int lda = t->ta ? t->M : t->K, ldb = t->tb ? t->K : t->N;
    double t0 = now_seconds();
    if (k == GEMM_CLASS_PACKED) {
        sgemm_packed(pk, t->M, 1.0f, o->A, lda, 0.0f, o->C, t->N, NULL);
    } else if (k != GEMM_CLASS_ATTENTION) {
        g->sgemm(t->ta, t->tb, t->M, t->N, t->K, 1.0f, o->A, lda, o->B, ldb, 0.0f, o->C, t->N);
    } else {
#pragma omp parallel num_threads(threads)
        for (int i = 0; i < ATTN_PRODUCTS; i++) {
            size_t set = (size_t)omp_get_thread_num() * ATTN_SETS + i % ATTN_SETS;
            g->sgemm_serial(t->ta, t->tb, t->M, t->N, t->K, 1.0f, o->A + set * o->sa, lda,
                            o->B + set * o->sb, ldb, 0.0f, o->C + set * o->sc, t->N);
        }
    }
    return now_seconds() - t0;
}

/* Measures every class at `threads` threads into c->backend and c->ms. */
static void measure(GemmAutoChoice *c, int threads) {
    const GemmImpl *cand[2] = {gemm_blocked_best(), gemm_openblas_get()};
    TuneOperands o = tune_operands_make(threads);
    GemmPackedB pk[2][2] = {0};  // [backend][shape]: the packed class's B, packed once
    for (int s = 0; s < 2; s++) {
        const TuneShape *t = &tune_shapes[GEMM_CLASS_PACKED][s];
        for (int b = 0; b < 2; b++)
            gemm_pack_b(&pk[b][s], cand[b], t->tb, t->K, t->N, o.B, t->tb ? t->K : t->N);
    }
    for (int k = 0; k < GEMM_CLASSES; k++) {
        double best[2][2] = {{INFINITY, INFINITY}, {INFINITY, INFINITY}};  // [backend][shape]
        double start = now_seconds();
        for (int rep = -1; rep < TUNE_REPS; rep++) {  // rep -1 warms up
            for (int s = 0; s < 2; s++) {
                const TuneShape *t = &tune_shapes[k][s];
                CHECK(k == GEMM_CLASS_PACKED ||
                          gemm_class(t->ta, t->tb, t->M, t->N, t->K) == (GemmClass)k,
                      "tuning shape %d of class %s is not in it", s, gemm_class_names[k]);
                for (int b = 0; b < 2; b++) {
                    double sec = time_call(cand[b], k, t, &o, &pk[b][s], threads);
                    if (rep >= 0 && sec < best[b][s]) best[b][s] = sec;
                }
            }
            if (rep >= 0 && now_seconds() - start > CLASS_BUDGET) break;
        }
        for (int b = 0; b < 2; b++) c->ms[k][b] = 1e3 * (best[b][0] + best[b][1]);
        c->backend[k] = c->ms[k][1] < (1.0 - OPENBLAS_MARGIN) * c->ms[k][0] ? cand[1] : cand[0];
    }
    for (int s = 0; s < 2; s++)
        for (int b = 0; b < 2; b++) gemm_packed_b_free(&pk[b][s]);
    tune_operands_free(&o);
}

/* ---- the choice in use ---- */

static void describe(void) {
    int n = 0;
    for (int k = 0; k < GEMM_CLASSES; k++)
        n += snprintf(auto_detail + n, sizeof auto_detail - n, "%s%s: %s", k ? ", " : "",
                      gemm_class_names[k], choice.backend[k]->name);
    snprintf(auto_detail + n, sizeof auto_detail - n, " (%s)", choice.note);
}

/* Keeps c among the known choices, in place of any other for its thread count. */
static void remember(const GemmAutoChoice *c) {
    for (int i = 0; i < KNOWN && i < nknown; i++)
        if (known[i].threads == c->threads) {
            known[i] = *c;
            return;
        }
    known[nknown++ % KNOWN] = *c;
}

void gemm_auto_install(const GemmAutoChoice *c) {
    choice = *c;
    in_use = true;
    describe();
}

/* The choice for `threads` threads (see gemm_auto_resolve). */
static GemmAutoChoice decide(int threads) {
    const char *tune = getenv("NMT_GEMM_AUTOTUNE");
    if (!tune || !*tune) tune = "1";
    if (strcmp(tune, "0") && strcmp(tune, "1") && strcmp(tune, "refresh"))
        FATAL("NMT_GEMM_AUTOTUNE must be 0 (no measuring), 1 (measure once, cache) or refresh "
              "(measure again), got '%s'",
              tune);
    GemmAutoChoice c = {.threads = threads};
    const char *plural = threads > 1 ? "s" : "";
    bool simd = strcmp(blocked_isa(), "portable");  // else OpenBLAS, unmeasured (arm64 ...)
    if (!strcmp(tune, "0") || !simd) {
        const GemmImpl *g = simd ? gemm_blocked_best() : gemm_openblas_get();
        for (int k = 0; k < GEMM_CLASSES; k++) c.backend[k] = g;
        c.source = "default";
        snprintf(c.note, sizeof c.note, "default at %d thread%s, %s", threads, plural,
                 simd ? "NMT_GEMM_AUTOTUNE=0" : "no SIMD micro-kernel on this CPU");
        return c;
    }
    char key[1024], path[512];
    gemm_auto_machine_key(key, sizeof key, threads);
    bool have_path = gemm_auto_cache_path(path, sizeof path, key);
    if (have_path && strcmp(tune, "refresh") && gemm_auto_cache_read(path, key, &c)) {
        c.source = "cached";
        snprintf(c.note, sizeof c.note, "at %d thread%s, cached in %s", threads, plural, path);
        return c;
    }
    double t0 = now_seconds();
    measure(&c, threads);
    c.source = "measured";
    int n = snprintf(c.note, sizeof c.note, "measured at %d thread%s in %.2f s", threads, plural,
                     now_seconds() - t0);
    if (!have_path)
        snprintf(c.note + n, sizeof c.note - n, ", not cached: no XDG_CACHE_HOME or HOME");
    else if (!gemm_auto_cache_write(path, key, &c))
        snprintf(c.note + n, sizeof c.note - n, ", not cached: cannot write %s: %s", path,
                 strerror(errno));
    else
        snprintf(c.note + n, sizeof c.note - n, ", cached in %s", path);
    return c;
}

void gemm_auto_resolve(void) {
    GemmAutoChoice c = decide(cpu_threads());
    gemm_auto_install(&c);
    remember(&c);
}

const GemmImpl *gemm_auto_get(void) {
    if (!in_use) gemm_auto_resolve();
    return &gemm_auto;
}

const GemmAutoChoice *gemm_auto_choice(void) {
    gemm_auto_get();
    return &choice;
}

void gemm_auto_threads_changed(int threads) {
    if (!in_use || choice.threads == threads) return;
    for (int i = 0; i < KNOWN && i < nknown; i++)
        if (known[i].threads == threads) {
            gemm_auto_install(&known[i]);
            return;
        }
    gemm_auto_resolve();
}
