/* io.h — the small file interface every model-file reader goes through: map a file read-only,
   read a small file whole, ask a path's size or kind. All of it funnels into four system calls
   (open, fstat, mmap, read), each of which a test can make fail on the Nth call with
   io_fail_after(), so the readers' error paths are testable (sqlite's aSyscall idea).
   Errors set seer_last_error() to "PATH: problem" and return SEER_EIO (or SEER_ENOMEM).
   Every live mapping is also listed in a table, so a file that shrinks or changes while mapped is
   told apart from a bug: io_map_check at well-defined points, io_fault_describe from a SIGBUS
   handler (docs/RELIABILITY.md). */
#ifndef SEER_CORE_IO_H
#define SEER_CORE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A read-only mapping of a whole regular file. `data` is NULL when the file is empty. */
struct io_map {
    const uint8_t *data; /* first byte of the file; the pages are PROT_READ, never write */
    size_t size;         /* bytes in the file */
    unsigned watch;      /* 1 + its entry in the table of live mappings; 0 = not listed (an empty
                            file, or more than IO_WATCH_MAX mappings at once) */
};

/* Live mappings the table can list at once (model shards, one input image each); more are still
   mapped, only not checked or described. */
#define IO_WATCH_MAX 256

/* Maps `path` read-only (private, shared pages). On failure *m is untouched. Directories and
   non-regular files are refused (SEER_EIO, "is a directory" / "is not a regular file").
   A file on a network file system (NFS, SMB/CIFS, Ceph, 9P, AFS, FUSE) is read whole into private
   memory instead (copy-on-load): a server failing mid-run cannot raise SIGBUS then, a read error
   is reported now naming the file, and so is a file that changed while it was read. Such a copy
   is not listed (watch 0): later changes to the file cannot reach it. */
int io_map(const char *path, struct io_map *m);
/* Unmaps and zeroes *m; a zeroed map is fine. */
void io_unmap(struct io_map *m);

/* Whether the file behind m still has the size and modification time it had when it was mapped.
   A file that shrank makes the lost pages raise SIGBUS when read; one rewritten in place changes
   the bytes under the mapping. SEER_OK, or SEER_EIO with "PATH: the file changed size while in use
   (was N bytes, now M)" or "PATH: the file was modified while in use (same size, new modification
   time)". An unlisted map is SEER_OK. */
int io_map_check(const struct io_map *m);
/* io_map_check on every live mapping of the process, the first change reported. Called where a
   model has finished loading (its bytes have been copied or checked) and by the CLI after a
   generation, so an answer computed from changed weights is not reported as a success. */
int io_check_all(void);
/* Drops this process's pages of [p, p + n) when the range lies in a watched file mapping, after its
   bytes were copied elsewhere (the CPU's weight copies): the process no longer counts them in its
   resident memory, the page cache keeps them while memory allows, and a later read faults them
   in again from the file. A no-op for any other memory (a copy read from a network file system). */
void io_release(const void *p, size_t n);

/* For a SIGBUS handler (the library installs none: process signals belong to the program).
   When addr lies in a live mapping, writes "PATH: the file changed size while in use (was N bytes,
   now M)" — or, when the size did not change, "PATH: could not be read at byte K of the mapped
   file (N bytes): an I/O error under the mapping" — plus a newline into buf (NUL-terminated,
   truncated to size) and returns its length; else returns 0.
   Async-signal-safe: only atomic loads, fstat and plain memory writes — no locks, no malloc,
   no stdio. */
size_t io_fault_describe(const void *addr, char *buf, size_t size);

/* Reads a whole regular file into a NUL-terminated buffer (release with seer_free). Files larger
   than max_bytes are refused with SEER_EFORMAT ("larger than N bytes"): callers read only small
   text files (config.json, index.json) this way. On failure the outputs are untouched. */
int io_read_file(const char *path, size_t max_bytes, char **data, size_t *size);

/* Size of a regular file in bytes. */
int io_file_size(const char *path, uint64_t *size);

/* Kind of a path without failing: 0 missing/unreadable, 1 regular file, 2 directory, 3 other. */
enum { IO_MISSING = 0, IO_FILE = 1, IO_DIR = 2, IO_OTHER = 3 };
int io_path_kind(const char *path);

/* Test hook: copy-on-load for every file, as if all were on a network file system (false: only
   those that are). Not thread-safe (tests only). */
void io_copy_on_load_always(bool on);

/* Test hook: the Nth system call from now among open/fstat/mmap/read (1 = the next) fails with
   EIO, as if the disk had failed; 0 disables. Not thread-safe (tests only). io_path_kind does not
   count. */
void io_fail_after(long n);

#endif
