/* Tests `seer ocr` (cli/ocr.c, ocr_files.c, ocr_decode.c) on a tiny random Qwen3.5 with a vision
   tower (tests/reference/gen_tiny.py, fresh seed) and files made at test time with ffmpeg and
   libtiff-tools (random sizes and colours): a batch of ~45 inputs — good images, a 3-page TIFF, a
   2-page PDF, a PNG named .jpg, a sub-directory, a hidden file — and bad ones: a truncated JPEG, a
   zero-byte file, text named .png, a PNG whose header says width 0, an unreadable file (not as
   root, where permissions do not bind), a missing path. Checked: exit statuses (0 / 3 / 1 / 2),
   every good page in input order and every bad input in stderr and jsonl, field names and types,
   --out with no temporary files left, --resume doing nothing the second time (not even loading the
   model) and only the failed inputs of a jsonl batch, --shard partitions, --pages, --from-list,
   globs, text and Markdown against the jsonl texts, a read-only --out and a full disk (earlier
   results intact), SIGINT and SIGPIPE mid-batch, and the repetition guard forced with a low
   threshold against an independent square-finder. Random weights answer garbage fast: the tests
   check the machinery, not the text. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/testutil.h"
#include "tap.h"

#define N_IMAGES 30
#define MAX_EXPECT 64

static char tmp[512], model[700], seer_bin[700];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    struct test_run r = test_run_cmd(cmd);
    if (r.status != 0)
        diag("command exited %d: %s\n%s%s", r.status, cmd, r.out, r.err);
    int st = r.status;
    test_run_free(&r);
    return st;
}

static struct test_run ocr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct test_run ocr(const char *fmt, ...)
{
    char args[6000], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' ocr -m '%s' -t 2 %s", tmp, seer_bin, model, args);
    return test_run_cmd(cmd);
}

/* One expected record: a page of a good input, or the error of a bad one (page 1). */
struct expect {
    char path[128];
    int page;
    bool good;
};
static struct expect want[MAX_EXPECT];
static int n_want;

static void expect(const char *path, int pages, bool good)
{
    for (int p = 1; p <= pages && n_want < MAX_EXPECT; p++) {
        snprintf(want[n_want].path, sizeof want[n_want].path, "%s", path);
        want[n_want].page = p, want[n_want++].good = good;
    }
}

/* Every line a JSON object; NULL (and a diagnostic) otherwise. */
static json_t *jsonl(const char *s)
{
    json_t *arr = json_array();
    char *copy = strdup(s), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *o = json_loads(line, JSON_ALLOW_NUL, NULL);
        if (!json_is_object(o)) {
            diag("not a JSON object: %.200s", line);
            json_decref(o), json_decref(arr);
            arr = NULL;
            break;
        }
        json_array_append_new(arr, o);
    }
    free(copy);
    return arr;
}

