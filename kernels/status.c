/* status.c: the thread-local error message of status.h. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char message[4096];  // room for messages naming two long paths

int status_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return -1;
}

const char *status_message(void) { return message; }
