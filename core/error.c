/* error.c — status codes' fixed text and the per-thread last-error message. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *seer_strerror(int code)
{
    switch (code) {
    case SEER_OK: return "success";
    case SEER_EINVAL: return "invalid argument";
    case SEER_ENOMEM: return "out of memory";
    case SEER_EIO: return "input/output error";
    case SEER_EFORMAT: return "malformed file";
    case SEER_EUNSUPPORTED: return "not supported";
    case SEER_EDEVICE: return "device error";
    case SEER_EDECODE: return "decoding failed";
    case SEER_ECANCELED: return "cancelled";
    default: return "unknown error";
    }
}

const char *seer_last_error(void) { return last_error; }

void seer_err_clear(void) { last_error[0] = '\0'; }

int seer_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *seer_version(void) { return SEER_VERSION; }
