/* hub.c — `seer pull`: a model's files from the Hugging Face hub, downloaded with libcurl,
   resumable (HTTP Range into FILE.part), each verified against the size and checksum the hub's
   metadata lists (SHA-256 for LFS files, the Git blob SHA-1 for small ones; OpenSSL's libcrypto,
   already in the process through libcurl), and moved into place only when all are (hub.h). Part
   of the command, not of libseer: the library has no download function (a program using it
   brings its own downloader), so only the seer binary links libcurl and libcrypto.

   Divisions: the name table; the metadata parser (fuzzed: tests/fuzz/fuzz_hub.c); checksums;
   HTTP transfers; the pull. Protocol: GET {endpoint}/api/models/{repo}/revision/main?blobs=true
   lists the repository's files ("siblings": rfilename, size, blobId, lfs.sha256); a file is at
   {endpoint}/{repo}/resolve/{commit}/{file} (fetched at the commit the metadata names, so a
   release updated mid-pull cannot mix two revisions). */
#define _GNU_SOURCE
#include "cli/hub.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli/util.h"

/* Paths and URLs: hub_pull refuses a home or endpoint longer than 2000 bytes, names are at most
   200 and repositories and revisions shorter still, so every path and URL fits PATH_BYTES
   (-Wformat-truncation cannot see those limits; pathf is snprintf without its warning). */
#define PATH_BYTES 4096
static void pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, PATH_BYTES, fmt, ap);
    va_end(ap);
}

/* ---- the name table ---------------------------------------------------------------------- */

static const struct {
    const char *name, *repo;
} models[] = {
    {"qwen3.5-0.8b", "Qwen/Qwen3.5-0.8B"},
    {"qwen3.5-2b", "Qwen/Qwen3.5-2B"},
    {"qwen3.5-4b", "Qwen/Qwen3.5-4B"},
    {"qwen3.5-9b", "Qwen/Qwen3.5-9B"},
};
#define N_MODELS (sizeof models / sizeof models[0])

const char *const hub_model_names[] = {"qwen3.5-0.8b", "qwen3.5-2b", "qwen3.5-4b", "qwen3.5-9b", NULL};

static int model_index(const char *name)
{
    for (size_t i = 0; name && i < N_MODELS; i++)
        if (!strcasecmp(name, models[i].name))
            return (int)i;
    return -1;
}

const char *hub_repo_for(const char *name)
{
    int i = model_index(name);
    return i < 0 ? NULL : models[i].repo;
}

const char *hub_canonical_name(const char *name)
{
    int i = model_index(name);
    return i < 0 ? NULL : models[i].name;
}

int hub_model_dir(const char *home, const char *name, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/models/%s", home, name);
    if (n < 0 || (size_t)n >= size)
        return cli_err(SEER_EINVAL, "%s: the model directory path is too long", home);
    return SEER_OK;
}

/* ---- the metadata parser ------------------------------------------------------------------ */

#define MAX_META_BYTES ((size_t)16 << 20) /* Qwen3.5-9B's metadata is a few KB */
#define MAX_FILES 4096
#define MAX_FILE_BYTES ((uint64_t)1 << 40)
#define MAX_NAME 200

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* The files a model needs. Anything else in the repository (README, vocab.json/merges.txt,
   which tokenizer.json supersedes, images) is not fetched. */
static bool wanted(const char *name)
{
    static const char *const exact[] = {"config.json", "tokenizer.json", "tokenizer_config.json",
                                        "chat_template.jinja", "preprocessor_config.json",
                                        "video_preprocessor_config.json", "generation_config.json", "LICENSE"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(name, exact[i]))
            return true;
    return has_suffix(name, ".safetensors") || has_suffix(name, ".safetensors.index.json");
}

/* A name becomes a path under models/: only plain names, so no '/', "..", hidden file or
   control character from a hostile response can reach the file system. */
static bool plain_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > MAX_NAME || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
            return false;
    return true;
}

/* Copies `hex` (exactly `len` hex digits) lowercased into out[len + 1]; false when malformed. */
static bool copy_hex(const char *hex, size_t len, char *out)
{
    if (!hex || strlen(hex) != len)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isxdigit((unsigned char)hex[i]))
            return false;
        out[i] = (char)tolower((unsigned char)hex[i]);
    }
    out[len] = '\0';
    return true;
}

