/* media.c — a request's images and videos as seer.h inputs (server/server.h), and the keys of the
   prefix cache. Images travel as bytes (seer_image_input.data): a data: URI decoded, a fetched
   URL's body, or a file under --media-path named by path. Videos need a file FFmpeg can seek in, so
   bytes are written to a temporary file, removed with the request. Remote media are fetched only
   with --allow-remote-media, through libcurl, http and https only, within --max-media-bytes and
   --timeout. Keys hash content, never names: the same picture sent as a data: URI and later as a
   file hits the same cache entry, and a file changed in place misses. */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server/server.h"

static bool push(void ***arr, size_t *n, void *p)
{
    void **a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a)
        return false;
    a[(*n)++] = p;
    *arr = a;
    return true;
}

/* ---- hashing --------------------------------------------------------------------------------- */

static struct cache_key digest_key(EVP_MD_CTX *h)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    struct cache_key k = {0, 0};
    EVP_DigestFinal_ex(h, md, &len);
    if (len >= 16) {
        memcpy(&k.a, md, 8);
        memcpy(&k.b, md + 8, 8);
    }
    return k;
}

/* SHA-256 of bytes, or of a file's content (NULL bytes: read path); false when the file cannot be read. */
static bool hash_content(const void *bytes, size_t n, const char *path, struct cache_key *out)
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    bool ok = h && EVP_DigestInit_ex(h, EVP_sha256(), NULL);
    if (ok && bytes) {
        EVP_DigestUpdate(h, bytes, n);
    } else if (ok) {
        FILE *f = fopen(path, "rb");
        char buf[1 << 16];
        size_t k;
        ok = f != NULL;
        while (f && (k = fread(buf, 1, sizeof buf, f)) > 0)
            EVP_DigestUpdate(h, buf, k);
        if (f && ferror(f))
            ok = false;
        if (f)
            fclose(f);
    }
    if (ok)
        *out = digest_key(h);
    EVP_MD_CTX_free(h);
    return ok;
}

/* ---- fetching -------------------------------------------------------------------------------- */

struct fetch {
    char *buf;
    size_t n, cap, max;
};

static size_t fetch_write(char *p, size_t size, size_t nmemb, void *user)
{
    struct fetch *f = user;
    size_t k = size * nmemb;
    if (f->n + k > f->max)
        return 0; /* curl fails the transfer: over the limit */
    if (f->n + k > f->cap) {
        size_t c = f->cap ? f->cap : 1 << 16;
        while (c < f->n + k)
            c *= 2;
        char *b = realloc(f->buf, c);
        if (!b)
            return 0;
        f->buf = b, f->cap = c;
    }
    memcpy(f->buf + f->n, p, k);
    f->n += k;
    return k;
}

