/* ocr_files.c — the file side of `seer ocr` (declared in cli/ocr.h): listing inputs, selecting
   pages, and writing outputs so that a file under --out is either complete or absent.

   Divisions, in order: the input list; --pages; the output directory and atomic writes; --resume. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/ocr.h"
#include "cli/util.h"
#include "seer.h"

/* ---- the input list --------------------------------------------------------------------------- */

/* Directories nested deeper than this are not walked (a bind-mount loop would never end). */
#define WALK_MAX_DEPTH 64

static int push(struct ocr_list *l, const char *path, const char *name, const char *error)
{
    if (!cli_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 64))
        return cli_err(SEER_ENOMEM, "out of memory listing the inputs");
    struct ocr_input *in = &l->v[l->n];
    *in = (struct ocr_input){.path = strdup(path), .name = strdup(name), .error = error ? strdup(error) : NULL};
    struct stat st;
    if (!in->path || !in->name || (error && !in->error)) {
        free(in->path), free(in->name), free(in->error);
        return cli_err(SEER_ENOMEM, "out of memory listing the inputs");
    }
    if (!error && stat(path, &st) == 0)
        in->exists = true, in->dev = st.st_dev, in->ino = st.st_ino;
    l->n++;
    return SEER_OK;
}

/* The last component of a path ("dir/" for "a/dir/"); the path itself when it has one. */
static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    return path[n] ? path + n : path;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `dir` is the directory on disk; `rel` its path below the argument ("" at the top). */
static int walk(struct ocr_list *l, const char *dir, const char *rel, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        char msg[4200];
        snprintf(msg, sizeof msg, "%s: cannot read the directory: %s", dir, strerror(errno));
        return push(l, dir, rel[0] ? rel : base_name(dir), msg);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = SEER_OK;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", and hidden files (.DS_Store, editors' swap files) */
        if (!cli_grow(&names, &cap, n + 1, sizeof *names, 32)) {
            rc = cli_err(SEER_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        if (!(names[n] = strdup(e->d_name)))
            rc = cli_err(SEER_ENOMEM, "out of memory listing %s", dir);
        else
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2, rl = strlen(rel) + strlen(names[i]) + 2;
        char *path = malloc(pl), *r = malloc(rl);
        struct stat st;
        if (!path || !r) {
            free(path), free(r);
            rc = cli_err(SEER_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        snprintf(path, pl, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        snprintf(r, rl, "%s%s%s", rel, rel[0] && rel[strlen(rel) - 1] != '/' ? "/" : "", names[i]);
        if (lstat(path, &st) != 0) {
            rc = push(l, path, r, NULL); /* gone since the listing: opening it says so */
        } else if (S_ISDIR(st.st_mode)) {
            bool is_out = l->has_out && st.st_dev == l->out_dev && st.st_ino == l->out_ino;
            if (!is_out && depth < WALK_MAX_DEPTH)
                rc = walk(l, path, r, depth + 1);
        } else if (!(S_ISLNK(st.st_mode) && stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
            rc = push(l, path, r, NULL); /* links to directories are not followed: no loops */
        }
        free(path), free(r);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int ocr_list_add(struct ocr_list *l, const char *arg, bool glob_ok)
{
    struct stat st;
    if (stat(arg, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return push(l, arg, base_name(arg), NULL);
        if (l->has_out && st.st_dev == l->out_dev && st.st_ino == l->out_ino)
            return SEER_OK;
        return walk(l, arg, "", 0);
    }
    if (!glob_ok || !strpbrk(arg, "*?["))
        return push(l, arg, base_name(arg), NULL); /* missing: opening it names the problem */
    glob_t g;
    int gr = glob(arg, 0, NULL, &g), rc = SEER_OK;
    if (gr == GLOB_NOMATCH) {
        char msg[4200];
        snprintf(msg, sizeof msg, "%s: no file matches this pattern", arg);
        rc = push(l, arg, base_name(arg), msg);
    } else if (gr != 0) {
        rc = cli_err(SEER_ENOMEM, "%s: the pattern could not be expanded", arg);
    } else {
        /* a matched directory keeps its name in the outputs: a pattern matching directories a and b
           gives a/x.png and b/x.png, not x.png twice */
        for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
            const char *m = g.gl_pathv[i];
            bool out_dir = l->has_out && stat(m, &st) == 0 && st.st_dev == l->out_dev && st.st_ino == l->out_ino;
            if (stat(m, &st) == 0 && S_ISDIR(st.st_mode))
                rc = out_dir ? SEER_OK : walk(l, m, base_name(m), 0);
            else
                rc = push(l, m, base_name(m), NULL);
        }
    }
    if (gr != GLOB_NOMATCH)
        globfree(&g);
    return rc;
}

int ocr_list_add_file(struct ocr_list *l, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f)
        return cli_err(SEER_EIO, "%s: cannot open the list: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = SEER_OK;
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n > 0)
            rc = ocr_list_add(l, line, false);
    }
    if (!rc && ferror(f))
        rc = cli_err(SEER_EIO, "%s: read failed: %s", path, strerror(errno));
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

static struct ocr_input *sort_base;

/* Orders indices by (exists, dev, ino) and then by position, so the first of equals comes first. */
static int cmp_identity(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct ocr_input *x = &sort_base[i], *y = &sort_base[j];
    if (x->exists != y->exists)
        return x->exists ? -1 : 1;
    if (x->exists && x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->exists && x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return i < j ? -1 : i > j;
}

static void input_free(struct ocr_input *in)
{
    for (size_t k = 0; k < in->n_kept; k++)
        free(in->kept[k].line);
    free(in->kept), free(in->path), free(in->name), free(in->error);
}

void ocr_list_dedupe(struct ocr_list *l)
{
    size_t *idx = malloc((l->n ? l->n : 1) * sizeof *idx);
    bool *drop = calloc(l->n ? l->n : 1, 1);
    if (!idx || !drop) { /* keeping duplicates is harmless; only their work is repeated */
        free(idx), free(drop);
        return;
    }
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    sort_base = l->v;
    qsort(idx, l->n, sizeof *idx, cmp_identity);
    for (size_t k = 1; k < l->n; k++) {
        const struct ocr_input *a = &l->v[idx[k - 1]], *b = &l->v[idx[k]];
        if (a->exists && b->exists && a->dev == b->dev && a->ino == b->ino)
            drop[idx[k]] = true;
    }
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (drop[i])
            input_free(&l->v[i]);
        else
            l->v[w++] = l->v[i];
    }
    l->n = w;
    free(idx), free(drop);
}

static int cmp_name(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sort_base[i].name, sort_base[j].name);
    return c ? c : (i < j ? -1 : i > j);
}

bool ocr_list_names_unique(const struct ocr_list *l, const char *ext)
{
    size_t *idx = malloc((l->n ? l->n : 1) * sizeof *idx);
    bool unique = true;
    if (!idx)
        return true; /* the atomic rename would only replace one result with the other */
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    sort_base = l->v;
    qsort(idx, l->n, sizeof *idx, cmp_name);
    for (size_t k = 1; k < l->n && unique; k++) {
        const struct ocr_input *a = &l->v[idx[k - 1]], *b = &l->v[idx[k]];
        if (!strcmp(a->name, b->name)) {
            fprintf(stderr, "seer ocr: '%s' and '%s' would both write %s%s under --out (pass their directory "
                    "instead, so the outputs keep the path below it)\n", a->path, b->path, a->name, ext);
            unique = false;
        }
    }
    free(idx);
    return unique;
}

void ocr_list_shard(struct ocr_list *l, long i, long n)
{
    size_t w = 0;
    for (size_t k = 0; k < l->n; k++) {
        if ((long)(k % (size_t)n) == i)
            l->v[w++] = l->v[k];
        else
            input_free(&l->v[k]);
    }
    l->n = w;
}

void ocr_list_free(struct ocr_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        input_free(&l->v[i]);
    free(l->v);
    *l = (struct ocr_list){0};
}

/* ---- --pages ---------------------------------------------------------------------------------- */

static bool page_num(const char **s, int32_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno || v < 1 || v > INT32_MAX || **s == '+' || **s == '-')
        return false;
    *out = (int32_t)v;
    *s = end;
    return true;
}

bool ocr_pages_parse(const char *s, struct ocr_pages *p)
{
    p->n = 0;
    if (!*s)
        return false;
    for (;;) {
        int32_t lo, hi;
        if (p->n == (int)(sizeof p->lo / sizeof p->lo[0]) || !page_num(&s, &lo))
            return false;
        hi = lo;
        if (*s == '-') {
            s++;
            if (*s == ',' || !*s)
                hi = INT32_MAX;
            else if (!page_num(&s, &hi) || hi < lo)
                return false;
        }
        p->lo[p->n] = lo, p->hi[p->n++] = hi;
        if (!*s)
            return true;
        if (*s++ != ',')
            return false;
    }
}

bool ocr_pages_has(const struct ocr_pages *p, int page)
{
    if (p->n == 0)
        return true;
    for (int i = 0; i < p->n; i++)
        if (page >= p->lo[i] && page <= p->hi[i])
            return true;
    return false;
}

/* ---- the output directory and atomic writes --------------------------------------------------- */

/* mkdir -p; `path` is modified in place and restored. */
static int mkdirs(char *path)
{
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        int r = mkdir(path, 0777);
        int e = errno;
        struct stat st;
        bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        *s = c;
        if (r != 0 && !dir) {
            *s = '\0';
            int rc = cli_err(SEER_EIO, "%s: cannot create the directory: %s", path, strerror(e == EEXIST ? ENOTDIR : e));
            *s = c;
            return rc;
        }
        if (!c)
            return SEER_OK;
    }
}

/* Permissions of new results: what the umask leaves of rw-rw-rw-, as for any file a tool creates
   (mkstemp alone would make them private). Read once here, before any other thread runs. */
static mode_t file_mode = 0644;

int ocr_out_prepare(const char *dir)
{
    mode_t mask = umask(0);
    umask(mask);
    file_mode = 0666 & ~mask;
    size_t n = strlen(dir) + 32;
    char *p = malloc(n);
    if (!p)
        return cli_err(SEER_ENOMEM, "out of memory");
    snprintf(p, n, "%s", dir);
    int rc = mkdirs(p);
    if (!rc) {
        snprintf(p, n, "%s/.seer-probe-XXXXXX", dir);
        int fd = mkstemp(p);
        if (fd < 0)
            rc = cli_err(SEER_EIO, "%s: cannot write results there: %s", dir, strerror(errno));
        else
            close(fd), unlink(p);
    }
    free(p);
    return rc;
}

static int write_all(int fd, const char *data, size_t n)
{
    while (n) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        data += w, n -= (size_t)w;
    }
    return 0;
}

int ocr_write_atomic(const char *dir, const char *name, const char *ext, const char *data, size_t n)
{
    size_t fl = strlen(dir) + strlen(name) + strlen(ext) + 2, tl = fl + 32;
    char *final = malloc(fl), *tmp = malloc(tl), *parent = malloc(fl);
    int rc = SEER_OK, fd = -1, e = 0;
    if (!final || !tmp || !parent) {
        free(final), free(tmp), free(parent);
        return cli_err(SEER_ENOMEM, "out of memory writing %s%s", name, ext);
    }
    snprintf(final, fl, "%s/%s%s", dir, name, ext);
    snprintf(parent, fl, "%s", final);
    *strrchr(parent, '/') = '\0';
    snprintf(tmp, tl, "%s/.%s.seer-XXXXXX", parent, base_name(final));
    /* signals wait until the file is either renamed or removed */
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT), sigaddset(&hold, SIGTERM), sigaddset(&hold, SIGHUP), sigaddset(&hold, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &hold, &old);
    if (strchr(name, '/') && (rc = mkdirs(parent)))
        goto done;
    if ((fd = mkstemp(tmp)) < 0) {
        rc = cli_err(SEER_EIO, "%s: cannot create a file there: %s", parent, strerror(errno));
        goto done;
    }
    if (fchmod(fd, file_mode) || (e = write_all(fd, data, n)) || fsync(fd))
        e = e ? e : errno;
    if (close(fd) && !e) /* NFS reports some write errors only here */
        e = errno;
    if (e) {
        unlink(tmp);
        rc = cli_err(SEER_EIO, "%s: write failed: %s", final, strerror(e));
        goto done;
    }
    if (rename(tmp, final)) {
        e = errno;
        unlink(tmp);
        rc = cli_err(SEER_EIO, "%s: cannot rename the finished file into place: %s", final, strerror(e));
        goto done;
    }
    /* the rename itself is durable only once the directory is */
    int dfd = open(parent, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0)
        fsync(dfd), close(dfd);
done:
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free(final), free(tmp), free(parent);
    return rc;
}

/* ---- --resume --------------------------------------------------------------------------------- */

static void kept_clear(struct ocr_input *in)
{
    for (size_t k = 0; k < in->n_kept; k++)
        free(in->kept[k].line);
    free(in->kept);
    in->kept = NULL;
    in->n_kept = 0;
}

int ocr_resume_read(const char *dir, const char *ext, bool jsonl, struct ocr_input *in)
{
    size_t fl = strlen(dir) + strlen(in->name) + strlen(ext) + 2;
    char *path = malloc(fl);
    if (!path)
        return cli_err(SEER_ENOMEM, "out of memory");
    snprintf(path, fl, "%s/%s%s", dir, in->name, ext);
    struct stat st;
    bool have = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (!have || !jsonl) {
        in->skip = have;
        free(path);
        return SEER_OK;
    }
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, n_err = 0, kcap = 0;
    ssize_t len;
    bool usable = f != NULL;
    int rc = SEER_OK;
    while (usable && !rc && (len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        json_t *o = json_loads(line, JSON_ALLOW_NUL, NULL);
        json_t *page = json_object_get(o, "page");
        json_int_t pg = json_is_integer(page) ? json_integer_value(page) : 0;
        if (pg < 1 || pg > INT32_MAX)
            usable = false;
        else if (json_is_string(json_object_get(o, "text"))) {
            if (!cli_grow(&in->kept, &kcap, in->n_kept + 1, sizeof *in->kept, 8))
                rc = cli_err(SEER_ENOMEM, "out of memory reading %s", path);
            char *s = rc ? NULL : strdup(line);
            if (!rc && !s)
                rc = cli_err(SEER_ENOMEM, "out of memory reading %s", path);
            if (s)
                in->kept[in->n_kept++] = (struct ocr_kept){(int)pg, s};
        } else if (json_object_get(o, "error"))
            n_err++;
        else
            usable = false;
        json_decref(o);
    }
    if (f && ferror(f))
        usable = false;
    if (!usable || rc || n_err == 0)
        in->skip = usable && !rc;
    if (!usable || rc || in->skip)
        kept_clear(in); /* skipped whole, or done again whole */
    free(line);
    free(path);
    if (f)
        fclose(f);
    return rc;
}
