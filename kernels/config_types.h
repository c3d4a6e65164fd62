/* config_types.h: the C types behind the configuration tables (model/model_keys.def,
 * model/decode_keys.def, data/data_keys.def, trainer/train_keys.def). Each section header
 * generates its struct from its table with CONFIG_STRUCT_FIELD; strings are owned by the Config
 * that trainer/config.c fills. A section with a type of its own defines CONFIG_CTYPE_<TYPE>(range)
 * (data_config.h: CORPORA).
 *
 * An ENUM key is a C enum with one X-macro table of V(CONSTANT, "name") rows, the name being what
 * YAML, --set, --help, the dump and every message spell. The section header declares it before
 * its struct, and the key's row names the enum type in its range column:
 *     #define NORM_PLACEMENT_VALUES(V) V(NORM_POST, "post") V(NORM_PRE, "pre")
 *     CONFIG_ENUM(NormPlacement, norm_placement_name, NORM_PLACEMENT_VALUES)
 *     KEY(ENUM, norm, "post", NormPlacement, "...")
 * CONFIG_ENUM declares the enum type, `const char *name_fn(Type)` for printing a value, and the
 * name table trainer/config.c parses with. A new value is one more V row; code that branches on
 * the key uses `switch` without `default`, so -Wswitch names every place that must handle it. */
#ifndef NMT_CONFIG_TYPES_H
#define NMT_CONFIG_TYPES_H

#include <stdbool.h>

#include "check.h"

#define CONFIG_CTYPE_INT(range) int
#define CONFIG_CTYPE_FLOAT(range) double
#define CONFIG_CTYPE_BOOL(range) bool
#define CONFIG_CTYPE_STR(range) const char *
#define CONFIG_CTYPE_ENUM(Type) Type
#define CONFIG_STRUCT_FIELD(type, field, def, range, help) CONFIG_CTYPE_##type(range) field;

#define CONFIG_ENUM_CONSTANT(constant, name) constant,
#define CONFIG_ENUM_NAME(constant, name) name,
/* The value names of enum Type, indexed by its constants (config.c's KeySpec refers to it). */
#define CONFIG_ENUM_NAMES(Type) config_enum_names_##Type
#define CONFIG_ENUM(Type, name_fn, VALUES)                                                         \
    typedef enum { VALUES(CONFIG_ENUM_CONSTANT) } Type;                                            \
    _Static_assert(sizeof(Type) == sizeof(int), #Type " is stored as an int by trainer/config.c"); \
    static const char *const CONFIG_ENUM_NAMES(Type)[] = {VALUES(CONFIG_ENUM_NAME)};               \
    static inline const char *name_fn(Type v) {                                                    \
        CHECK((unsigned)v < sizeof CONFIG_ENUM_NAMES(Type) / sizeof *CONFIG_ENUM_NAMES(Type),      \
              "%d is not a value of " #Type, (int)v);                                              \
        return CONFIG_ENUM_NAMES(Type)[v];                                                         \
    }

#endif
