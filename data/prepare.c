/* prepare.c: the `nmt prepare` pipeline of prepare.h: check inputs, decide reuse, scan and clean
 * (pass 1), train SentencePiece, encode in parallel (pass 2), write the manifest. */
#include "prepare.h"

#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic.h"
#include "check.h"
#include "clean.h"
#include "files.h"
#include "hash.h"
#include "json.h"
#include "paths.h"
#include "spm.h"
#include "status.h"
#include "strbuf.h"
#include "progress.h"
#include "reservoir.h"
#include "rss.h"
#include "timer.h"
#include "tokcache.h"

/* Bump when normalization, cleaning or the output formats change: old directories rebuild. */
enum { PREPARE_FORMAT_VERSION = 1 };
enum { CHUNK_PAIRS = 16384 };  // pairs encoded per parallel step
/* SentencePiece's unigram trainer splits its work by thread count, and float sums then differ in
 * the last bits: a fixed count (its own default) gives the same model on every machine. */
enum { SPM_TRAIN_THREADS = 16 };

static const char *const split_names[NSPLITS] = {"train", "valid", "test"};

const char *split_name(Split split) { return split_names[split]; }

char *prepare_split_path(const char *dir, Split split, const char *ext) {
    char file[32];
    snprintf(file, sizeof file, "%s.%s", split_names[split], ext);
    return path_join(dir, file);
}

/* Fault injection for the interruption tests: with NMT_FAULT_PREPARE_KILL=<where> in the
 * environment the process kills itself (SIGKILL; "<where>:TERM": SIGTERM) at that point: "scan"
 * (1024 training pairs read), "spm" (spm.model written), "encode" (train.tok half written, its
 * first chunk of pairs in the temporary file), "manifest" (every output but the manifest
 * written). */
static void fault_point(const char *where) {
    const char *fault = getenv("NMT_FAULT_PREPARE_KILL");
    size_t n = strlen(where);
    if (!fault || strncmp(fault, where, n) != 0 || (fault[n] && strcmp(fault + n, ":TERM") != 0))
        return;
    fprintf(stderr, "[fault] prepare killed at %s\n", fault);
    raise(fault[n] ? SIGTERM : SIGKILL);
}

/* ---- inputs ---- */

typedef struct InputFile {
    long long bytes;
    uint32_t crc;
} InputFile;

static InputFile checksum_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) FATAL("cannot open input '%s': %s", path, strerror(errno));
    enum { BLOCK = 1 << 20 };
    unsigned char *block = xmalloc(BLOCK);
    InputFile in = {0, (uint32_t)crc32_z(0, NULL, 0)};
    size_t n;
    while ((n = fread(block, 1, BLOCK, f)) > 0) {
        in.crc = (uint32_t)crc32_z(in.crc, block, n);
        in.bytes += (long long)n;
    }
    if (ferror(f)) FATAL("cannot read input '%s': %s", path, strerror(errno));
    fclose(f);
    free(block);
    return in;
}

/* ---- the run ---- */

typedef struct SplitStats {
    long read;                   // pairs read
    long kept;                   // pairs in the token cache
    long dropped[DROP_REASONS];  // train: pairs dropped per reason (KEEP_PAIR unused)
    long control_kept;           // valid/test: pairs kept although they hold control characters
    long src_tokens, tgt_tokens;
    long *corpus_read;  // (corpora) pairs read per corpus
    long *corpus_kept;  // (corpora) pairs kept per corpus
} SplitStats;

typedef struct EncodeChunk {
    long n;      // pairs held
    char *text;  // normalized sides back to back
    size_t used, cap;
    size_t *start;  // (2 * CHUNK_PAIRS) side k of pair k / 2: source if even, target if odd
    size_t *len;    // (2 * CHUNK_PAIRS)
    int *corpus;    // (CHUNK_PAIRS) corpus of each pair
    SpmIds *ids;    // (2 * CHUNK_PAIRS) encodings, reused across chunks
} EncodeChunk;

