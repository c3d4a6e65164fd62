/* reservoir.c: the sample of training sentences of reservoir.h. */
#include "reservoir.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

void reservoir_init(Reservoir *r, long size, uint64_t seed) {
    *r = (Reservoir){
        .cap = size > 0 ? size : 1024, .unlimited = size == 0, .rng = rng_init(seed, 0x5350)};
    r->text = xcalloc((size_t)r->cap, sizeof *r->text);
    r->len = xcalloc((size_t)r->cap, sizeof *r->len);
}

void reservoir_free(Reservoir *r) {
    for (long i = 0; i < r->count; i++) free(r->text[i]);
    free(r->text);
    free(r->len);
    *r = (Reservoir){0};
}

static char *copy_text(const char *s, size_t len) {
    char *t = xmalloc(len + 1);
    memcpy(t, s, len);
    t[len] = '\0';
    return t;
}

/* Algorithm R. */
void reservoir_offer(Reservoir *r, const char *s, size_t len) {
    r->seen++;
    if (r->count == r->cap && r->unlimited) {
        r->cap *= 2;
        r->text = xrealloc(r->text, sizeof *r->text * (size_t)r->cap);
        r->len = xrealloc(r->len, sizeof *r->len * (size_t)r->cap);
    }
    if (r->count < r->cap) {
        r->text[r->count] = copy_text(s, len);
        r->len[r->count++] = len;
        return;
    }
    uint64_t slot = rng_below(&r->rng, r->seen);
    if (slot < (uint64_t)r->cap) {
        free(r->text[slot]);
        r->text[slot] = copy_text(s, len);
        r->len[slot] = len;
    }
}

int reservoir_next(void *ctx, const char **text, size_t *len) {
    Reservoir *r = ctx;
    if (r->next == r->count) return 0;
    *text = r->text[r->next];
    *len = r->len[r->next++];
    return 1;
}
