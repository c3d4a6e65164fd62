/* config.c: YAML loading, --set overrides, checks, dump and help for the Config of config.h.
 * Every key is described once by a KeySpec row generated from the .def tables; all values,
 * defaults included, go through the same typed parser, so a default can never disagree with what
 * a file would produce. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "check.h"
#include "status.h"
#include "utf8.h"

typedef enum { CT_INT, CT_FLOAT, CT_BOOL, CT_STR, CT_ENUM, CT_CORPORA } ConfigType;

typedef struct KeySpec {
    const char *name;  // "section.field"
    ConfigType type;
    size_t offset;     // of the field within Config
    const char *def, *help;
    const char *range;         // numbers: "lo..hi"; else ""
    const char *const *names;  // ENUM: the value names, indexed by the enum's constants
    int nnames;
} KeySpec;

/* The range column of a row: a "lo..hi" string, or for ENUM the enum type of the field, whose
 * values are stored as an int. */
#define SPEC_RANGE_INT(r) .range = r
#define SPEC_RANGE_FLOAT(r) .range = r
#define SPEC_RANGE_BOOL(r) .range = r
#define SPEC_RANGE_STR(r) .range = r
#define SPEC_RANGE_CORPORA(r) .range = r
#define SPEC_RANGE_ENUM(Type)                                                                      \
    .range = "", .names = CONFIG_ENUM_NAMES(Type),                                                 \
    .nnames = sizeof CONFIG_ENUM_NAMES(Type) / sizeof *CONFIG_ENUM_NAMES(Type)
