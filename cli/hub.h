/* hub.h — models by name from the Hugging Face hub (cli/hub.c, the command's own): the name →
   repository table, the hub's model-metadata response parsed into the list of files seer needs
   (with sizes and checksums), and `hub_pull`, which downloads them with libcurl into
   $SEER_HOME/models/NAME.

   On disk, under `home` (the CLI passes $SEER_HOME, default ~/.cache/seer; made with its missing
   parents):
     models/NAME/              a complete model: it appears (one rename) only when every file has
                               been downloaded and its size and checksum verified
     models/.NAME.partial/     a pull in progress: FILE.part grows (resumed with HTTP Range on the
                               next try), FILE is a verified file waiting for the others
     models/.NAME.lock         flock()ed while a pull of NAME runs
   Endpoint and home come in hub_params: cli/pull.c reads the environment. Errors are reported
   with cli_err (cli/util.h). */
#ifndef SEER_CLI_HUB_H
#define SEER_CLI_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The names `seer pull` and -m know, in table order, NULL-terminated. */
extern const char *const hub_model_names[];
/* The hub repository of a model name ("qwen3.5-0.8b" → "Qwen/Qwen3.5-0.8B"; case-insensitive),
   or NULL when the name is not in the table. */
const char *hub_repo_for(const char *name);
/* The table's spelling of a known name (for directory names), or NULL. */
const char *hub_canonical_name(const char *name);

/* One file of a model as the hub's metadata lists it. Exactly one checksum is set: `sha256`
   (Git LFS files: the SHA-256 of the content) or `git_sha1` (small files kept in Git: the blob
   id, SHA-1 of "blob <size>\0" + content). */
struct hub_file {
    char *name;        /* a plain file name: [A-Za-z0-9._-], no '/', not starting with '.' */
    uint64_t size;     /* bytes */
    char sha256[65];   /* lowercase hex, or "" */
    char git_sha1[41]; /* lowercase hex, or "" */
};

struct hub_manifest {
    char revision[41]; /* the commit the files are fetched at ("sha"), or "main" */
    struct hub_file *files;
    size_t n_files;
    uint64_t total_bytes;
};

/* Parses a response of GET {endpoint}/api/models/{repo}/revision/main?blobs=true: keeps the
   siblings seer needs (config.json, tokenizer.json, tokenizer_config.json, chat_template.jinja,
   preprocessor_config.json, video_preprocessor_config.json, generation_config.json, LICENSE,
   *.safetensors and *.safetensors.index.json) and requires config.json, tokenizer.json and at
   least one .safetensors. Hostile input is refused with SEER_EFORMAT and a message starting with
   `what`: not JSON, wrong types, a name that is a path, a duplicate, a size past 1 TiB, a
   missing or malformed checksum, more than 4096 files. On failure *out is untouched. */
int hub_parse_metadata(const char *json, size_t len, const char *what, struct hub_manifest *out);
/* Frees what hub_parse_metadata allocated and zeroes *m; a zeroed manifest is fine. */
void hub_manifest_free(struct hub_manifest *m);

/* Called during downloads (from the calling thread) with the file being fetched, the bytes of
   it on disk so far and its size; returning non-zero cancels the pull (SEER_ECANCELED). */
typedef int (*hub_progress_fn)(const char *file, uint64_t done, uint64_t size, void *user);

struct hub_params {
    const char *endpoint;   /* base URL, e.g. "https://huggingface.co" (no trailing slash needed) */
    const char *home;       /* seer's data directory; models/ is made under it */
    long connect_timeout_s; /* a connection not made within this fails (0: 30 s) */
    long stall_timeout_s;   /* a transfer that receives nothing for this long fails (0: 60 s) */
    int retries;            /* resumed attempts per file after a cut connection (0: none) */
    hub_progress_fn progress; /* optional */
    void *user;
};

/* models/NAME under `home` into buf (NUL-terminated); SEER_EINVAL when it does not fit. */
int hub_model_dir(const char *home, const char *name, char *buf, size_t size);

/* Makes models/NAME complete: when that directory already exists nothing is fetched (its files
   are checked against the sizes recorded at the pull, without network) and *already is true;
   otherwise the metadata and every missing file are downloaded into models/.NAME.partial
   (resuming FILE.part), each verified, then the directory is renamed into place. Errors (one
   line each): the hub unreachable (with how to use a local model instead), an HTTP error naming
   the URL, a stall, a size or checksum mismatch (the bad .part is removed), another pull of
   NAME running, a disk error. A failed pull leaves only models/.NAME.partial behind. */
int hub_pull(const struct hub_params *p, const char *name, bool *already);

#endif
