/* model/model_config.h: the typed model and decoding configuration, generated from model_keys.def and
 * decode_keys.def. Hot code reads these fields; the strings (ENUM values) are resolved once when
 * the model is built. */
#ifndef NMT_MODEL_CONFIG_H
#define NMT_MODEL_CONFIG_H

#include "config_types.h"

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