static const char *jstr(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static json_int_t jint(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* A page record has exactly the seven fields with their types; an error record three. */
static bool record_ok(json_t *o, int max_tokens)
{
    if (json_object_get(o, "error"))
        return json_object_size(o) == 3 && jstr(o, "path") && json_is_integer(json_object_get(o, "page")) &&
               jstr(o, "error") && *jstr(o, "error");
    return json_object_size(o) == 7 && jstr(o, "path") && jint(o, "page") >= 1 && jstr(o, "text") &&
           jint(o, "prompt_tokens") > 64 && json_is_integer(json_object_get(o, "generated_tokens")) &&
           jint(o, "generated_tokens") >= 0 && jint(o, "generated_tokens") <= max_tokens &&
           json_is_real(json_object_get(o, "seconds")) && json_real_value(json_object_get(o, "seconds")) >= 0 &&
           json_is_boolean(json_object_get(o, "repetition"));
}

/* The records are exactly want[] in order, each well formed, and (err not NULL) every error
   record's path appears in stderr. */
static bool records_match(json_t *arr, const char *err, int max_tokens, const char *what)
{
    if (!arr || (int)json_array_size(arr) != n_want) {
        diag("%s: %zu records, %d expected", what, arr ? json_array_size(arr) : 0, n_want);
        return false;
    }
    for (int i = 0; i < n_want; i++) {
        json_t *o = json_array_get(arr, (size_t)i);
        const char *path = want[i].path;
        bool good = !json_object_get(o, "error");
        if (!record_ok(o, max_tokens) || strcmp(jstr(o, "path"), path) || jint(o, "page") != want[i].page ||
            good != want[i].good || (!good && err && !strstr(err, path))) {
            char *s = json_dumps(o, JSON_COMPACT);
            diag("%s: record %d is %.300s; expected %s page %d (%s)", what, i, s, path, want[i].page,
                 want[i].good ? "text" : "error");
            free(s);
            return false;
        }
    }
    return true;
}

/* Names in `dir` (recursively, "sub/x"), hidden ones included, sorted into one string. */
static void list_dir(const char *dir, const char *rel, char *out, size_t cap)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    struct dirent *e;
    char names[64][512];
    int n = 0;
    while (d && (e = readdir(d)) && n < 64)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(names[n++], 512, "%.200s%s%.255s", rel, rel[0] ? "/" : "", e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, 512, (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%.1000s/%.500s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            list_dir(dir, names[i], out, cap);
        else
            snprintf(out + strlen(out), cap - strlen(out), "%s ", names[i]);
    }
}

/* Makes the batch under tmp/batch and fills want[]. */
static bool make_batch(bool *have_pdf, bool *have_noperm)
{
    int st = sh("cd '%s' && mkdir -p batch/sub && ffmpeg -version >/dev/null && tiffcp 2>&1 | grep -q usage", tmp);
    if (!ok(st == 0, "ffmpeg and tiffcp are available to make the inputs"))
        return false;
    char cmd[4096];
    bool made = true;
    for (int i = 0; i < N_IMAGES && made; i++) { /* random sizes 24..200 and colours, PNG and JPEG */
        int w = 24 + (int)(test_rand_u64() % 177), h = 24 + (int)(test_rand_u64() % 177);
        const char *src = i % 3 ? "testsrc=r=1" : "color=c=0x%06llx";
        char input[64];
        snprintf(input, sizeof input, src, (unsigned long long)(test_rand_u64() & 0xffffff));
        snprintf(cmd, sizeof cmd, "cd '%s/batch' && ffmpeg -y -v error -f lavfi -i '%s:size=%dx%d' -frames:v 1 a%02d.%s",
                 tmp, input, w, h, i, i % 2 ? "jpg" : "png");
        made = sh("%s", cmd) == 0;
    }
    made = made && sh("cd '%s' && for p in 1 2 3; do ffmpeg -y -v error -f lavfi -i testsrc=size=%dx%d -frames:v 1 "
                      "t$p.tif || exit 1; done && tiffcp t1.tif t2.tif t3.tif batch/b_multi.tif && tiffcp t1.tif "
                      "t2.tif two.tif", tmp, 40 + (int)(test_rand_u64() % 60), 40 + (int)(test_rand_u64() % 60)) == 0;
    *have_pdf = made && sh("cd '%s' && command -v tiff2pdf >/dev/null && tiff2pdf -o batch/b_doc.pdf two.tif", tmp) == 0;
    made = made && sh("cd '%s/batch' && cp a00.png c_png_named.jpg && cp a01.jpg sub/d00.jpg && cp a02.png sub/d01.png "
                      "&& cp a03.jpg .hidden.jpg && head -c $(( $(stat -c %%s a01.jpg) * 2 / 5 )) a01.jpg > x_trunc.jpg "
                      "&& : > x_zero.png && echo 'not an image' > x_text.png && cp a00.png x_badihdr.png && "
                      "printf '\\000\\000\\000\\000' | dd of=x_badihdr.png bs=1 seek=16 conv=notrunc 2>/dev/null",
                      tmp) == 0;
    *have_noperm = geteuid() != 0;
    if (*have_noperm)
        made = made && sh("cd '%s/batch' && cp a00.png x_noperm.png && chmod 000 x_noperm.png", tmp) == 0;
    if (!ok(made, "%d images, a 3-page TIFF, %s and the bad files made", N_IMAGES,
            *have_pdf ? "a 2-page PDF" : "no PDF (tiff2pdf missing)"))
        return false;
    if (!*have_pdf)
        skip("tiff2pdf (libtiff-tools) is missing: no PDF in the batch", "a 2-page PDF expands to its pages");
    if (!*have_noperm)
        skip("running as root, which reads a chmod 000 file anyway", "an unreadable file is reported");
    char name[64];
    for (int i = 0; i < N_IMAGES; i++) {
        snprintf(name, sizeof name, "batch/a%02d.%s", i, i % 2 ? "jpg" : "png");
        expect(name, 1, true);
    }
    if (*have_pdf)
        expect("batch/b_doc.pdf", 2, true);
    expect("batch/b_multi.tif", 3, true);
    expect("batch/c_png_named.jpg", 1, true);
    expect("batch/sub/d00.jpg", 1, true);
    expect("batch/sub/d01.png", 1, true);
    expect("batch/x_badihdr.png", 1, false);
    if (*have_noperm)
        expect("batch/x_noperm.png", 1, false);
    expect("batch/x_text.png", 1, false);
    expect("batch/x_trunc.jpg", 1, false);
    expect("batch/x_zero.png", 1, false);
    expect("missing.png", 1, false); /* given after the directory */
    return true;
}

static int count_good(void)
{
    int n = 0;
    for (int i = 0; i < n_want; i++)
        n += want[i].good;
    return n;
}

/* The output name of a want[] path under --out: below the directory argument, or the base name. */
static const char *out_name(const char *path)
{
    return strncmp(path, "batch/", 6) ? path : path + 6;
}

/* The batch to stdout as jsonl, then to --out, then --resume on that --out. */
static void test_batch(void)
{
    struct test_run r = ocr("--format jsonl -n 8 batch missing.png");
    json_t *arr = jsonl(r.out);
    ok(r.status == 3, "a batch with bad inputs exits 3 (got %d)", r.status);
    ok(records_match(arr, r.err, 8, "stdout"), "stdout: %d good pages in input order and every bad input as an "
       "error object (path, page, error), each named on stderr", count_good());
    int bad_lines = 0;
    for (int i = 0; i < n_want; i++)
        if (!want[i].good) {
            const char *at = strstr(r.err, want[i].path);
            bad_lines += at && !strstr(at + 1, want[i].path);
        }
    ok(bad_lines == n_want - count_good(), "each bad input is named on exactly one stderr line (%d of %d)", bad_lines,
       n_want - count_good());
    ok(!strchr(r.err, '\r') && !strstr(r.err, "ETA"), "no progress line when stderr is not a terminal");
    json_decref(arr);
    test_run_free(&r);

    r = ocr("--format jsonl -n 8 -o out batch missing.png");
    ok(r.status == 3 && r.out[0] == '\0', "--out: exit 3, nothing on stdout");
    test_run_free(&r);
    /* the files, read in want[] order, hold the same records; nothing else is in the directory */
    json_t *all = json_array();
    char path[1024], expect_list[8192] = "", listing[8192] = "";
    const char *prev = "";
    for (int i = 0; i < n_want; i++) {
        if (!strcmp(prev, want[i].path))
            continue;
        prev = want[i].path;
        snprintf(path, sizeof path, "%s/out/%.128s.jsonl", tmp, out_name(want[i].path));
        char *s = test_slurp(path);
        json_t *one = s ? jsonl(s) : NULL;
        json_array_extend(all, one);
        json_decref(one);
        free(s);
    }
    ok(records_match(all, NULL, 8, "--out"), "--out: one .jsonl per input, holding its pages in order or its error");
    json_decref(all);
    /* expected names, sorted as list_dir sorts them */
    char names[MAX_EXPECT][160];
    int n = 0;
    prev = "";
    for (int i = 0; i < n_want; i++)
        if (strcmp(prev, want[i].path))
            snprintf(names[n++], 160, "%.128s.jsonl", out_name(prev = want[i].path));
    qsort(names, (size_t)n, 160, (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++)
        snprintf(expect_list + strlen(expect_list), sizeof expect_list - strlen(expect_list), "%.159s ", names[i]);
    snprintf(path, sizeof path, "%s/out", tmp);
    list_dir(path, "", listing, sizeof listing);
    if (!ok(!strcmp(listing, expect_list), "--out holds exactly the %d outputs: no temporary or stray files", n))
        diag("found: %s\nexpected: %s", listing, expect_list);

    /* --resume: the good outputs stay as they are (same inode), only the failed inputs run again */
    struct stat before, after;
    snprintf(path, sizeof path, "%s/out/b_multi.tif.jsonl", tmp);
    stat(path, &before);
    r = ocr("--format jsonl -n 8 -o out --resume batch missing.png");
    char summary[128];
    snprintf(summary, sizeof summary, "0 pages done, %d failed", n_want - count_good());
    ok(r.status == 3 && stat(path, &after) == 0 && after.st_ino == before.st_ino && strstr(r.err, summary),
       "--resume on jsonl: finished inputs untouched, only the %d failed ones done again", n_want - count_good());
    if (!strstr(r.err, summary))
        diag("stderr: %s", r.err);
    test_run_free(&r);
}

/* Text output with --out, then --resume with a model path that does not exist: nothing to do, so
   nothing is loaded and every file stays. Also a glob. */
static void test_resume_text(void)
{
    struct test_run r = ocr("-n 8 -o outt 'batch/a0*'");
    ok(r.status == 0, "10 good inputs through a glob: exit 0 (got %d)", r.status);
    test_run_free(&r);
    char path[1024], cmd[4096], listing[4096] = "";
    snprintf(path, sizeof path, "%s/outt", tmp);
    list_dir(path, "", listing, sizeof listing);
    ok(!strcmp(listing, "a00.png.txt a01.jpg.txt a02.png.txt a03.jpg.txt a04.png.txt a05.jpg.txt a06.png.txt "
                        "a07.jpg.txt a08.png.txt a09.jpg.txt "),
       "the glob's 10 matches give 10 text files (%s)", listing);
    ino_t ino[10];
    char *text[10];
    for (int i = 0; i < 10; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/outt/a%02d.%s.txt", tmp, i, i % 2 ? "jpg" : "png");
        ino[i] = stat(path, &st) == 0 ? st.st_ino : 0;
        text[i] = test_slurp(path);
    }
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' ocr -m '%s/no-such-model.gguf' -n 8 -o outt --resume 'batch/a0*'", tmp,
             seer_bin, tmp);
    r = test_run_cmd(cmd);
    int same = 0;
    for (int i = 0; i < 10; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/outt/a%02d.%s.txt", tmp, i, i % 2 ? "jpg" : "png");
        char *now = test_slurp(path);
        same += stat(path, &st) == 0 && st.st_ino == ino[i] && now && text[i] && !strcmp(now, text[i]);
        free(now), free(text[i]);
    }
    ok(r.status == 0 && same == 10 && strstr(r.err, "10 skipped"),
       "--resume the second time: no work (the missing model is never loaded), exit 0, all 10 files untouched");
    test_run_free(&r);
}

/* A page's text as --format text and markdown write it: the JSON string without the U+0000 a random
   model may write (cli/ocr.c drops them there; JSON Lines keeps them escaped). */
static void text_without_nul(json_t *o, char *out, size_t cap)
{
    const json_t *t = json_object_get(o, "text");
    const char *v = json_string_value(t);
    size_t w = 0;
    for (size_t i = 0; v && i < json_string_length(t) && w + 1 < cap; i++)
        if (v[i])
            out[w++] = v[i];
    out[w] = '\0';
}

/* Text and Markdown against the jsonl texts of the same greedy run (same prompt). */
static void test_formats(void)
{
    const char *in = "batch/a00.png batch/b_multi.tif batch/a01.jpg";
    struct test_run j = ocr("--format jsonl -n 8 -p 'Read it.' %s", in);
    json_t *arr = jsonl(j.out);
    size_t n = json_array_size(arr);
    if (!ok(j.status == 0 && n == 5, "jsonl: 5 pages from 3 inputs")) {
        json_decref(arr), test_run_free(&j);
        return;
    }
    char text[16384] = "", md[16384] = "";
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        char t[4096];
        text_without_nul(o, t, sizeof t);
        const char *nl = t[0] && t[strlen(t) - 1] == '\n' ? "" : "\n";
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s%s", i ? "\f" : "", t, nl);
        snprintf(md + strlen(md), sizeof md - strlen(md), "%s<!-- %s, page %d -->\n\n%s%s", i ? "\n" : "",
                 jstr(o, "path"), (int)jint(o, "page"), t, nl);
    }
    struct test_run t = ocr("-n 8 -p 'Read it.' %s", in), m = ocr("--format markdown -n 8 -p 'Read it.' %s", in);
    ok(t.status == 0 && !strcmp(t.out, text), "--format text: each page's text and a newline, pages separated by \\f");
    ok(m.status == 0 && !strcmp(m.out, md), "--format markdown: <!-- path, page N --> then each page's text");
    test_run_free(&t), test_run_free(&m);

    /* one text file per input: the TIFF's three pages joined by \f */
    t = ocr("-n 8 -p 'Read it.' -o outf batch/b_multi.tif");
    char path[1024], want_txt[8192] = "";
    snprintf(path, sizeof path, "%s/outf/b_multi.tif.txt", tmp);
    char *got = test_slurp(path);
    for (size_t i = 1; i <= 3; i++) {
        char s[4096];
        text_without_nul(json_array_get(arr, i), s, sizeof s);
        snprintf(want_txt + strlen(want_txt), sizeof want_txt - strlen(want_txt), "%s%s%s", i > 1 ? "\f" : "", s,
                 s[0] && s[strlen(s) - 1] == '\n' ? "" : "\n");
    }
    ok(t.status == 0 && got && !strcmp(got, want_txt), "--out text: the TIFF's file holds its 3 pages joined by \\f");
    free(got);
    test_run_free(&t);
    json_decref(arr);
    test_run_free(&j);
}

/* --shard I/3: disjoint, together exactly the batch, input k in shard k mod 3 (pages together). */
static void test_shards(void)
{
    int owner[MAX_EXPECT], hits[MAX_EXPECT] = {0}, bad = 0;
    for (int s = 0; s < 3; s++) {
        struct test_run r = ocr("--format jsonl -n 2 --shard %d/3 batch missing.png", s);
        json_t *arr = jsonl(r.out);
        for (size_t k = 0; arr && k < json_array_size(arr); k++) {
            json_t *o = json_array_get(arr, k);
            int found = -1;
            for (int i = 0; i < n_want && found < 0; i++)
                if (!strcmp(want[i].path, jstr(o, "path") ? jstr(o, "path") : "") && want[i].page == jint(o, "page"))
                    found = i;
            if (found < 0)
                bad++;
            else
                hits[found]++, owner[found] = s;
        }
        bad += !arr;
        json_decref(arr);
        test_run_free(&r);
    }
    int once = 0, placed = 0, input = -1;
    const char *prev = "";
    for (int i = 0; i < n_want; i++) {
        once += hits[i] == 1;
        input += strcmp(prev, want[i].path) != 0;
        prev = want[i].path;
        placed += hits[i] == 1 && owner[i] == input % 3;
    }
    ok(bad == 0 && once == n_want, "--shard 0/3, 1/3, 2/3: every record in exactly one shard (%d of %d), none extra",
       once, n_want);
    ok(placed == n_want, "input k of the sorted list (all its pages) goes to shard k mod 3");
}

static void test_pages_and_lists(bool have_pdf)
{
    struct test_run r = ocr("--format jsonl -n 2 --pages 2-3 batch/b_multi.tif batch/a00.png%s",
                            have_pdf ? " batch/b_doc.pdf" : "");
    json_t *arr = jsonl(r.out);
    bool good = r.status == 0 && json_array_size(arr) == (have_pdf ? 3u : 2u) &&
                jint(json_array_get(arr, 0), "page") == 2 && jint(json_array_get(arr, 1), "page") == 3 &&
                (!have_pdf || (jint(json_array_get(arr, 2), "page") == 2 &&
                               !strcmp(jstr(json_array_get(arr, 2), "path"), "batch/b_doc.pdf"))) &&
                strstr(r.err, "batch/a00.png: warning: --pages selects none");
    ok(good, "--pages 2-3: TIFF pages 2 and 3%s, a single image skipped with a warning, exit 0",
       have_pdf ? ", PDF page 2" : "");
    json_decref(arr), test_run_free(&r);
    r = ocr("--format jsonl -n 2 --pages 3,1 batch/b_multi.tif");
    arr = jsonl(r.out);
    ok(r.status == 0 && json_array_size(arr) == 2 && jint(json_array_get(arr, 0), "page") == 1 &&
           jint(json_array_get(arr, 1), "page") == 3, "--pages 3,1: pages 1 and 3, in page order");
    json_decref(arr), test_run_free(&r);

    /* --from-list keeps the list's order; a directory in it is walked; blank lines are ignored */
    char path[1024], cmd[4096];
    snprintf(path, sizeof path, "%s/list.txt", tmp);
    FILE *f = fopen(path, "w");
    fputs("batch/a03.jpg\n\nbatch/a01.jpg\r\nbatch/sub\n", f);
    fclose(f);
    static const char *const order[] = {"batch/a03.jpg", "batch/a01.jpg", "batch/sub/d00.jpg", "batch/sub/d01.png"};
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            r = ocr("--format jsonl -n 2 --from-list list.txt");
        else {
            snprintf(cmd, sizeof cmd, "cd '%s' && '%s' ocr -m '%s' -t 2 --format jsonl -n 2 --from-list - < list.txt",
                     tmp, seer_bin, model);
            r = test_run_cmd(cmd);
        }
        arr = jsonl(r.out);
        int in_order = 0;
        for (size_t i = 0; arr && i < json_array_size(arr) && i < 4; i++)
            in_order += !strcmp(jstr(json_array_get(arr, i), "path"), order[i]);
        ok(r.status == 0 && json_array_size(arr) == 4 && in_order == 4, "--from-list %s: the list's order, its "
           "directory walked", k ? "- (stdin)" : "FILE");
        json_decref(arr), test_run_free(&r);
    }

    /* a glob with no match is a failed input; the same file twice is done once */
    r = ocr("--format jsonl -n 2 'nomatch*.png' batch/a00.png ./batch/a00.png");
    arr = jsonl(r.out);
    ok(r.status == 3 && json_array_size(arr) == 2 && json_object_get(json_array_get(arr, 0), "error") &&
           strstr(r.err, "nomatch*.png") && !strcmp(jstr(json_array_get(arr, 1), "path"), "batch/a00.png"),
       "a glob matching nothing is reported failed (exit 3); a file named twice is done once");
    json_decref(arr), test_run_free(&r);
}