#define SPEC(section, type_, field, def_, range_, help_)                                           \
    {.name = #section "." #field,                                                                  \
     .type = CT_##type_,                                                                           \
     .offset = offsetof(Config, section.field),                                                    \
     .def = def_,                                                                                  \
     .help = help_,                                                                                \
     SPEC_RANGE_##type_(range_)},

static const KeySpec keys[CONFIG_NKEYS] = {
#define KEY(type, field, def, range, help) SPEC(model, type, field, def, range, help)
#include "model_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) SPEC(decode, type, field, def, range, help)
#include "decode_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) SPEC(data, type, field, def, range, help)
#include "data_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) SPEC(train, type, field, def, range, help)
#include "train_keys.def"
#undef KEY
};

static const char *const sections[] = {"model", "decode", "data", "train"};
enum { NSECTIONS = sizeof sections / sizeof sections[0] };

/* ---- owned strings ---- */

struct ConfigStrings {
    ConfigStrings *next;
    char text[];
};

static const char *config_strdup(Config *c, const char *s, size_t n) {
    ConfigStrings *b = xmalloc(sizeof *b + n + 1);
    memcpy(b->text, s, n);
    b->text[n] = 0;
    b->next = c->strings;
    c->strings = b;
    return b->text;
}

static void *config_alloc(Config *c, size_t bytes) {
    ConfigStrings *b = xcalloc(1, sizeof *b + bytes);
    b->next = c->strings;
    c->strings = b;
    return b->text;
}

/* ---- key lookup ---- */

static int levenshtein(const char *a, const char *b) {
    int la = (int)strlen(a), lb = (int)strlen(b), prev[128], cur[128];
    if (la > 120 || lb > 120) return 1000;
    for (int j = 0; j <= lb; j++) prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

static int key_find(const char *name) {
    for (int k = 0; k < CONFIG_NKEYS; k++)
        if (!strcmp(keys[k].name, name)) return k;
    return -1;
}

static int unknown_key(const char *where, const char *name) {
    int best = -1, best_d = 4;
    for (int k = 0; k < CONFIG_NKEYS; k++) {
        int d = levenshtein(name, keys[k].name);
        if (d < best_d) best_d = d, best = k;
    }
    if (best >= 0)
        return status_fail("%s: unknown key '%s' (did you mean '%s'?)", where, name,
                           keys[best].name);
    return status_fail("%s: unknown key '%s' (see 'nmt train --help' for the keys)", where, name);
}

/* ---- typed values ---- */

static bool parse_range(const char *range, double *lo, double *hi) {
    const char *dots = strstr(range, "..");  // not sscanf: "%lf" would swallow "1." of "1..9"
    if (!dots) return false;
    char lo_text[64];
    snprintf(lo_text, sizeof lo_text, "%.*s", (int)(dots - range), range);
    *lo = strtod(lo_text, NULL);
    *hi = strtod(dots + 2, NULL);
    return true;
}

int config_enum_value(int key, const char *name) {
    const KeySpec *ks = &keys[key];
    CHECK(ks->type == CT_ENUM, "%s is not an enum key", ks->name);
    for (int i = 0; i < ks->nnames; i++)
        if (!strcmp(ks->names[i], name)) return i;
    return -1;
}

const char *config_enum_choices(int key, const char *sep, const char *last, char *out, size_t n) {
    const KeySpec *ks = &keys[key];
    CHECK(ks->type == CT_ENUM, "%s is not an enum key", ks->name);
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < ks->nnames && used < n; i++) {
        const char *before = i == 0 ? "" : i < ks->nnames - 1 ? sep : last;
        used += (size_t)snprintf(out + used, n - used, "%s%s", before, ks->names[i]);
    }
    return out;
}

/* The range of key k as --help and the parser's messages show it: "lo..hi", "a|b|c" or "". */
static const char *range_text(int k, char *out, size_t n) {
    return keys[k].type == CT_ENUM ? config_enum_choices(k, "|", "|", out, n) : keys[k].range;
}

/* ${VAR} expansion; NMT_DATA defaults to ../shared/data. Another unset variable is an error,
 * unless the command opens no path (c->paths_unused): then "${VAR}" stays in the value. */
static int expand_env(const Config *c, const char *in, char *out, size_t cap, const char *where) {
    size_t o = 0;
    for (const char *p = in; *p;) {
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p, '}');
            if (!end) return status_fail("%s: unterminated ${ in '%s'", where, in);
            char var[128];
            size_t n = (size_t)(end - p - 2);
            if (n >= sizeof var)
                return status_fail("%s: variable name too long in '%s'", where, in);
            memcpy(var, p + 2, n);
            var[n] = 0;
            const char *val = getenv(var);
            size_t vn = 0;
            if (!val || !*val) {
                if (!strcmp(var, "NMT_DATA"))
                    val = "../shared/data";
                else if (c->paths_unused)
                    val = p, vn = (size_t)(end + 1 - p);  // the reference itself
                else
                    return status_fail("%s: environment variable %s is not set (used in '%s')",
                                       where, var, in);
            }
            if (!vn) vn = strlen(val);
            if (o + vn >= cap) return status_fail("%s: value too long", where);
            memcpy(out + o, val, vn);
            o += vn;
            p = end + 1;
        } else {
            if (o + 1 >= cap) return status_fail("%s: value too long", where);
            out[o++] = *p++;
        }
    }
    out[o] = 0;
    return 0;
}

static const char *type_name(ConfigType t) {
    static const char *names[] = {"an integer", "a number", "true or false", "a string",
                                  "one of", "a list of {src, tgt} pairs"};
    return names[t];
}

/* 0 if the string value s of key is valid UTF-8 (YAML text, as the dump must be), else -1 after
 * status_fail. */
static int check_utf8(const char *s, const char *where, const char *key) {
    size_t bad;
    if (utf8_valid(s, strlen(s), &bad)) return 0;
    return status_fail("%s: %s: '%s' is not valid UTF-8 (byte %zu)", where, key, s, bad + 1);
}

