/* config_types.h: the C types behind the configuration tables (model/model_keys.def,
 * model/decode_keys.def, data/data_keys.def, trainer/train_keys.def). Each section header
 * generates its struct from its table with CONFIG_STRUCT_FIELD; strings are owned by the Config
 * that trainer/config.c fills. A section with a type of its own defines CONFIG_CTYPE_<TYPE>
 * (data_config.h: CORPORA). */
#ifndef NMT_CONFIG_TYPES_H
#define NMT_CONFIG_TYPES_H

#include <stdbool.h>

#define CONFIG_CTYPE_INT int
#define CONFIG_CTYPE_FLOAT double
#define CONFIG_CTYPE_BOOL bool
#define CONFIG_CTYPE_STR const char *
#define CONFIG_CTYPE_ENUM const char *
#define CONFIG_STRUCT_FIELD(type, field, def, range, help) CONFIG_CTYPE_##type field;

#endif
