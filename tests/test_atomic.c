/* test_atomic.c: atomic files (kernels/atomic.h): a committed file holds exactly what was
 * written and no temporary is left; the recoverable form fails with a message naming the path
 * and errno set, leaving no temporary file, where the directory cannot take the file; an abort
 * keeps the old file. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "status.h"
#include "test_files.h"
#include "test_util.h"

/* Entries of dir other than . and .. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_commit(const char *dir) {
    const char *path = test_path(dir, "out.bin");
    EXPECT(atomic_try_write_file(path, "hello", 5) == 0, "write: %s", status_message());
    size_t len = 0;
    char *back = test_read_file(path, &len);
    EXPECT(back && len == 5 && !memcmp(back, "hello", 5), "the file holds what was written");
    free(back);
    EXPECT(entries(dir) == 1, "one file and no temporary: %d entries", entries(dir));

    AtomicFile a;
    EXPECT(atomic_try_open(&a, path) == 0, "open: %s", status_message());
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    EXPECT(a.tmp_path && !strcmp(a.tmp_path, tmp) && access(tmp, F_OK) == 0,
           "the temporary is <path>.tmp.<pid>");
    fprintf(a.f, "%s", "replaced");
    atomic_abort(&a);
    back = test_read_file(path, &len);
    EXPECT(back && len == 5 && access(tmp, F_OK) != 0, "abort keeps the old file, drops the temp");
    free(back);

    EXPECT(atomic_try_open(&a, path) == 0, "open: %s", status_message());
    fprintf(a.f, "%s", "replaced");
    EXPECT(atomic_try_commit(&a) == 0, "commit: %s", status_message());
    back = test_read_file(path, &len);
    EXPECT(back && len == 8 && !memcmp(back, "replaced", 8), "commit replaces the file");
    free(back);
    EXPECT(entries(dir) == 1, "still no temporary: %d entries", entries(dir));
}

static void test_unwritable(const char *dir) {
    /* A directory path that runs through a plain file: no user (root included) can create it. */
    const char *plain = test_path(dir, "plain");
    test_write_text(plain, "x");
    const char *under = test_path(plain, "out.bin");
    int before = entries(dir);
    errno = 0;
    EXPECT(atomic_try_write_file(under, "data", 4) == -1, "writing under a plain file failed");
    EXPECT(errno == ENOTDIR, "errno is ENOTDIR, got %d", errno);
    EXPECT(strstr(status_message(), under) != NULL, "the message names the path: [%s]",
           status_message());
    EXPECT(entries(dir) == before, "no temporary file left (%d entries, was %d)", entries(dir),
           before);

    const char *missing = test_path(dir, "missing-dir/out.bin");
    EXPECT(atomic_try_write_file(missing, "data", 4) == -1 && errno == ENOENT,
           "a missing directory fails with ENOENT (errno %d)", errno);
    EXPECT(entries(dir) == before, "nothing was created (%d entries)", entries(dir));
}

int main(void) {
    char *dir = test_tempdir();
    test_commit(dir);
    test_unwritable(dir);
    test_remove_tree(dir);
    free(dir);
    return test_finish();
}
