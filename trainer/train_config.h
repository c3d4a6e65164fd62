/* trainer/train_config.h: the typed training configuration, generated from train_keys.def. */
#ifndef NMT_TRAIN_CONFIG_H
#define NMT_TRAIN_CONFIG_H

#include "config_types.h"

typedef struct TrainConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "train_keys.def"
#undef KEY
} TrainConfig;

#endif
