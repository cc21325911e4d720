/* Tests core/error.c and core/log.c: codes' text, per-thread last error, level filtering and the
   callback receiving the component tag. */
#include <pthread.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "tap.h"

static int calls, last_level;
static char last_comp[32], last_msg[256];

static void cb(seer_log_level level, const char *component, const char *msg, void *user)
{
    (void)user;
    calls++;
    last_level = level;
    snprintf(last_comp, sizeof last_comp, "%s", component);
    snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static void *other_thread(void *arg)
{
    (void)arg;
    seer_err(SEER_EIO, "from another thread");
    return NULL;
}

int main(void)
{
    plan_no_plan();
    ok(!strcmp(seer_strerror(SEER_OK), "success") && strcmp(seer_strerror(SEER_EFORMAT), seer_strerror(SEER_EIO)),
       "strerror gives distinct texts");
    ok(strlen(seer_strerror(-1000)) > 0, "unknown code still has text");
    ok(seer_err(SEER_EFORMAT, "%s: bad magic 0x%x", "x.gguf", 0x1234) == SEER_EFORMAT, "seer_err returns its code");
    ok(!strcmp(seer_last_error(), "x.gguf: bad magic 0x1234"), "message formatted: %s", seer_last_error());
    pthread_t th;
    pthread_create(&th, NULL, other_thread, NULL);
    pthread_join(th, NULL);
    ok(!strcmp(seer_last_error(), "x.gguf: bad magic 0x1234"), "another thread's error does not leak here");
    seer_set_log_callback(cb, NULL);
    seer_set_log_level(SEER_LOG_WARN);
    LOG_INFO("gguf", "hidden %d", 1);
    ok(calls == 0, "info is filtered at level warn");
    LOG_WARN("vulkan", "shown %d", 2);
    ok(calls == 1 && last_level == SEER_LOG_WARN && !strcmp(last_comp, "vulkan") && !strcmp(last_msg, "shown 2"),
       "warn delivered with component and message");
    seer_set_log_level(SEER_LOG_QUIET);
    LOG_ERROR("x", "quiet");
    ok(calls == 1, "quiet drops errors too");
    seer_set_log_callback(NULL, NULL);
    ok(strlen(seer_version()) > 0, "version string: %s", seer_version());
    return done_testing();
}
