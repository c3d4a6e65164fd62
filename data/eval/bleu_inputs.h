/* bleu_inputs.h: the hypotheses and references of one scoring run, assembled as the sacrebleu
 * command line assembles them (bleu_inputs.c): reference streams from one file each or from the
 * tab-separated columns of one file (--num-refs), systems from one file each or from the
 * tab-separated columns of standard input, the check that they line up, and the names systems
 * are reported under. A function that fails returns -1 after status_fail() (kernels/status.h)
 * left a message naming the file or line; the structures can then still be freed. */
#ifndef NMT_BLEU_INPUTS_H
#define NMT_BLEU_INPUTS_H

#include <stdbool.h>

#include "bleu_io.h"

/* The reference streams: stream k has a line for each of the n segments. */
typedef struct BleuRefs {
    BleuLines *files;    /* (nfiles) owned, the files as read */
    int nfiles;
    int nstreams;
    const char ***lines; /* (nstreams) each (n) lines pointing into files; lines owned, and the
                            (n) arrays too when columns */
    const char **names;  /* (nstreams) borrowed: the file each stream came from */
    long n;
    bool columns;        /* the streams are the tab-separated columns of one file */
} BleuRefs;

/* Reads npaths reference files, one stream each (paths borrowed, must outlive r). 0, or -1
 * (status_message() names the file and line). */
int bleu_refs_read(BleuRefs *r, const char *const *paths, int npaths);
/* Turns the one file read into num_refs streams: each line split at its first num_refs - 1 tabs
 * (the last reference keeps any further tab). 0, or -1 naming the first line with fewer fields. */
int bleu_refs_split_columns(BleuRefs *r, int num_refs);
void bleu_refs_free(BleuRefs *r);

/* The systems scored, in order. */
typedef struct BleuSystems {
    int n;
    char **names;       /* (n) owned, as printed */
    const char **files; /* (n) borrowed: where each came from, for messages */
    BleuLines *lines;   /* (n) owned */
    bool columns;       /* read from tab-separated columns (named "System 1", ...) */
} BleuSystems;

/* Reads the system in path (borrowed), named by its path. 0, or -1 if another system has that
 * name or the file cannot be read. */
int bleu_systems_add_file(BleuSystems *s, const char *path);
/* The systems of the tab-separated columns of in (a stream read by bleu_read_stream_lines, called
 * name in messages), as sacreBLEU reads them from stdin: the rstripped first line fixes the
 * number of columns; later lines are rstripped, and so are their fields. An empty stream is one
 * empty line. The lines of in are split in place (the caller still frees in). 0, or -1 naming the
 * first line with another number of fields. */
int bleu_systems_from_columns(BleuSystems *s, BleuLines *in, const char *name);
/* The names of the paired bootstrap test: "Baseline: FILE" for the first of several files;
 * "Baseline", "System 1", ... for columns. */
void bleu_systems_name_paired(BleuSystems *s);
/* 0, or -1 if a system has no line or not as many lines as the reference streams. */
int bleu_systems_check(const BleuSystems *s, const BleuRefs *r);
void bleu_systems_free(BleuSystems *s);

#endif
