/* bleu_io.h: reading hypothesis and reference files the way sacreBLEU does (bleu_io.c). A reader
 * that fails returns -1 after status_fail() (kernels/status.h) left a message naming the file,
 * the line and the problem. */
#ifndef NMT_BLEU_IO_H
#define NMT_BLEU_IO_H

#include <stdio.h>

typedef struct BleuLines {
    char **lines; /* (n) owned, UTF-8, each rstripped like Python's str.rstrip() */
    long n;
} BleuLines;

/* Reads a text file (gzip if the name ends in .gz) as sacreBLEU does: UTF-8, split at '\n'
 * only, each line rstripped. 0, or -1 with the reason in status_message() (*out empty). */
int bleu_read_lines(const char *path, BleuLines *out);
/* Reads all of a stream as Python's text-mode stdin does (universal newlines: \n, \r\n, \r),
 * without stripping; name is what messages call it. 0, or -1 (status_message()). */
int bleu_read_stream_lines(FILE *f, const char *name, BleuLines *out);
/* Checks that line lineno of `name` (len bytes at s) is text Python would read: valid UTF-8
 * without NUL bytes. 0, or -1 with a message naming name and lineno (status_message()). */
int bleu_check_line(const char *name, long lineno, const char *s, size_t len);
/* Python's str.rstrip() in place; returns s. */
char *bleu_rstrip(char *s);
void bleu_lines_free(BleuLines *l);

#endif
