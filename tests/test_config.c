/* test_config.c: the configuration: defaults, YAML sections, several files merged in order,
 * --set last, every error kind naming file:line:key, cross-key rules, dump -> load identity, and
 * every value of every ENUM key through parse, dump and reload. */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "status.h"
#include "test_util.h"

static int load(Config *c, const char *text) {
    return config_load_string(c, text, strlen(text), "t.yaml");
}

/* Loads `text` into fresh defaults and expects an error containing every `want` fragment. */
static void expect_error(const char *text, const char *want1, const char *want2) {
    Config c;
    config_init(&c);
    status_fail("stale");
    int rc = load(&c, text);
    if (rc == 0) rc = config_check(&c);
    EXPECT(rc != 0, "no error for: %s", text);
    EXPECT(strstr(status_message(), want1) && (!want2 || strstr(status_message(), want2)),
           "error '%s' lacks '%s' / '%s'", status_message(), want1, want2 ? want2 : "");
    config_free(&c);
}

/* Value `name` (constant `want`) of ENUM key `key`, at `offset` in Config: --set by name stores
 * the constant, the dump spells the name, and the dump loads back to the constant. */
static void enum_round_trip(int key, const char *key_name, const char *name, int want,
                            size_t offset) {
    Config c, back;
    config_init(&c), config_init(&back);
    char set[128], line[128];
    snprintf(set, sizeof set, "%s=%s", key_name, name);
    EXPECT(config_set(&c, set) == 0, "%s: %s", set, status_message());
    EXPECT(*(const int *)((const char *)&c + offset) == want, "%s did not give constant %d", set,
           want);
    EXPECT(config_enum_value(key, name) == want, "config_enum_value(%s, %s)", key_name, name);
    char *dump = config_dump_string(&c);
    snprintf(line, sizeof line, "\n  %s: \"%s\"\n", strchr(key_name, '.') + 1, name);
    EXPECT(strstr(dump, line), "the dump lacks [%s]:\n%s", line, dump);
    EXPECT(config_load_string(&back, dump, strlen(dump), "dump") == 0, "reload: %s",
           status_message());
    EXPECT(*(const int *)((const char *)&back + offset) == want, "%s did not survive the dump",
           set);
    free(dump);
    config_free(&c), config_free(&back);
}

static void test_enum_keys(void) {
    int keys = 0;
#define ENUM_ROUND_TRIP_INT(section, field, range)
#define ENUM_ROUND_TRIP_FLOAT(section, field, range)
#define ENUM_ROUND_TRIP_BOOL(section, field, range)
#define ENUM_ROUND_TRIP_STR(section, field, range)
#define ENUM_ROUND_TRIP_CORPORA(section, field, range)
#define ENUM_ROUND_TRIP_ENUM(section, field, Type)                                                 \
    keys++;                                                                                        \
    for (size_t v = 0; v < sizeof CONFIG_ENUM_NAMES(Type) / sizeof *CONFIG_ENUM_NAMES(Type); v++)  \
        enum_round_trip(CONFIG_KEY_##section##_##field, #section "." #field,                       \
                        CONFIG_ENUM_NAMES(Type)[v], (int)v, offsetof(Config, section.field));
#define KEY(type, field, def, range, help) ENUM_ROUND_TRIP_##type(model, field, range)
#include "model_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) ENUM_ROUND_TRIP_##type(decode, field, range)
#include "decode_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) ENUM_ROUND_TRIP_##type(data, field, range)
#include "data_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) ENUM_ROUND_TRIP_##type(train, field, range)
#include "train_keys.def"
#undef KEY
    EXPECT(keys == 8,
           "%d ENUM keys, expected 8 (norm, attention, collab_bias, lenpen_form, "
           "spm_model_type, gemm, schedule, valid_metric)",
           keys);
    EXPECT(!strcmp(lr_schedule_name(SCHEDULE_NOAM), "noam") &&
               !strcmp(gemm_backend_name(GEMM_BACKEND_REF), "ref"),
           "name functions");
    char choices[64];
    EXPECT(!strcmp(config_enum_choices(CONFIG_KEY_train_schedule, ", ", " or ", choices,
                                       sizeof choices),
                   "inverse_sqrt, noam or constant"),
           "choices: %s", choices);
    EXPECT(config_enum_value(CONFIG_KEY_model_norm, "Pre") == -1, "enum names are case-sensitive");
}