typedef struct Prep {
    const DataConfig *spec;
    InputFile *inputs[NSPLITS][2];  // (corpora) per split, per side: size and CRC
    char config_key[17], spm_key[17];
    SplitStats stats[NSPLITS];
    PairDedup dedup;
    uint8_t *keep;  // (train pairs / 8) bitmap: pairs that passed the text stage
    size_t keep_bytes;
    Reservoir sample;
    bool sampling;
    SpmModel *spm;
    uint64_t fingerprint;
    size_t spm_bytes;
    int vocab_size;
    int threads;
    double scan_seconds, encode_seconds, write_seconds, spm_seconds;
    double encode_rss_mb;  // the largest resident set seen after encoding a chunk
    long scan_sentences, encode_sentences;
} Prep;

static const CorpusList *split_corpora(const DataConfig *spec, Split split) {
    return split == SPLIT_TRAIN ? &spec->train : split == SPLIT_VALID ? &spec->valid : &spec->test;
}

static void check_corpus_list(const CorpusList *list, const char *key, bool may_be_empty) {
    CHECK(may_be_empty || list->count > 0, "%s lists no corpora; give at least one {src, tgt}",
          key);
    for (int i = 0; i < list->count; i++)
        CHECK(
            list->items[i].src && *list->items[i].src && list->items[i].tgt && *list->items[i].tgt,
            "%s[%d] needs both a src and a tgt path", key, i);
}

static void check_spec(const DataConfig *s) {
    CHECK(s->dir && *s->dir, "data.dir is empty; it names the output directory");
    check_corpus_list(&s->train, "data.train", false);
    check_corpus_list(&s->valid, "data.valid", false);
    check_corpus_list(&s->test, "data.test", true);
    CHECK(s->vocab_size > 260,
          "data.vocab_size is %d; it must exceed 260 (4 special and 256 byte pieces come first)",
          s->vocab_size);
    CHECK(s->character_coverage > 0 && s->character_coverage <= 1,
          "data.character_coverage is %g; expected a value in (0, 1]", s->character_coverage);
    CHECK(s->spm_input_sentences >= 0, "data.spm_input_sentences is %d; expected >= 0 (0 = all)",
          s->spm_input_sentences);
    CHECK(s->min_len >= 0, "data.min_len is %d; expected >= 0", s->min_len);
    CHECK(s->max_len == 0 || s->max_len >= s->min_len,
          "data.max_len is %d; expected 0 (no limit) or at least data.min_len (%d)", s->max_len,
          s->min_len);
    CHECK(s->max_len_ratio == 0 || s->max_len_ratio >= 1,
          "data.max_len_ratio is %g; expected 0 (no limit) or >= 1", s->max_len_ratio);
}

/* Sizes and checksums of every input, and the two reuse keys built from them and the config. */
static void compute_keys(Prep *p) {
    const DataConfig *s = p->spec;
    StrBuf text = {0};
    strbuf_addf(&text, "nmt prepare format %d\n", PREPARE_FORMAT_VERSION);
    for (int split = 0; split < NSPLITS; split++) {
        const CorpusList *list = split_corpora(s, (Split)split);
        strbuf_addf(&text, "%s:", split_names[split]);
        for (int side = 0; side < 2; side++)
            p->inputs[split][side] = xcalloc((size_t)list->count + 1, sizeof(InputFile));
        for (int i = 0; i < list->count; i++) {
            for (int side = 0; side < 2; side++) {
                const char *path = side ? list->items[i].tgt : list->items[i].src;
                InputFile in = p->inputs[split][side][i] = checksum_file(path);
                strbuf_addf(&text, " %lld:%08x", in.bytes, in.crc);
            }
        }
        strbuf_addf(&text, "\n");
        if (split == SPLIT_TRAIN) {  // everything the SentencePiece model depends on
            strbuf_addf(&text, "vocab_size=%d type=%s coverage=%.17g sentences=%d seed=%llu\n",
                      s->vocab_size, spm_model_type_name(s->spm_model_type), s->character_coverage,
                      s->spm_input_sentences, (unsigned long long)s->seed);
            snprintf(p->spm_key, sizeof p->spm_key, "%016llx",
                     (unsigned long long)hash64(text.s, text.len, 0));
        }
    }
    strbuf_addf(&text, "max_len=%d max_len_ratio=%.17g min_len=%d\n", s->max_len, s->max_len_ratio,
              s->min_len);
    snprintf(p->config_key, sizeof p->config_key, "%016llx",
             (unsigned long long)hash64(text.s, text.len, 0));
    strbuf_free(&text);
}