/* One sibling into f (name not yet set); SEER_EFORMAT naming the file on anything malformed. */
static int parse_sibling(const json_t *s, const char *name, const char *what, struct hub_file *f)
{
    const json_t *size = json_object_get(s, "size"), *lfs = json_object_get(s, "lfs");
    if (lfs && !json_is_null(lfs)) {
        if (!json_is_object(lfs))
            return cli_err(SEER_EFORMAT, "%s: '%s': lfs is not an object", what, name);
        if (!copy_hex(json_string_value(json_object_get(lfs, "sha256")), 64, f->sha256))
            return cli_err(SEER_EFORMAT, "%s: '%s': lfs.sha256 is not 64 hex digits", what, name);
        /* lfs.size is the content's size; the sibling's own size, when present, must agree */
        const json_t *ls = json_object_get(lfs, "size");
        if (ls && size && json_is_integer(ls) && json_is_integer(size) &&
            json_integer_value(ls) != json_integer_value(size))
            return cli_err(SEER_EFORMAT, "%s: '%s': size %" JSON_INTEGER_FORMAT " and lfs.size %" JSON_INTEGER_FORMAT " differ",
                            what, name, json_integer_value(size), json_integer_value(ls));
        if (ls)
            size = ls;
    } else if (!copy_hex(json_string_value(json_object_get(s, "blobId")), 40, f->git_sha1))
        return cli_err(SEER_EFORMAT, "%s: '%s' has no checksum (neither lfs.sha256 nor a 40-digit blobId)", what, name);
    if (!json_is_integer(size))
        return cli_err(SEER_EFORMAT, "%s: '%s' has no integer size (was the metadata asked with ?blobs=true?)", what, name);
    json_int_t v = json_integer_value(size);
    if (v < 0 || (uint64_t)v > MAX_FILE_BYTES)
        return cli_err(SEER_EFORMAT, "%s: '%s': size %" JSON_INTEGER_FORMAT " is outside [0, 1 TiB]", what, name, v);
    f->size = (uint64_t)v;
    return SEER_OK;
}

void hub_manifest_free(struct hub_manifest *m)
{
    for (size_t i = 0; m && i < m->n_files; i++)
        free(m->files[i].name);
    if (m) {
        free(m->files);
        memset(m, 0, sizeof *m);
    }
}

int hub_parse_metadata(const char *json, size_t len, const char *what, struct hub_manifest *out)
{
    if (len > MAX_META_BYTES)
        return cli_err(SEER_EFORMAT, "%s: the metadata is larger than %zu bytes", what, MAX_META_BYTES);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return cli_err(SEER_EFORMAT, "%s: the metadata is not JSON (line %d: %s)", what, jerr.line, jerr.text);
    struct hub_manifest m = {0};
    size_t cap = 0;
    bool has_config = false, has_tok = false, has_weights = false;
    int rc = SEER_OK;
    const json_t *sib = json_object_get(root, "siblings");
    if (!json_is_object(root) || !json_is_array(sib)) {
        rc = cli_err(SEER_EFORMAT, "%s: the metadata has no 'siblings' list of files", what);
        goto fail;
    }
    const char *sha = json_string_value(json_object_get(root, "sha"));
    if (!sha)
        snprintf(m.revision, sizeof m.revision, "main");
    else if (!copy_hex(sha, 40, m.revision)) {
        rc = cli_err(SEER_EFORMAT, "%s: 'sha' is not a 40-digit commit id", what);
        goto fail;
    }
    size_t i;
    const json_t *s;
    json_array_foreach(sib, i, s) {
        const char *name = json_string_value(json_object_get(s, "rfilename"));
        if (!json_is_object(s) || !name) {
            rc = cli_err(SEER_EFORMAT, "%s: sibling %zu has no 'rfilename' string", what, i);
            goto fail;
        }
        if (!wanted(name))
            continue; /* checked only if kept: other files' names never reach the disk */
        if (!plain_name(name)) {
            rc = cli_err(SEER_EFORMAT, "%s: refusing file name '%.80s' (a path, hidden or unusual characters)", what, name);
            goto fail;
        }
        for (size_t k = 0; k < m.n_files; k++)
            if (!strcmp(m.files[k].name, name)) {
                rc = cli_err(SEER_EFORMAT, "%s: '%s' is listed twice", what, name);
                goto fail;
            }
        if (m.n_files == MAX_FILES) {
            rc = cli_err(SEER_EFORMAT, "%s: more than %d model files listed", what, MAX_FILES);
            goto fail;
        }
        if (!cli_grow(&m.files, &cap, m.n_files + 1, sizeof *m.files, 16)) {
            rc = cli_err(SEER_ENOMEM, "%s: out of memory", what);
            goto fail;
        }
        struct hub_file *f = &m.files[m.n_files];
        memset(f, 0, sizeof *f);
        if ((rc = parse_sibling(s, name, what, f)))
            goto fail;
        if (!(f->name = strdup(name))) {
            rc = cli_err(SEER_ENOMEM, "%s: out of memory", what);
            goto fail;
        }
        m.n_files++;
        m.total_bytes += f->size; /* ≤ 4096 files of ≤ 2^40 bytes: cannot overflow */
        has_config |= !strcmp(name, "config.json");
        has_tok |= !strcmp(name, "tokenizer.json");
        has_weights |= has_suffix(name, ".safetensors");
    }
    if (!has_config || !has_tok || !has_weights) {
        rc = cli_err(SEER_EFORMAT, "%s: the repository has no %s", what,
                      !has_config ? "config.json" : !has_tok ? "tokenizer.json" : ".safetensors weights");
        goto fail;
    }
    json_decref(root);
    *out = m;
    return SEER_OK;
fail:
    hub_manifest_free(&m);
    json_decref(root);
    return rc;
}

