/* test_gemm_auto.c: the "auto" GEMM backend without depending on which backend is faster: shape
 * classes; each class routed to the backend its (fake) choice names, through both entry points,
 * and B packed once to the packed class's;
 * NMT_GEMM overriding auto without measuring; the cache key changing with every input; the cache
 * file written, read back and any damaged or foreign file ignored; a measured choice cached and
 * read back by the next resolution, a planted cache file obeyed, NMT_GEMM_AUTOTUNE=0 and refresh.
 * Every cache lives in a temporary XDG_CACHE_HOME. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu.h"
#include "gemm.h"
#include "gemm_auto.h"
#include "gemm_backends.h"
#include "test_util.h"

/* ---- fake backends that record their last call ---- */

static struct {
    const char *backend;
    bool serial, ta, tb;
    int M, N, K;
} last;

static void record(const char *backend, bool serial, bool ta, bool tb, int M, int N, int K) {
    last.backend = backend, last.serial = serial, last.ta = ta, last.tb = tb;
    last.M = M, last.N = N, last.K = K;
}

#define FAKE(tag)                                                                                  \
    static void tag##_threaded(bool ta, bool tb, int M, int N, int K, float alpha,               \
                               const float *A, int lda, const float *B, int ldb, float beta,      \
                               float *C, int ldc) {                                               \
        (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;     \
        record(#tag, false, ta, tb, M, N, K);                                                     \
    }                                                                                              \
    static void tag##_serial(bool ta, bool tb, int M, int N, int K, float alpha, const float *A,  \
                             int lda, const float *B, int ldb, float beta, float *C, int ldc) {   \
        (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;     \
        record(#tag, true, ta, tb, M, N, K);                                                      \
    }                                                                                              \
    static const GemmImpl tag = {#tag, "fake", tag##_threaded, tag##_serial, NULL, NULL, NULL};

FAKE(fake_large)
FAKE(fake_wgrad)
FAKE(fake_attention)
FAKE(fake_packed)

typedef struct {
    bool ta, tb;
    int M, N, K;
    GemmClass cls;
} Case;

static const Case cases[] = {
    {false, true, 25, 25, 64, GEMM_CLASS_ATTENTION},    // scores
    {false, false, 25, 64, 25, GEMM_CLASS_ATTENTION},   // P.V
    {true, false, 64, 64, 256, GEMM_CLASS_ATTENTION},   // small even when TN
    {false, false, 64, 64, 256, GEMM_CLASS_ATTENTION},  // exactly GEMM_SMALL_WORK
    {false, false, 64, 64, 257, GEMM_CLASS_LARGE},      // one above
    {false, true, 4096, 2048, 512, GEMM_CLASS_LARGE},   // FFN up
    {false, false, 4096, 512, 2048, GEMM_CLASS_LARGE},  // FFN down backward
    {true, false, 512, 2048, 4096, GEMM_CLASS_WGRAD},   // weight gradient
    {true, false, 512, 512, 512, GEMM_CLASS_WGRAD},     // K = M = N
    {true, false, 4096, 512, 512, GEMM_CLASS_LARGE},    // TN with short K
    {true, false, 8000, 256, 1024, GEMM_CLASS_LARGE},   // K < M
    {true, true, 512, 512, 4096, GEMM_CLASS_LARGE},     // TT is no weight gradient
    {false, false, 512, 512, 4096, GEMM_CLASS_LARGE},   // nor is NN
};

static void test_classes(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Case *c = &cases[i];
        GemmClass got = gemm_class(c->ta, c->tb, c->M, c->N, c->K);
        EXPECT(got == c->cls, "%c%c %dx%dx%d: class %s, want %s", c->ta ? 'T' : 'N',
               c->tb ? 'T' : 'N', c->M, c->N, c->K, gemm_class_names[got],
               gemm_class_names[c->cls]);
    }
}

/* A fake choice at the current thread count: one recording backend per class. */
static void install_fakes(void) {
    GemmAutoChoice fake = {.threads = cpu_threads(), .source = "fake"};
    fake.backend[GEMM_CLASS_LARGE] = &fake_large;
    fake.backend[GEMM_CLASS_WGRAD] = &fake_wgrad;
    fake.backend[GEMM_CLASS_ATTENTION] = &fake_attention;
    fake.backend[GEMM_CLASS_PACKED] = &fake_packed;
    gemm_auto_install(&fake);
}

static void test_dispatch(void) {
    const GemmImpl *autog = gemm_lookup("auto");
    install_fakes();
    EXPECT(strstr(autog->detail, "large: fake_large, wgrad: fake_wgrad, attention: "
                                 "fake_attention, packed: fake_packed") != NULL,
           "auto's detail '%s' does not name the installed choice", autog->detail);
    const GemmImpl *want[GEMM_CLASSES] = {&fake_large, &fake_wgrad, &fake_attention,
                                          &fake_packed};
    float x = 0;  // the fakes read nothing
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int serial = 0; serial < 2; serial++) {
            const Case *c = &cases[i];
            last.backend = NULL;
            (serial ? autog->sgemm_serial : autog->sgemm)(c->ta, c->tb, c->M, c->N, c->K, 1.0f,
                                                          &x, 1, &x, 1, 0.0f, &x, 1);
            EXPECT(last.backend && !strcmp(last.backend, want[c->cls]->name) &&
                       last.serial == serial && last.ta == c->ta && last.tb == c->tb &&
                       last.M == c->M && last.N == c->N && last.K == c->K,
                   "%s %dx%dx%d went to %s (%s), want %s (%s)", serial ? "sgemm_serial" : "sgemm",
                   c->M, c->N, c->K, last.backend ? last.backend : "nothing",
                   last.serial ? "serial" : "threaded", want[c->cls]->name,
                   serial ? "serial" : "threaded");
        }
    // B packed once: its products go to the packed class's backend, whatever their shape
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Case *c = &cases[i];
        GemmPackedB packed = {0};
        gemm_pack_b(&packed, autog, c->tb, c->K, c->N, &x, 1);
        last.backend = NULL;
        sgemm_packed(&packed, c->M, 1.0f, &x, 1, 0.0f, &x, 1, NULL);
        EXPECT(packed.by == &fake_packed && last.backend && !strcmp(last.backend, "fake_packed") &&
                   !last.serial && last.tb == c->tb && last.M == c->M && last.N == c->N &&
                   last.K == c->K,
               "B packed for %dx%dx%d went to %s, want fake_packed", c->M, c->N, c->K,
               last.backend ? last.backend : "nothing");
        gemm_packed_b_free(&packed);
    }
}

static char *temp_dir(void) {
    char *dir = strdup("/tmp/nmt-test-gemm-auto-XXXXXX");
    EXPECT(dir && mkdtemp(dir), "cannot make a temporary directory");
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tree(char *dir) {
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static int nfiles;

static int count_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)path, (void)st, (void)ftw;
    nfiles += flag == FTW_F;
    return 0;
}

/* Regular files under dir, at any depth. */
static int files_in(const char *dir) {
    nfiles = 0;
    nftw(dir, count_file, 16, FTW_PHYS);
    return nfiles;
}

/* NMT_GEMM wins over the configured name, and a forced backend never measures for auto. Runs
 * first, while auto has not decided anything in this process. */
static void test_override(void) {
    char *xdg = temp_dir();
    setenv("XDG_CACHE_HOME", xdg, 1);
    setenv("NMT_GEMM_AUTOTUNE", "1", 1);
    setenv("NMT_GEMM", "blocked", 1);
    EXPECT(gemm_select("auto") == gemm_lookup("blocked"), "NMT_GEMM=blocked did not win");
    setenv("NMT_GEMM", "openblas", 1);
    EXPECT(gemm_select("auto") == gemm_lookup("openblas"), "NMT_GEMM=openblas did not win");
    EXPECT(gemm_select("blocked") == gemm_lookup("openblas"), "NMT_GEMM did not win over config");
    EXPECT(files_in(xdg) == 0, "a forced backend measured and cached auto's choice");
    unsetenv("NMT_GEMM");
    EXPECT(gemm_select("openblas") == gemm_lookup("openblas"), "the config name was not used");
    setenv("NMT_GEMM_AUTOTUNE", "0", 1);
    setenv("NMT_GEMM", "auto", 1);
    const GemmImpl *g = gemm_select("blocked");
    EXPECT(!strcmp(g->name, "auto"), "NMT_GEMM=auto gave '%s'", g->name);
    unsetenv("NMT_GEMM");
    remove_tree(xdg);
}

static void test_key(void) {
    const char *base[4] = {"Some CPU 9000", "avx2", "avx2+fma 6x16 micro-kernel",
                           "OpenBLAS 0.3.21, OpenMP build, core Zen"};
    const char *other[4] = {"Some CPU 9001", "avx512", "avx2+fma 8x12 micro-kernel",
                            "OpenBLAS 0.3.21, OpenMP build, core Haswell"};
    char key0[1024], path0[512], key[1024], path[512];
    setenv("XDG_CACHE_HOME", "/nonexistent/xdg", 1);
    gemm_auto_key(key0, sizeof key0, base[0], base[1], base[2], base[3], 2);
    EXPECT(gemm_auto_cache_path(path0, sizeof path0, key0), "no cache path");
    EXPECT(!strncmp(path0, "/nonexistent/xdg/nmt/", 21), "cache path '%s' not in XDG_CACHE_HOME",
           path0);
    gemm_auto_key(key, sizeof key, base[0], base[1], base[2], base[3], 2);
    EXPECT(!strcmp(key, key0), "the same inputs gave keys '%s' and '%s'", key, key0);
    for (int changed = 0; changed < 5; changed++) {  // 4: the thread count
        const char *in[4];
        for (int i = 0; i < 4; i++) in[i] = i == changed ? other[i] : base[i];
        gemm_auto_key(key, sizeof key, in[0], in[1], in[2], in[3], changed == 4 ? 1 : 2);
        gemm_auto_cache_path(path, sizeof path, key);
        EXPECT(strcmp(key, key0) && strcmp(path, path0),
               "changing input %d left key '%s' / path '%s'", changed, key, path);
    }
    char machine[1024], expect_threads[32];
    gemm_auto_machine_key(machine, sizeof machine, 3);
    snprintf(expect_threads, sizeof expect_threads, "threads=3");
    const char *isa = cpu_has_avx512() ? "isa=avx512" : cpu_has_avx2_fma() ? "isa=avx2" : NULL;
    char expect_revision[32];
    snprintf(expect_revision, sizeof expect_revision, " r%d; ", GEMM_BLOCKED_REVISION);
    EXPECT(strstr(machine, expect_threads) && strstr(machine, "openblas=OpenBLAS") &&
               strstr(machine, expect_revision) && (!isa || strstr(machine, isa)),
           "machine key '%s' lacks the threads, OpenBLAS, ISA or blocked revision", machine);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    EXPECT(gemm_auto_cache_path(path, sizeof path, key0) &&
               !strncmp(path, "/home/someone/.cache/nmt/gemm-auto-", 35),
           "without XDG_CACHE_HOME the cache is '%s'", path);
    unsetenv("HOME");
    EXPECT(!gemm_auto_cache_path(path, sizeof path, key0), "a cache path without HOME");
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL, "cannot write %s", path);
    if (f) fputs(text, f), fclose(f);
}