/* The string at path (object keys joined by '.') in the manifest text, or "" if the manifest is
 * missing (NULL) or not valid JSON, holds no string there, or the string does not fit in n. */
static void manifest_field(const char *manifest, size_t len, const char *path, char *out,
                           size_t n) {
    out[0] = '\0';
    char *value;
    if (!manifest || json_get_string(manifest, len, path, &value) != 0) return;
    if (strlen(value) < n) strcpy(out, value);
    free(value);
}

/* Loads spm.model from dir; false (with the reason in status_message) if it is unusable. */
static bool load_spm(Prep *p, const char *expected_fingerprint) {
    char *path = path_join(p->spec->dir, PREPARE_SPM_MODEL);
    size_t len = 0;
    char *bytes = file_read(path, &len);
    bool ok = false;
    if (!bytes) {
        status_fail("cannot read '%s'", path);  // the reason is not part of the message
    } else {
        char fingerprint[17];
        p->fingerprint = tokcache_fingerprint(bytes, len);
        snprintf(fingerprint, sizeof fingerprint, "%016llx", (unsigned long long)p->fingerprint);
        if (expected_fingerprint && strcmp(fingerprint, expected_fingerprint) != 0)
            status_fail("'%s' has fingerprint %s, the manifest says %s", path, fingerprint,
                      expected_fingerprint);
        else
            ok = spm_load_bytes(&p->spm, bytes, len) == 0;
    }
    if (ok) {
        p->vocab_size = spm_vocab_size(p->spm);
        p->spm_bytes = len;
    }
    free(bytes);
    free(path);
    return ok;
}

/* True if every output of a previous run with the same config key is present and valid;
 * fingerprint is the SentencePiece model's, as its manifest gives it. */
static bool outputs_valid(Prep *p, const char *fingerprint) {
    if (!load_spm(p, fingerprint)) return false;
    bool ok = true;
    for (int split = 0; ok && split < NSPLITS; split++) {
        char *path = prepare_split_path(p->spec->dir, (Split)split, "tok");
        TokCache cache;
        ok = tokcache_open(&cache, path, p->vocab_size, p->fingerprint) == 0;
        if (ok) tokcache_close(&cache);
        free(path);
        for (int side = 0; ok && split != SPLIT_TRAIN && side < 2; side++) {
            path = prepare_split_path(p->spec->dir, (Split)split, side ? "tgt" : "src");
            ok = access(path, R_OK) == 0;
            if (!ok) status_fail("'%s' is missing", path);
            free(path);
        }
    }
    if (!ok) {
        spm_free(p->spm);
        p->spm = NULL;
    }
    return ok;
}

/* ---- pass 1: read, normalize, filter, sample; write the valid/test text ---- */

static void scan_train_pair(Prep *p, char *src, size_t src_len, char *tgt, size_t tgt_len) {
    SplitStats *st = &p->stats[SPLIT_TRAIN];
    long i = st->read - 1;
    if ((size_t)i / 8 >= p->keep_bytes) {
        size_t grown = 2 * p->keep_bytes;
        p->keep = xrealloc(p->keep, grown);
        memset(p->keep + p->keep_bytes, 0, grown - p->keep_bytes);
        p->keep_bytes = grown;
    }
    DropReason why = clean_train_pair(&p->dedup, src, &src_len, tgt, &tgt_len);
    if (why != KEEP_PAIR) {
        st->dropped[why]++;
        return;
    }
    p->keep[i / 8] |= (uint8_t)(1u << (i % 8));
    if (p->sampling) {
        reservoir_offer(&p->sample, src, src_len);
        reservoir_offer(&p->sample, tgt, tgt_len);
    }
}

/* Normalizes one side of a valid/test pair; invalid UTF-8 is fatal. True if it has controls. */
static bool normalize_eval_side(const TextReader *r, Split split, char *text, size_t *len) {
    CleanStatus status = clean_normalize(text, len);
    if (status == CLEAN_INVALID_UTF8)
        FATAL(
            "%s:%ld: invalid UTF-8 at byte %zu. %s pairs are never dropped, so the file must be "
            "fixed (or moved to data.train, where such pairs are dropped and counted)",
            r->path, r->record_line, *len + 1, split == SPLIT_VALID ? "data.valid" : "data.test");
    return status == CLEAN_HAS_CONTROL;
}