/* ---- checksums ----------------------------------------------------------------------------- */

/* The digest a file is checked with: SHA-256 of the content, or Git's blob id (SHA-1 over a
   "blob <size>\0" header then the content). */
struct digest {
    EVP_MD_CTX *ctx;
    const struct hub_file *f;
};

static int digest_begin(struct digest *d)
{
    if (!d->ctx && !(d->ctx = EVP_MD_CTX_new()))
        return cli_err(SEER_ENOMEM, "%s: out of memory for a digest", d->f->name);
    bool git = d->f->sha256[0] == '\0';
    if (EVP_DigestInit_ex(d->ctx, git ? EVP_sha1() : EVP_sha256(), NULL) != 1)
        return cli_err(SEER_EIO, "%s: libcrypto cannot start a %s digest", d->f->name, git ? "SHA-1" : "SHA-256");
    if (git) {
        char hdr[40];
        int n = snprintf(hdr, sizeof hdr, "blob %" PRIu64, d->f->size);
        EVP_DigestUpdate(d->ctx, hdr, (size_t)n + 1); /* the header includes its NUL */
    }
    return SEER_OK;
}

/* True when the digest matches the metadata; the hex found goes to got[65]. */
static bool digest_matches(struct digest *d, char *got)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(d->ctx, md, &n);
    for (unsigned int i = 0; i < n; i++)
        snprintf(got + 2 * i, 3, "%02x", md[i]);
    return !strcmp(got, d->f->sha256[0] ? d->f->sha256 : d->f->git_sha1);
}

/* Feeds the first `bytes` of fd into the digest (a resumed .part, or a file staged earlier). */
static int digest_file(struct digest *d, int fd, uint64_t bytes, const char *path)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = bytes ? malloc(CHUNK) : NULL;
    if (bytes && !buf)
        return cli_err(SEER_ENOMEM, "%s: out of memory", path);
    int rc = SEER_OK;
    for (uint64_t at = 0; at < bytes;) {
        size_t want = bytes - at < CHUNK ? (size_t)(bytes - at) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)at);
        if (got <= 0) {
            rc = cli_err(SEER_EIO, "%s: cannot read back (%s)", path, got < 0 ? strerror(errno) : "file shrank");
            break;
        }
        EVP_DigestUpdate(d->ctx, buf, (size_t)got);
        at += (uint64_t)got;
    }
    free(buf);
    return rc;
}

/* ---- HTTP transfers ------------------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* One transfer's state, shared by libcurl's callbacks. Either into memory (buf, at most `max`
   bytes: the metadata) or appended to fd (a file, at most f->size bytes in all). */