int main(void) {
    test_enum_keys();
    Config c;
    config_init(&c);
    EXPECT(c.model.d_model == 512 && c.model.heads == 8 && c.model.attention == ATTENTION_CONCAT,
           "defaults");
    EXPECT(c.train.eps == 1e-9 && c.train.lr == 0.0007 && c.data.train.count == 0, "float defaults");
    EXPECT(config_check(&c) == 0, "defaults pass the checks: %s", status_message());

    const char *base = "model:\n  d_model: 256\n  heads: 4\n  attention: collab\n  dk: 64\n"
                       "train:\n  lr: 1e-3\n  max_time: 30\n"
                       "data:\n  train:\n    - {src: a.en, tgt: a.de}\n"
                       "    - src: ${NMT_DATA}/b.en\n      tgt: b.de\n";
    EXPECT(load(&c, base) == 0, "load: %s", status_message());
    EXPECT(c.model.d_model == 256 && c.model.heads == 4 && c.model.dk == 64, "ints");
    EXPECT(c.model.attention == ATTENTION_COLLAB && c.train.lr == 1e-3, "enum and float");
    EXPECT(c.data.train.count == 2 && !strcmp(c.data.train.items[0].tgt, "a.de"), "corpora");
    const char *data_dir = getenv("NMT_DATA") && *getenv("NMT_DATA") ? getenv("NMT_DATA")
                                                                       : "../shared/data";
    char want[512];
    snprintf(want, sizeof want, "%s/b.en", data_dir);
    EXPECT(!strcmp(c.data.train.items[1].src, want), "env expansion: %s", c.data.train.items[1].src);
    EXPECT(c.origin[CONFIG_KEY_model_dk] && !strcmp(c.origin[CONFIG_KEY_model_dk], "t.yaml:5"),
           "origin of model.dk: %s", c.origin[CONFIG_KEY_model_dk]);

    // A second file overrides only what it names; --set comes last.
    EXPECT(load(&c, "model:\n  heads: 8\n") == 0, "overlay: %s", status_message());
    EXPECT(c.model.heads == 8 && c.model.d_model == 256, "overlay keeps other keys");
    EXPECT(config_set(&c, "model.dk=128") == 0 && c.model.dk == 128, "--set");
    EXPECT(config_set(&c, "data.valid=v.en,v.de;w.en,w.de") == 0 && c.data.valid.count == 2 &&
               !strcmp(c.data.valid.items[1].tgt, "w.de"),
           "--set corpora");

    // dump -> load gives the same dump
    char *d1 = config_dump_string(&c);
    Config c2;
    config_init(&c2);
    EXPECT(config_load_string(&c2, d1, strlen(d1), "dump") == 0, "reload dump: %s",
           status_message());
    char *d2 = config_dump_string(&c2);
    EXPECT(!strcmp(d1, d2), "dump round trip differs:\n%s\n---\n%s", d1, d2);
    EXPECT(c2.train.lr == c.train.lr && c2.train.eps == c.train.eps, "floats exact");
    free(d1), free(d2);
    config_free(&c2);
    config_free(&c);

    // Every kind of error names where and what.
    expect_error("model:\n  d_modle: 3\n", "t.yaml:2", "did you mean 'model.d_model'");
    expect_error("model:\n  heads: four\n", "t.yaml:2: model.heads", "expected an integer");
    expect_error("model:\n  heads: 0\n", "model.heads: 0 is out of range", NULL);
    expect_error("train:\n  lr: fast\n", "train.lr: expected a number", NULL);
    expect_error("model:\n  attention: sparse\n", "expected one of concat|collab", "sparse");
    expect_error("modle:\n  heads: 2\n", "t.yaml:1: unknown section 'modle'", NULL);
    expect_error("model:\n  heads: 7\n", "t.yaml:2: model.heads", "not divisible");
    expect_error("model:\n  dk: 100\n", "model.dk", "not divisible by heads 8");
    expect_error("train:\n  schedule: noam\n  warmup: 0\n", "t.yaml:3: train.warmup", NULL);
    expect_error("decode:\n  valid_beam: 0\n", "train.valid_metric: bleu needs", NULL);
    expect_error("data:\n  train:\n    - {src: a.en}\n", "t.yaml:3", "needs both src and tgt");
    expect_error("model: [1, 2]\n", "section 'model' must be a mapping", NULL);
    expect_error("model:\n  heads: [1]\n", "t.yaml:2: model.heads: expected an integer", NULL);
    expect_error("model:\n  heads: 4\n bad", "YAML syntax error", NULL);

    Config f;
    config_init(&f);
    EXPECT(config_load_file(&f, "/nonexistent/x.yaml") != 0 &&
               strstr(status_message(), "/nonexistent/x.yaml: cannot open"),
           "missing file: %s", status_message());
    EXPECT(config_set(&f, "model.heads") != 0 && strstr(status_message(), "section.key=value"),
           "--set without =: %s", status_message());
    EXPECT(config_set(&f, "train.seeed=3") != 0 && strstr(status_message(), "train.seed"),
           "--set unknown key: %s", status_message());
    config_free(&f);

    // Every preset in configs/ loads and passes the checks.
    setenv("WMT14", "/wmt14", 0);  // transformer-base.yaml names its corpora through ${WMT14}
    const char *presets[] = {NMT_SOURCE_DIR "/configs/tiny-test.yaml",
                             NMT_SOURCE_DIR "/configs/bench-small.yaml",
                             NMT_SOURCE_DIR "/configs/bench-small-collab.yaml",
                             NMT_SOURCE_DIR "/configs/multi30k-small.yaml",
                             NMT_SOURCE_DIR "/configs/multi30k-best.yaml",
                             NMT_SOURCE_DIR "/configs/multi30k-tiny.yaml",
                             NMT_SOURCE_DIR "/configs/transformer-base.yaml",
                             NMT_SOURCE_DIR "/configs/collab-dk256.yaml",
                             NMT_SOURCE_DIR "/configs/collab-dk128.yaml",
                             NMT_SOURCE_DIR "/configs/collab-dk64.yaml"};
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
        EXPECT(access(presets[i], R_OK) == 0, "%s is missing", presets[i]);
        config_init(&f);
        EXPECT(config_load_file(&f, presets[i]) == 0 && config_check(&f) == 0, "%s: %s", presets[i],
               status_message());
        config_free(&f);
    }
    return test_finish();
}