static void write_line(AtomicFile *f, const char *text, size_t len) {
    atomic_write(f, text, len);
    atomic_write(f, "\n", 1);
}

/* The fraction of the split's input bytes read so far (compressed bytes for gzip files). */
static double read_fraction(const Prep *p, Split split, const ParallelReader *r) {
    double done = 0, total = 0;
    for (int i = 0; i < r->ncorpora; i++)
        for (int side = 0; side < 2; side++) {
            double bytes = (double)p->inputs[split][side][i].bytes;
            total += bytes;
            if (i < r->corpus) done += bytes;
        }
    if (r->corpus < r->ncorpora) done += (double)gzoffset(r->src.gz) + (double)gzoffset(r->tgt.gz);
    return total > 0 ? done / total : 0;
}

static void scan_split(Prep *p, Split split) {
    const CorpusList *list = split_corpora(p->spec, split);
    SplitStats *st = &p->stats[split];
    st->corpus_read = xcalloc((size_t)list->count + 1, sizeof(long));
    st->corpus_kept = xcalloc((size_t)list->count + 1, sizeof(long));
    ParallelReader reader;
    if (parallel_open(&reader, list->items, list->count) < 0) FATAL("%s", status_message());
    AtomicFile copies[2];
    if (split != SPLIT_TRAIN) {
        for (int side = 0; side < 2; side++) {
            char *path = prepare_split_path(p->spec->dir, split, side ? "tgt" : "src");
            atomic_open(&copies[side], path);
            free(path);
        }
    }
    static const char *const labels[NSPLITS] = {"prepare: train", "prepare: valid",
                                                "prepare: test"};
    Progress progress = progress_start(labels[split], "pairs");
    char *src, *tgt;
    size_t src_len, tgt_len;
    int got;
    while ((got = parallel_next(&reader, &src, &src_len, &tgt, &tgt_len)) > 0) {
        st->read++;
        st->corpus_read[reader.corpus]++;
        if (split == SPLIT_TRAIN) {
            scan_train_pair(p, src, src_len, tgt, tgt_len);
        } else {
            bool control = normalize_eval_side(&reader.src, split, src, &src_len);
            control |= normalize_eval_side(&reader.tgt, split, tgt, &tgt_len);
            st->control_kept += control;
            write_line(&copies[0], src, src_len);
            write_line(&copies[1], tgt, tgt_len);
        }
        if ((st->read & 4095) == 0)
            progress_tick_fraction(&progress, st->read, read_fraction(p, split, &reader));
        if (split == SPLIT_TRAIN && st->read == 1024) fault_point("scan");
    }
    if (got < 0) FATAL("%s", status_message());
    progress_end(&progress);
    parallel_close(&reader);
    if (split != SPLIT_TRAIN)
        for (int side = 0; side < 2; side++) atomic_commit(&copies[side]);
    p->scan_sentences += 2 * st->read;
}

/* ---- SentencePiece ---- */

static void train_spm(Prep *p) {
    const DataConfig *s = p->spec;
    SpmTrainOptions opt = {
        .vocab_size = s->vocab_size,
        .model_type = spm_model_type_name(s->spm_model_type),
        .character_coverage = s->character_coverage,
        .input_sentences = 0,  // the reservoir has sampled already
        .seed = (uint32_t)s->seed,
        .threads = SPM_TRAIN_THREADS,
        .verbose = s->spm_verbose,
    };
    fprintf(stderr, 
        "prepare: training SentencePiece (%s, %d pieces, coverage %g) on %ld sentences "
        "sampled from %llu\n",
        spm_model_type_name(s->spm_model_type), s->vocab_size, s->character_coverage, p->sample.count,
        (unsigned long long)p->sample.seen);
    double t0 = now_seconds();
    char *model = NULL;
    size_t len = 0;
    if (spm_train(&opt, reservoir_next, &p->sample, &model, &len) != 0)
        FATAL("%s (data.vocab_size %d, data.spm_model_type %s)", status_message(), s->vocab_size,
              spm_model_type_name(s->spm_model_type));
    p->spm_seconds = now_seconds() - t0;
    char *path = path_join(s->dir, PREPARE_SPM_MODEL);
    atomic_write_file(path, model, len);
    free(path);
    free(model);
    fault_point("spm");
    CHECK(load_spm(p, NULL), "%s", status_message());
}