struct xfer {
    const struct hub_params *p;
    char errbuf[CURL_ERROR_SIZE];
    char *buf;
    size_t len, cap, max;
    int fd;
    const struct hub_file *f;
    struct digest *d;
    uint64_t have;       /* bytes of the file on disk */
    int64_t range_start; /* from the last response's Content-Range, −1 when none */
    bool started;        /* the first body bytes have been seen */
    int err;             /* a failure inside a callback (message already set) */
};

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
    struct xfer *x = user;
    size_t len = size * n;
    unsigned long long start;
    if (len >= 5 && !strncmp(line, "HTTP/", 5))
        x->range_start = -1; /* a new response (after a redirect) */
    else if (len > 14 && !strncasecmp(line, "content-range:", 14) &&
             sscanf(line + 14, " bytes %llu-", &start) == 1)
        x->range_start = (int64_t)start;
    return len;
}

static size_t on_memory(char *data, size_t size, size_t n, void *user)
{
    struct xfer *x = user;
    size_t len = size * n;
    if (x->len + len > x->max) {
        x->err = cli_err(SEER_EFORMAT, "the hub's metadata is larger than %zu bytes", x->max);
        return 0;
    }
    if (!cli_grow(&x->buf, &x->cap, x->len + len + 1, 1, 4096)) {
        x->err = cli_err(SEER_ENOMEM, "out of memory reading the hub's metadata");
        return 0;
    }
    memcpy(x->buf + x->len, data, len);
    x->len += len;
    x->buf[x->len] = '\0';
    return len;
}

static size_t on_file(char *data, size_t size, size_t n, void *user)
{
    struct xfer *x = user;
    size_t len = size * n;
    if (!x->started) {
        x->started = true;
        if (x->have > 0 && x->range_start < 0) {
            /* the server ignored Range and sends the whole file: start the .part again */
            if (ftruncate(x->fd, 0) != 0 || lseek(x->fd, 0, SEEK_SET) != 0) {
                x->err = cli_err(SEER_EIO, "%s.part: cannot truncate (%s)", x->f->name, strerror(errno));
                return 0;
            }
            x->have = 0;
            if ((x->err = digest_begin(x->d)))
                return 0;
        } else if (x->range_start >= 0 && (uint64_t)x->range_start != x->have) {
            x->err = cli_err(SEER_EFORMAT, "%s: asked for bytes from %" PRIu64 ", the server sent from %" PRId64,
                              x->f->name, x->have, x->range_start);
            return 0;
        }
    }
    if (len > x->f->size - x->have) {
        x->err = cli_err(SEER_EFORMAT, "%s: the server sends more than the %" PRIu64 " bytes the hub's metadata lists",
                          x->f->name, x->f->size);
        return 0;
    }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(x->fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            x->err = cli_err(SEER_EIO, "%s.part: cannot write (%s)", x->f->name, w < 0 ? strerror(errno) : "no progress");
            return 0;
        }
        done += (size_t)w;
    }
    EVP_DigestUpdate(x->d->ctx, data, len);
    x->have += len;
    return len;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    struct xfer *x = user;
    return x->p->progress && x->f ? x->p->progress(x->f->name, x->have, x->f->size, x->p->user) : 0;
}

static CURL *xfer_handle(struct xfer *x, const char *url)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    x->errbuf[0] = '\0';
    x->range_start = -1;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf);
    char agent[64];
    snprintf(agent, sizeof agent, "seer/%s", seer_version());
    curl_easy_setopt(c, CURLOPT_USERAGENT, agent); /* libcurl copies it */
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L); /* LFS files redirect to a CDN */
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    /* only the web: a hostile redirect to file://, ftp:// or smb:// is refused by libcurl */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, x->p->connect_timeout_s > 0 ? x->p->connect_timeout_s : 30L);
    /* a stall is "under 1 byte/s for the whole window": bounded time, however slow the link */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, x->p->stall_timeout_s > 0 ? x->p->stall_timeout_s : 60L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    return c;
}

/* libcurl's result as one line naming what failed; `what` is the file or "metadata". */
static int xfer_error(CURL *c, CURLcode cc, struct xfer *x, const char *what, const char *url)
{
    if (x->err)
        return x->err;
    const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc);
    long code = 0;
    double connect = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(c, CURLINFO_CONNECT_TIME, &connect);
    if (cc == CURLE_ABORTED_BY_CALLBACK)
        return cli_err(SEER_ECANCELED, "%s: download cancelled", what);
    if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY || cc == CURLE_COULDNT_CONNECT ||
        (cc == CURLE_OPERATION_TIMEDOUT && connect == 0 && code == 0))
        return cli_err(SEER_EIO, "cannot reach the model hub at %s (%s); without network, pass -m a local "
                        "Hugging Face model directory or GGUF file", x->p->endpoint, detail);
    if (cc == CURLE_HTTP_RETURNED_ERROR)
        return cli_err(SEER_EIO, "%s: the hub answered HTTP %ld for %s", what, code, url);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return cli_err(SEER_EIO, "%s: no data from the server for %ld s (%s); run the pull again to resume",
                        what, x->p->stall_timeout_s > 0 ? x->p->stall_timeout_s : 60L, url);
    return cli_err(SEER_EIO, "%s: download failed (%s; %s)", what, detail, url);
}