static void test_usage_and_fatal(void)
{
    static const char *const usage[] = {
        "batch/a00.png --shard 3/3", "batch/a00.png --shard 1", "batch/a00.png --pages 0",
        "batch/a00.png --pages 3-1", "batch/a00.png --format xml", "batch/a00.png --resume",
        "batch/a00.png --frobnicate", "batch/a00.png --repeat-guard 1,5", "",
        "-o outc batch/a00.png dup/a00.png", "batch/a00.png --dpi=5", "batch/a00.png --parallel",
    };
    sh("mkdir -p '%s/dup' && cp '%s/batch/a02.png' '%s/dup/a00.png'", tmp, tmp, tmp);
    int twos = 0;
    for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
        struct test_run r = ocr("%s", usage[i]);
        if (r.status == 2 && r.err[0] && !r.out[0])
            twos++;
        else
            diag("'%s' exited %d: %s", usage[i], r.status, r.err);
        test_run_free(&r);
    }
    ok(twos == (int)(sizeof usage / sizeof *usage), "%d usage errors exit 2 (bad --shard, --pages, --format, "
       "--resume without --out, unknown flag, no input, two inputs writing one output name, --dpi=5 out of "
       "range, --parallel without its value)", twos);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' ocr --help", seer_bin);
    struct test_run h = test_run_cmd(cmd);
    ok(h.status == 0 && !h.err[0] && strstr(h.out, "usage: seer ocr") && strstr(h.out, "--repeat-guard R,S") &&
           strstr(h.out, "--temp"), "--help: its options and the generation options on stdout, exit 0 (%d): %s",
       h.status, h.err);
    test_run_free(&h);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' ocr -m '%s/no-such.gguf' batch/a00.png", tmp, seer_bin, tmp);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 1 && strstr(r.err, "no-such.gguf") && test_count_lines(r.err) == 1,
       "a missing model is fatal: exit 1, one line naming it");
    test_run_free(&r);
    snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p novis && cp '%s' novis/ && '%s' ocr -m novis/model-f32.gguf "
             "batch/a00.png batch/a01.jpg", tmp, model, seer_bin);
    r = test_run_cmd(cmd);
    ok(r.status == 1 && strstr(r.err, "vision") && !r.out[0], "a model without a vision tower is fatal: exit 1 (%s)",
       r.err);
    test_run_free(&r);
}