static void test_cache_file(void) {
    char *xdg = temp_dir(), path[512], key[] = "cpu=X; isa=avx2; threads=2", text[2048];
    char deep[600];
    snprintf(deep, sizeof deep, "%s/not/yet", xdg);  // directories are created
    setenv("XDG_CACHE_HOME", deep, 1);
    EXPECT(gemm_auto_cache_path(path, sizeof path, key), "no cache path");
    const GemmImpl *blocked = gemm_lookup("blocked"), *openblas = gemm_lookup("openblas");
    GemmAutoChoice c = {.threads = 2};
    c.backend[GEMM_CLASS_LARGE] = openblas, c.ms[GEMM_CLASS_LARGE][0] = 12.5;
    c.ms[GEMM_CLASS_LARGE][1] = 6.25;
    c.backend[GEMM_CLASS_WGRAD] = blocked, c.ms[GEMM_CLASS_WGRAD][0] = 3;
    c.ms[GEMM_CLASS_WGRAD][1] = 4;
    c.backend[GEMM_CLASS_ATTENTION] = openblas, c.ms[GEMM_CLASS_ATTENTION][0] = 1.5;
    c.ms[GEMM_CLASS_ATTENTION][1] = 1.25;
    c.backend[GEMM_CLASS_PACKED] = blocked, c.ms[GEMM_CLASS_PACKED][0] = 0.5;
    c.ms[GEMM_CLASS_PACKED][1] = 0.75;
    EXPECT(gemm_auto_cache_write(path, key, &c), "cannot write the cache to %s", path);
    EXPECT(files_in(xdg) == 1, "%d files after one cache write (a temp file left?)", files_in(xdg));
    GemmAutoChoice back = {0};
    EXPECT(gemm_auto_cache_read(path, key, &back), "cannot read back %s", path);
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT(back.backend[k] == c.backend[k] && back.ms[k][0] == c.ms[k][0] &&
                   back.ms[k][1] == c.ms[k][1],
               "class %s read back as %s %g %g", gemm_class_names[k],
               back.backend[k] ? back.backend[k]->name : "none", back.ms[k][0], back.ms[k][1]);
    EXPECT(!gemm_auto_cache_read(path, "cpu=X; isa=avx2; threads=1", &back),
           "a file for another key was accepted");
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    EXPECT(!strcmp(text, "nmt gemm-auto 2\nkey cpu=X; isa=avx2; threads=2\n"
                         "large openblas 12.5000 6.2500\nwgrad blocked 3.0000 4.0000\n"
                         "attention openblas 1.5000 1.2500\npacked blocked 0.5000 0.7500\n"),
           "unexpected cache file:\n%s", text);
    // damaged files, each ignored
    struct {
        const char *what, *from, *to;  // text with `from` replaced by `to`
    } damage[] = {
        {"truncated", "packed blocked 0.5000 0.7500\n", ""},
        {"cut mid-line", "0.7500\n", "0.7"},
        {"unknown backend", "wgrad blocked", "wgrad mkl"},
        {"classes swapped", "large openblas 12.5000 6.2500\nwgrad blocked 3.0000 4.0000\n",
         "wgrad blocked 3.0000 4.0000\nlarge openblas 12.5000 6.2500\n"},
        {"extra line", "0.7500\n", "0.7500\nmore\n"},
        {"other format", "gemm-auto 2", "gemm-auto 3"},
        {"the format before the packed class", "gemm-auto 2", "gemm-auto 1"},
        {"negative time", "3.0000", "-3.0000"},
        {"not a number", "4.0000", "nan"},
        {"garbage", "nmt", "\x01\x02 binary"},
    };
    for (size_t d = 0; d < sizeof damage / sizeof damage[0]; d++) {
        char bad[2048];
        const char *at = strstr(text, damage[d].from);
        EXPECT(at != NULL, "damage '%s' does not apply", damage[d].what);
        if (!at) continue;
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - text), text, damage[d].to,
                 at + strlen(damage[d].from));
        write_text(path, bad);
        EXPECT(!gemm_auto_cache_read(path, key, &back), "a %s cache file was accepted",
               damage[d].what);
    }
    write_text(path, "");
    EXPECT(!gemm_auto_cache_read(path, key, &back), "an empty cache file was accepted");
    unlink(path);
    EXPECT(!gemm_auto_cache_read(path, key, &back), "a missing cache file was read");
    // unwritable: the cache directory is a file
    char blocker[600], under[700];
    snprintf(blocker, sizeof blocker, "%s/file", xdg);
    write_text(blocker, "x");
    snprintf(under, sizeof under, "%s/nmt/gemm-auto-0", blocker);
    EXPECT(!gemm_auto_cache_write(under, key, &c), "wrote a cache under a plain file");
    remove_tree(xdg);
}

