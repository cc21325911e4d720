/* io.c — read-only file mapping and whole-file reads (see io.h). Every system call goes through
   one of the sys_* wrappers below, which consult the fault-injection countdown first, so tests
   can fail the Nth open/fstat/mmap/read (io_fail_after). Each live mapping is listed in a table
   with its still-open descriptor, size and modification time (io_map_check, io_fault_describe).
   Divisions: system calls with fault injection; the table of live mappings; helpers; public. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, fstatfs; implies POSIX.1-2008 */
#include "core/io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "core/error.h"
#include "core/log.h"
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

/* Reads n bytes into buf, retrying interrupted reads; returns how many it got, n unless a read
   failed (*err its errno) or the file ended first (*err 0). */
static size_t read_full(int fd, void *buf, size_t n, int *err)
{
    size_t got = 0;
    *err = 0;
    while (got < n) {
        ssize_t r = sys_read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *err = r < 0 ? errno : 0;
            break;
        }
        got += (size_t)r;
    }
    return got;
}

/* ---- the table of live mappings ----------------------------------------------------------- */

/* One entry per live mapping. A SIGBUS handler may read an entry at any moment, in any thread, so
   an entry is published by storing `base` last (release) and withdrawn by clearing `base` first;
   readers load `base` (acquire) before anything else. Taking and returning entries is under
   watch_lock, which the signal handler never takes. The descriptor stays open while mapped: fstat
   on it sees the mapped file itself, even after the path is renamed over or removed. */
struct watch {
    _Atomic(const uint8_t *) base;
    size_t size;
    int fd;
    struct timespec mtime;
    char path[1024]; /* truncated (with "...") when longer: only ever printed */
};
static struct watch watches[IO_WATCH_MAX];
static bool watch_used[IO_WATCH_MAX];
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Lists a new mapping; returns 1 + its entry, or 0 when the table is full (then the caller closes
   fd: the mapping works, it is only not checked). */
static unsigned watch_add(const char *path, const uint8_t *base, size_t size, int fd, struct timespec mtime)
{
    unsigned got = 0;
    pthread_mutex_lock(&watch_lock);
    for (unsigned i = 0; i < IO_WATCH_MAX && !got; i++)
        if (!watch_used[i])
            watch_used[i] = true, got = i + 1;
    pthread_mutex_unlock(&watch_lock);
    if (!got) {
        LOG_DEBUG("io", "%s: more than %d files mapped at once; this one is not watched for changes", path,
                  IO_WATCH_MAX);
        return 0;
    }
    struct watch *w = &watches[got - 1];
    w->size = size, w->fd = fd, w->mtime = mtime;
    size_t n = strlen(path);
    if (n < sizeof w->path) {
        memcpy(w->path, path, n + 1);
    } else {
        memcpy(w->path, path, sizeof w->path - 4);
        memcpy(w->path + sizeof w->path - 4, "...", 4);
    }
    atomic_store_explicit(&w->base, base, memory_order_release);
    return got;
}

static void watch_remove(unsigned id)
{
    struct watch *w = &watches[id - 1];
    atomic_store_explicit(&w->base, NULL, memory_order_release);
    close(w->fd);
    pthread_mutex_lock(&watch_lock);
    watch_used[id - 1] = false;
    pthread_mutex_unlock(&watch_lock);
}

static int watch_check(const struct watch *w)
{
    struct stat st;
    if (fstat(w->fd, &st) != 0)
        return seer_err(SEER_EIO, "%s: cannot stat the file in use: %s", w->path, strerror(errno));
    if ((uint64_t)st.st_size != (uint64_t)w->size)
        return seer_err(SEER_EIO, "%s: the file changed size while in use (was %zu bytes, now %lld)", w->path,
                        w->size, (long long)st.st_size);
    if (st.st_mtim.tv_sec != w->mtime.tv_sec || st.st_mtim.tv_nsec != w->mtime.tv_nsec)
        return seer_err(SEER_EIO, "%s: the file was modified while in use (same size, new modification time)",
                        w->path);
    return SEER_OK;
}

