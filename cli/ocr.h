/* ocr.h — the pieces of `seer ocr` around its batch loop (cli/ocr.c): the repetition guard
   (cli/ocr_guard.c), the file side (cli/ocr_files.c: the input list — files, directories, globs,
   list files; deduplicated, sharded — the page selection --pages, and the output directory: names,
   atomic writes, what --resume finds there) and the decoding thread (cli/ocr_decode.c).

   Errors are reported through cli_err() (cli/util.h: one line naming the file; cli_last_error()
   gives it, or the library's message); functions return SEER_OK or a SEER_E* code, except where a
   usage problem is printed directly (they say so). */
#ifndef SEER_CLI_OCR_H
#define SEER_CLI_OCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include "seer.h"

/* --format: the text formats print each page as it is done; the layout formats (docs/OCR.md) gather
   an input's pages into one document. */
enum ocr_format { FMT_TEXT, FMT_MARKDOWN, FMT_JSONL, FMT_HOCR, FMT_ALTO, FMT_TSV, FMT_PDF };
#define OCR_LAYOUT(fmt) ((fmt) >= FMT_HOCR)

/* A line of an earlier jsonl output that --resume keeps: page `page` was done. */
struct ocr_kept {
    int page;   /* 1-based */
    char *line; /* the JSON object, without its newline */
};

struct ocr_input {
    char *path;  /* as given, listed, matched or found under a directory argument */
    char *name;  /* its output file under --out, before the format's extension: the path below a
                    directory argument, else the file's base name */
    char *error; /* a problem found while listing (unreadable directory, glob with no match); the
                    input is reported failed without being opened */
    dev_t dev;   /* identity of an existing file, for removing duplicates */
    ino_t ino;
    bool exists;
    /* what --resume found: `skip` = the output is complete; else the pages already done */
    bool skip;
    struct ocr_kept *kept;
    size_t n_kept;
};

struct ocr_list {
    struct ocr_input *v;
    size_t n, cap;
    dev_t out_dev; /* the --out directory, never walked as input (has_out) */
    ino_t out_ino;
    bool has_out;
};

/* Adds one command-line argument: a directory is walked recursively (entries sorted bytewise,
   hidden names skipped, symbolic links to directories not followed, the --out directory left
   out); a path that does not exist and holds * ? or [ is a glob (matches sorted); anything else is
   one input, even a missing or unreadable one (it fails when opened). `glob_ok` false treats the
   argument literally (lines of a list file). */
int ocr_list_add(struct ocr_list *l, const char *arg, bool glob_ok);
/* Adds every non-empty line of `path` ("-" = stdin) as a literal argument. */
int ocr_list_add_file(struct ocr_list *l, const char *path);
/* Keeps the first of several entries naming the same file (same device and inode). */
void ocr_list_dedupe(struct ocr_list *l);
/* Two inputs whose outputs under --out would have the same name: printed (both paths), returns
   false. */
bool ocr_list_names_unique(const struct ocr_list *l, const char *ext);
/* Keeps entries i, i + n, i + 2n, … of the list (--shard I/N). */
void ocr_list_shard(struct ocr_list *l, long i, long n);
void ocr_list_free(struct ocr_list *l);

/* --pages "1-3,7,10-": sorted, non-overlapping 1-based ranges; hi = INT32_MAX for an open end.
   An empty selection (n == 0) means every page. */
struct ocr_pages {
    int32_t lo[64], hi[64];
    int n;
};
/* false on a malformed list (the caller prints the usage error). */
bool ocr_pages_parse(const char *s, struct ocr_pages *p);
bool ocr_pages_has(const struct ocr_pages *p, int page);

/* Creates the --out directory (and its parents) and proves that a file can be created in it. */
int ocr_out_prepare(const char *dir);
/* Writes dir/name+ext so that it is either absent or complete: a temporary file beside it
   (".BASE.seer-XXXXXX"), written, fsync'ed, renamed over the name, the directory fsync'ed.
   SIGINT/SIGTERM/SIGHUP/SIGPIPE are held back for that moment, so a signal never leaves the
   temporary file behind; on any failure (ENOSPC, EROFS, EIO) it is removed. */
