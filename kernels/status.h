/* status.h: the error channel of nmt_data's recoverable boundaries (readers, token cache loader,
 * SentencePiece shim). A function that can fail on bad input returns a non-zero status and leaves
 * a message naming the file, line or key in a thread-local buffer, read with data_last_error().
 * The message stays valid until the next failure on the same thread. */
#ifndef NMT_DATA_STATUS_H
#define NMT_DATA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Formats the message into this thread's buffer and returns -1 (so `return data_fail(...)`). */
int data_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *data_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