void io_release(const void *p, size_t n)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)p + page - 1) & ~(page - 1),
                    e = ((uintptr_t)p + n) & ~(page - 1);
    if (e <= a)
        return;
    pthread_mutex_lock(&watch_lock);
    for (unsigned i = 0; i < IO_WATCH_MAX; i++) {
        const uint8_t *b = watch_used[i] ? atomic_load_explicit(&watches[i].base, memory_order_acquire) : NULL;
        if (b && (uintptr_t)b <= a && e <= (uintptr_t)b + watches[i].size) {
            madvise((void *)a, e - a, MADV_DONTNEED); /* a private read-only file mapping: refaults from the file */
            break;
        }
    }
    pthread_mutex_unlock(&watch_lock);
}

/* Async-signal-safe appends for io_fault_describe (snprintf is not on POSIX's list). */
static size_t put_str(char *buf, size_t size, size_t at, const char *s)
{
    while (*s && at + 1 < size)
        buf[at++] = *s++;
    return at;
}

static size_t put_u64(char *buf, size_t size, size_t at, uint64_t v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && at + 1 < size)
        buf[at++] = d[--n];
    return at;
}

/* ---- copy-on-load for network file systems ------------------------------------------------- */

static bool copy_always; /* io_copy_on_load_always: tests only */

void io_copy_on_load_always(bool on) { copy_always = on; }

/* Whether fd's file lives on a network file system, where a mapping is only as reliable as the
   server: a page read after the server failed, or after another client truncated the file,
   raises SIGBUS in the middle of a forward pass. Magic numbers from statfs(2). */
static bool on_network_fs(int fd)
{
#ifdef __linux__
    static const unsigned long net[] = {
        0x6969,     /* NFS */
        0x517B,     /* SMB */
        0xFF534D42, /* CIFS */
        0xFE534D42, /* SMB2 */
        0x00C36400, /* Ceph */
        0x01021997, /* 9P (virtio shares, WSL) */
        0x5346414F, /* AFS */
        0x6B414653, /* kAFS */
        0x65735546, /* FUSE: sshfs, s3fs, rclone mounts */
    };
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return false;
    for (size_t i = 0; i < sizeof net / sizeof net[0]; i++)
        if ((unsigned long)sf.f_type == net[i])
            return true;
#else
    (void)fd;
#endif
    return false;
}

/* Reads the whole file into private anonymous pages, read-only afterwards like a mapping and
   released by the same munmap. A file that changed while it was read is refused: the copy would
   be neither the old file nor the new one. */
static int read_copy(const char *path, int fd, size_t size, struct timespec mtime, void **out)
{
    uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return seer_err(SEER_ENOMEM, "%s: no memory to copy its %zu bytes from a network file system", path, size);
    int e;
    size_t got = read_full(fd, p, size, &e);
    if (got < size) {
        munmap(p, size);
        return seer_err(SEER_EIO, "%s: read failed at byte %zu of %zu: %s", path, got, size,
                        e ? strerror(e) : "the file shrank while it was read");
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != (uint64_t)size || st.st_mtim.tv_sec != mtime.tv_sec ||
        st.st_mtim.tv_nsec != mtime.tv_nsec) {
        munmap(p, size);
        return seer_err(SEER_EIO, "%s: the file changed while it was read (was %zu bytes, now %lld)", path, size,
                        (long long)st.st_size);
    }
    mprotect(p, size, PROT_READ);
    *out = p;
    return SEER_OK;
}

/* ---- helpers ------------------------------------------------------------------------------- */

/* Opens path and checks it is a regular file whose size fits size_t; *mtime (may be NULL) gets
   its modification time. */
static int open_regular(const char *path, int *fd_out, size_t *size_out, struct timespec *mtime)
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
    if (mtime)
        *mtime = st.st_mtim;
    return SEER_OK;
}