/* ---- pass 2: encode in parallel, filter train by subword lengths, write the caches ---- */

static void chunk_init(EncodeChunk *c) {
    *c = (EncodeChunk){.cap = 1 << 20};
    c->text = xmalloc(c->cap);
    c->start = xmalloc(sizeof *c->start * 2 * CHUNK_PAIRS);
    c->len = xmalloc(sizeof *c->len * 2 * CHUNK_PAIRS);
    c->corpus = xmalloc(sizeof *c->corpus * CHUNK_PAIRS);
    c->ids = xcalloc(2 * CHUNK_PAIRS, sizeof *c->ids);
}

static void chunk_free(EncodeChunk *c) {
    for (int k = 0; k < 2 * CHUNK_PAIRS; k++) spm_ids_free(&c->ids[k]);
    free(c->text);
    free(c->start);
    free(c->len);
    free(c->corpus);
    free(c->ids);
}

static void chunk_add_side(EncodeChunk *c, long k, const char *text, size_t len) {
    if (c->used + len > c->cap) {
        while (c->used + len > c->cap) c->cap *= 2;
        c->text = xrealloc(c->text, c->cap);
    }
    memcpy(c->text + c->used, text, len);
    c->start[k] = c->used;
    c->len[k] = len;
    c->used += len;
}

/* Encodes the chunk on all threads, then appends its pairs to the cache in input order. */
static void flush_chunk(Prep *p, Split split, EncodeChunk *c, TokCacheWriter *w) {
    SplitStats *st = &p->stats[split];
    LengthLimits limits = {p->spec->min_len, p->spec->max_len, p->spec->max_len_ratio};
    char error[1024] = "";
    double t0 = now_seconds();
#pragma omp parallel for schedule(dynamic, 16)
    for (long k = 0; k < 2 * c->n; k++) {
        if (spm_encode(p->spm, c->text + c->start[k], c->len[k], &c->ids[k]) != 0) {
#pragma omp critical(prepare_encode_error)
            if (!error[0]) snprintf(error, sizeof error, "%s", status_message());
        }
    }
    p->encode_seconds += now_seconds() - t0;
    p->encode_sentences += 2 * c->n;
    if (error[0]) FATAL("%s", error);
    t0 = now_seconds();
    for (long i = 0; i < c->n; i++) {
        const SpmIds *src = &c->ids[2 * i], *tgt = &c->ids[2 * i + 1];
        if (split == SPLIT_TRAIN) {
            DropReason why = clean_check_lengths(&limits, src->n, tgt->n);
            if (why != KEEP_PAIR) {
                st->dropped[why]++;
                continue;
            }
        }
        tokcache_writer_add(w, src->ids, src->n, tgt->ids, tgt->n);
        st->kept++;
        st->corpus_kept[c->corpus[i]]++;
        st->src_tokens += src->n;
        st->tgt_tokens += tgt->n;
    }
    p->write_seconds += now_seconds() - t0;
    double rss = rss_now_mb();
    if (rss > p->encode_rss_mb) p->encode_rss_mb = rss;
    c->n = 0;
    c->used = 0;
    if (split == SPLIT_TRAIN) fault_point("encode");  // the temporary holds this chunk
}

