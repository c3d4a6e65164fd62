/* status.h: the one channel for recoverable errors (bad input a caller can report or work
 * around: corpora, configs, checkpoints, flags, model files). A function that can fail returns a
 * failure value (-1, false or NULL, as its header says) after status_fail() has left a message
 * naming the file, line or key and what was expected in a thread-local buffer; the caller reads
 * it with status_message(). It stays valid until the next failure on the same thread. What no
 * caller can recover from goes to CHECK/FATAL (check.h). */
#ifndef NMT_STATUS_H
#define NMT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Formats the message into this thread's buffer and returns -1 (so `return status_fail(...)`). */
int status_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *status_message(void);

#ifdef __cplusplus
}
#endif

#endif
