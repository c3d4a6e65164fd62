/* test_sha256.c: SHA-256 (kernels/sha256.h) against the FIPS 180-4 / NIST example digests, across
 * the one- and two-block padding boundaries and for a million bytes. */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "test_util.h"

static void expect_digest(const void *data, size_t n, const char *want, const char *what) {
    char hex[65];
    sha256_hex(data, n, hex);
    EXPECT(!strcmp(hex, want), "%s: %s, want %s", what, hex, want);
}

int main(void) {
    expect_digest("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty");
    expect_digest("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // 56 bytes: two blocks
    expect_digest(m448, strlen(m448),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "448 bits");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                       "klmnopqrlmnopqrsmnopqrstnopqrstu";  // 112 bytes
    expect_digest(m896, strlen(m896),
                  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "896 bits");
    size_t n = 1000000;
    char *a = malloc(n);
    memset(a, 'a', n);
    expect_digest(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
                  "a million 'a'");
    free(a);
    return test_finish();
}
