/* io.c — read-only file mapping and whole-file reads (see io.h). Every system call goes through
   one of the sys_* wrappers below, which consult the fault-injection countdown first, so tests
   can fail the Nth open/fstat/mmap/read (io_fail_after). */
#define _POSIX_C_SOURCE 200809L
#include "core/io.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"

/* ---- system calls with fault injection ---------------------------------------------------- */

static long fail_countdown; /* 0: never; n: the nth call from now fails */

void io_fail_after(long n) { fail_countdown = n; }

static bool inject(void)
{
    if (fail_countdown <= 0 || --fail_countdown != 0)
        return false;
    errno = EIO;
    return true;
}

static int sys_open(const char *path) { return inject() ? -1 : open(path, O_RDONLY | O_CLOEXEC); }
static int sys_fstat(int fd, struct stat *st) { return inject() ? -1 : fstat(fd, st); }
static void *sys_mmap(size_t n, int fd)
{
    return inject() ? MAP_FAILED : mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
}
static ssize_t sys_read(int fd, void *buf, size_t n) { return inject() ? -1 : read(fd, buf, n); }

/* ---- helpers ------------------------------------------------------------------------------- */

/* Opens path and checks it is a regular file whose size fits size_t. */
static int open_regular(const char *path, int *fd_out, size_t *size_out)
{
    int fd = sys_open(path);
    if (fd < 0)
        return seer_err(SEER_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (sys_fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return seer_err(SEER_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return seer_err(SEER_EIO, "%s: is a directory, expected a file", path);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return seer_err(SEER_EIO, "%s: is not a regular file", path);
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return seer_err(SEER_EIO, "%s: file too large to map on this system", path);
    }
    *fd_out = fd;
    *size_out = (size_t)st.st_size;
    return SEER_OK;
}

/* ---- public -------------------------------------------------------------------------------- */

int io_map(const char *path, struct io_map *m)
{
    int fd;
    size_t size;
    int rc = open_regular(path, &fd, &size);
    if (rc != SEER_OK)
        return rc;
    void *p = NULL;
    if (size > 0) { /* mmap of length 0 is an error; an empty file maps to data = NULL */
        p = sys_mmap(size, fd);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return seer_err(SEER_EIO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
        }
    }
    close(fd); /* the mapping keeps the file referenced */
    m->data = p;
    m->size = size;
    return SEER_OK;
}

void io_unmap(struct io_map *m)
{
    if (m->data)
        munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

int io_read_file(const char *path, size_t max_bytes, char **data, size_t *size)
{
    int fd;
    size_t n;
    int rc = open_regular(path, &fd, &n);
    if (rc != SEER_OK)
        return rc;
    if (n > max_bytes) {
        close(fd);
        return seer_err(SEER_EFORMAT, "%s: file is larger than %zu bytes (%zu)", path, max_bytes, n);
    }
    char *buf = seer_malloc(n + 1);
    if (!buf) {
        close(fd);
        return seer_err(SEER_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = sys_read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* 0: the file shrank under us */
            int e = r < 0 ? errno : 0;
            close(fd);
            seer_free(buf);
            return seer_err(SEER_EIO, "%s: read failed at byte %zu: %s", path, got,
                            e ? strerror(e) : "unexpected end of file");
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return SEER_OK;
}

int io_file_size(const char *path, uint64_t *size)
{
    int fd;
    size_t n;
    int rc = open_regular(path, &fd, &n);
    if (rc != SEER_OK)
        return rc;
    close(fd);
    *size = n;
    return SEER_OK;
}

int io_path_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return IO_MISSING;
    if (S_ISREG(st.st_mode))
        return IO_FILE;
    if (S_ISDIR(st.st_mode))
        return IO_DIR;
    return IO_OTHER;
}