static int fetch_url(const struct serve_options *o, const char *url, const char *param, uint8_t **bytes,
                     size_t *n, struct srv_error *err)
{
    CURL *cu = curl_easy_init();
    struct fetch f = {.max = o->max_media_bytes};
    char ebuf[CURL_ERROR_SIZE] = "";
    if (!cu)
        return srv_fail(err, 500, param, "cannot start a download");
    curl_easy_setopt(cu, CURLOPT_URL, url);
    curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(cu, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(cu, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(cu, CURLOPT_MAXREDIRS, 3L);
    curl_easy_setopt(cu, CURLOPT_TIMEOUT, (long)(o->timeout > 0 ? o->timeout : 60));
    curl_easy_setopt(cu, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_media_bytes);
    curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(cu, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, fetch_write);
    curl_easy_setopt(cu, CURLOPT_WRITEDATA, &f);
    CURLcode rc = curl_easy_perform(cu);
    curl_easy_cleanup(cu);
    if (rc == CURLE_FILESIZE_EXCEEDED || (rc == CURLE_WRITE_ERROR && f.n + 1 > f.max)) {
        free(f.buf);
        return srv_fail(err, 413, param, "%s: larger than %zu bytes (seer serve --max-media-bytes)", url,
                        o->max_media_bytes);
    }
    if (rc != CURLE_OK) {
        free(f.buf);
        return srv_fail(err, 422, param, "%s: %s", url, ebuf[0] ? ebuf : curl_easy_strerror(rc));
    }
    *bytes = (uint8_t *)f.buf;
    *n = f.n;
    return 0;
}

/* ---- resolving -------------------------------------------------------------------------------- */

/* Bytes of a video into a temporary file FFmpeg can open. */
static int spill(struct media_set *s, const uint8_t *bytes, size_t n, const char *param, char **path,
                 struct srv_error *err)
{
    const char *dir = getenv("TMPDIR");
    char *t = malloc(4096);
    if (!t)
        return srv_fail(err, 503, param, "out of memory");
    snprintf(t, 4096, "%s/seer-serve-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(t);
    if (fd < 0) {
        free(t);
        return srv_fail(err, 500, param, "cannot write a temporary file for the video");
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, bytes + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
    bool *tmp = realloc(s->temporary, (s->n_paths + 1) * sizeof *tmp);
    if (tmp)
        s->temporary = tmp;
    if (!tmp || !push((void ***)&s->paths, &s->n_paths, t)) {
        unlink(t);
        free(t);
        return srv_fail(err, 503, param, "out of memory");
    }
    s->temporary[s->n_paths - 1] = true;
    if (off < n)
        return srv_fail(err, 500, param, "cannot write a temporary file for the video");
    *path = t;
    return 0;
}

static int resolve_one(const struct serve_options *o, const struct srv_media *md, struct media_set *s,
                       struct cache_key *hash, struct srv_error *err)
{
    uint8_t *bytes = NULL;
    size_t n = 0;
    char *path = NULL;
    const char *url = md->url;
    if (!strncasecmp(url, "data:", 5)) { /* URI schemes are case-insensitive (RFC 3986 §3.1) */
        char mime[64];
        if (srv_data_uri(url, o->max_media_bytes, &bytes, &n, mime, err)) {
            snprintf(err->param, sizeof err->param, "%s", md->param);
            return -1;
        }
    } else if (!strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8)) {
        if (!o->allow_remote_media)
            return srv_fail(err, 400, md->param,
                            "remote media are not fetched: send a data: URI, or start seer serve with "
                            "--allow-remote-media");
        if (fetch_url(o, url, md->param, &bytes, &n, err))
            return -1;
    } else {
        if (srv_media_file(o->media_path, url, md->param, &path, err))
            return -1;
        bool *tmp = realloc(s->temporary, (s->n_paths + 1) * sizeof *tmp);
        if (tmp)
            s->temporary = tmp;
        if (!tmp || !push((void ***)&s->paths, &s->n_paths, path)) {
            free(path);
            return srv_fail(err, 503, md->param, "out of memory");
        }
        s->temporary[s->n_paths - 1] = false;
    }
    if (bytes && !push(&s->owned, &s->n_owned, bytes)) {
        free(bytes);
        return srv_fail(err, 503, md->param, "out of memory");
    }
    if (!hash_content(bytes, n, path, hash))
        return srv_fail(err, 422, md->param, "%s: cannot be read", path ? path : md->param);
    if (md->kind == SRV_VIDEO) {
        if (bytes && spill(s, bytes, n, md->param, &path, err))
            return -1;
        seer_video_input *v = &s->videos[s->n_videos++];
        *v = (seer_video_input){.path = path, .fps = md->fps, .min_frames = md->min_frames,
                                .max_frames = md->max_frames, .max_tokens = md->max_tokens};
        /* the sampling options change the tokens: part of the key */
        hash->a ^= (uint64_t)(md->fps * 1000) * 0x9E3779B97F4A7C15ull ^ (uint64_t)md->max_frames << 20;
        hash->b ^= (uint64_t)md->min_frames * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)md->max_tokens;
    } else {
        seer_image_input *im = &s->images[s->n_images++];
        *im = (seer_image_input){.path = path ? path : md->param, .data = bytes, .data_size = n};
        if (path)
            im->data = NULL, im->data_size = 0;
    }
    return 0;
}

int media_resolve(const struct serve_options *o, const struct srv_message *msg, struct media_set *out,
                  struct srv_error *err)
{
    memset(out, 0, sizeof *out);
    if (msg->n_media == 0)
        return 0;
    out->images = calloc(msg->n_media, sizeof *out->images);
    out->videos = calloc(msg->n_media, sizeof *out->videos);
    out->hashes = calloc(msg->n_media, sizeof *out->hashes);
    if (!out->images || !out->videos || !out->hashes)
        return srv_fail(err, 503, NULL, "out of memory");
    /* the template renders a message's images before its videos (seer_chat_add_media): hashes in
       that order too */
    size_t h = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < msg->n_media; i++)
            if ((msg->media[i].kind == SRV_VIDEO) == (pass == 1) &&
                resolve_one(o, &msg->media[i], out, &out->hashes[h++], err))
                return -1;
    return 0;
}

void media_set_free(struct media_set *s)
{
    for (size_t i = 0; i < s->n_owned; i++)
        free(s->owned[i]);
    for (size_t i = 0; i < s->n_paths; i++) {
        if (s->temporary[i])
            unlink(s->paths[i]);
        free(s->paths[i]);
    }
    free(s->owned), free(s->paths), free(s->temporary);
    free(s->images), free(s->videos), free(s->hashes);
    memset(s, 0, sizeof *s);
}

/* ---- prefix keys ------------------------------------------------------------------------------ */

static struct cache_key chain(const struct cache_key *prev, const struct srv_message *m, const struct media_set *s,
                              bool media_only)
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    struct cache_key k = {0, 0};
    if (!h || !EVP_DigestInit_ex(h, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(h);
        return k;
    }
    const unsigned char kind = media_only ? 1 : 0;
    const uint64_t n_media = s->n_images + s->n_videos;
    if (prev)
        EVP_DigestUpdate(h, prev, sizeof *prev);
    EVP_DigestUpdate(h, &kind, 1);
    EVP_DigestUpdate(h, m->role, strlen(m->role) + 1);
    EVP_DigestUpdate(h, &n_media, sizeof n_media);
    if (n_media)
        EVP_DigestUpdate(h, s->hashes, n_media * sizeof *s->hashes);
    if (!media_only)
        EVP_DigestUpdate(h, m->text, strlen(m->text) + 1);
    k = digest_key(h);
    EVP_MD_CTX_free(h);
    return k;
}

void media_prefix_keys(const struct srv_request *r, const struct media_set *sets, struct cache_key *keys,
                       struct cache_key *media_key, bool *has_media_key)
{
    const size_t n = r->n_messages;
    for (size_t i = 0; i < n; i++)
        keys[i] = chain(i ? &keys[i - 1] : NULL, &r->messages[i], &sets[i], false);
    *has_media_key = n > 0 && sets[n - 1].n_images + sets[n - 1].n_videos > 0;
    if (*has_media_key)
        *media_key = chain(n > 1 ? &keys[n - 2] : NULL, &r->messages[n - 1], &sets[n - 1], true);
}
