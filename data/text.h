/* text.h: reading raw corpora. A TextReader yields the records of one file: its lines for plain
 * text or gzip (zlib reads both through gzFile, so a ".gz" name is not required), or the contents
 * of its <seg ...>...</seg> elements, entity-unescaped, for WMT SGM/XML test sets (chosen by the
 * name: *.sgm, *.xml, optionally followed by .gz). A UTF-8 byte order mark at the start of a
 * file is skipped; line ends are "\n" (a "\r" before it is left to the whitespace normalizer).
 * A ParallelReader walks a list of (source, target) corpora as one stream of pairs and fails
 * when the two files of a corpus hold different numbers of records.
 * Errors (unreadable file, truncated or corrupt gzip, unterminated, nested or broken <seg> tags,
 * mismatched counts) return -1 with a message naming the file (and line) in status_message(). */
#ifndef NMT_DATA_TEXT_H
#define NMT_DATA_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <zlib.h>

typedef struct CorpusPair {
    const char *src, *tgt;  // file paths (plain text, .gz or WMT .sgm); line i translates line i
} CorpusPair;

typedef struct CorpusList {
    const CorpusPair *items;  // (count)
    int count;
} CorpusList;

typedef struct TextReader {
    char *path;
    gzFile gz;
    bool sgm;          // records are <seg> contents rather than lines
    bool at_eof;       // gzread has returned everything
    long line;         // physical lines consumed so far
    long record_line;  // 1-based line where the last record starts
    long records;      // records returned so far
    char *chunk;       // (TEXT_CHUNK) bytes from gzread
    size_t chunk_len, chunk_pos;
    char *text;  // the current physical line (line mode) or SGM window, NUL-terminated
    size_t text_len, text_cap;
    size_t scan;   // SGM: where to look for the next <seg> in text
    char *record;  // SGM: the unescaped content of the last <seg>
    size_t record_cap;
} TextReader;

int text_open(TextReader *r, const char *path);  // 0, or -1 if the file cannot be opened
/* 1 and the record in *rec (NUL-terminated, writable in place, valid until the next call),
 * 0 at the end, -1 on error. */
int text_next(TextReader *r, char **rec, size_t *len);
void text_close(TextReader *r);

typedef struct ParallelReader {
    const CorpusPair *corpora;
    int ncorpora;
    int corpus;  // index of the corpus being read (ncorpora when done)
    TextReader src, tgt;
    long pairs;  // pairs returned so far over all corpora
} ParallelReader;

int parallel_open(ParallelReader *p, const CorpusPair *corpora, int ncorpora);
/* 1 with the next pair, 0 after the last pair of the last corpus, -1 on error. The current files
 * and line numbers are p->src.path / p->src.record_line (and tgt). */
int parallel_next(ParallelReader *p, char **src, size_t *src_len, char **tgt, size_t *tgt_len);
void parallel_close(ParallelReader *p);

#endif