/* A cut connection: worth resuming from where the .part ends. */
static bool transient(CURLcode cc)
{
    return cc == CURLE_PARTIAL_FILE || cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING || cc == CURLE_SEND_ERROR;
}

static int fetch_metadata(const struct hub_params *p, const char *repo, struct hub_manifest *m)
{
    char url[PATH_BYTES];
    pathf(url, "%s/api/models/%s/revision/main?blobs=true", p->endpoint, repo);
    struct xfer x = {.p = p, .max = MAX_META_BYTES, .fd = -1};
    CURL *c = xfer_handle(&x, url);
    if (!c)
        return cli_err(SEER_ENOMEM, "cannot start libcurl");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_memory);
    CURLcode cc = curl_easy_perform(c);
    int rc = cc == CURLE_OK ? SEER_OK : xfer_error(c, cc, &x, repo, url);
    curl_easy_cleanup(c);
    if (rc == SEER_OK) {
        char what[PATH_BYTES];
        pathf(what, "%s (%s)", repo, url);
        rc = hub_parse_metadata(x.buf ? x.buf : "", x.len, what, m);
    }
    free(x.buf);
    return rc;
}

/* Downloads f into dir/NAME.part (resuming what is there), verifies size and checksum, and
   renames it to dir/NAME. A checksum mismatch removes the .part: its bytes cannot be trusted. */
