// unigram.c: SentencePiece unigram segmentation from the serialized model (see unigram.h): a
// protobuf wire-format reader for the few fields that decide the segmentation, a double-array
// trie of the pieces, and the Viterbi search of SentencePiece 0.1.97's EncodeOptimized.
#include "unigram.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "utf8.h"

// ModelProto fields (sentencepiece_model.proto) this encoder reads.
enum {
    PROTO_PIECES = 1,           // repeated SentencePiece
    PROTO_TRAINER_SPEC = 2,     // TrainerSpec
    PROTO_NORMALIZER_SPEC = 3,  // NormalizerSpec
    PIECE_TEXT = 1,             // SentencePiece.piece
    PIECE_SCORE = 2,            // SentencePiece.score (float)
    PIECE_TYPE = 3,             // SentencePiece.type
    TRAINER_MODEL_TYPE = 3,     // 1 = unigram
    TRAINER_WS_AS_SUFFIX = 24,  // treat_whitespace_as_suffix
    TRAINER_BYTE_FALLBACK = 35,
    NORM_CHARSMAP = 2,  // precompiled_charsmap: empty for the identity rule
    NORM_DUMMY_PREFIX = 3,
    NORM_REMOVE_EXTRA_WS = 4,
    NORM_ESCAPE_WS = 5,
};
enum { TYPE_NORMAL = 1, TYPE_UNKNOWN = 2, TYPE_CONTROL = 3, TYPE_USER_DEFINED = 4,
       TYPE_UNUSED = 5, TYPE_BYTE = 6 };
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

// A cursor over protobuf wire format; any malformation clears ok and ends the walk.
typedef struct Wire {
    const uint8_t *p, *end;
    bool ok;
} Wire;

static uint64_t wire_varint(Wire *w) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) break;
        uint8_t b = *w->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    w->ok = false;
    w->p = w->end;
    return 0;
}

// The next field's number and wire type; false at the end or on malformed input.
static bool wire_next(Wire *w, uint32_t *field, uint32_t *type) {
    if (!w->ok || w->p >= w->end) return false;
    uint64_t key = wire_varint(w);
    *field = (uint32_t)(key >> 3);
    *type = (uint32_t)(key & 7);
    return w->ok;
}

// The field's value: varints and fixed32 in *value, length-delimited bytes as a sub-cursor.
static Wire wire_value(Wire *w, uint32_t type, uint64_t *value) {
    Wire sub = {w->p, w->p, true};
    size_t left = (size_t)(w->end - w->p);
    *value = 0;
    switch (type) {
    case WIRE_VARINT: *value = wire_varint(w); break;
    case WIRE_FIXED64:
        if (left < 8) w->ok = false;
        else w->p += 8;
        break;
    case WIRE_FIXED32:
        if (left < 4) { w->ok = false; break; }
        *value = (uint64_t)w->p[0] | (uint64_t)w->p[1] << 8 | (uint64_t)w->p[2] << 16 |
                 (uint64_t)w->p[3] << 24;
        w->p += 4;
        break;
    case WIRE_BYTES: {
        uint64_t n = wire_varint(w);
        if (!w->ok || n > (uint64_t)(w->end - w->p)) { w->ok = false; break; }
        sub.p = w->p;
        sub.end = w->p + n;
        w->p += n;
        break;
    }
    default: w->ok = false;
    }
    if (!w->ok) w->p = w->end;
    return sub;
}

// One trie slot: the node at index t was reached from check by byte t - base[check].
typedef struct TrieUnit {
    int32_t base;   // children of this node sit at base + byte; 0 for a leaf
    int32_t check;  // the parent node, -1 for a free slot
    int32_t value;  // the piece id ending here, -1 for none (or an unused piece)
} TrieUnit;

struct UnigramEncoder {
    TrieUnit *trie;     // (nodes + 256) root at 0; the 256 free slots keep base + byte in bounds
    float *score;       // (pieces) SentencePiece.score
    int32_t byte_id[256];  // the <0xXX> piece of each byte
    int unk_id;
    float unk_score;    // min NORMAL score - 10, SentencePiece's kUnkPenalty
};

typedef struct Piece {
    const uint8_t *text;
    size_t len;
    int type, id;
} Piece;

