/* sha256.h: SHA-256 (FIPS 180-4) of a byte buffer, for the fingerprint of the SentencePiece model
 * an export carries. */
#ifndef NMT_SHA256_H
#define NMT_SHA256_H

#include <stddef.h>

/* The digest of data[0 .. n) as 64 lower-case hex digits and a NUL into hex. */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