static void encode_split(Prep *p, Split split, EncodeChunk *chunk) {
    const CorpusList *list = split_corpora(p->spec, split);
    char *path = prepare_split_path(p->spec->dir, split, "tok");
    TokCacheWriter writer;
    tokcache_writer_open(&writer, path, p->vocab_size, p->fingerprint);
    ParallelReader reader;
    if (parallel_open(&reader, list->items, list->count) < 0) FATAL("%s", status_message());
    Progress progress = progress_start(
        split == SPLIT_TRAIN ? "prepare: encode train" : "prepare: encode", "pairs");
    char *text[2];
    size_t len[2];
    int got;
    for (long pair = 0; (got = parallel_next(&reader, &text[0], &len[0], &text[1], &len[1])) > 0;
         pair++) {
        if ((pair & 4095) == 0) progress_tick(&progress, pair, p->stats[split].read);
        if (split == SPLIT_TRAIN && !(p->keep[pair / 8] & (1u << (pair % 8)))) continue;
        for (int side = 0; side < 2; side++) {
            CHECK(clean_normalize(text[side], &len[side]) != CLEAN_INVALID_UTF8,
                  "%s:%ld changed while prepare was reading it",
                  side ? reader.tgt.path : reader.src.path,
                  side ? reader.tgt.record_line : reader.src.record_line);
            chunk_add_side(chunk, 2 * chunk->n + side, text[side], len[side]);
        }
        chunk->corpus[chunk->n++] = reader.corpus;
        if (chunk->n == CHUNK_PAIRS) flush_chunk(p, split, chunk, &writer);
    }
    if (got < 0) FATAL("%s", status_message());
    flush_chunk(p, split, chunk, &writer);
    progress_end(&progress);
    parallel_close(&reader);
    double t0 = now_seconds();
    tokcache_writer_commit(&writer);
    p->write_seconds += now_seconds() - t0;
    free(path);
}

/* ---- manifest and log ---- */

static void manifest_split(StrBuf *m, const Prep *p, Split split) {
    const SplitStats *st = &p->stats[split];
    const CorpusList *list = split_corpora(p->spec, split);
    strbuf_addf(m, "    \"%s\": {\n", split_names[split]);
    strbuf_addf(m,
              "      \"pairs_read\": %ld, \"pairs_kept\": %ld, \"src_tokens\": %ld, "
              "\"tgt_tokens\": %ld, \"control_char_pairs_kept\": %ld,\n",
              st->read, st->kept, st->src_tokens, st->tgt_tokens, st->control_kept);
    strbuf_addf(m, "      \"dropped\": {");
    for (int why = KEEP_PAIR + 1; why < DROP_REASONS; why++)
        strbuf_addf(m, "%s\"%s\": %ld", why > KEEP_PAIR + 1 ? ", " : "",
                  drop_reason_name((DropReason)why), st->dropped[why]);
    strbuf_addf(m, "},\n      \"cache\": \"%s.tok\",", split_names[split]);
    if (split != SPLIT_TRAIN)
        strbuf_addf(m, " \"text\": [\"%s.src\", \"%s.tgt\"],", split_names[split],
                  split_names[split]);
    strbuf_addf(m, "\n      \"corpora\": [");
    long first = 0;
    for (int i = 0; i < list->count; i++) {
        strbuf_addf(m, "%s\n        {", i ? "," : "");
        for (int side = 0; side < 2; side++) {
            const char *name = side ? "tgt" : "src";
            const InputFile *in = &p->inputs[split][side][i];
            strbuf_addf(m, "\"%s\": ", name);
            json_add_string(m, side ? list->items[i].tgt : list->items[i].src, 0);
            strbuf_addf(m, ", \"%s_bytes\": %lld, \"%s_crc32\": \"%08x\", ", name, in->bytes, name,
                      in->crc);
        }
        strbuf_addf(m, "\"pairs_read\": %ld, \"pairs_kept\": %ld, \"first\": %ld}",
                  st->corpus_read[i], st->corpus_kept[i], first);
        first += st->corpus_kept[i];
    }
    strbuf_addf(m, "%s]\n    }%s\n", list->count ? "\n      " : "", split + 1 < NSPLITS ? "," : "");
}