static int piece_cmp(const void *a, const void *b) {
    const Piece *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

// The trie under construction. Free slots form a list in increasing order, so the search for a
// node's base visits free slots only, not the densely used region below the frontier.
typedef struct TrieBuilder {
    TrieUnit *unit;      // (cap)
    int32_t *next_free;  // (cap) of a free slot: the next free slot above it, cap for none
    int32_t *prev_free;  // (cap) of a free slot: the free slot below it, -1 for none
    int first_free, last_free;  // the list's ends (cap and -1 when it is empty)
    int cap, size;              // slots allocated; 1 + the highest slot in use
} TrieBuilder;

static void trie_reserve(TrieBuilder *b, int n) {
    if (n <= b->cap) return;
    int old = b->cap, cap = old ? old : 1024;
    while (cap < n) cap *= 2;
    b->unit = xrealloc(b->unit, sizeof(TrieUnit) * (size_t)cap);
    b->next_free = xrealloc(b->next_free, sizeof(int32_t) * (size_t)cap);
    b->prev_free = xrealloc(b->prev_free, sizeof(int32_t) * (size_t)cap);
    for (int i = old; i < cap; i++) {  // new slots are free: append them to the list
        b->unit[i] = (TrieUnit){0, -1, -1};
        b->prev_free[i] = i == old ? b->last_free : i - 1;
        b->next_free[i] = i + 1;
    }
    if (b->last_free >= 0) b->next_free[b->last_free] = old;
    else b->first_free = old;
    b->last_free = cap - 1;
    b->cap = cap;
}

// Marks free slot t as a child of parent.
static void trie_take(TrieBuilder *b, int t, int parent) {
    int prev = b->prev_free[t], next = b->next_free[t];
    if (prev >= 0) b->next_free[prev] = next;
    else b->first_free = next;
    if (next < b->cap) b->prev_free[next] = prev;
    else b->last_free = prev;
    b->unit[t].check = parent;
    if (t + 1 > b->size) b->size = t + 1;
}

// Places node's children (keys[lo .. hi) share their first depth bytes; the one of exactly depth
// bytes, first in sorted order, ends at node) and recurses into each child.
static void trie_place(TrieBuilder *b, int node, const Piece *keys, int lo, int hi, size_t depth) {
    if (lo < hi && keys[lo].len == depth) {
        b->unit[node].value = keys[lo].type == TYPE_UNUSED ? -1 : keys[lo].id;
        lo++;
    }
    if (lo == hi) return;
    uint8_t label[256];
    int first[257], n = 0;
    for (int k = lo; k < hi; k++) {
        uint8_t c = keys[k].text[depth];
        if (n == 0 || label[n - 1] != c) {
            label[n] = c;
            first[n++] = k;
        }
    }
    first[n] = hi;
    int base = 0;
    for (int f = b->first_free;; f = b->next_free[f]) {  // the first label on each free slot
        trie_reserve(b, f + 256 + 1);
        base = f - label[0];
        if (base < 1) continue;
        int i = 1;
        while (i < n && b->unit[base + label[i]].check == -1) i++;
        if (i == n) break;
    }
    b->unit[node].base = base;
    for (int i = 0; i < n; i++) trie_take(b, base + label[i], node);
    for (int i = 0; i < n; i++)
        trie_place(b, base + label[i], keys, first[i], first[i + 1], depth + 1);
}

// Reads the pieces and the settings that decide segmentation; false if the model is outside what
// this encoder reproduces.
static bool read_model(Wire w, Piece **pieces_out, int *n_out, float **score_out) {
    bool unigram = true, byte_fallback = false, ws_suffix = false;
    bool identity = true, dummy_prefix = true, remove_ws = true, escape_ws = true;
    int n = 0, cap = 0;
    Piece *pieces = NULL;
    float *score = NULL;
    uint32_t field, type;
    uint64_t v;
    while (wire_next(&w, &field, &type)) {
        Wire sub = wire_value(&w, type, &v);
        if (type != WIRE_BYTES) continue;
        if (field == PROTO_PIECES) {
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                pieces = xrealloc(pieces, sizeof(Piece) * (size_t)cap);
                score = xrealloc(score, sizeof(float) * (size_t)cap);
            }
            Piece p = {NULL, 0, TYPE_NORMAL, n};
            float s = 0;
            while (wire_next(&sub, &field, &type)) {
                Wire text = wire_value(&sub, type, &v);
                if (field == PIECE_TEXT && type == WIRE_BYTES) {
                    p.text = text.p;
                    p.len = (size_t)(text.end - text.p);
                } else if (field == PIECE_SCORE && type == WIRE_FIXED32) {
                    uint32_t bits = (uint32_t)v;
                    memcpy(&s, &bits, sizeof s);
                } else if (field == PIECE_TYPE && type == WIRE_VARINT) {
                    p.type = (int)v;
                }
            }
            w.ok = w.ok && sub.ok;
            pieces[n] = p;
            score[n++] = s;
        } else if (field == PROTO_TRAINER_SPEC) {
            while (wire_next(&sub, &field, &type)) {
                wire_value(&sub, type, &v);
                if (field == TRAINER_MODEL_TYPE) unigram = v == 1;
                if (field == TRAINER_BYTE_FALLBACK) byte_fallback = v != 0;
                if (field == TRAINER_WS_AS_SUFFIX) ws_suffix = v != 0;
            }
            w.ok = w.ok && sub.ok;
        } else if (field == PROTO_NORMALIZER_SPEC) {
            while (wire_next(&sub, &field, &type)) {
                Wire bytes = wire_value(&sub, type, &v);
                if (field == NORM_CHARSMAP) identity = bytes.end == bytes.p;
                if (field == NORM_DUMMY_PREFIX) dummy_prefix = v != 0;
                if (field == NORM_REMOVE_EXTRA_WS) remove_ws = v != 0;
                if (field == NORM_ESCAPE_WS) escape_ws = v != 0;
            }
            w.ok = w.ok && sub.ok;
        }
    }
    bool ok = w.ok && n > 0 && unigram && byte_fallback && !ws_suffix && identity &&
              dummy_prefix && remove_ws && escape_ws;
    for (int i = 0; ok && i < n; i++)
        ok = pieces[i].len > 0 && pieces[i].type != TYPE_USER_DEFINED &&
             memchr(pieces[i].text, 0, pieces[i].len) == NULL;
    if (!ok) {
        free(pieces);
        free(score);
        return false;
    }
    *pieces_out = pieces;
    *n_out = n;
    *score_out = score;
    return true;
}