/* A read-only --out and a full disk: exit 1 with the reason, earlier results intact, no temporary
   file. Root ignores a chmod'ed directory, so there a read-only bind mount in a private mount
   namespace (unshare) stands in; the full disk is a 64 KiB tmpfs filled up, also in one. */
static void test_write_faults(bool have_unshare)
{
    struct test_run r = ocr("-n 8 -o outr batch/a00.png");
    char path[1024], cmd[4096], listing[1024] = "";
    snprintf(path, sizeof path, "%s/outr/a00.png.txt", tmp);
    char *before = test_slurp(path);
    ok(r.status == 0 && before, "an earlier result in outr");
    test_run_free(&r);
    if (geteuid() != 0) {
        sh("chmod 555 '%s/outr'", tmp);
        r = ocr("-n 8 -o outr batch/a01.jpg batch/a02.png");
        sh("chmod 755 '%s/outr'", tmp);
    } else if (have_unshare) {
        snprintf(cmd, sizeof cmd, "cd '%s' && unshare -rm sh -c \"mount --bind -o ro outr outr && exec '%s' ocr -m '%s' "
                 "-n 8 -o outr batch/a01.jpg batch/a02.png\"", tmp, seer_bin, model);
        r = test_run_cmd(cmd);
    } else {
        skip("root without unshare: no way to make a directory read-only here", "read-only --out");
        free(before);
        return;
    }
    char *after = test_slurp(path);
    snprintf(path, sizeof path, "%s/outr", tmp);
    list_dir(path, "", listing, sizeof listing);
    ok(r.status == 1 && strstr(r.err, "outr") && after && !strcmp(before, after) && !strcmp(listing, "a00.png.txt "),
       "read-only --out: exit 1 naming it (got %d: %s), the earlier result intact, nothing else written", r.status,
       r.err);
    test_run_free(&r);
    free(before), free(after);

    if (!have_unshare) {
        skip("unshare (util-linux) with user namespaces is unavailable", "a full disk under --out");
        return;
    }
    snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p outd && unshare -rm sh -c \"mount -t tmpfs -o size=64k tmpfs outd && "
             "echo earlier > outd/earlier.txt && (dd if=/dev/zero of=outd/fill bs=1k 2>/dev/null; true) && "
             "'%s' ocr -m '%s' -n 8 -o outd batch/a00.png batch/a01.jpg; echo \\$? > disk.status; "
             "ls -a outd | tr '\\n' ' ' > disk.listing; cat outd/earlier.txt > disk.earlier\"", tmp, seer_bin, model);
    r = test_run_cmd(cmd);
    char *st = NULL, *ls = NULL, *earlier = NULL;
    snprintf(path, sizeof path, "%s/disk.status", tmp), st = test_slurp(path);
    snprintf(path, sizeof path, "%s/disk.listing", tmp), ls = test_slurp(path);
    snprintf(path, sizeof path, "%s/disk.earlier", tmp), earlier = test_slurp(path);
    ok(st && !strcmp(st, "1\n") && strstr(r.err, "No space left") && ls && !strcmp(ls, ". .. earlier.txt fill ") &&
           earlier && !strcmp(earlier, "earlier\n"),
       "full disk: exit 1 with ENOSPC named (status %s), the earlier file intact, no temporary file (%s)",
       st ? st : "?", ls ? ls : "?");
    free(st), free(ls), free(earlier);
    test_run_free(&r);
}