/* Sets key k from the scalar text v. `where` is "file:line" (or "--set") for messages. */
static int set_scalar(Config *c, int k, const char *v, const char *where) {
    const KeySpec *ks = &keys[k];
    void *field = (char *)c + ks->offset;
    double lo, hi;
    char *end;
    switch (ks->type) {
    case CT_INT: {
        errno = 0;
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end)
            return status_fail("%s: %s: expected an integer, got '%s'", where, ks->name, v);
        if (parse_range(ks->range, &lo, &hi) && (x < lo || x > hi))
            return status_fail("%s: %s: %ld is out of range [%s]", where, ks->name, x, ks->range);
        *(int *)field = (int)x;
        break;
    }
    case CT_FLOAT: {
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end || x != x)
            return status_fail("%s: %s: expected a number, got '%s'", where, ks->name, v);
        if (parse_range(ks->range, &lo, &hi) && (x < lo || x > hi))
            return status_fail("%s: %s: %g is out of range [%s]", where, ks->name, x, ks->range);
        *(double *)field = x;
        break;
    }
    case CT_BOOL: {
        static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
        int val = -1;
        for (int i = 0; i < 4; i++) {
            if (!strcasecmp(v, yes[i])) val = 1;
            if (!strcasecmp(v, no[i])) val = 0;
        }
        if (val < 0)
            return status_fail("%s: %s: expected true or false, got '%s'", where, ks->name, v);
        *(bool *)field = val;
        break;
    }
    case CT_ENUM: {
        int value = config_enum_value(k, v);
        char range[256];
        if (value < 0)
            return status_fail("%s: %s: expected one of %s, got '%s'", where, ks->name,
                               range_text(k, range, sizeof range), v);
        *(int *)field = value;
        break;
    }
    case CT_STR: {
        char buf[4096];
        if (expand_env(c, v, buf, sizeof buf, where) || check_utf8(buf, where, ks->name)) return -1;
        *(const char **)field = config_strdup(c, buf, strlen(buf));
        break;
    }
    case CT_CORPORA: {  // scalar form (--set): "src,tgt;src,tgt"; "" = empty list
        CorpusList *list = field;
        int n = 0;
        for (const char *p = v; *p; p++) n += *p == ';';
        n = *v ? n + 1 : 0;
        CorpusPair *items = config_alloc(c, sizeof(CorpusPair) * (n ? n : 1));
        const char *p = v;
        for (int i = 0; i < n; i++) {
            const char *semi = strchr(p, ';'), *stop = semi ? semi : p + strlen(p);
            const char *comma = memchr(p, ',', (size_t)(stop - p));
            if (!comma)
                return status_fail("%s: %s: expected 'src,tgt[;src,tgt...]', got '%s'", where,
                                   ks->name, v);
            char src[4096], tgt[4096], raw[4096];
            snprintf(raw, sizeof raw, "%.*s", (int)(comma - p), p);
            if (expand_env(c, raw, src, sizeof src, where)) return -1;
            snprintf(raw, sizeof raw, "%.*s", (int)(stop - comma - 1), comma + 1);
            if (expand_env(c, raw, tgt, sizeof tgt, where) || check_utf8(src, where, ks->name) ||
                check_utf8(tgt, where, ks->name))
                return -1;
            items[i] = (CorpusPair){config_strdup(c, src, strlen(src)),
                                    config_strdup(c, tgt, strlen(tgt))};
            p = semi ? semi + 1 : stop;
        }
        *list = (CorpusList){items, n};
        break;
    }
    }
    c->origin[k] = config_strdup(c, where, strlen(where));
    return 0;
}

void config_init(Config *c) {
    memset(c, 0, sizeof *c);
    for (int k = 0; k < CONFIG_NKEYS; k++) {
        CHECK(set_scalar(c, k, keys[k].def, "default") == 0, "bad default: %s", status_message());
        c->origin[k] = NULL;
    }
}

