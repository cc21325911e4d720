/* log.c — the log sink. The level and callback are process-wide; they are read with relaxed
   atomics because a logging thread may race a caller changing them, and either value is fine. */
#include "core/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic int log_level = SEER_LOG_WARN;
static seer_log_fn _Atomic log_fn;
static void *_Atomic log_user;

void seer_set_log_level(seer_log_level level) { atomic_store(&log_level, (int)level); }

void seer_set_log_callback(seer_log_fn fn, void *user_data)
{
    atomic_store(&log_user, user_data);
    atomic_store(&log_fn, fn);
}

int seer_log_enabled(seer_log_level level) { return (int)level <= atomic_load(&log_level); }

void seer_log(seer_log_level level, const char *component, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
    if (!seer_log_enabled(level) || level < SEER_LOG_ERROR)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    seer_log_fn fn = atomic_load(&log_fn);
    if (fn) {
        fn(level, component, msg, atomic_load(&log_user));
        return;
    }
    /* One fprintf per line so lines from different threads do not interleave mid-line. */
    fprintf(stderr, "seer: %s: %s: %s\n", names[level > SEER_LOG_TRACE ? SEER_LOG_TRACE : level],
            component, msg);
}