/* Measured once, cached, read back; a planted file obeyed; refresh and 0. Which backend the
 * measurement picks is not checked: only that it is a real one and survives the round trip. */
static void test_resolve(void) {
    char *xdg = temp_dir(), key[1024], path[512];
    setenv("XDG_CACHE_HOME", xdg, 1);
    gemm_auto_machine_key(key, sizeof key, cpu_threads());
    gemm_auto_cache_path(path, sizeof path, key);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/nmt", xdg);
    mkdir(dir, 0755);
    write_text(path, "nmt gemm-auto 2\nkey something else\n");  // foreign: measured over
    const GemmImpl *blocked = gemm_lookup("blocked"), *openblas = gemm_lookup("openblas");
    setenv("NMT_GEMM_AUTOTUNE", "1", 1);
    gemm_auto_resolve();
    const GemmAutoChoice *c = gemm_auto_choice();
    EXPECT(!strcmp(c->source, "measured") && strstr(c->note, path),
           "a foreign cache file gave source %s (%s)", c->source, c->note);
    GemmAutoChoice measured = *c, back = {0};
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT((c->backend[k] == blocked || c->backend[k] == openblas) && c->ms[k][0] > 0 &&
                   c->ms[k][1] > 0,
               "class %s: backend %s, %g / %g ms", gemm_class_names[k], c->backend[k]->name,
               c->ms[k][0], c->ms[k][1]);
    EXPECT(gemm_auto_cache_read(path, key, &back), "the measured choice was not cached at %s",
           path);
    gemm_auto_resolve();
    EXPECT(!strcmp(c->source, "cached"), "the second resolution was %s, not cached", c->source);
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT(c->backend[k] == measured.backend[k], "class %s: cached %s, measured %s",
               gemm_class_names[k], c->backend[k]->name, measured.backend[k]->name);
    // a planted choice is what auto then runs: every class the opposite of what was measured
    GemmAutoChoice planted = measured;
    for (int k = 0; k < GEMM_CLASSES; k++)
        planted.backend[k] = measured.backend[k] == blocked ? openblas : blocked;
    EXPECT(gemm_auto_cache_write(path, key, &planted), "cannot plant %s", path);
    gemm_auto_resolve();
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT(c->backend[k] == planted.backend[k], "class %s: runs %s, the cache says %s",
               gemm_class_names[k], c->backend[k]->name, planted.backend[k]->name);
    setenv("NMT_GEMM_AUTOTUNE", "refresh", 1);
    gemm_auto_resolve();
    EXPECT(!strcmp(c->source, "measured"), "refresh gave source %s", c->source);
    setenv("NMT_GEMM_AUTOTUNE", "0", 1);
    unlink(path);
    gemm_auto_resolve();
    const GemmImpl *def = cpu_has_avx512() || cpu_has_avx2_fma() ? blocked : openblas;
    EXPECT(!strcmp(c->source, "default"), "NMT_GEMM_AUTOTUNE=0 gave source %s", c->source);
    for (int k = 0; k < GEMM_CLASSES; k++)
        EXPECT(c->backend[k] == def, "NMT_GEMM_AUTOTUNE=0: class %s runs %s",
               gemm_class_names[k], c->backend[k]->name);
    EXPECT(access(path, F_OK) != 0, "NMT_GEMM_AUTOTUNE=0 wrote a cache file");
    remove_tree(xdg);
}

/* gemm_set_threads takes the choice for the new thread count. */
static void test_threads(void) {
    setenv("NMT_GEMM_AUTOTUNE", "0", 1);
    int all = cpu_threads();
    gemm_set_threads(1);
    EXPECT(gemm_auto_choice()->threads == 1, "choice for %d threads after gemm_set_threads(1)",
           gemm_auto_choice()->threads);
    gemm_set_threads(3);
    EXPECT(gemm_auto_choice()->threads == 3, "choice for %d threads after gemm_set_threads(3)",
           gemm_auto_choice()->threads);
    install_fakes();  // a choice for 3 threads in use; 1 was resolved before
    gemm_set_threads(1);
    EXPECT(gemm_auto_choice()->threads == 1 && !strcmp(gemm_auto_choice()->source, "default"),
           "back at 1 thread: %d, %s", gemm_auto_choice()->threads, gemm_auto_choice()->source);
    gemm_set_threads(all);
}

int main(void) {
    test_override();  // first: auto has decided nothing yet
    test_classes();
    test_key();
    test_cache_file();
    test_resolve();
    test_dispatch();
    test_threads();
    return test_finish();
}
