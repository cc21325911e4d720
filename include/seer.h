/* seer.h — public C API of libseer: local Qwen3.5 multimodal inference on CPU and Vulkan.

   USAGE
     #include <seer.h>      link with `pkg-config --libs seer`
     Every fallible function returns an int status: SEER_OK (0) or a negative SEER_E* code.
     After a failure, seer_last_error() gives the calling thread's detailed message (file, key,
     offset, expected vs found); seer_strerror(code) gives the fixed text of a code.

   THREADING
     The error message is per thread. The log callback may be called from any thread and must be
     thread-safe. Handles (model, context) are not thread-safe: use one from one thread at a time.

   OWNERSHIP
     Whoever creates an object frees it with the matching _free; _free(NULL) does nothing.
     Inputs are borrowed for the duration of the call. A returned const char * stays valid until
     the next call on the same handle, or until the handle is freed. On failure, out-parameters
     are left untouched and no half-built object escapes.

   This header only grows: fields are appended to params structs, never reordered. */
#ifndef SEER_H
#define SEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SEER_BUILDING_LIB)
#define SEER_API __attribute__((visibility("default")))
#else
#define SEER_API
#endif

/* ---- errors ------------------------------------------------------------------------------ */
enum {
    SEER_OK = 0,
    SEER_EINVAL = -1,        /* invalid argument from the caller */
    SEER_ENOMEM = -2,        /* out of memory (host or device) */
    SEER_EIO = -3,           /* a file could not be opened, read, mapped or written */
    SEER_EFORMAT = -4,       /* a file is malformed, truncated or inconsistent */
    SEER_EUNSUPPORTED = -5,  /* valid input that seer does not support (dtype, architecture, op) */
    SEER_EDEVICE = -6,       /* the compute device failed (a VkResult, a lost device) */
    SEER_EDECODE = -7,       /* an image or video could not be decoded */
    SEER_ECANCELED = -8,     /* the operation was cancelled by the caller */
};

/* Fixed English text for a status code; never NULL. */
SEER_API const char *seer_strerror(int code);
/* The calling thread's message for its most recent failure ("" when none). */
SEER_API const char *seer_last_error(void);

/* ---- logging ----------------------------------------------------------------------------- */
typedef enum seer_log_level {
    SEER_LOG_QUIET = -1,  /* as a threshold: print nothing */
    SEER_LOG_ERROR = 0,
    SEER_LOG_WARN = 1,
    SEER_LOG_INFO = 2,
    SEER_LOG_DEBUG = 3,
    SEER_LOG_TRACE = 4,
} seer_log_level;

/* Receives one complete line (no trailing newline) tagged with its component ("gguf", "vulkan").
   Must be thread-safe. */
typedef void (*seer_log_fn)(seer_log_level level, const char *component, const char *msg,
                            void *user_data);

/* Messages at or below `level` are delivered; the default is SEER_LOG_WARN. */
SEER_API void seer_set_log_level(seer_log_level level);
/* NULL restores the default, which writes to stderr (never stdout). */
SEER_API void seer_set_log_callback(seer_log_fn fn, void *user_data);

/* ---- version ----------------------------------------------------------------------------- */
SEER_API const char *seer_version(void);

/* ---- memory ------------------------------------------------------------------------------ */
/* Frees memory that the API documents as "release with seer_free". NULL is fine. */
SEER_API void seer_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* SEER_H */
