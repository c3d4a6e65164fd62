/* atomic.c: temp file + fsync + rename (atomic.h), recoverable and fatal forms, and the removal
 * of temporary files a process leaves when it ends before committing them. */
#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "paths.h"
#include "status.h"

/* ---- the temporaries open in this process ----
 * A fixed table, so that a signal handler can walk it without allocating or locking. Writers
 * (open, commit, abort) take a mutex among themselves; the handler, which may interrupt a writer
 * on any thread, reads a slot as a seqlock: seq is odd while the slot changes, and a path is only
 * removed if seq was even and unchanged around the copy of it. A slot records the process that
 * filled it, so a forked child never removes its parent's files. A slot is filled before the
 * file is created and cleared after it is renamed or removed, so every moment the file exists
 * is covered. */
enum { MAX_OPEN_TEMPS = 16 };

typedef struct TempSlot {
    unsigned seq;  // odd while being changed
    bool open;
    pid_t owner;
    char path[PATH_MAX];
} TempSlot;

static TempSlot temps[MAX_OPEN_TEMPS];
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cleanup_once = PTHREAD_ONCE_INIT;

/* Removes this process's open temporaries; async-signal-safe (getpid, unlink, atomics). */
static void remove_open_temps(void) {
    pid_t self = getpid();
    for (int i = 0; i < MAX_OPEN_TEMPS; i++) {
        TempSlot *s = &temps[i];
        unsigned seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (seq & 1 || !__atomic_load_n(&s->open, __ATOMIC_RELAXED)) continue;
        char path[PATH_MAX];
        for (size_t k = 0; k < sizeof path; k++)
            if (!(path[k] = __atomic_load_n(&s->path[k], __ATOMIC_RELAXED))) break;
        path[sizeof path - 1] = '\0';
        pid_t owner = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq && owner == self) unlink(path);
    }
}

/* The signals whose default action ends the process and that a user or the system sends to stop
 * one; only those still at their default action are caught (an ignored signal stays ignored, a
 * handler installed before, such as training's graceful stop, stays in place). */
static const int fatal_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGXFSZ};

/* Removes the temporaries, then dies of the signal as it would have without this handler. */
static void on_fatal_signal(int sig) {
    remove_open_temps();
    signal(sig, SIG_DFL);
    raise(sig);  // delivered when the handler returns (the signal is blocked while it runs)
}

static void install_cleanup(void) {
    atexit(remove_open_temps);  // FATAL, CHECK and every other exit() with a temporary open
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa = {0};
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);  // no other handler runs in between
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

