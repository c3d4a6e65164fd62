/* data/data_config.h: the typed data configuration, generated from data_keys.def, with the values
 * of its ENUM key (kernels/config_types.h). */
#ifndef NMT_DATA_CONFIG_H
#define NMT_DATA_CONFIG_H

#include "config_types.h"
#include "text.h"

#define CONFIG_CTYPE_CORPORA(range) CorpusList
#define SPM_MODEL_TYPE_VALUES(V) V(SPM_MODEL_UNIGRAM, "unigram") V(SPM_MODEL_BPE, "bpe")
CONFIG_ENUM(SpmModelType, spm_model_type_name, SPM_MODEL_TYPE_VALUES)

typedef struct DataConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "data_keys.def"
#undef KEY
} DataConfig;

#endif
