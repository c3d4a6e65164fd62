/* config.h: the whole configuration of a run, one typed struct per section, filled from YAML
 * files (libyaml) merged in order, then `--set section.key=value` overrides.
 * The key tables (model/model_keys.def, model/decode_keys.def, data/data_keys.def,
 * trainer/train_keys.def) are the single source of truth: they generate the structs, the parser,
 * `--help` and the resolved-config dump written into run directories and checkpoints.
 * ENUM keys are C enums (kernels/config_types.h), parsed here once from their names.
 * Unknown keys, wrong types, out-of-range values, inconsistent combinations and a key or section
 * given twice in one file are errors that name the file, line and key. Loading functions return
 * 0, or -1 after status_fail (status.h). */
#ifndef NMT_CONFIG_H
#define NMT_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "data_config.h"
#include "model_config.h"
#include "train_config.h"

enum {
#define KEY(type, field, def, range, help) CONFIG_KEY_model_##field,
#include "model_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) CONFIG_KEY_decode_##field,
#include "decode_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) CONFIG_KEY_data_##field,
#include "data_keys.def"
#undef KEY
#define KEY(type, field, def, range, help) CONFIG_KEY_train_##field,
#include "train_keys.def"
#undef KEY
    CONFIG_NKEYS
};

typedef struct ConfigStrings ConfigStrings;

typedef struct Config {
    ModelConfig model;
    DecodeConfig decode;
    DataConfig data;
    TrainConfig train;
    const char *origin[CONFIG_NKEYS];  // where each key got its value: "file:line", "--set", NULL = default
    ConfigStrings *strings;            // owns every string above
    bool paths_unused;  // set by commands that open no data file (bench): an unset ${VAR} in a
                        // value is kept as it is rather than refused
} Config;

void config_init(Config *c);  // all defaults
void config_free(Config *c);
int config_load_file(Config *c, const char *path);
/* YAML text from memory; `origin` names it in messages (e.g. "checkpoint.last:config"). */
int config_load_string(Config *c, const char *text, size_t len, const char *origin);
int config_set(Config *c, const char *assignment);  // "section.key=value"
/* Sets key `name` ("section.key") from its text as a file or --set would, with the same type
 * and range checks; `where` names the source in messages (e.g. "--lenpen"). */
int config_set_key(Config *c, const char *name, const char *value, const char *where);
/* Cross-key rules (d_model % heads, key widths, schedule needs warmup ...). */
int config_check(const Config *c);

/* The constant of ENUM key `key` (CONFIG_KEY_*) whose name is `name`; -1 if there is none. */
int config_enum_value(int key, const char *name);
/* The value names of ENUM key `key` into out: separated by sep, the last two by last (e.g. "|"
 * and "|" give "a|b|c"; ", " and " or " give "a, b or c"). Returns out. */
const char *config_enum_choices(int key, const char *sep, const char *last, char *out, size_t n);

void config_dump(const Config *c, FILE *out);  // YAML that config_load_string reads back
char *config_dump_string(const Config *c);     // malloc'd
/* The same keys as one JSON object of sections, {"model":{"d_model":512,...},...} (malloc'd). */
char *config_dump_json(const Config *c);
/* Keys whose names start with prefix (e.g. "model.") and differ between a and b; lists them as
 * "key: old -> new; ..." in out. Returns how many differ. */
int config_differences(const Config *a, const Config *b, const char *prefix, char *out, size_t n);
/* Every key of the given sections ("model,train", NULL = all) with type, default and help. */
void config_help(FILE *out, const char *sections);

/* The effective key/query width: model.dk, or d_model when dk is 0. */
int config_model_dk(const ModelConfig *m);

#endif