/* Changes slot i under the seqlock: open with path (NULL: closed). Call with temps_lock held. */
static void slot_set(int i, const char *path) {
    TempSlot *s = &temps[i];
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&s->open, path != NULL, __ATOMIC_RELAXED);
    if (path) {
        __atomic_store_n(&s->owner, getpid(), __ATOMIC_RELAXED);
        for (size_t k = 0, n = strlen(path); k <= n; k++)
            __atomic_store_n(&s->path[k], path[k], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* Records tmp_path (shorter than PATH_MAX, as every path open() takes) until temp_forget. */
static void temp_remember(const char *tmp_path) {
    pthread_once(&cleanup_once, install_cleanup);
    pthread_mutex_lock(&temps_lock);
    int i = 0;
    while (i < MAX_OPEN_TEMPS && temps[i].open) i++;
    CHECK(i < MAX_OPEN_TEMPS, "more than %d atomic files open at once (opening '%s')",
          MAX_OPEN_TEMPS, tmp_path);
    slot_set(i, tmp_path);
    pthread_mutex_unlock(&temps_lock);
}

static void temp_forget(const char *tmp_path) {
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < MAX_OPEN_TEMPS; i++)
        if (temps[i].open && !strcmp(temps[i].path, tmp_path)) {
            slot_set(i, NULL);
            break;
        }
    pthread_mutex_unlock(&temps_lock);
}

/* ---- atomic files ---- */

static void atomic_release(AtomicFile *a) {
    if (a->tmp_path) temp_forget(a->tmp_path);
    free(a->path);
    free(a->tmp_path);
    *a = (AtomicFile){0};
}

void atomic_abort(AtomicFile *a) {
    int err = errno;
    if (a->f) fclose(a->f);
    if (a->tmp_path) unlink(a->tmp_path);
    atomic_release(a);
    errno = err;
}

/* Fails with the message and errno of the failing call, leaving no temporary file. */
static int fail_and_abort(AtomicFile *a, const char *msg) {
    int err = errno;
    status_fail("%s", msg);
    if (a->f) fclose(a->f);
    a->f = NULL;
    atomic_abort(a);
    errno = err;
    return -1;
}

int atomic_try_open(AtomicFile *a, const char *path) {
    a->path = xstrdup(path);
    size_t n = strlen(path) + 32;
    a->tmp_path = xmalloc(n);
    snprintf(a->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    a->f = NULL;
    errno = ENAMETOOLONG;  // as open() refuses a name this long (the table holds none longer)
    if (strlen(a->tmp_path) < PATH_MAX) {
        temp_remember(a->tmp_path);  // before the file exists, so a signal never misses it
        a->f = fopen(a->tmp_path, "wb");
    }
    if (a->f) return 0;
    int err = errno;
    status_fail("cannot open '%s' (mode wb): %s", a->tmp_path, strerror(err));
    atomic_release(a);
    errno = err;
    return -1;
}

int atomic_try_write(AtomicFile *a, const void *data, size_t bytes) {
    if (!bytes || fwrite(data, 1, bytes, a->f) == bytes) return 0;
    char msg[1024];
    snprintf(msg, sizeof msg, "cannot write '%s': %s", a->tmp_path, strerror(errno));
    return fail_and_abort(a, msg);
}

static void fsync_directory_of(const char *path) {
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';  // keep "/" for files in the root
    else
        strcpy(dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);  // best effort: some file systems refuse fsync on directories
        close(fd);
    }
    free(dir);
}

int atomic_try_commit(AtomicFile *a) {
    char msg[1024];
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0) {
        if (!errno) errno = EIO;  // ferror without a failing flush
        snprintf(msg, sizeof msg, "cannot flush '%s' to disk: %s", a->tmp_path, strerror(errno));
        return fail_and_abort(a, msg);
    }
    FILE *f = a->f;
    a->f = NULL;
    if (fclose(f) != 0) {
        snprintf(msg, sizeof msg, "cannot close '%s': %s", a->tmp_path, strerror(errno));
        return fail_and_abort(a, msg);
    }
    if (rename(a->tmp_path, a->path) != 0) {
        snprintf(msg, sizeof msg, "cannot rename '%s' to '%s': %s", a->tmp_path, a->path,
                 strerror(errno));
        return fail_and_abort(a, msg);
    }
    fsync_directory_of(a->path);
    atomic_release(a);
    return 0;
}

int atomic_try_write_file(const char *path, const void *data, size_t bytes) {
    AtomicFile a;
    if (atomic_try_open(&a, path) || atomic_try_write(&a, data, bytes)) return -1;
    return atomic_try_commit(&a);
}

void atomic_open(AtomicFile *a, const char *path) {
    if (atomic_try_open(a, path)) FATAL("%s", status_message());
}

void atomic_write(AtomicFile *a, const void *data, size_t bytes) {
    if (atomic_try_write(a, data, bytes)) FATAL("%s", status_message());
}

void atomic_commit(AtomicFile *a) {
    if (atomic_try_commit(a)) FATAL("%s", status_message());
}

void atomic_write_file(const char *path, const void *data, size_t bytes) {
    if (atomic_try_write_file(path, data, bytes)) FATAL("%s", status_message());
}

void atomic_remove(const char *path) {
    if (remove(path) != 0 && errno != ENOENT) FATAL("cannot remove '%s': %s", path, strerror(errno));
    fsync_directory_of(path);
}

/* ---- temporaries of processes that are gone ---- */

/* The process id in a name "<file>.tmp.<pid>", or 0 for any other name. */
static long temp_owner(const char *name) {
    const char *tmp = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp.")) tmp = p;
    if (!tmp || tmp == name || tmp[5] < '0' || tmp[5] > '9') return 0;
    char *end;
    errno = 0;
    long pid = strtol(tmp + 5, &end, 10);
    return *end || errno || pid > INT_MAX ? 0 : pid;
}

int atomic_remove_stale(const char *dir, const char *who) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = temp_owner(e->d_name);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;  // alive (EPERM: someone's)
        char *path = path_join(dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) == 0) {
            fprintf(stderr, "%s removed %s, a temporary file of process %ld, which no longer exists\n",
                    who, path, pid);
            removed++;
        }
        free(path);
    }
    closedir(d);
    return removed;
}
