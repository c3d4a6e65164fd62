/* config_types.h: the C types behind the configuration tables (model/model_keys.def,
 * model/decode_keys.def, data/data_keys.def, trainer/train_keys.def). Each section header
 * generates its struct from its table with CONFIG_STRUCT_FIELD; strings are owned by the Config
 * that trainer/config.c fills. */
#ifndef NMT_CONFIG_TYPES_H
#define NMT_CONFIG_TYPES_H

#include <stdbool.h>

typedef struct CorpusPair {
    const char *src, *tgt;  // file paths (plain text, .gz or WMT .sgm); line i translates line i
} CorpusPair;

typedef struct CorpusList {
    const CorpusPair *items;  // (count)
    int count;
} CorpusList;

#define CONFIG_CTYPE_INT int
#define CONFIG_CTYPE_FLOAT double
#define CONFIG_CTYPE_BOOL bool
#define CONFIG_CTYPE_STR const char *
#define CONFIG_CTYPE_ENUM const char *
#define CONFIG_CTYPE_CORPORA CorpusList
#define CONFIG_STRUCT_FIELD(type, field, def, range, help) CONFIG_CTYPE_##type field;

#endif
