/* error.h — setting the per-thread last-error message (seer_last_error) where a problem is found.
   seer_err() formats the message, stores it and returns the code, so callers write
       return seer_err(SEER_EFORMAT, "%s: tensor '%s' ends past the file (offset %zu)", path, n, off);
   The message is set once, where the problem is found; callers higher up pass the code through. */
#ifndef SEER_CORE_ERROR_H
#define SEER_CORE_ERROR_H

#include "seer.h"

#if defined(__GNUC__)
#define SEER_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SEER_PRINTF(a, b)
#endif

/* Stores the formatted message as this thread's last error and returns `code`. */
int seer_err(int code, const char *fmt, ...) SEER_PRINTF(2, 3);
/* Clears this thread's last error. */
void seer_err_clear(void);

#endif