static void write_manifest(const Prep *p, bool spm_reused) {
    const DataConfig *s = p->spec;
    StrBuf m = {0};
    strbuf_addf(&m, "{\n  \"format\": \"nmt prepare manifest\", \"version\": %d,\n",
              PREPARE_FORMAT_VERSION);
    strbuf_addf(&m, "  \"config_key\": \"%s\", \"spm_key\": \"%s\",\n", p->config_key, p->spm_key);
    strbuf_addf(&m,
              "  \"config\": {\"data.vocab_size\": %d, \"data.spm_model_type\": \"%s\", "
              "\"data.character_coverage\": %.17g, \"data.spm_input_sentences\": %d, "
              "\"data.max_len\": %d, \"data.max_len_ratio\": %.17g, \"data.min_len\": %d, "
              "\"data.seed\": %llu},\n",
              s->vocab_size, spm_model_type_name(s->spm_model_type), s->character_coverage,
              s->spm_input_sentences,
              s->max_len, s->max_len_ratio, s->min_len, (unsigned long long)s->seed);
    strbuf_addf(&m,
              "  \"spm\": {\"file\": \"%s\", \"bytes\": %zu, \"fingerprint\": \"%016llx\", "
              "\"vocab_size\": %d, \"reused\": %s},\n",
              PREPARE_SPM_MODEL, p->spm_bytes, (unsigned long long)p->fingerprint, p->vocab_size,
              spm_reused ? "true" : "false");
    strbuf_addf(&m, "  \"splits\": {\n");
    for (int split = 0; split < NSPLITS; split++) manifest_split(&m, p, (Split)split);
    strbuf_addf(&m, "  }\n}\n");
    char *path = path_join(s->dir, PREPARE_MANIFEST);
    atomic_write_file(path, m.s, m.len);
    free(path);
    strbuf_free(&m);
}

static void log_split(const Prep *p, Split split) {
    const SplitStats *st = &p->stats[split];
    fprintf(stderr, "prepare: %-5s %ld pairs read, %ld kept (%ld + %ld subword tokens)", split_names[split],
           st->read, st->kept, st->src_tokens, st->tgt_tokens);
    if (split == SPLIT_TRAIN) {
        fprintf(stderr, "; dropped:");
        for (int why = KEEP_PAIR + 1; why < DROP_REASONS; why++)
            fprintf(stderr, " %s %ld", drop_reason_name((DropReason)why), st->dropped[why]);
    } else if (st->control_kept) {
        fprintf(stderr, "; %ld pairs hold control characters (kept)", st->control_kept);
    }
    fprintf(stderr, "\n");
}

/* One stage's line: its rate, the CPU time the process spent since cpu0 (all threads), and its
 * memory, as the caller words it. */
static void log_rate(const char *what, long sentences, double seconds, double cpu0,
                     const char *extra, const char *memory, double mb) {
    fprintf(stderr, "prepare: %s: %ld sentences in %.2f s = %.0f sentences/s%s; CPU %.1f s; %s %.0f MB\n",
            what, sentences, seconds, sentences / (seconds > 0 ? seconds : 1e-9), extra,
            cpu_seconds() - cpu0, memory, mb);
}

static void prep_free(Prep *p) {
    for (int split = 0; split < NSPLITS; split++) {
        free(p->inputs[split][0]);
        free(p->inputs[split][1]);
        free(p->stats[split].corpus_read);
        free(p->stats[split].corpus_kept);
    }
    dedup_free(&p->dedup);
    reservoir_free(&p->sample);
    free(p->keep);
    spm_free(p->spm);
}

/* Compares the keys with the manifest of a previous run in the directory: PREPARE_REUSED if
 * every output can stay, PREPARE_REENCODED if the SentencePiece model can (it is then loaded),
 * else PREPARE_BUILT. Unless everything is reused, the old manifest is removed first. */
static PrepareOutcome check_previous_run(Prep *p) {
    const char *dir = p->spec->dir;
    char *manifest_path = path_join(dir, PREPARE_MANIFEST);
    size_t manifest_len = 0;
    char *manifest = file_read(manifest_path, &manifest_len);
    char old_key[32], old_spm_key[32], old_fingerprint[32];
    manifest_field(manifest, manifest_len, "config_key", old_key, sizeof old_key);
    manifest_field(manifest, manifest_len, "spm_key", old_spm_key, sizeof old_spm_key);
    manifest_field(manifest, manifest_len, "spm.fingerprint", old_fingerprint,
                   sizeof old_fingerprint);
    PrepareOutcome outcome = PREPARE_BUILT;
    if (!strcmp(old_key, p->config_key)) {
        if (outputs_valid(p, old_fingerprint)) {
            fprintf(stderr, "prepare: %s is up to date (inputs and config unchanged, key %s); reusing it\n",
                   dir, p->config_key);
            outcome = PREPARE_REUSED;
        } else {
            fprintf(stderr, "prepare: cannot reuse %s: %s; rebuilding\n", dir, status_message());
        }
    } else if (manifest) {
        fprintf(stderr, "prepare: inputs or config changed since the last run in %s; rebuilding\n", dir);
    }
    if (outcome != PREPARE_REUSED) {
        // From here on the old manifest no longer describes the directory.
        if (manifest) atomic_remove(manifest_path);
        if (!strcmp(old_spm_key, p->spm_key) && load_spm(p, old_fingerprint)) {
            fprintf(stderr, "prepare: training inputs and SentencePiece config unchanged: reusing %s/%s\n",
                   dir, PREPARE_SPM_MODEL);
            outcome = PREPARE_REENCODED;
        }
    }
    free(manifest);
    free(manifest_path);
    return outcome;
}

