/* fuzz_config.c: the config parser (trainer/config.h). An input starting with "--set\n" is a list
 * of `--set` assignments, one a line (config_set); any other input is YAML text
 * (config_load_string). Whatever loads must pass through config_check without crashing, and its
 * dump must load back into the same config (config_dump_string is documented as YAML that
 * config_load_string reads back). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_util.h"
#include "status.h"

static const char SET_PREFIX[] = "--set\n";

/* Applies each '\n'-separated assignment of text in turn; 0, or -1 at the first refused one. */
static int apply_sets(Config *c, char *text) {
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (config_set(c, line) < 0) return -1;
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Config c;
    config_init(&c);
    size_t skip = strlen(SET_PREFIX);
    int rc;
    if (size >= skip && !memcmp(data, SET_PREFIX, skip)) {
        char *text = fuzz_string(data + skip, size - skip);
        rc = apply_sets(&c, text);
        free(text);
    } else {
        rc = config_load_string(&c, (const char *)data, size, "fuzz.yaml");
    }
    if (rc == 0) {
        config_check(&c);
        char *dump = config_dump_string(&c);
        Config back;
        config_init(&back);
        FUZZ_ASSERT(config_load_string(&back, dump, strlen(dump), "dump") == 0,
                    "the dump does not load back: %s\n%s", status_message(), dump);
        char *again = config_dump_string(&back);
        FUZZ_ASSERT(!strcmp(dump, again), "the dump changes on reload:\n%s\n---\n%s", dump, again);
        free(again), free(dump);
        config_free(&back);
    }
    config_free(&c);
    return 0;
}
