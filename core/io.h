/* io.h — the small file interface every model-file reader goes through: map a file read-only,
   read a small file whole, ask a path's size or kind. All of it funnels into four system calls
   (open, fstat, mmap, read), each of which a test can make fail on the Nth call with
   io_fail_after(), so the readers' error paths are testable (sqlite's aSyscall idea).
   Errors set seer_last_error() to "PATH: problem" and return SEER_EIO (or SEER_ENOMEM). */
#ifndef SEER_CORE_IO_H
#define SEER_CORE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A read-only mapping of a whole regular file. `data` is NULL when the file is empty. */
struct io_map {
    const uint8_t *data; /* first byte of the file; the pages are PROT_READ, never write */
    size_t size;         /* bytes in the file */
};

/* Maps `path` read-only (private, shared pages). On failure *m is untouched. Directories and
   non-regular files are refused (SEER_EIO, "is a directory" / "is not a regular file"). */
int io_map(const char *path, struct io_map *m);
/* Unmaps and zeroes *m; a zeroed map is fine. */
void io_unmap(struct io_map *m);

/* Reads a whole regular file into a NUL-terminated buffer (release with seer_free). Files larger
   than max_bytes are refused with SEER_EFORMAT ("larger than N bytes"): callers read only small
   text files (config.json, index.json) this way. On failure the outputs are untouched. */
int io_read_file(const char *path, size_t max_bytes, char **data, size_t *size);

/* Size of a regular file in bytes. */
int io_file_size(const char *path, uint64_t *size);

/* Kind of a path without failing: 0 missing/unreadable, 1 regular file, 2 directory, 3 other. */
enum { IO_MISSING = 0, IO_FILE = 1, IO_DIR = 2, IO_OTHER = 3 };
int io_path_kind(const char *path);

/* Test hook: the Nth system call from now among open/fstat/mmap/read (1 = the next) fails with
   EIO, as if the disk had failed; 0 disables. Not thread-safe (tests only). io_path_kind does not
   count. */
void io_fail_after(long n);

#endif