void config_free(Config *c) {
    for (ConfigStrings *b = c->strings, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    memset(c, 0, sizeof *c);
}

int config_set_key(Config *c, const char *name, const char *value, const char *where) {
    int k = key_find(name);
    if (k < 0) return unknown_key(where, name);
    return set_scalar(c, k, value, where);
}

int config_set(Config *c, const char *assignment) {
    const char *eq = strchr(assignment, '=');
    if (!eq) return status_fail("--set %s: expected section.key=value", assignment);
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
    return config_set_key(c, name, eq + 1, "--set");
}

/* ---- YAML ---- */

typedef struct YamlReader {
    yaml_parser_t parser;
    yaml_event_t ev;
    const char *origin;
    bool have_event;
} YamlReader;

static int yaml_next(YamlReader *r) {
    if (r->have_event) yaml_event_delete(&r->ev);
    r->have_event = false;
    if (!yaml_parser_parse(&r->parser, &r->ev))
        return status_fail("%s:%zu: YAML syntax error: %s", r->origin,
                           r->parser.problem_mark.line + 1,
                           r->parser.problem ? r->parser.problem : "unknown");
    r->have_event = true;
    return 0;
}

static size_t ev_line(const YamlReader *r) { return r->ev.start_mark.line + 1; }
static const char *ev_text(const YamlReader *r) { return (const char *)r->ev.data.scalar.value; }

static int read_corpora(Config *c, YamlReader *r, int k) {
    char where[512];
    snprintf(where, sizeof where, "%s:%zu", r->origin, ev_line(r));
    CorpusPair items[256];
    int n = 0;
    for (;;) {
        if (yaml_next(r)) return -1;
        if (r->ev.type == YAML_SEQUENCE_END_EVENT) break;
        size_t line = ev_line(r);
        if (r->ev.type != YAML_MAPPING_START_EVENT)
            return status_fail("%s:%zu: %s: expected a {src: file, tgt: file} entry", r->origin,
                               line, keys[k].name);
        if (n == 256)
            return status_fail("%s:%zu: %s: too many corpora", r->origin, line, keys[k].name);
        const char *src = NULL, *tgt = NULL;
        for (;;) {
            if (yaml_next(r)) return -1;
            if (r->ev.type == YAML_MAPPING_END_EVENT) break;
            if (r->ev.type != YAML_SCALAR_EVENT)
                return status_fail("%s:%zu: %s: expected src or tgt", r->origin, ev_line(r),
                                   keys[k].name);
            char field[16];
            snprintf(field, sizeof field, "%s", ev_text(r));
            size_t fline = ev_line(r);
            if (yaml_next(r)) return -1;
            if (r->ev.type != YAML_SCALAR_EVENT)
                return status_fail("%s:%zu: %s.%s: expected a file path", r->origin, fline,
                                   keys[k].name, field);
            char path[4096];
            snprintf(where, sizeof where, "%s:%zu", r->origin, fline);
            if (expand_env(c, ev_text(r), path, sizeof path, where) ||
                check_utf8(path, where, keys[k].name))
                return -1;
            const char *owned = config_strdup(c, path, strlen(path));
            if ((!strcmp(field, "src") && src) || (!strcmp(field, "tgt") && tgt))
                return status_fail("%s:%zu: %s: duplicate field '%s'", r->origin, fline,
                                   keys[k].name, field);
            if (!strcmp(field, "src"))
                src = owned;
            else if (!strcmp(field, "tgt"))
                tgt = owned;
            else
                return status_fail("%s:%zu: %s: unknown field '%s' (expected src and tgt)",
                                   r->origin, fline, keys[k].name, field);
        }
        if (!src || !tgt)
            return status_fail("%s:%zu: %s: entry needs both src and tgt", r->origin, line,
                               keys[k].name);
        items[n++] = (CorpusPair){src, tgt};
    }
    CorpusPair *owned = config_alloc(c, sizeof(CorpusPair) * (n ? n : 1));
    memcpy(owned, items, sizeof(CorpusPair) * n);
    *(CorpusList *)((char *)c + keys[k].offset) = (CorpusList){owned, n};
    snprintf(where, sizeof where, "%s:%zu", r->origin, ev_line(r));
    c->origin[k] = config_strdup(c, where, strlen(where));
    return 0;
}

/* The keys of one section; key_line[k] is the line where key k was set in this document (0 =
 * not yet), so a key given twice is refused: the keys of a YAML mapping are unique. */
static int read_section(Config *c, YamlReader *r, const char *section, size_t *key_line) {
    for (;;) {
        if (yaml_next(r)) return -1;
        if (r->ev.type == YAML_MAPPING_END_EVENT) return 0;
        if (r->ev.type != YAML_SCALAR_EVENT)
            return status_fail("%s:%zu: expected a key in section '%s'", r->origin, ev_line(r),
                               section);
        char name[256], where[512];
        snprintf(name, sizeof name, "%s.%s", section, ev_text(r));
        snprintf(where, sizeof where, "%s:%zu", r->origin, ev_line(r));
        int k = key_find(name);
        if (k < 0) return unknown_key(where, name);
        if (key_line[k])
            return status_fail("%s: duplicate key '%s' (already set at line %zu)", where, name,
                               key_line[k]);
        key_line[k] = ev_line(r);
        if (yaml_next(r)) return -1;
        if (keys[k].type == CT_CORPORA && r->ev.type == YAML_SEQUENCE_START_EVENT) {
            if (read_corpora(c, r, k)) return -1;
        } else if (r->ev.type == YAML_SCALAR_EVENT) {
            if (set_scalar(c, k, ev_text(r), where)) return -1;
        } else {
            char range[256];
            return status_fail("%s: %s: expected %s%s%s", where, name, type_name(keys[k].type),
                               keys[k].type == CT_ENUM ? " " : "",
                               keys[k].type == CT_ENUM ? range_text(k, range, sizeof range) : "");
        }
    }
}

int config_load_string(Config *c, const char *text, size_t len, const char *origin) {
    YamlReader r = {.origin = origin};
    yaml_parser_initialize(&r.parser);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    int rc = -1;
    if (yaml_next(&r)) goto done;  // stream start
    if (yaml_next(&r)) goto done;
    if (r.ev.type == YAML_STREAM_END_EVENT) {  // empty file
        rc = 0;
        goto done;
    }
    if (yaml_next(&r)) goto done;  // document start -> root node
    if (r.ev.type == YAML_SCALAR_EVENT && !*ev_text(&r)) {
        rc = 0;
        goto done;
    }
    if (r.ev.type != YAML_MAPPING_START_EVENT) {
        status_fail("%s:%zu: expected sections (model:, data:, train:, decode:) at the top level",
                    origin, ev_line(&r));
        goto done;
    }
    size_t section_line[NSECTIONS] = {0}, key_line[CONFIG_NKEYS] = {0};  // 0 = not seen yet
    for (;;) {
        if (yaml_next(&r)) goto done;
        if (r.ev.type == YAML_MAPPING_END_EVENT) break;
        if (r.ev.type != YAML_SCALAR_EVENT) {
            status_fail("%s:%zu: expected a section name", origin, ev_line(&r));
            goto done;
        }
        char section[64];
        snprintf(section, sizeof section, "%s", ev_text(&r));
        size_t line = ev_line(&r);
        int known = -1;
        for (int s = 0; s < NSECTIONS; s++)
            if (!strcmp(section, sections[s])) known = s;
        if (known < 0) {
            status_fail("%s:%zu: unknown section '%s' (expected model, decode, data or train)",
                        origin, line, section);
            goto done;
        }
        if (section_line[known]) {
            status_fail("%s:%zu: duplicate section '%s' (already at line %zu)", origin, line,
                        section, section_line[known]);
            goto done;
        }
        section_line[known] = line;
        if (yaml_next(&r)) goto done;
        if (r.ev.type == YAML_SCALAR_EVENT && !*ev_text(&r)) continue;  // "section:" alone
        if (r.ev.type != YAML_MAPPING_START_EVENT) {
            status_fail("%s:%zu: section '%s' must be a mapping of keys", origin, line, section);
            goto done;
        }
        if (read_section(c, &r, section, key_line)) goto done;
    }
    rc = 0;
done:
    if (r.have_event) yaml_event_delete(&r.ev);
    yaml_parser_delete(&r.parser);
    return rc;
}

int config_load_file(Config *c, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return status_fail("%s: cannot open config file: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = xrealloc(buf, cap *= 2);
    }
    int err = ferror(f) ? errno : 0;  // EISDIR for a directory, which fopen accepts
    fclose(f);
    if (err) {
        free(buf);
        return status_fail("%s: cannot read config file: %s", path, strerror(err));
    }
    int rc = config_load_string(c, buf, n, path);
    free(buf);
    return rc;
}

/* ---- checks ---- */

static const char *origin_of(const Config *c, int k) {
    return c->origin[k] ? c->origin[k] : "default";
}

int config_model_dk(const ModelConfig *m) { return m->dk ? m->dk : m->d_model; }

int config_check(const Config *c) {
    const ModelConfig *m = &c->model;
    if (m->d_model % m->heads)
        return status_fail("%s: model.heads: d_model %d is not divisible by heads %d",
                           origin_of(c, CONFIG_KEY_model_heads), m->d_model, m->heads);
    int dk = config_model_dk(m);
    if (m->attention == ATTENTION_CONCAT && dk % m->heads)
        return status_fail("%s: model.dk: concat attention splits the key width over heads, "
                           "but dk %d is not divisible by heads %d",
                           origin_of(c, CONFIG_KEY_model_dk), dk, m->heads);
    if (c->train.valid_metric == VALID_METRIC_BLEU && c->decode.valid_beam == 0)
        return status_fail(
            "%s: train.valid_metric: bleu needs validation BLEU, but decode.valid_beam "
            "is 0 (use valid_metric: nll, or a beam of 1 or more)",
            origin_of(c, CONFIG_KEY_train_valid_metric));
    if (!*c->train.run_dir)
        return status_fail("%s: train.run_dir: expected a directory name, got an empty string",
                           origin_of(c, CONFIG_KEY_train_run_dir));
    if (c->train.schedule == SCHEDULE_NOAM && c->train.warmup == 0)
        return status_fail("%s: train.warmup: the noam schedule needs warmup > 0",
                           origin_of(c, CONFIG_KEY_train_warmup));
    return 0;
}

/* ---- dump and help ---- */

static void print_double(FILE *out, double x) {
    char buf[64];
    for (int prec = 6; prec <= 17; prec++) {  // the shortest text that reads back exactly
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".eEn")) fputs(".0", out);
}