/* SIGTERM mid-batch (what Slurm and Kubernetes send; SIGINT is handled alike, but a background job
   of a script starts with SIGINT ignored): the process ends by the signal, every finished output is
   complete and no temporary file is left. SIGPIPE: `| head -1` ends the batch the same way. */
static void test_signals(void)
{
    char cmd[4096], path[1024], listing[8192] = "";
    snprintf(cmd, sizeof cmd, "cd '%s' && ('%s' ocr -m '%s' -t 2 -n 300 --repeat-guard 0 --format jsonl -o outs batch & "
             "pid=$!; i=0; while [ ! -e outs/a01.jpg.jsonl ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; "
             "kill -TERM $pid; wait $pid; echo $? > term.status)", tmp, seer_bin, model);
    struct test_run r = test_run_cmd(cmd);
    snprintf(path, sizeof path, "%s/term.status", tmp);
    char *st = test_slurp(path);
    snprintf(path, sizeof path, "%s/outs", tmp);
    list_dir(path, "", listing, sizeof listing);
    int files = 0, complete = 0;
    for (char *save = NULL, *name = strtok_r(listing, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
        char file[1200];
        snprintf(file, sizeof file, "%s/outs/%s", tmp, name);
        char *s = test_slurp(file);
        json_t *arr = s ? jsonl(s) : NULL;
        files++;
        complete += name[0] != '.' && arr && json_array_size(arr) > 0 && s[strlen(s) - 1] == '\n';
        json_decref(arr), free(s);
    }
    if (st && !strcmp(st, "143\n"))
        ok(files >= 2 && complete == files && files < 40 && strstr(r.err, "interrupted"),
           "SIGTERM mid-batch: ends by the signal, %d finished outputs complete, no temporary file", files);
    else
        ok(0, "SIGTERM mid-batch: exit status %s, expected 143 (%s)", st ? st : "?", r.err);
    free(st);
    test_run_free(&r);

    snprintf(cmd, sizeof cmd, "cd '%s' && ('%s' ocr -m '%s' -t 2 -n 4 --format jsonl batch; echo $? > pipe.status) | "
             "head -n 1", tmp, seer_bin, model);
    r = test_run_cmd(cmd);
    snprintf(path, sizeof path, "%s/pipe.status", tmp);
    st = test_slurp(path);
    json_t *arr = jsonl(r.out);
    ok(st && !strcmp(st, "141\n") && json_array_size(arr) == 1, "| head -n 1: one record read, seer ends by "
       "SIGPIPE (status %s)", st ? st : "?");
    json_decref(arr);
    free(st);
    test_run_free(&r);
}

/* A square: some piece of 1..maxp bytes twice in a row — what the guard looks for with
   --repeat-guard 2,2 (written independently of cli/ocr.c's incremental check). */
static bool has_square(const char *s, size_t n, size_t maxp)
{
    for (size_t e = 2; e <= n; e++)
        for (size_t p = 1; p <= maxp && 2 * p <= e; p++)
            if (!memcmp(s + e - 2 * p, s + e - p, p))
                return true;
    return false;
}

/* The repetition guard forced with --repeat-guard 2,2 (it fires on any square): flagged exactly
   when the text holds one, the text a prefix of the unguarded answer, a warning on stderr.
   Sampled flat (--temp 2 --top-k 0, one seed for both runs) rather than greedy: some random
   models make end-of-text the greedy second token of every page, leaving nothing to guard. */
static void test_guard(void)
{
    struct test_run g = ocr("--format jsonl -n 48 --repeat-guard 2,2 --temp 2 --top-k 0 -s 7 batch"),
                    u = ocr("--format jsonl -n 48 --repeat-guard 0 --temp 2 --top-k 0 -s 7 batch");
    json_t *ga = jsonl(g.out), *ua = jsonl(u.out);
    size_t n = json_array_size(ga);
    int flagged = 0, agree = 0, prefix = 0, warned = 0, shorter = 0, pages = 0;
    for (size_t i = 0; ga && ua && n == json_array_size(ua) && i < n; i++) {
        json_t *a = json_array_get(ga, i), *b = json_array_get(ua, i);
        if (json_object_get(a, "error"))
            continue;
        pages++;
        /* lengths from JSON, not strlen: a random model may write U+0000, and the guard sees it */
        const char *ta = jstr(a, "text"), *tb = jstr(b, "text");
        size_t la = json_string_length(json_object_get(a, "text")), lb = json_string_length(json_object_get(b, "text"));
        bool rep = json_is_true(json_object_get(a, "repetition"));
        char line[512];
        snprintf(line, sizeof line, "%s page %d: warning: the text repeats itself", jstr(a, "path"), (int)jint(a, "page"));
        flagged += rep;
        agree += rep == has_square(ta, la, 256);
        prefix += ta && tb && la <= lb && !memcmp(ta, tb, la);
        warned += rep == (strstr(g.err, line) != NULL);
        shorter += rep && jint(a, "generated_tokens") < jint(b, "generated_tokens");
    }
    ok(g.status == 3 && u.status == 3 && pages == count_good() && flagged > 0,
       "--repeat-guard 2,2 fires on a random model (%d of %d pages)", flagged, pages);
    ok(agree == pages, "flagged exactly the pages whose text repeats a piece of <= 256 bytes twice (%d of %d)", agree,
       pages);
    ok(prefix == pages && warned == pages, "each guarded text is a prefix of the unguarded answer; each flag warned "
       "on stderr");
    ok(shorter > 0, "the guard stops pages early (%d fewer tokens than unguarded)", shorter);
    json_decref(ga), json_decref(ua);
    test_run_free(&g), test_run_free(&u);
}

/* On a terminal (script(1) gives the batch one), stderr shows the progress line. */
static void test_progress(void)
{
    if (sh("command -v script >/dev/null") != 0) {
        skip("script (util-linux) is missing: no terminal to run under", "progress on a terminal");
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && script -qec \"'%s' ocr -m '%s' -t 2 -n 2 -o outp batch/a00.png "
             "batch/b_multi.tif\" /dev/null", tmp, seer_bin, model);
    struct test_run r = test_run_cmd(cmd);
    ok(r.status == 0 && strstr(r.out, "\r\033[Kseer ocr: 4/4 pages, 2/2 files") && strstr(r.out, "pages/min, ETA "),
       "on a terminal: pages done/total, files, pages/min and ETA on one rewritten line");
    test_run_free(&r);
}

/* --parallel: pages read at once give every page the text it gets alone, in input order (the
   records equal but for their timing), bad inputs included; a bad count is a usage error. */
static void test_parallel(void)
{
    struct test_run one = ocr("--format jsonl -n 12 --parallel 1 batch missing.png");
    struct test_run par = ocr("--format jsonl -n 12 --parallel 3 batch missing.png");
    json_t *a = jsonl(one.out), *b = jsonl(par.out);
    size_t n = json_array_size(a), same = 0;
    for (size_t i = 0; i < n && i < json_array_size(b); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        json_object_del(x, "seconds"), json_object_del(y, "seconds");
        same += json_equal(x, y);
    }
    ok(one.status == 3 && par.status == 3 && n == (size_t)n_want && json_array_size(b) == n && same == n,
       "--parallel 3 == --parallel 1: %zu of %zu records equal but for seconds, in input order (exit %d, %d)", same, n,
       par.status, one.status);
    json_decref(a), json_decref(b);
    test_run_free(&one), test_run_free(&par);
    struct test_run bad = ocr("--parallel 0 batch/a00.png"), big = ocr("--parallel 100000 batch/a00.png");
    ok(bad.status == 2 && big.status == 2 && strstr(bad.err, "--parallel") && test_count_lines(bad.err) == 1,
       "--parallel 0 or too many: a one-line usage error, exit 2 (got %d, %d)", bad.status, big.status);
    test_run_free(&bad), test_run_free(&big);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    char cmd[2048];
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s/m/model-f32.gguf", tmp);
    snprintf(seer_bin, sizeof seer_bin, "%s/seer", SEER_BINARY_DIR);
    snprintf(cmd, sizeof cmd, "python3 %s --out %s/m --preset tiny --seed %llu >/dev/null 2>&1",
             test_src_path("tests/reference/gen_tiny.py"), tmp, (unsigned long long)(seed % 1000000));
    if (!ok(system(cmd) == 0, "tiny model with a vision tower generated (model-f32.gguf + mmproj-f16.gguf)"))
        return done_testing();
    bool have_pdf, have_noperm;
    if (!make_batch(&have_pdf, &have_noperm))
        return done_testing();
    bool have_unshare = sh("unshare -rm true") == 0;
    test_batch();
    test_parallel();
    test_resume_text();
    test_formats();
    test_shards();
    test_pages_and_lists(have_pdf);
    test_usage_and_fatal();
    test_write_faults(have_unshare);
    test_signals();
    test_guard();
    test_progress();
    return done_testing();
}