// The byte a "<0xXX>" piece stands for, or -1.
static int byte_piece_value(const Piece *p) {
    static const char hex[] = "0123456789ABCDEF";
    if (p->len != 6 || memcmp(p->text, "<0x", 3) != 0 || p->text[5] != '>') return -1;
    const char *hi = memchr(hex, p->text[3], 16), *lo = memchr(hex, p->text[4], 16);
    return hi && lo ? (int)((hi - hex) * 16 + (lo - hex)) : -1;
}

UnigramEncoder *unigram_encoder_new(const void *proto, size_t len) {
    Wire w = {proto, (const uint8_t *)proto + len, true};
    Piece *pieces;
    float *score;
    int n;
    if (!read_model(w, &pieces, &n, &score)) return NULL;

    UnigramEncoder *enc = xcalloc(1, sizeof *enc);
    enc->score = score;
    enc->unk_id = -1;
    float min_score = FLT_MAX;
    int bytes_found = 0, n_keys = 0;
    for (int i = 0; i < 256; i++) enc->byte_id[i] = -1;
    for (int i = 0; i < n; i++) {
        const Piece *p = &pieces[i];
        if (p->type == TYPE_NORMAL && score[i] < min_score) min_score = score[i];
        if (p->type == TYPE_UNKNOWN) enc->unk_id = i;
        int byte = p->type == TYPE_BYTE ? byte_piece_value(p) : -1;
        if (byte >= 0 && enc->byte_id[byte] < 0) {
            enc->byte_id[byte] = i;
            bytes_found++;
        }
        if (p->type == TYPE_NORMAL || p->type == TYPE_UNUSED) pieces[n_keys++] = *p;
    }
    enc->unk_score = min_score - 10.0f;
    if (enc->unk_id < 0 || bytes_found < 256 || n_keys == 0) {
        free(pieces);
        unigram_encoder_free(enc);
        return NULL;
    }

    qsort(pieces, (size_t)n_keys, sizeof(Piece), piece_cmp);
    bool distinct = true;  // SentencePiece refuses a model with a piece twice; so does the trie
    for (int i = 1; i < n_keys; i++) distinct = distinct && piece_cmp(&pieces[i - 1], &pieces[i]);
    if (!distinct) {
        free(pieces);
        unigram_encoder_free(enc);
        return NULL;
    }
    TrieBuilder b = {.last_free = -1};
    trie_reserve(&b, 1 + 256 + 1);
    trie_take(&b, 0, 0);  // the root is its own parent, so it is never free
    trie_place(&b, 0, pieces, 0, n_keys, 0);
    trie_reserve(&b, b.size + 256);
    free(b.next_free);
    free(b.prev_free);
    enc->trie = b.unit;
    free(pieces);
    return enc;
}