static int fetch_file(const struct hub_params *p, const char *repo, const char *rev, const char *dir,
                      const struct hub_file *f)
{
    char url[PATH_BYTES], part[PATH_BYTES], dst[PATH_BYTES], got[2 * EVP_MAX_MD_SIZE + 1];
    pathf(url, "%s/%s/resolve/%s/%s", p->endpoint, repo, rev, f->name);
    pathf(part, "%s/%s.part", dir, f->name);
    pathf(dst, "%s/%s", dir, f->name);
    struct digest d = {.f = f};
    struct xfer x = {.p = p, .f = f, .d = &d};
    CURL *c = NULL;
    int rc = SEER_OK;
    if ((x.fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return cli_err(SEER_EIO, "%s: cannot create (%s)", part, strerror(errno));
    for (int attempt = 0;; attempt++) {
        struct stat st;
        if (fstat(x.fd, &st) != 0) {
            rc = cli_err(SEER_EIO, "%s: %s", part, strerror(errno));
            goto done;
        }
        x.have = (uint64_t)st.st_size;
        if (x.have > f->size) { /* longer than the file: not ours to resume */
            if (ftruncate(x.fd, 0) != 0) {
                rc = cli_err(SEER_EIO, "%s: cannot truncate (%s)", part, strerror(errno));
                goto done;
            }
            x.have = 0;
        }
        if ((rc = digest_begin(&d)) || (rc = digest_file(&d, x.fd, x.have, part)))
            goto done;
        if (x.have == f->size)
            break;
        if (lseek(x.fd, (off_t)x.have, SEEK_SET) < 0) {
            rc = cli_err(SEER_EIO, "%s: %s", part, strerror(errno));
            goto done;
        }
        char range[64];
        snprintf(range, sizeof range, "%" PRIu64 "-", x.have);
        x.started = false;
        x.err = SEER_OK;
        if (!(c = xfer_handle(&x, url))) {
            rc = cli_err(SEER_ENOMEM, "cannot start libcurl");
            goto done;
        }
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_file);
        if (x.have > 0)
            curl_easy_setopt(c, CURLOPT_RANGE, range);
        CURLcode cc = curl_easy_perform(c);
        if (cc == CURLE_OK)
            break;
        if (!x.err && transient(cc) && attempt < p->retries) {
            cli_log(SEER_LOG_INFO, "hub", "%s: connection cut at %" PRIu64 " of %" PRIu64 " bytes, resuming",
                     f->name, x.have, f->size);
            curl_easy_cleanup(c);
            c = NULL;
            continue;
        }
        rc = xfer_error(c, cc, &x, f->name, url);
        goto done;
    }
    if (x.have != f->size) {
        rc = cli_err(SEER_EFORMAT, "%s: the server sent %" PRIu64 " bytes, the hub's metadata lists %" PRIu64,
                      f->name, x.have, f->size);
        goto done;
    }
    if (!digest_matches(&d, got)) {
        unlink(part);
        rc = cli_err(SEER_EFORMAT, "%s: %s mismatch: the hub lists %s, the download has %s (removed; pull again)",
                      f->name, f->sha256[0] ? "SHA-256" : "Git blob SHA-1", f->sha256[0] ? f->sha256 : f->git_sha1, got);
        goto done;
    }
    if (fsync(x.fd) != 0 || rename(part, dst) != 0)
        rc = cli_err(SEER_EIO, "%s: cannot finish (%s)", dst, strerror(errno));
done:
    if (c)
        curl_easy_cleanup(c);
    close(x.fd);
    EVP_MD_CTX_free(d.ctx);
    return rc;
}

/* ---- the pull ---------------------------------------------------------------------------- */

#define RECORD ".seer-pull.json" /* what a pull fetched: repo, revision, files with sizes and sums */

/* A file staged by an earlier, interrupted pull is kept only if it still verifies: the release
   may have changed since. */
static bool staged_ok(const char *dir, const struct hub_file *f)
{
    char path[PATH_BYTES], got[2 * EVP_MAX_MD_SIZE + 1];
    pathf(path, "%s/%s", dir, f->name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    bool ok = false;
    struct digest d = {.f = f};
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == f->size && !digest_begin(&d) &&
        !digest_file(&d, fd, f->size, path))
        ok = digest_matches(&d, got);
    (void)cli_last_error(); /* consumes a digest failure's message: the file is fetched again */
    if (fd >= 0)
        close(fd);
    EVP_MD_CTX_free(d.ctx);
    if (!ok)
        unlink(path);
    return ok;
}

static int write_record(const char *dir, const char *repo, const struct hub_manifest *m)
{
    char path[PATH_BYTES], tmp[PATH_BYTES];
    pathf(path, "%s/" RECORD, dir);
    pathf(tmp, "%s.tmp", path);
    json_t *files = json_array();
    for (size_t i = 0; i < m->n_files; i++) {
        const struct hub_file *f = &m->files[i];
        json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "name", f->name, "size", (json_int_t)f->size,
                                               f->sha256[0] ? "sha256" : "git_sha1",
                                               f->sha256[0] ? f->sha256 : f->git_sha1));
    }
    json_t *j = json_pack("{s:s, s:s, s:o}", "repo", repo, "revision", m->revision, "files", files);
    int rc = j && json_dump_file(j, tmp, JSON_INDENT(1)) == 0 && rename(tmp, path) == 0
                 ? SEER_OK
                 : cli_err(SEER_EIO, "%s: cannot write", path);
    json_decref(j);
    return rc;
}

/* A present models/NAME: if it holds a pull record, every file it lists must still have its
   size (no network, no hashing: this runs before every README demo). A directory the user put
   there themselves has no record and is taken as it is. */
static int check_present(const char *dir)
{
    char path[PATH_BYTES];
    pathf(path, "%s/" RECORD, dir);
    if (access(path, F_OK) != 0)
        return SEER_OK;
    json_t *j = json_load_file(path, 0, NULL);
    const json_t *files = json_object_get(j, "files"), *f;
    size_t i;
    int rc = json_is_array(files) ? SEER_OK : cli_err(SEER_EFORMAT, "%s: unreadable pull record", path);
    json_array_foreach(files, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        struct stat st;
        pathf(path, "%s/%s", dir, name ? name : "");
        if (!name || !plain_name(name) || stat(path, &st) != 0 ||
            st.st_size != json_integer_value(json_object_get(f, "size"))) {
            rc = cli_err(SEER_EFORMAT, "%s is missing or changed since it was pulled; remove %s and pull again",
                          path, dir);
            break;
        }
    }
    json_decref(j);
    return rc;
}

/* Refuses up front a pull the disk cannot hold (what is already staged counts as done), rather
   than failing after gigabytes with ENOSPC. */
