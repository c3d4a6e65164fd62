/* status.c: the thread-local error message of status.h. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

int data_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
}

const char *data_last_error(void) { return last_error; }