/* s (valid UTF-8, set_scalar checks) as a YAML double-quoted scalar: '"' and '\\' escaped, and
 * so is every character YAML does not keep as it is there (controls, line breaks NEL, LS and PS,
 * the BOM, U+FFFE and U+FFFF), by code point. */
static void print_quoted(FILE *out, const char *s) {
    fputc('"', out);
    for (size_t len = strlen(s), at = 0, n; at < len; at += n) {
        uint32_t cp;
        n = (size_t)utf8_next(s + at, len - at, &cp);
        CHECK(n, "config string '%s' is not valid UTF-8", s);
        bool raw = (cp >= 0x20 && cp < 0x7F) || (cp >= 0xA0 && cp < 0xFFFE && cp != 0x2028 &&
                                                 cp != 0x2029 && cp != 0xFEFF) ||
                   cp >= 0x10000;
        if (cp == '"' || cp == '\\') fputc('\\', out);
        if (raw) fwrite(s + at, 1, n, out);
        else fprintf(out, "\\u%04X", (unsigned)cp);
    }
    fputc('"', out);
}

/* Key k's value as YAML (config_dump), or as JSON when json: the two differ only in the corpora,
 * whose YAML flow mappings have unquoted keys (the quoted scalars are JSON strings too). */
static void print_value(FILE *out, const Config *c, int k, bool json) {
    const KeySpec *ks = &keys[k];
    const void *field = (const char *)c + ks->offset;
    switch (ks->type) {
    case CT_INT: fprintf(out, "%d", *(const int *)field); break;
    case CT_FLOAT: print_double(out, *(const double *)field); break;
    case CT_BOOL: fputs(*(const bool *)field ? "true" : "false", out); break;
    case CT_STR: print_quoted(out, *(const char *const *)field); break;
    case CT_ENUM: print_quoted(out, ks->names[*(const int *)field]); break;
    case CT_CORPORA: {
        const CorpusList *l = field;
        if (!l->count || json) fputs(l->count ? "[" : "[]", out);
        for (int i = 0; i < l->count; i++) {
            fputs(json ? (i ? ",{\"src\":" : "{\"src\":") : "\n    - {src: ", out);
            print_quoted(out, l->items[i].src);
            fputs(json ? ",\"tgt\":" : ", tgt: ", out);
            print_quoted(out, l->items[i].tgt);
            fputc('}', out);
        }
        if (l->count && json) fputc(']', out);
        break;
    }
    }
}