static int check_space(const char *staging, const struct hub_manifest *m)
{
    uint64_t need = 0;
    for (size_t i = 0; i < m->n_files; i++) {
        char path[PATH_BYTES];
        struct stat st;
        uint64_t have = 0;
        pathf(path, "%s/%s", staging, m->files[i].name);
        if (stat(path, &st) == 0 || (pathf(path, "%s/%s.part", staging, m->files[i].name), stat(path, &st) == 0))
            have = (uint64_t)st.st_size;
        need += have < m->files[i].size ? m->files[i].size - have : 0;
    }
    struct statvfs vfs;
    uint64_t avail;
    if (statvfs(staging, &vfs) != 0 || __builtin_mul_overflow((uint64_t)vfs.f_bavail, (uint64_t)vfs.f_frsize, &avail) || avail >= need)
        return SEER_OK;
    return cli_err(SEER_EIO, "%s: the download needs %.1f MB more, the disk has %.1f MB free", staging,
                    (double)need / 1e6, (double)avail / 1e6);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return cli_err(SEER_EIO, "%s: cannot create (%s)", path, strerror(errno));
    return SEER_OK;
}

/* The data directory with its missing parents (mkdir -p): a fresh container or CI runner may
   have no ~/.cache yet. Parents made here get 0700, what the XDG base-directory rules ask of
   ~/.cache; the data directory itself 0755, as models/ under it. */
static int make_home(const char *path)
{
    char buf[PATH_BYTES];
    pathf(buf, "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/' || s[-1] == '/')
            continue;
        *s = '\0';
        if (cli_path_kind(buf) != CLI_PATH_DIR && mkdir(buf, 0700) != 0 && errno != EEXIST)
            return cli_err(SEER_EIO, "%s: cannot create (%s)", buf, strerror(errno));
        *s = '/';
    }
    return make_dir(path);
}

static void sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* the rename is durable once its directory is */
        close(fd);
    }
}

int hub_pull(const struct hub_params *p, const char *name, bool *already)
{
    const char *canon = hub_canonical_name(name), *repo = hub_repo_for(name);
    if (!canon)
        return cli_err(SEER_EINVAL, "unknown model name '%s' (known: qwen3.5-0.8b, qwen3.5-2b, qwen3.5-4b, qwen3.5-9b)", name);
    if (!p->home || !p->endpoint || strlen(p->home) > 2000 || strlen(p->endpoint) > 2000)
        return cli_err(SEER_EINVAL, "seer pull: the data directory and the hub URL must be set and under 2000 bytes");
    char models_dir[PATH_BYTES], final[PATH_BYTES], staging[PATH_BYTES], lock[PATH_BYTES];
    int rc;
    pathf(models_dir, "%s/models", p->home);
    if ((rc = hub_model_dir(p->home, canon, final, sizeof final)))
        return rc;
    pathf(staging, "%s/.%s.partial", models_dir, canon);
    pathf(lock, "%s/.%s.lock", models_dir, canon);
    if ((rc = make_home(p->home)) || (rc = make_dir(models_dir)))
        return rc;
    int lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0)
        return cli_err(SEER_EIO, "%s: cannot create (%s)", lock, strerror(errno));
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        close(lock_fd);
        return cli_err(SEER_EIO, "%s: another seer pull of %s is running", final, canon);
    }
    struct hub_manifest m = {0};
    *already = cli_path_kind(final) == CLI_PATH_DIR;
    if (*already) {
        rc = check_present(final);
        goto done;
    }
    pthread_once(&curl_once, curl_init_once);
    if ((rc = fetch_metadata(p, repo, &m)) || (rc = make_dir(staging)))
        goto done;
    cli_log(SEER_LOG_INFO, "hub", "%s: %zu files, %" PRIu64 " bytes at revision %s", repo, m.n_files, m.total_bytes,
             m.revision);
    if ((rc = check_space(staging, &m)))
        goto done;
    for (size_t i = 0; i < m.n_files; i++) {
        if (staged_ok(staging, &m.files[i]))
            continue;
        if ((rc = fetch_file(p, repo, m.revision, staging, &m.files[i])))
            goto done;
    }
    if ((rc = write_record(staging, repo, &m)))
        goto done;
    sync_dir(staging);
    if (rename(staging, final) != 0)
        rc = cli_err(SEER_EIO, "%s: cannot move into place (%s)", final, strerror(errno));
    else
        sync_dir(models_dir);
done:
    hub_manifest_free(&m);
    close(lock_fd); /* releases the flock; the empty lock file stays (unlinking it would race) */
    return rc;
}
