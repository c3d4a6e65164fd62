/* model/model_config.h: the typed model and decoding configuration, generated from model_keys.def
 * and decode_keys.def, with the values of their ENUM keys (kernels/config_types.h). */
#ifndef NMT_MODEL_CONFIG_H
#define NMT_MODEL_CONFIG_H

#include "config_types.h"

#define NORM_PLACEMENT_VALUES(V) V(NORM_POST, "post") V(NORM_PRE, "pre")
CONFIG_ENUM(NormPlacement, norm_placement_name, NORM_PLACEMENT_VALUES)
#define ATTENTION_MODE_VALUES(V) V(ATTENTION_CONCAT, "concat") V(ATTENTION_COLLAB, "collab")
CONFIG_ENUM(AttentionMode, attention_mode_name, ATTENTION_MODE_VALUES)
#define COLLAB_BIAS_VALUES(V) V(COLLAB_BIAS_CONTENT, "content") V(COLLAB_BIAS_QUERY, "query")
CONFIG_ENUM(CollabBias, collab_bias_name, COLLAB_BIAS_VALUES)
#define LENPEN_FORM_VALUES(V) V(LENPEN_GNMT, "gnmt") V(LENPEN_FAIRSEQ, "fairseq")
CONFIG_ENUM(LenpenForm, lenpen_form_name, LENPEN_FORM_VALUES)

typedef struct ModelConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "model_keys.def"
#undef KEY
} ModelConfig;

typedef struct DecodeConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "decode_keys.def"
#undef KEY
} DecodeConfig;

#endif
