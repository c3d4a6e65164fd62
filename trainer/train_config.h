/* trainer/train_config.h: the typed training configuration, generated from train_keys.def, with
 * the values of its ENUM keys (kernels/config_types.h). */
#ifndef NMT_TRAIN_CONFIG_H
#define NMT_TRAIN_CONFIG_H

#include "config_types.h"

/* The names are gemm_lookup's (kernels/gemm/gemm.h), which also serves NMT_GEMM. */
#define GEMM_BACKEND_VALUES(V)                                                                     \
    V(GEMM_BACKEND_AUTO, "auto")                                                                   \
    V(GEMM_BACKEND_BLOCKED, "blocked") V(GEMM_BACKEND_OPENBLAS, "openblas")                        \
        V(GEMM_BACKEND_REF, "ref")
CONFIG_ENUM(GemmBackend, gemm_backend_name, GEMM_BACKEND_VALUES)
#define LR_SCHEDULE_VALUES(V)                                                                      \
    V(SCHEDULE_INVERSE_SQRT, "inverse_sqrt")                                                       \
    V(SCHEDULE_NOAM, "noam") V(SCHEDULE_CONSTANT, "constant")
CONFIG_ENUM(LrSchedule, lr_schedule_name, LR_SCHEDULE_VALUES)
#define VALID_METRIC_VALUES(V) V(VALID_METRIC_BLEU, "bleu") V(VALID_METRIC_NLL, "nll")
CONFIG_ENUM(ValidMetric, valid_metric_name, VALID_METRIC_VALUES)

typedef struct TrainConfig {
#define KEY CONFIG_STRUCT_FIELD
#include "train_keys.def"
#undef KEY
} TrainConfig;

#endif