int ocr_write_atomic(const char *dir, const char *name, const char *ext, const char *data, size_t n);
/* --resume: reads dir/name+ext for one input. Text and Markdown: the file exists → in->skip.
   jsonl: every object has "page" and "text" → in->skip; some have "error" → the pages with text
   are kept in in->kept and the others done again; anything unreadable → everything again. */
int ocr_resume_read(const char *dir, const char *ext, bool jsonl, struct ocr_input *in);

/* ---- the repetition guard (cli/ocr_guard.c) ---- */

/* Watches the answer byte by byte: run[p] counts the bytes in a row that equal the byte p earlier,
   so the text's last run[p] + p bytes repeat with period p. Bytes rather than tokens: a loop is
   periodic in its text however the tokenizer or the stream chunks it. O(GUARD_MAX_PERIOD) per byte.
   It fires when the last `span` bytes or more are one piece of at most GUARD_MAX_PERIOD bytes
   repeated `repeats` times or more. */
#define GUARD_MAX_PERIOD 256
struct guard {
    long repeats, span;                   /* thresholds; repeats 0 = off */
    unsigned char last[GUARD_MAX_PERIOD]; /* the last bytes, a ring indexed by position */
    uint32_t run[GUARD_MAX_PERIOD + 1];
    size_t n;                             /* bytes seen */
    bool fired;
};

void guard_reset(struct guard *g, long repeats, long span);
/* Adds streamed text; true when the text now ends in a loop. */
bool guard_push(struct guard *g, const char *s, size_t len);

/* ---- the layout formats (cli/ocr_layout.c) ---- */

struct ocr_item;

/* One input's document in a layout format: its pages read (hocr, alto, tsv), or drawn (pdf). */
struct ocr_doc {
    seer_ocr_page **pages; /* NULL entries: pages that failed */
    size_t n, cap;
    seer_ocr_pdf *pdf;
};

/* Adds a done page: the answer r to the page of item it (its pixels, for a PDF). */
int ocr_doc_page(struct ocr_doc *d, enum ocr_format fmt, const struct ocr_item *it, const seer_result *r);
/* Adds a page that failed. */
int ocr_doc_failed(struct ocr_doc *d, enum ocr_format fmt);
/* The document's bytes (*out, NULL when no page was added; release with seer_free — it comes from
   the library). `source` names the input in it. */
int ocr_doc_finish(struct ocr_doc *d, enum ocr_format fmt, const char *source, char **out, size_t *len);
void ocr_doc_clear(struct ocr_doc *d);

/* ---- the decoding thread (cli/ocr_decode.c) ---- */

/* One decoded page for the device, or an input that gave none: failed (rc), or no page selected
   (page 0). Items come in input order, pages in page order. */
struct ocr_item {
    size_t input;           /* index in the list */
    int page;               /* 1-based; 1 for an input that failed before its pages, 0 for none selected */
    int n_pages, n_todo;    /* the document's pages, and how many of them come (0 for a failed input) */
    bool last;              /* the input's last item */
    int rc;                 /* SEER_OK, or why the input or page failed (error holds the line) */
    double dpi;             /* the page's resolution (seer_document_dpi; 0 = unknown) */
    char *error;
    uint8_t *rgb;           /* the page's pixels (seer_document_decode), when rc is SEER_OK */
    int32_t width, height;
};

/* A one-slot queue between the thread and the batch loop. Fill list, pages and params, then start. */
struct ocr_prefetch {
    const struct ocr_list *list; /* inputs with skip set are passed over */
    const struct ocr_pages *pages;
    const seer_model_params *params; /* the decoding limits (seer_document_open) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ocr_item slot;
    bool full, finished, quit;
};

int ocr_prefetch_start(struct ocr_prefetch *pf);
/* The next item (owned by the caller: ocr_item_clear); false when there are no more. */
bool ocr_prefetch_take(struct ocr_prefetch *pf, struct ocr_item *out);
/* Stops the thread (wherever it is) and frees what it still holds. */
void ocr_prefetch_stop(struct ocr_prefetch *pf);
void ocr_item_clear(struct ocr_item *it);
/* The calling thread's last error line (cli_last_error, or the code's text), strdup'ed. */
char *ocr_error_line(int rc);

#endif