void config_dump(const Config *c, FILE *out) {
    const char *current = NULL;
    for (int k = 0; k < CONFIG_NKEYS; k++) {
        const KeySpec *ks = &keys[k];
        const char *dot = strchr(ks->name, '.');
        if (!current || strncmp(current, ks->name, (size_t)(dot - ks->name) + 1)) {
            fprintf(out, "%.*s:\n", (int)(dot - ks->name), ks->name);
            current = ks->name;
        }
        fprintf(out, "  %s: ", dot + 1);
        print_value(out, c, k, false);
        fputc('\n', out);
    }
}

/* The dumped value of key k (malloc'd). */
static char *value_text(const Config *c, int k) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f, "open_memstream failed");
    print_value(f, c, k, false);
    fclose(f);
    return buf;
}

int config_differences(const Config *a, const Config *b, const char *prefix, char *out,
                       size_t n) {
    int count = 0;
    size_t used = 0, plen = strlen(prefix);
    if (n) out[0] = 0;
    for (int k = 0; k < CONFIG_NKEYS; k++) {
        if (strncmp(keys[k].name, prefix, plen)) continue;
        char *va = value_text(a, k), *vb = value_text(b, k);
        if (strcmp(va, vb)) {
            count++;
            if (used < n)
                used += (size_t)snprintf(out + used, n - used, "%s%s: %s -> %s", count > 1 ? "; " : "",
                                         keys[k].name, va, vb);
        }
        free(va), free(vb);
    }
    return count;
}