void unigram_encoder_free(UnigramEncoder *enc) {
    if (!enc) return;
    free(enc->trie);
    free(enc->score);
    free(enc);
}

#define SPACE_SYMBOL "\xe2\x96\x81"  // U+2581, what SentencePiece writes for a space

// SentencePiece's default normalization under the identity rule: leading and repeated spaces
// dropped, a space symbol in front and for every remaining space, trailing space symbols (also
// those of the input) dropped. Returns the length written to out (at most 3 + 3 * len).
static size_t normalize(const char *text, size_t len, char *out) {
    size_t i = 0, n = 0;
    while (i < len && text[i] == ' ') i++;
    if (i == len) return 0;
    memcpy(out, SPACE_SYMBOL, 3);
    n = 3;
    bool prev_space = true;
    for (; i < len; i++) {
        if (text[i] == ' ') {
            if (!prev_space) {
                memcpy(out + n, SPACE_SYMBOL, 3);
                n += 3;
            }
            prev_space = true;
        } else {
            out[n++] = text[i];
            prev_space = false;
        }
    }
    while (n >= 3 && memcmp(out + n - 3, SPACE_SYMBOL, 3) == 0) n -= 3;
    return n;
}

// The byte length of the UTF-8 character starting with byte c, as SentencePiece's OneCharLen.
static int char_len(uint8_t c) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]; }

bool unigram_encode(const UnigramEncoder *enc, const char *text, size_t len, SpmIds *out) {
    size_t bad;
    if (len > INT32_MAX / 4 || !utf8_valid(text, len, &bad)) return false;  // positions are int
    size_t cap = 3 + 3 * len;
    // One scratch block: the normalized text, then per end position (cap + 1) the best path's
    // score, its last piece's start and id.
    char *block = xmalloc(cap + 3 + (cap + 1) * (sizeof(float) + 2 * sizeof(int32_t)));
    char *norm = block;  // (cap) normalized text
    float *best = (float *)(block + ((cap + 3) & ~(size_t)3));  // (n + 1) best path score
    int32_t *from = (int32_t *)(best + cap + 1);                 // (n + 1) start of its last piece
    int32_t *id = from + cap + 1;                                // (n + 1) id of its last piece
    const int n = (int)normalize(text, len, norm);
    const TrieUnit *trie = enc->trie;
    for (int i = 0; i <= n; i++) {
        best[i] = 0;
        from[i] = -1;
    }
    for (int start = 0; start < n;) {
        const float here = best[start];
        int mblen = char_len((uint8_t)norm[start]);
        if (mblen > n - start) mblen = n - start;
        bool single = false;
        int32_t node = 0;
        for (int end = start; end < n;) {
            int32_t t = trie[node].base + (uint8_t)norm[end];
            if (trie[t].check != node) break;
            node = t;
            end++;
            int32_t v = trie[node].value;
            if (v < 0) continue;
            // SentencePiece adds in double (its score expression is a double) and compares the
            // sum with the stored float; so does this.
            double candidate = (double)enc->score[v] + (double)here;
            if (from[end] == -1 || candidate > (double)best[end]) {
                best[end] = (float)candidate;
                from[end] = start;
                id[end] = v;
            }
            if (end - start == mblen) single = true;
        }
        if (!single) {
            int end = start + mblen;
            float candidate = enc->unk_score + here;
            if (from[end] == -1 || candidate > best[end]) {
                best[end] = candidate;
                from[end] = start;
                id[end] = enc->unk_id;
            }
        }
        start += mblen;
    }
    // Back from the end: count the ids (an unknown character becomes its bytes), then write them.
    int count = 0;
    for (int end = n; end > 0; end = from[end])
        count += id[end] == enc->unk_id ? end - from[end] : 1;
    spm_ids_reserve(out, count);
    int k = count;
    for (int end = n; end > 0; end = from[end]) {
        if (id[end] == enc->unk_id)
            for (int j = end - 1; j >= from[end]; j--)
                out->ids[--k] = enc->byte_id[(uint8_t)norm[j]];
        else
            out->ids[--k] = id[end];
    }
    out->n = count;
    free(block);
    return true;
}