PrepareOutcome prepare_run(const DataConfig *spec) {
    check_spec(spec);
    if (!make_dirs(spec->dir))
        FATAL("cannot create directory '%s' (data.dir): %s", spec->dir, strerror(errno));
    atomic_remove_stale(spec->dir, "prepare:");  // what killed runs left: train.tok.tmp.PID
    Prep p = {.spec = spec, .threads = omp_get_max_threads()};
    double t0 = now_seconds();
    compute_keys(&p);
    fprintf(stderr, "prepare: checksummed the inputs in %.2f s\n", now_seconds() - t0);
    PrepareOutcome outcome = check_previous_run(&p);
    if (outcome == PREPARE_REUSED) {
        prep_free(&p);
        return outcome;
    }
    bool spm_reused = outcome == PREPARE_REENCODED;

    dedup_init(&p.dedup);
    p.keep_bytes = 1 << 16;
    p.keep = xcalloc(p.keep_bytes, 1);
    p.sampling = !spm_reused;
    if (p.sampling) reservoir_init(&p.sample, spec->spm_input_sentences, spec->seed);
    t0 = now_seconds();
    double cpu0 = cpu_seconds();
    for (int split = 0; split < NSPLITS; split++) scan_split(&p, (Split)split);
    p.scan_seconds = now_seconds() - t0;
    log_rate("read+clean", p.scan_sentences, p.scan_seconds, cpu0, "", "peak RSS", rss_peak_mb());
    CHECK(p.dedup.count > 0, "no training pair is left after cleaning (data.train)");
    dedup_free(&p.dedup);

    if (!spm_reused) {
        cpu0 = cpu_seconds();
        train_spm(&p);
        fprintf(stderr, "prepare: SentencePiece trained in %.1f s; CPU %.1f s; peak RSS so far %.0f MB\n",
                p.spm_seconds, cpu_seconds() - cpu0, rss_peak_mb());
        reservoir_free(&p.sample);
    }
    cpu0 = cpu_seconds();
    t0 = now_seconds();

    EncodeChunk chunk;
    chunk_init(&chunk);
    for (int split = 0; split < NSPLITS; split++) encode_split(&p, (Split)split, &chunk);
    chunk_free(&chunk);
    char threads[96];
    snprintf(threads, sizeof threads, " (%d threads); the pass: %.2f s, writing %.2f s", p.threads,
             now_seconds() - t0, p.write_seconds);
    log_rate("encode", p.encode_sentences, p.encode_seconds, cpu0, threads,
             "largest RSS after a chunk", p.encode_rss_mb);
    CHECK(p.stats[SPLIT_TRAIN].kept > 0,
          "no training pair is left after the length filters (data.min_len %d, data.max_len %d, "
          "data.max_len_ratio %g)",
          spec->min_len, spec->max_len, spec->max_len_ratio);
    for (int split = 0; split < NSPLITS; split++) log_split(&p, (Split)split);
    fault_point("manifest");
    write_manifest(&p, spm_reused);
    fprintf(stderr, 
        "prepare: wrote %s/{%s, train.tok, valid.tok, test.tok, valid.src, valid.tgt, "
        "test.src, test.tgt, %s}\n",
        spec->dir, PREPARE_SPM_MODEL, PREPARE_MANIFEST);
    prep_free(&p);
    return outcome;
}
