/* ocr.c — `seer ocr`: batch OCR of scanned documents (docs/CLI.md, docs/BATCH.md).

   The inputs (files, directories, globs, list files; cli/ocr_files.c) are expanded to pages; each
   page is one fresh conversation — the page image and the OCR prompt — answered with greedy
   decoding. The model is loaded once. A second thread opens and decodes the next page
   (seer_document_decode → RGB) while the current one runs on the device; the main thread hands the
   pixels to the model (seer_chat_add_images), formats the result and writes it: to stdout as each
   page finishes, or with --out to one file per input, written atomically when the input is done.

   A repetition guard watches the streamed text and stops a page that loops (the known failure of
   small VLMs on OCR); a failed page or input is reported on stderr (and in jsonl) and the batch goes
   on. Exit status: 0 all pages done, 3 some failed, 1 fatal (model, device, output), 2 usage.

   Divisions: options; signals and streaming; formatting results; the batch. The repetition guard
   is cli/ocr_guard.c. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gen.h"
#include "cli/ocr.h"
#include "cli/util.h"
#include "seer.h"

/* ---- options ---------------------------------------------------------------------------------- */

static const char *const fmt_ext[] = {".txt", ".md", ".jsonl", ".hocr", ".xml", ".tsv", ".pdf"};
static const char *const fmt_name[] = {"text", "markdown", "jsonl", "hocr", "alto", "tsv", "pdf"};

/* The default prompts: the page's text in reading order and nothing else. Small VLMs tend to
   describe an image unless told not to, hence the last sentence. */
static const char prompt_text[] =
    "Read all the text on this page in natural reading order. Write it exactly as printed, keeping "
    "the line and paragraph breaks. Output only the text, with no description or commentary.";
static const char prompt_markdown[] =
    "Convert this page to Markdown in natural reading order: headings as #, lists as lists, tables as "
    "Markdown tables. Output only the Markdown, with no description or commentary.";

/* OCR generation defaults (the flags override them): greedy decoding, no presence penalty — a
   penalty on tokens already generated pushes a transcription away from words the page repeats —
   the loop that greedy decoding risks is cut by the repetition guard instead. A letter-size page at
   200 dpi is about 3,700 image tokens (spec §5.2), and a dense page about 1,500 text tokens. */
#define OCR_TEMPERATURE 0.0f
#define OCR_PRESENCE_PENALTY 0.0f
#define OCR_MAX_TOKENS 2048
/* the layout formats' answer carries four numbers and JSON around every line: about twice the tokens */
#define OCR_MAX_TOKENS_LAYOUT 4096
#define MAX_TOKENS_UNSET INT64_MIN
#define OCR_N_CTX 8192

/* Repetition guard defaults: the text's last GUARD_SPAN bytes or more are one piece of at most
   GUARD_MAX_PERIOD bytes (cli/ocr.h) repeated back to back GUARD_REPEATS times or more. A loop of a short piece
   (a character, a word) needs the span — 400 bytes of one character is no ruler or dot leader on a
   printed page; a loop of whole lines needs the ten repeats. */
#define GUARD_REPEATS 10
#define GUARD_SPAN 400

/* The command's own options (the generation options are gen_opts_table's), in --help order. */
enum {
    O_FROM_LIST = 1, O_PAGES, O_FORMAT, O_OUT, O_RESUME, O_SHARD, O_PROMPT, O_REPEAT_GUARD, O_MMPROJ, O_IMG_MIN,
    O_IMG_MAX, O_MAX_PIXELS, O_DPI, O_PARALLEL, O_HELP,
};
static const struct cli_opt ocr_table[] = {
    {{"--from-list"}, "FILE", "more inputs, one path per line ('-' = stdin)", O_FROM_LIST},
    {{"--pages"}, "LIST", "pages of multi-page inputs, e.g. 1-3,7 or 2- (default: all)", O_PAGES},
    {{"--format"}, "F", "text (default; pages separated by a form feed), markdown, jsonl (one object per page); "
                        "with line boxes (docs/OCR.md): hocr, alto, tsv (one document per input), pdf (searchable, "
                        "needs --out)", O_FORMAT},
    {{"-o", "--out"}, "DIR", "one file per input under DIR (INPUT.txt/.md/.jsonl/.hocr/.xml/.tsv/.pdf), written "
                             "atomically; nothing on stdout", O_OUT},
    {{"--resume"}, NULL, "with --out: skip inputs whose output is complete (jsonl: redo only failed pages)", O_RESUME},
    {{"--shard"}, "I/N", "take inputs I, I+N, I+2N, ... of the expanded list (0 <= I < N)", O_SHARD},
    {{"-p", "--prompt"}, "PROMPT", "the instruction (default: the page's text in reading order; for markdown, as "
                                   "Markdown)", O_PROMPT},
    {{"--repeat-guard"}, "R,S", "stop a page whose last S+ bytes are one piece of <= 256 bytes repeated R+ times "
                                "(default 10,400; 0 = off)", O_REPEAT_GUARD},
    {{"--mmproj"}, "FILE", "the vision projector of a GGUF text model (default: the one mmproj*.gguf beside it)",
     O_MMPROJ},
    {{"--image-min-tokens"}, "N", "per-image token window, low end (default: the model's, 64)", O_IMG_MIN},
    {{"--image-max-tokens"}, "N", "per-image token window, high end (default: the model's, 16384)", O_IMG_MAX},
    {{"--max-image-pixels"}, "N", "refuse larger decoded pages (default 178956970)", O_MAX_PIXELS},
    {{"--dpi"}, "N", "PDF rasterisation resolution (default 200)", O_DPI},
    {{"--parallel"}, "N", "pages read at once, decoded together in one pass over the weights per token (default: "
                          "what the device and its memory suit, 4 or 8 on a CPU; 1 = one by one)", O_PARALLEL},
    {{"-h", "--help"}, NULL, "this help", O_HELP},
};