char *config_dump_string(const Config *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f, "open_memstream failed");
    config_dump(c, f);
    fclose(f);
    return buf;
}

char *config_dump_json(const Config *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f, "open_memstream failed");
    const char *current = NULL;
    for (int k = 0; k < CONFIG_NKEYS; k++) {
        const KeySpec *ks = &keys[k];
        const char *dot = strchr(ks->name, '.');
        bool first = !current;
        if (first || strncmp(current, ks->name, (size_t)(dot - ks->name) + 1)) {
            fprintf(f, "%s\"%.*s\":{", first ? "{" : "},", (int)(dot - ks->name), ks->name);
            current = ks->name;
        } else {
            fputc(',', f);
        }
        fprintf(f, "\"%s\":", dot + 1);
        print_value(f, c, k, true);
    }
    fputs("}}", f);
    fclose(f);
    return buf;
}

void config_help(FILE *out, const char *wanted) {
    static const char *type_short[] = {"int", "float", "bool", "string", "enum", "corpora"};
    for (int s = 0; s < NSECTIONS; s++) {
        if (wanted && !strstr(wanted, sections[s])) continue;
        fprintf(out, "\n%s:\n", sections[s]);
        size_t sl = strlen(sections[s]);
        for (int k = 0; k < CONFIG_NKEYS; k++) {
            const KeySpec *ks = &keys[k];
            if (strncmp(ks->name, sections[s], sl) || ks->name[sl] != '.') continue;
            fprintf(out, "  %-28s %-7s %-14s %s", ks->name, type_short[ks->type],
                    *ks->def ? ks->def : "\"\"", ks->help);
            char buf[256];
            const char *range = range_text(k, buf, sizeof buf);
            if (*range) fprintf(out, " [%s]", range);
            fputc('\n', out);
        }
    }
}