/* ---- public -------------------------------------------------------------------------------- */

int io_map(const char *path, struct io_map *m)
{
    int fd;
    size_t size;
    struct timespec mtime;
    int rc = open_regular(path, &fd, &size, &mtime);
    if (rc != SEER_OK)
        return rc;
    void *p = NULL;
    if (size > 0 && (copy_always || on_network_fs(fd))) {
        rc = read_copy(path, fd, size, mtime, &p);
        close(fd); /* a copy has nothing to watch: later changes to the file cannot reach it */
        if (rc != SEER_OK)
            return rc;
        LOG_DEBUG("io", "%s: on a network file system: read whole (%zu bytes) instead of mapped", path, size);
        m->watch = 0;
        m->data = p;
        m->size = size;
        return SEER_OK;
    }
    if (size > 0) { /* mmap of length 0 is an error; an empty file maps to data = NULL */
        p = sys_mmap(size, fd);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return seer_err(SEER_EIO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
        }
    }
    m->watch = p ? watch_add(path, p, size, fd, mtime) : 0;
    if (!m->watch)
        close(fd); /* the mapping keeps the file referenced */
    m->data = p;
    m->size = size;
    return SEER_OK;
}

void io_unmap(struct io_map *m)
{
    if (m->watch)
        watch_remove(m->watch); /* first: a fault in the range is no longer this file's */
    if (m->data)
        munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
    m->watch = 0;
}

int io_map_check(const struct io_map *m)
{
    return m->watch ? watch_check(&watches[m->watch - 1]) : SEER_OK;
}

int io_check_all(void)
{
    int rc = SEER_OK;
    pthread_mutex_lock(&watch_lock);
    for (unsigned i = 0; i < IO_WATCH_MAX && rc == SEER_OK; i++)
        if (watch_used[i] && atomic_load_explicit(&watches[i].base, memory_order_acquire))
            rc = watch_check(&watches[i]);
    pthread_mutex_unlock(&watch_lock);
    return rc;
}

size_t io_fault_describe(const void *addr, char *buf, size_t size)
{
    const uint8_t *a = addr;
    for (unsigned i = 0; i < IO_WATCH_MAX; i++) {
        const struct watch *w = &watches[i];
        const uint8_t *base = atomic_load_explicit(&w->base, memory_order_acquire);
        if (!base || a < base || a >= base + w->size)
            continue;
        struct stat st;
        size_t n = put_str(buf, size, 0, w->path);
        if (fstat(w->fd, &st) == 0 && (uint64_t)st.st_size != (uint64_t)w->size) {
            n = put_str(buf, size, n, ": the file changed size while in use (was ");
            n = put_u64(buf, size, n, w->size);
            n = put_str(buf, size, n, " bytes, now ");
            n = put_u64(buf, size, n, (uint64_t)st.st_size);
            n = put_str(buf, size, n, ")");
        } else {
            /* same size (or unknown): the storage under the mapping failed, e.g. a network file */
            n = put_str(buf, size, n, ": could not be read at byte ");
            n = put_u64(buf, size, n, (uint64_t)(a - base));
            n = put_str(buf, size, n, " of the mapped file (");
            n = put_u64(buf, size, n, w->size);
            n = put_str(buf, size, n, " bytes): an I/O error under the mapping");
        }
        n = put_str(buf, size, n, "\n");
        if (size)
            buf[n] = '\0';
        return n;
    }
    return 0;
}

int io_read_file(const char *path, size_t max_bytes, char **data, size_t *size)
{
    int fd;
    size_t n;
    int rc = open_regular(path, &fd, &n, NULL);
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
    int e;
    size_t got = read_full(fd, buf, n, &e);
    if (got < n) { /* e 0: the file shrank under us */
        close(fd);
        seer_free(buf);
        return seer_err(SEER_EIO, "%s: read failed at byte %zu: %s", path, got, e ? strerror(e) : "unexpected end of file");
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
    int rc = open_regular(path, &fd, &n, NULL);
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