static void ocr_usage(void)
{
    printf("usage: seer ocr -m MODEL [options] INPUT...\n"
           "  INPUT                     an image, a PDF or multi-page TIFF (every page), a directory (walked\n"
           "                            recursively, sorted; hidden names skipped) or a glob pattern (quote it)\n");
    cli_opt_help(stdout, ocr_table, sizeof ocr_table / sizeof *ocr_table);
    printf("  OCR defaults differ from seer run: --temp 0 --presence-penalty 0 -n 2048 (4096 for hocr, alto, tsv, "
           "pdf) -c 8192\n%s", gen_help);
}

struct ocr_opts {
    struct gen_opts g;
    enum ocr_format fmt;
    const char *out;
    const char **lists; /* --from-list files */
    int n_lists;
    const char **args;  /* inputs */
    int n_args;
    bool resume;
    struct ocr_pages pages;
    long shard_i, shard_n;
    long guard_repeats, guard_span;
    long parallel;      /* 0 = seer_batch_size_default */
};

static int whole(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "seer ocr: %s needs a whole number in [%ld, %ld], got '%s'\n", opt, lo, hi, v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* "A/B" with both whole numbers; false otherwise. */
static bool pair(const char *v, char sep, long *a, long *b)
{
    char *end;
    errno = 0;
    *a = v ? strtol(v, &end, 10) : -1;
    if (!v || end == v || *end != sep || errno)
        return false;
    const char *s = end + 1;
    *b = strtol(s, &end, 10);
    return end != s && !*end && !errno;
}

/* ocr's own options and its operands (opt NULL: an input file), for gen_parse_args. */
static int ocr_opt(const struct cli_opt *opt, const char *v, void *user)
{
    struct ocr_opts *o = user;
    long x;
    if (!opt) {
        o->args[o->n_args++] = v;
        return GEN_NEXT;
    }
    const char *nm = opt->name[0];
    switch (opt->key) {
    case O_PROMPT: o->g.prompt = v; break;
    case O_MMPROJ: o->g.mp.mmproj = v; break;
    case O_OUT: o->out = v; break;
    case O_FROM_LIST: o->lists[o->n_lists++] = v; break;
    case O_RESUME: o->resume = true; break;
    case O_FORMAT:
    {
        int f = FMT_PDF;
        while (f >= FMT_TEXT && strcmp(v, fmt_name[f]) && !(f == FMT_MARKDOWN && !strcmp(v, "md")))
            f--;
        if (f < FMT_TEXT)
            return fprintf(stderr, "seer ocr: --format is text, markdown, jsonl, hocr, alto, tsv or pdf, not '%s'\n",
                           v), CLI_USAGE;
        o->fmt = (enum ocr_format)f;
        break;
    }
    case O_PAGES:
        if (!ocr_pages_parse(v, &o->pages))
            return fprintf(stderr, "seer ocr: --pages needs page numbers from 1 and ranges like 1-3,7 or "
                           "5- (at most 64), got '%s'\n", v), CLI_USAGE;
        break;
    case O_SHARD:
        if (!pair(v, '/', &o->shard_i, &o->shard_n) || o->shard_n < 1 || o->shard_i < 0 ||
            o->shard_i >= o->shard_n)
            return fprintf(stderr, "seer ocr: --shard needs I/N with 0 <= I < N, got '%s'\n", v), CLI_USAGE;
        break;
    case O_REPEAT_GUARD:
        if (!strcmp(v, "0") || !strcmp(v, "off"))
            o->guard_repeats = 0;
        else if (!pair(v, ',', &o->guard_repeats, &o->guard_span) || o->guard_repeats < 2 ||
                 o->guard_repeats > 1000000 || o->guard_span < 2 || o->guard_span > 100000000)
            return fprintf(stderr, "seer ocr: --repeat-guard needs R,S (repeats >= 2, bytes >= 2) or 0, "
                           "got '%s'\n", v), CLI_USAGE;
        break;
    case O_IMG_MIN:
    case O_IMG_MAX:
        if (whole(nm, v, 1, 1L << 30, &x))
            return CLI_USAGE;
        *(opt->key == O_IMG_MIN ? &o->g.mp.image_min_tokens : &o->g.mp.image_max_tokens) = x;
        break;
    case O_MAX_PIXELS:
        if (whole(nm, v, 1, 1L << 40, &x))
            return CLI_USAGE;
        o->g.mp.max_image_pixels = x;
        break;
    case O_PARALLEL:
        if (whole(nm, v, 1, SEER_BATCH_MAX, &o->parallel))
            return CLI_USAGE;
        break;
    case O_DPI:
        if (whole(nm, v, 10, 2400, &x))
            return CLI_USAGE;
        o->g.mp.pdf_dpi = (double)x;
        break;
    case O_HELP: ocr_usage(); return CLI_OK;
    }
    return GEN_NEXT;
}

/* 0 ok, CLI_USAGE on a bad command line (reported), -1 for --help (printed). */
static int parse(int argc, char **argv, struct ocr_opts *o)
{
    gen_opts_init(&o->g);
    o->g.gp.sampling.temperature = OCR_TEMPERATURE;
    o->g.gp.sampling.presence_penalty = OCR_PRESENCE_PENALTY;
    o->g.gp.max_tokens = MAX_TOKENS_UNSET;
    o->g.gp.think = 0; /* a task answer, not a conversation: no reasoning unless --think */
    o->g.cp.n_ctx = OCR_N_CTX;
    o->shard_n = 1;
    o->guard_repeats = GUARD_REPEATS, o->guard_span = GUARD_SPAN;
    o->args = calloc((size_t)argc, sizeof *o->args);
    o->lists = calloc((size_t)argc, sizeof *o->lists);
    if (!o->args || !o->lists)
        return fprintf(stderr, "seer ocr: out of memory\n"), CLI_USAGE;
    int st = gen_parse_args("ocr", ocr_table, sizeof ocr_table / sizeof *ocr_table, true, argc, argv, &o->g, ocr_opt, o);
    if (st != GEN_NEXT)
        return st == CLI_OK ? -1 : st; /* -1: --help was printed */
    if (!o->g.prompt)
        o->g.prompt = OCR_LAYOUT(o->fmt) ? SEER_OCR_PROMPT_LINES : o->fmt == FMT_MARKDOWN ? prompt_markdown : prompt_text;
    if (o->g.gp.max_tokens == MAX_TOKENS_UNSET)
        o->g.gp.max_tokens = OCR_LAYOUT(o->fmt) ? OCR_MAX_TOKENS_LAYOUT : OCR_MAX_TOKENS;
    o->g.gp.logprobs = OCR_LAYOUT(o->fmt); /* word confidences (x_wconf, WC, conf) */
    if (!o->g.model)
        return cli_no_model("ocr");
    if (o->n_args == 0 && o->n_lists == 0) {
        fprintf(stderr, "seer ocr: need -m MODEL and at least one INPUT or --from-list (see seer ocr --help)\n");
        return CLI_USAGE;
    }
    if (o->fmt == FMT_PDF && !o->out) {
        fprintf(stderr, "seer ocr: --format pdf needs --out DIR (one PDF per input)\n");
        return CLI_USAGE;
    }
    if (o->resume && !o->out) {
        fprintf(stderr, "seer ocr: --resume needs --out DIR (it looks there for finished outputs)\n");
        return CLI_USAGE;
    }
    int stdin_lists = 0;
    for (int k = 0; k < o->n_lists; k++)
        stdin_lists += !strcmp(o->lists[k], "-");
    if (stdin_lists > 1)
        return fprintf(stderr, "seer ocr: --from-list - can be given once\n"), CLI_USAGE;
    return 0;
}

/* ---- signals and streaming ------------------------------------------------------------------- */

/* The signal that interrupts the batch (SIGINT, SIGTERM, SIGHUP, SIGPIPE); 0 while running. A
   second one ends the process at once, except SIGPIPE, which every further write would repeat. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    if (g_signal && sig != SIGPIPE) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    g_signal = sig;
}

static int on_text(const char *text, size_t len, void *user)
{
    struct guard *g = user;
    if (g_signal)
        return 1;
    return g->repeats && guard_push(g, text, len);
}

/* ---- formatting results ----------------------------------------------------------------------- */

/* One page's formatted result: the text (a newline added), the Markdown with its source comment,
   or one JSON line. Pages of one output are joined by page_sep. */
struct chunk {
    int page;
    char *s;
};
static const char *const page_sep[] = {"\f", "\n", "", "\f", "\f", "\f", ""}; /* layout: between inputs */

static json_t *json_path(const char *path)
{
    json_t *j = json_string(path);
    if (j)
        return j;
    char *s = strdup(path); /* not UTF-8: the name's other bytes are kept readable */
    for (char *c = s; c && *c; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    j = s ? json_string(s) : NULL;
    free(s);
    return j;
}

static char *json_line(json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL, *line = NULL;
    json_decref(o);
    if (s && (line = malloc(strlen(s) + 2)))
        sprintf(line, "%s\n", s);
    free(s);
    return line;
}

/* <!-- PATH, page N --> before each Markdown page; a "--" in the path (which would end the
   comment) keeps its second dash as %2D. */
static char *md_header(const char *path, int page)
{
    size_t n = strlen(path);
    char *s = malloc(3 * n + 48), *w = s;
    if (!s)
        return NULL;
    w += sprintf(w, "<!-- ");
    for (size_t i = 0; i < n; i++)
        w += i && path[i] == '-' && path[i - 1] == '-' ? sprintf(w, "%%2D") : sprintf(w, "%c", path[i]);
    sprintf(w, ", page %d -->\n\n", page);
    return s;
}

static char *fmt_page(enum ocr_format fmt, const char *path, int page, const seer_result *r, double seconds,
                      bool repetition)
{
    if (fmt == FMT_JSONL)
        return json_line(json_pack("{s:o, s:i, s:s%, s:I, s:I, s:f, s:b}", "path", json_path(path), "page", page,
                                   "text", r->text, r->text_len, "prompt_tokens", (json_int_t)r->prompt_tokens,
                                   "generated_tokens", (json_int_t)r->n_tokens, "seconds", seconds,
                                   "repetition", repetition));
    char *head = fmt == FMT_MARKDOWN ? md_header(path, page) : strdup("");
    /* text and Markdown drop any U+0000 the model wrote (tools take such files for binary); JSON
       Lines keeps it, escaped */
    size_t tl = r->text_len, hl = head ? strlen(head) : 0, w = hl;
    char *s = head ? malloc(hl + tl + 2) : NULL;
    if (s) {
        memcpy(s, head, hl);
        for (size_t i = 0; i < tl; i++)
            if (r->text[i])
                s[w++] = r->text[i];
        if (w == hl || s[w - 1] != '\n')
            s[w++] = '\n';
        s[w] = '\0';
    }
    free(head);
    return s;
}

static char *fmt_error(const char *path, int page, const char *msg)
{
    return json_line(json_pack("{s:o, s:i, s:s}", "path", json_path(path), "page", page, "error", msg));
}

static int cmp_chunk(const void *a, const void *b)
{
    const struct chunk *x = a, *y = b;
    return (x->page > y->page) - (x->page < y->page);
}

/* ---- the batch -------------------------------------------------------------------------------- */

/* A page in flight: one context of the seer_batch, its repetition guard, the generation parameters
   the batch borrows until the page is taken. */
struct slot {
    seer_context *ctx;
    struct guard guard;
    seer_generate_params gp;
    bool busy;
};

/* An item from the decoding thread, held in input order until its result is written: pages finish
   out of order when several run at once, their outputs never do. */
struct job {
    struct ocr_item it;
    struct slot *slot;  /* while it runs */
    bool done;
    int rc;             /* of the page's run */
    char *error;        /* its message, when rc fails */
    seer_result r;
    double t0, seconds;
    bool looped;        /* the repetition guard stopped it */
};

struct batch {
    const struct ocr_opts *o;
    const struct ocr_list *list;
    seer_batch *sb;
    struct slot *slots;
    int n_slots;
    struct job *q;            /* a ring of q_cap jobs: q_n from q_head on, in input order */
    size_t q_head, q_n, q_cap;
    struct chunk *out; /* the current input's pages, with --out */
    struct ocr_doc doc;       /* the current input's document, in a layout format */
    size_t n_out, cap_out;
    size_t input_failed;      /* failed pages of the current input */
    bool printed;             /* a page went to stdout already (separators) */
    size_t pages_ok, pages_failed, loops, inputs_done, inputs_total;
    size_t pages_done, pages_total; /* progress; the total grows as documents are opened */
    bool progress;
    double t0;
};

static void progress_show(const struct batch *b)
{
    if (!b->progress)
        return;
    double dt = cli_time_now() - b->t0, rate = dt > 0 ? (double)b->pages_done / dt : 0;
    size_t left = b->pages_total > b->pages_done ? b->pages_total - b->pages_done : 0;
    long eta = rate > 0 ? (long)((double)left / rate + 0.5) : -1;
    /* per minute: on a CPU a page takes many seconds, and "0.03 pages/s" says little */
    fprintf(stderr, "\r\033[Kseer ocr: %zu/%zu pages, %zu/%zu files, %.1f pages/min", b->pages_done, b->pages_total,
            b->inputs_done, b->inputs_total, 60 * rate);
    if (eta >= 0)
        fprintf(stderr, ", ETA %ld:%02ld:%02ld", eta / 3600, eta / 60 % 60, eta % 60);
}

/* A line on stderr, above the progress line when there is one. */
static void note(const struct batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct batch *b, const char *fmt, ...)
{
    va_list ap;
    if (b->progress)
        fputs("\r\033[K", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    progress_show(b);
}

/* A formatted page (taken) to stdout now, or to the current input's output. */
static int emit(struct batch *b, int page, char *s)
{
    if (!s)
        return cli_err(SEER_ENOMEM, "out of memory formatting a result");
    if (!b->o->out) {
        if (b->printed)
            fputs(page_sep[b->o->fmt], stdout);
        fputs(s, stdout);
        b->printed = true;
        free(s);
        if (fflush(stdout) || ferror(stdout))
            return cli_err(SEER_EIO, "stdout: write failed: %s", strerror(errno));
        return SEER_OK;
    }
    if (!cli_grow(&b->out, &b->cap_out, b->n_out + 1, sizeof *b->out, 16))
        return free(s), cli_err(SEER_ENOMEM, "out of memory holding the results of an input");
    b->out[b->n_out++] = (struct chunk){page, s};
    return SEER_OK;
}

static void out_clear(struct batch *b)
{
    ocr_doc_clear(&b->doc);
    for (size_t k = 0; k < b->n_out; k++)
        free(b->out[k].s);
    b->n_out = 0;
    b->input_failed = 0;
}

/* A layout format's document for the input: to its file under --out, or to stdout. */
static int finish_layout(struct batch *b, const struct ocr_input *in)
{
    const struct ocr_opts *o = b->o;
    char *doc;
    size_t n;
    int rc = ocr_doc_finish(&b->doc, o->fmt, in->path, &doc, &n);
    if (rc)
        rc = cli_err(rc, "%s: %s", in->path, cli_last_error());
    else if (doc && o->out)
        rc = ocr_write_atomic(o->out, in->name, fmt_ext[o->fmt], doc, n);
    else if (doc) {
        if (b->printed)
            fputs(page_sep[o->fmt], stdout);
        b->printed = true;
        if (fwrite(doc, 1, n, stdout) != n || fflush(stdout))
            rc = cli_err(SEER_EIO, "stdout: write failed: %s", strerror(errno));
    }
    seer_free(doc);
    out_clear(b);
    return rc;
}

/* The input is done: its output file, complete, under --out. A text or Markdown output with a
   failed page is not written (it would look complete); --resume does that input again. */
static int finish_input(struct batch *b, const struct ocr_input *in)
{
    const struct ocr_opts *o = b->o;
    int rc = SEER_OK;
    b->inputs_done++;
    if (OCR_LAYOUT(o->fmt) && !(o->out && b->input_failed))
        return finish_layout(b, in);
    if (!o->out)
        return out_clear(b), SEER_OK;
    if (o->fmt != FMT_JSONL && b->input_failed) {
        if (b->n_out) /* some pages were done, and are dropped: say so */
            note(b, "seer ocr: %s: %zu page%s failed; %s%s not written (--resume does it again)", in->path,
                 b->input_failed, b->input_failed == 1 ? "" : "s", in->name, fmt_ext[o->fmt]);
        return out_clear(b), SEER_OK;
    }
    for (size_t k = 0; k < in->n_kept && !rc; k++) { /* jsonl pages an earlier run did */
        char *line = malloc(strlen(in->kept[k].line) + 2);
        if (line)
            sprintf(line, "%s\n", in->kept[k].line);
        rc = emit(b, in->kept[k].page, line);
    }
    if (!rc && b->n_out) {
        qsort(b->out, b->n_out, sizeof *b->out, cmp_chunk);
        size_t n = 0, sep = strlen(page_sep[o->fmt]);
        for (size_t k = 0; k < b->n_out; k++)
            n += strlen(b->out[k].s) + sep;
        char *all = malloc(n + 1), *w = all;
        if (!all)
            rc = cli_err(SEER_ENOMEM, "out of memory writing %s%s", in->name, fmt_ext[o->fmt]);
        for (size_t k = 0; all && k < b->n_out; k++)
            w = stpcpy(k ? stpcpy(w, page_sep[o->fmt]) : w, b->out[k].s);
        if (all)
            rc = ocr_write_atomic(o->out, in->name, fmt_ext[o->fmt], all, (size_t)(w - all));
        free(all);
    }
    out_clear(b);
    return rc;
}

/* Starts a decoded page on a free slot: a fresh conversation (the page image and the prompt) added
   to the seer_batch, which feeds its prompt now. Its pixels are copied by seer_chat_add_images and
   freed here. A page that cannot start is done, with the error. */
static void job_start(struct batch *b, struct job *j)
{
    const struct ocr_opts *o = b->o;
    struct slot *sl = b->slots;
    while (sl->busy)
        sl++;
    seer_image_input img = {.rgb = j->it.rgb, .width = j->it.width, .height = j->it.height};
    sl->gp = o->g.gp;
    sl->gp.on_text = on_text;
    sl->gp.user_data = &sl->guard;
    guard_reset(&sl->guard, o->guard_repeats, o->guard_span);
    j->t0 = cli_time_now();
    int rc = seer_context_reset(sl->ctx);
    if (!rc && o->g.system)
        rc = seer_chat_add(sl->ctx, "system", o->g.system);
    if (!rc)
        rc = seer_chat_add_images(sl->ctx, "user", &img, 1, o->g.prompt);
    if (o->fmt != FMT_PDF) { /* a PDF draws the page once it is read */
        seer_free(j->it.rgb);
        j->it.rgb = NULL;
    }
    if (!rc)
        rc = seer_batch_add_chat(b->sb, sl->ctx, &sl->gp);
    if (rc) {
        j->done = true;
        j->rc = rc;
        j->error = ocr_error_line(rc);
        return;
    }
    sl->busy = true;
    j->slot = sl;
}

/* Pages the batch finished: their jobs are done. */
static void jobs_collect(struct batch *b)
{
    seer_context *c;
    seer_result r;
    int st;
    while (seer_batch_take(b->sb, &c, &r, &st)) {
        struct job *j = NULL;
        for (size_t k = 0; k < b->q_n && !j; k++) {
            struct job *x = &b->q[(b->q_head + k) % b->q_cap];
            if (x->slot && x->slot->ctx == c && !x->done)
                j = x;
        }
        if (!j) { /* cannot happen: every reply in the batch belongs to a job */
            seer_result_clear(&r);
            continue;
        }
        j->r = r;
        j->rc = st;
        j->error = st ? ocr_error_line(st) : NULL;
        j->seconds = cli_time_now() - j->t0;
        j->looped = j->slot->guard.fired;
        j->slot->busy = false;
        j->slot = NULL;
        j->done = true;
    }
}

static void job_clear(struct job *j)
{
    ocr_item_clear(&j->it);
    seer_result_clear(&j->r);
    free(j->error);
    memset(j, 0, sizeof *j);
}

/* A failed input or page: one line on stderr, an error object in jsonl. */
static int record_failure(struct batch *b, const char *path, int page, bool multipage, const char *msg)
{
    if (multipage)
        note(b, "seer ocr: %s (page %d)", msg, page);
    else
        note(b, "seer ocr: %s", msg);
    b->pages_failed++;
    b->input_failed++;
    if (OCR_LAYOUT(b->o->fmt))
        return ocr_doc_failed(&b->doc, b->o->fmt);
    return b->o->fmt == FMT_JSONL ? emit(b, page, fmt_error(path, page, msg)) : SEER_OK;
}

/* A done job, in input order: its result (or failure) formatted and written. Returns SEER_OK to go
   on, or the code of a fatal error (its line printed). */
static int handle(struct batch *b, struct job *j)
{
    const struct ocr_item *it = &j->it;
    const struct ocr_input *in = &b->list->v[it->input];
    int rc = SEER_OK;
    if (it->rc) {
        rc = record_failure(b, in->path, it->page, it->n_pages > 1, it->error);
    } else if (it->page == 0) {
        note(b, "seer ocr: %s: warning: --pages selects none of its pages", in->path);
    } else if (j->rc == SEER_EDEVICE || j->rc == SEER_EUNSUPPORTED) {
        note(b, "seer ocr: %s", j->error);
        return j->rc;
    } else if (j->rc) {
        rc = record_failure(b, in->path, it->page, it->n_pages > 1, j->error ? j->error : "failed");
    } else {
        if (j->looped) {
            b->loops++;
            note(b, "seer ocr: %s page %d: warning: the text repeats itself; stopped after %zu tokens "
                 "(--repeat-guard)", in->path, it->page, j->r.n_tokens);
        }
        if (OCR_LAYOUT(b->o->fmt) && j->r.stop == SEER_STOP_LENGTH)
            note(b, "seer ocr: %s page %d: warning: the answer was cut at -n %lld tokens; the lines after it are "
                 "missing (raise -n)", in->path, it->page, (long long)b->o->g.gp.max_tokens);
        b->pages_ok++;
        if (OCR_LAYOUT(b->o->fmt) && (rc = ocr_doc_page(&b->doc, b->o->fmt, it, &j->r)))
            rc = cli_err(rc, "%s: %s", in->path, cli_last_error());
        else if (!OCR_LAYOUT(b->o->fmt))
            rc = emit(b, it->page, fmt_page(b->o->fmt, in->path, it->page, &j->r, j->seconds, j->looped));
    }
    if (rc && g_signal == SIGPIPE)
        return SEER_ECANCELED;
    if (rc) {
        note(b, "seer ocr: %s", cli_last_error());
        return rc;
    }
    b->pages_done++;
    if (it->last && (rc = finish_input(b, in)))
        note(b, "seer ocr: %s", cli_last_error());
    progress_show(b);
    return rc;
}

/* The device side: up to n_slots pages run at once while the decoding thread prepares the next, and
   results leave in input order. Items are taken while a slot is free (the queue bounds how far a
   slow page lets the others run ahead); each seer_batch_step decodes one token of every running
   page. Returns SEER_OK, or the fatal error that stopped the batch. */
static int run_all(struct batch *b, struct ocr_prefetch *pf)
{
    size_t cur = SIZE_MAX;
    bool eof = false;
    int rc = SEER_OK, busy = 0;
    while (!rc && !g_signal) {
        while (!eof && !g_signal && busy < b->n_slots && b->q_n < b->q_cap) {
            struct job *j = &b->q[(b->q_head + b->q_n) % b->q_cap];
            if (!ocr_prefetch_take(pf, &j->it)) {
                eof = true;
                break;
            }
            b->q_n++;
            if (j->it.input != cur) { /* the input's pages are known now: an estimate of 1 becomes exact */
                cur = j->it.input;
                b->pages_total = b->pages_total - 1 + (size_t)(j->it.rc ? 1 : j->it.n_todo);
            }
            j->done = j->it.rc || j->it.page == 0;
            if (!j->done)
                job_start(b, j);
            busy += j->slot != NULL;
        }
        while (!rc && b->q_n && b->q[b->q_head].done) {
            rc = handle(b, &b->q[b->q_head]);
            job_clear(&b->q[b->q_head]);
            b->q_head = (b->q_head + 1) % b->q_cap;
            b->q_n--;
        }
        if (rc || g_signal || (eof && b->q_n == 0))
            break;
        if (seer_batch_active(b->sb)) /* a device failure ends the step's pages with it: handle() stops */
            seer_batch_step(b->sb);
        jobs_collect(b);
        busy = seer_batch_active(b->sb);
    }
    if (g_signal && !rc)
        rc = SEER_ECANCELED;
    return rc;
}

/* --parallel contexts (the default from the device and memory plan), the batch that steps them and
   the queue that keeps results in input order. */
static int start_slots(struct batch *b, seer_model *m, const struct ocr_opts *o)
{
    int n = o->parallel ? (int)o->parallel : seer_batch_size_default(m, &o->g.cp), rc;
    b->slots = calloc((size_t)n, sizeof *b->slots);
    b->q_cap = 4 * (size_t)n;
    b->q = calloc(b->q_cap, sizeof *b->q);
    if (!b->slots || !b->q)
        return cli_err(SEER_ENOMEM, "no memory for %d pages at once", n);
    for (b->n_slots = 0; b->n_slots < n; b->n_slots++)
        if ((rc = seer_context_create(m, &o->g.cp, &b->slots[b->n_slots].ctx)))
            return rc;
    cli_log(SEER_LOG_INFO, "ocr", "%d pages at once", n);
    return seer_batch_create(m, n, &b->sb);
}

/* A signal already ignored stays ignored: nohup's SIGHUP, SIGINT in a script's background job. */
static void install_signals(void)
{
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}

/* The inputs, expanded, deduplicated, checked for output names, sharded and (--resume) compared
   with what --out holds. Returns 0, or an exit status. */
static int list_inputs(const struct ocr_opts *o, struct ocr_list *l)
{
    struct stat st;
    int rc = SEER_OK;
    if (o->out && (rc = ocr_out_prepare(o->out)))
        return cli_fail(rc);
    if (o->out && stat(o->out, &st) == 0)
        l->has_out = true, l->out_dev = st.st_dev, l->out_ino = st.st_ino;
    for (int k = 0; k < o->n_args && !rc; k++)
        rc = ocr_list_add(l, o->args[k], true);
    for (int k = 0; k < o->n_lists && !rc; k++)
        rc = ocr_list_add_file(l, o->lists[k]);
    if (rc)
        return cli_fail(rc);
    ocr_list_dedupe(l);
    if (l->n == 0) /* not an error: a shard or a list can be empty */
        fprintf(stderr, "seer ocr: warning: no inputs (the directories and lists given hold no files)\n");
    if (o->out && !ocr_list_names_unique(l, fmt_ext[o->fmt]))
        return CLI_USAGE;
    ocr_list_shard(l, o->shard_i, o->shard_n);
    for (size_t i = 0; i < l->n && o->resume && !rc; i++)
        rc = ocr_resume_read(o->out, fmt_ext[o->fmt], o->fmt == FMT_JSONL, &l->v[i]);
    return rc ? cli_fail(rc) : 0;
}

int cli_ocr(int argc, char **argv)
{
    struct ocr_opts o = {0};
    struct ocr_list list = {0};
    struct batch b = {.o = &o, .list = &list};
    struct ocr_prefetch pf = {.list = &list, .pages = &o.pages, .params = &o.g.mp};
    seer_model *m = NULL;
    int status = parse(argc, argv, &o), rc = SEER_OK;
    bool running = false;
    if (status) {
        status = status < 0 ? CLI_OK : status; /* --help was printed */
        goto done;
    }
    install_signals();
    if ((status = list_inputs(&o, &list)))
        goto done;
    size_t skipped = 0;
    for (size_t i = 0; i < list.n; i++)
        skipped += list.v[i].skip;
    b.inputs_total = b.pages_total = list.n - skipped;
    b.progress = isatty(2) && cli_log_level >= SEER_LOG_WARN;
    if (b.inputs_total > 0) { /* with nothing to do, not even the model is loaded */
        if ((rc = seer_model_load(o.g.model, &o.g.mp, &m)) || (rc = start_slots(&b, m, &o)) ||
            (rc = ocr_prefetch_start(&pf))) {
            status = cli_fail(rc);
            goto done;
        }
        running = true;
    }
    b.t0 = cli_time_now();
    progress_show(&b);
    if (running)
        rc = run_all(&b, &pf);
    if (running)
        ocr_prefetch_stop(&pf);
    if (b.progress)
        fputs("\r\033[K", stderr);
    double dt = cli_time_now() - b.t0;
    if (cli_log_level >= SEER_LOG_WARN && !g_signal)
        fprintf(stderr, "seer ocr: %zu pages done, %zu failed, %zu loops stopped; %zu files in %.1f s (%.1f pages/min)"
                ", %zu skipped by --resume\n", b.pages_ok, b.pages_failed, b.loops, b.inputs_done, dt,
                dt > 0 ? 60 * (double)b.pages_ok / dt : 0.0, skipped);
    status = rc ? CLI_FAIL : b.pages_failed ? 3 : CLI_OK;
done:
    out_clear(&b);
    free(b.out);
    for (size_t k = 0; k < b.q_n; k++) /* interrupted: pages never finished */
        job_clear(&b.q[(b.q_head + k) % b.q_cap]);
    free(b.q);
    seer_batch_free(b.sb);
    for (int k = 0; b.slots && k < b.n_slots; k++)
        seer_context_free(b.slots[k].ctx);
    free(b.slots);
    seer_model_free(m);
    ocr_list_free(&list);
    free(o.args);
    free(o.lists);
    if (g_signal) { /* completed outputs are in place; end as the signal would have */
        int sig = g_signal;
        if (sig != SIGPIPE)
            fprintf(stderr, "seer ocr: interrupted by signal %d; %zu pages done, finished outputs are complete\n", sig,
                    b.pages_ok);
        fflush(stderr);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return status;
}
