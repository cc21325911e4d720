/* log.h — internal logging: seer_log(level, component, fmt, ...) goes to the user's callback or
   to stderr. Components are short tags ("gguf", "vulkan", "cpu") so every line names its source. */
#ifndef SEER_CORE_LOG_H
#define SEER_CORE_LOG_H

#include "core/error.h"

void seer_log(seer_log_level level, const char *component, const char *fmt, ...) SEER_PRINTF(3, 4);
/* True when a message at `level` would be delivered; guards expensive formatting. */
int seer_log_enabled(seer_log_level level);

#define LOG_ERROR(comp, ...) seer_log(SEER_LOG_ERROR, comp, __VA_ARGS__)
#define LOG_WARN(comp, ...) seer_log(SEER_LOG_WARN, comp, __VA_ARGS__)
#define LOG_INFO(comp, ...) seer_log(SEER_LOG_INFO, comp, __VA_ARGS__)
#define LOG_DEBUG(comp, ...) seer_log(SEER_LOG_DEBUG, comp, __VA_ARGS__)

#endif
