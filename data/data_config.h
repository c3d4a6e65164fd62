/* data/data_config.h: the typed data configuration, generated from data_keys.def. */
#ifndef NMT_DATA_CONFIG_H
#define NMT_DATA_CONFIG_H

#include "config_types.h"
#include "text.h"

#define CONFIG_CTYPE_CORPORA CorpusList

typedef struct DataConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "data_keys.def"
#undef KEY
} DataConfig;

#endif
