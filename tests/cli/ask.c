/* Tests `seer ask` (cli/ask.c) as a user runs it, on a tiny random model (gen_tiny.py) and image
   files made at test time: every format and colour layout is answered (exit 0, one JSON object on
   stdout with the image's size as Pillow sees it, EXIF rotation applied); `--dry-run --json` sizes
   and token counts equal tests/reference/preprocess_ref.py's smart_resize for a table of sizes
   (.5 rounding ties, extreme aspect ratios, 1×1, a 27-Mpixel PNG, token-window overrides), and its
   prompt_tokens equal a real run's; bad inputs (truncated or damaged files of each format, empty
   file, directory, non-image, decompression bomb, missing file, a mismatched mmproj) exit 1 with
   stdout empty and one stderr line naming the file; usage errors exit 2; `-` reads stdin; the
   mmproj beside a GGUF is found alone, and two of them give a warning and need --mmproj. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/image_files.h"
#include "support/testutil.h"
#include "tap.h"

static char dir[512], model[800], py[64];

static const char *tmp(const char *name)
{
    static char buf[8][800];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int required(void)
{
    const char *e = getenv("SEER_REQUIRE_ORACLES");
    return e && !strcmp(e, "1");
}

/* A missing tool: a failure under SEER_REQUIRE_ORACLES=1 (CI), else a visible skip. */
static void missing(const char *what, const char *name)
{
    if (required())
        ok(0, "%s (missing: %s)", name, what);
    else
        skip(what, name);
}

/* Runs `seer ask ARGS` and parses stdout as one JSON object (NULL when it is not). */
static json_t *ask_json(const char *args, struct test_run *r)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ask %s", args);
    *r = test_seer(cmd);
    return json_loads(r->out, JSON_ALLOW_NUL, NULL);
}

static json_int_t jint(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : -999;
}

/* A refused input: status `want`, nothing on stdout, one stderr line containing `name` (and
   `also` when not NULL). */
static void refused(const char *args, int want, const char *name, const char *also, const char *what)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ask %s", args);
    struct test_run r = test_seer(cmd);
    if (!ok(r.status == want && !*r.out && test_count_lines(r.err) == 1 && (!name || strstr(r.err, name)) &&
                (!also || strstr(r.err, also)),
            "%s: exit %d, stdout empty, one stderr line naming %s", what, want, name ? name : "the option"))
        diag("exit %d\nstdout: %.300s\nstderr: %.600s", r.status, r.out, r.err);
    test_run_free(&r);
}

/* ---- token counts: --dry-run vs preprocess_ref.smart_resize ------------------------------------ */

struct size_case {
    int w, h;
    int min_tok, max_tok; /* 0: the model's window (64..16384 tokens) */
};

/* Ties: 48 = 1.5·32, 80 = 2.5·32, 112 = 3.5·32, 400 = 12.5·32, 720 = 22.5·32 (round half to even,
   spec §5.2); extreme aspect ratios 1×200 (allowed), 1×201 and 20000×1 (refused); 1×1; a 20000×100 strip;
   a 6000×4500 page (over max_pixels: scaled down); token-window overrides both ways. */
static const struct size_case sizes[] = {
    {400, 720, 0, 0},   {720, 400, 0, 0},    {48, 80, 1, 0},     {80, 112, 1, 0},   {112, 144, 1, 0},
    {300, 200, 0, 0},   {288, 256, 0, 0},    {1, 1, 0, 0},       {1, 200, 0, 0},    {200, 1, 0, 0},
    {1, 201, 0, 0},     {201, 1, 0, 0},      {20000, 100, 0, 0}, {6000, 4500, 0, 0}, {640, 480, 4, 16},
    {640, 480, 0, 100}, {37, 53, 300, 0},    {1000, 1000, 0, 0}, {16, 16, 1, 1},    {2048, 1536, 0, 0},
    {20000, 1, 0, 0},
};

static void token_table(void)
{
    /* the images: grey noise (zeros for the two large ones, which only need their size) */
    FILE *f = fopen(tmp("sizes.txt"), "w");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        fprintf(f, "%d %d\n", sizes[i].w, sizes[i].h);
    fclose(f);
    if (!ok(if_sh("cd '%s' && %s -c 'import numpy as np; from PIL import Image\n"
                  "r = np.random.default_rng(%llu)\n"
                  "for w, h in (map(int, l.split()) for l in open(\"sizes.txt\")):\n"
                  "    a = np.zeros((h, w), np.uint8) if w * h > 4000000 else r.integers(0, 256, (h, w), dtype=np.uint8)\n"
                  "    Image.fromarray(a).save(\"s%%dx%%d.png\" %% (w, h))'",
                  dir, py, (unsigned long long)(test_rand_u64() >> 1)) == 0,
            "size table images written"))
        return;
    /* the reference's answers, all in one process */
    f = fopen(tmp("sizes.in"), "w");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        const struct size_case *c = &sizes[i];
        fprintf(f, "image %d %d 32 %lld %lld\n", c->h, c->w, c->min_tok ? c->min_tok * 1024LL : 65536LL,
                c->max_tok ? c->max_tok * 1024LL : 16777216LL);
    }
    fclose(f);
    if (!ok(if_sh("%s '%s' sizes < '%s' > '%s'", py, test_src_path("tests/reference/preprocess_ref.py"),
                  tmp("sizes.in"), tmp("sizes.out")) == 0,
            "preprocess_ref.py sizes ran"))
        return;
    f = fopen(tmp("sizes.out"), "r");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        const struct size_case *c = &sizes[i];
        char line[128] = "", args[2048], name[64], opts[128] = "";
        int eh = 0, ew = 0;
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        bool err = !strncmp(line, "error", 5);
        if (!err && sscanf(line, "%d %d", &eh, &ew) != 2) {
            ok(0, "%dx%d: reference line '%s'", c->w, c->h, line);
            continue;
        }
        int n = 0;
        if (c->min_tok)
            n += snprintf(opts + n, sizeof opts - (size_t)n, " --image-min-tokens %d", c->min_tok);
        if (c->max_tok)
            n += snprintf(opts + n, sizeof opts - (size_t)n, " --image-max-tokens %d", c->max_tok);
        snprintf(name, sizeof name, "s%dx%d.png", c->w, c->h);
        snprintf(args, sizeof args, "-m '%s' -p 'Size?' --dry-run --json%s '%s'", model, opts, tmp(name));
        char what[200];
        snprintf(what, sizeof what, "%dx%d%s", c->w, c->h, opts);
        if (err) {
            refused(args, 1, name, "aspect ratio", what);
            continue;
        }
        struct test_run r;
        json_t *j = ask_json(args, &r), *im = json_array_get(json_object_get(j, "images"), 0);
        const json_int_t tokens = (json_int_t)(eh / 32) * (ew / 32);
        if (!ok(r.status == 0 && jint(im, "width") == c->w && jint(im, "height") == c->h &&
                    jint(im, "resized_width") == ew && jint(im, "resized_height") == eh && jint(im, "tokens") == tokens,
                "%s: -> %dx%d, %lld tokens, as smart_resize", what, ew, eh, (long long)tokens))
            diag("exit %d: %s%s", r.status, r.out, r.err);
        json_decref(j);
        test_run_free(&r);
    }
    fclose(f);
}

/* The dry run's prompt_tokens equal what a real run feeds, for the chat template and --raw. */
static void dry_vs_real(const char *img1, const char *img2)
{
    static const char *const modes[] = {"-p 'Which is brighter?'",
                                        "--raw -p '<|vision_start|><|image_pad|><|vision_end|>A or "
                                        "<|vision_start|><|image_pad|><|vision_end|>B'"};
    for (int i = 0; i < 2; i++) {
        char args[4096];
        struct test_run r1, r2;
        snprintf(args, sizeof args, "-m '%s' %s --dry-run --json '%s' '%s'", model, modes[i], img1, img2);
        json_t *d = ask_json(args, &r1);
        snprintf(args, sizeof args, "-m '%s' %s --temp 0 -n 2 --json '%s' '%s'", model, modes[i], img1, img2);
        json_t *g = ask_json(args, &r2);
        ok(r1.status == 0 && r2.status == 0 && jint(d, "prompt_tokens") > 0 &&
               jint(d, "prompt_tokens") == jint(g, "prompt_tokens") &&
               json_equal(json_object_get(d, "images"), json_object_get(g, "images")),
           "%s: dry run's prompt_tokens %lld and images == the real run's %lld", i ? "--raw" : "chat",
           (long long)jint(d, "prompt_tokens"), (long long)jint(g, "prompt_tokens"));
        json_decref(d);
        json_decref(g);
        test_run_free(&r1);
        test_run_free(&r2);
    }
}

/* With --progress the fused prompt goes to the decoder in micro-batches of -ub rows (16 here, so
   batches end inside the image runs) with a progress line after each: the same greedy answer as one
   batch, and a progress line on stderr. */
static void progress_batches(const char *img1, const char *img2)
{
    char args[4096];
    struct test_run r1, r2;
    snprintf(args, sizeof args, "-m '%s' -p 'Compare.' --temp 0 --presence-penalty 0 -n 6 --json '%s' '%s'", model,
             img1, img2);
    json_t *one = ask_json(args, &r1);
    snprintf(args, sizeof args, "-m '%s' -p 'Compare.' --temp 0 --presence-penalty 0 -n 6 --json --progress -ub 16 "
             "'%s' '%s'", model, img1, img2);
    json_t *batched = ask_json(args, &r2);
    ok(r1.status == 0 && r2.status == 0 && one && batched &&
           json_equal(json_object_get(one, "tokens"), json_object_get(batched, "tokens")) &&
           jint(one, "prompt_tokens") == jint(batched, "prompt_tokens") && strstr(r2.err, "seer: prompt 16/"),
       "--progress -ub 16: the fused prompt in 16-row micro-batches gives the same greedy tokens, with progress");
    /* each token's logprob: a log-probability, and the same in both runs up to rounding (the logits
       agree to ~1e-5 relative; 1e-3 in log-probability is far past that, far below a wrong row) */
    const json_t *la = json_object_get(one, "logprobs"), *lb = json_object_get(batched, "logprobs");
    size_t n = json_array_size(json_object_get(one, "tokens")), same = 0;
    for (size_t i = 0; i < n; i++) {
        const double a = json_real_value(json_array_get(la, i)), b = json_real_value(json_array_get(lb, i));
        same += json_is_real(json_array_get(la, i)) && json_is_real(json_array_get(lb, i)) && a <= 0 &&
                fabs(a - b) <= 1e-3;
    }
    /* a random model may end its turn at once (no token, no logprob): then both runs must say so */
    const char *stop = json_string_value(json_object_get(one, "stop"));
    ok((n > 0 || (stop && !strcmp(stop, "eos"))) && json_array_size(la) == n && json_array_size(lb) == n && same == n,
       "--json logprobs: one per token, <= 0, the same in both runs within 1e-3 (%zu of %zu; stop %s)", same, n,
       stop ? stop : "missing");
    json_decref(one);
    json_decref(batched);
    test_run_free(&r1);
    test_run_free(&r2);
}

/* Ctrl-C while the prompt is fed (issue 11): a 2048x2048 image (4096 tokens) fed one row per
   micro-batch takes seconds; SIGINT while it is fed stops it, and --json still prints its object
   with "stop": "canceled", exit status 130. */
static void interrupted(void)
{
    const char *big = tmp("big.png"), *out = tmp("sigint.json");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s -c \"from PIL import Image; import numpy as np; Image.fromarray((np.random.rand(2048, 2048, "
             "3) * 255).astype('uint8')).save('%s')\"", py, big);
    struct test_run r = test_run_cmd(cmd);
    test_run_free(&r);
    /* the signal goes once --progress shows the prompt being fed, so it never lands before the
       handler is installed (a fixed second raced with a slow start: the image is decoded first) */
    const char *err = tmp("sigint.err");
    snprintf(cmd, sizeof cmd, "('%s/seer' ask -m '%s' -p 'Describe.' -ub 1 -c 8192 -n 4 --json --progress '%s' > '%s' "
             "2>'%s' & pid=$!; i=0; until grep -q 'seer: prompt [0-9]*/' '%s' 2>/dev/null || [ $i -gt 1200 ]; do "
             "sleep 0.05; i=$((i+1)); done; kill -INT $pid; wait $pid; echo \"status $?\" >&2)",
             SEER_BINARY_DIR, model, big, out, err, err);
    r = test_run_cmd(cmd);
    json_t *j = json_load_file(out, JSON_ALLOW_NUL, NULL); /* a random model's answer may hold U+0000 */
    const char *stop = json_string_value(json_object_get(j, "stop"));
    ok(strstr(r.err, "status 130") && stop && !strcmp(stop, "canceled"),
       "SIGINT while the image prompt is fed: exit 130 and the --json object with stop \"canceled\" (%s)",
       stop ? stop : "no JSON");
    if (!strstr(r.err, "status 130"))
        diag("stderr: %s", r.err);
    json_decref(j);
    test_run_free(&r);
}

/* ---- every format and colour layout ------------------------------------------------------------- */

/* Made by tests/media/pil_ref.py make (Pillow), then by ffmpeg, tiffcp and tiff2pdf. */
static const char *const pil_files[] = {
    "src.png",  "rgba.png",  "la.png",      "gray.png",    "gray16.png",  "bilevel.png", "pal_trns.png",
    "pal.gif",  "pal_trns.gif", "pal.bmp",  "rgb.bmp",     "pal.tif",     "rgb_lzw.tif", "rgba.tif",
    "gray16.tif", "bilevel.tif", "cmyk.tif", "cmyk.jpg",   "gray.jpg",    "exif1.jpg",   "exif3.jpg",
    "exif5.jpg", "exif6.jpg", "exif8.jpg",  "sub444.jpg",  "exif6.png",   "exif7.webp",  "orient6.tif",
    "multi.tif",
};
static const struct { const char *file, *cmd; } tool_files[] = {
    {"lossy.webp", "ffmpeg -y -v error -i smooth.png -c:v libwebp -quality 90 lossy.webp"},
    {"lossless.webp", "ffmpeg -y -v error -i src.png -c:v libwebp -lossless 1 lossless.webp"},
    {"ff.gif", "ffmpeg -y -v error -i src.png -vf 'split[a][b];[a]palettegen[p];[b][p]paletteuse' ff.gif"},
    {"g4.tif", "tiffcp -c g4 bilevel.tif g4.tif"},
    {"g4multi.tif", "tiffcp -c g4 bilevel.tif bilevel2.tif g4multi.tif"},
    {"doc.pdf", "tiff2pdf -x 40 -y 40 -o doc.pdf multi.tif"},
};

/* Pillow's size of each page (EXIF orientation applied), as "file page w h" lines. */
static const char size_script[] =
    "import sys\nfrom PIL import Image, ImageOps, ImageSequence\n"
    "for p in sys.argv[1:]:\n"
    "    if p.endswith('.pdf'): continue\n"
    "    im = Image.open(p)\n"
    "    for n, fr in enumerate(ImageSequence.Iterator(im)):\n"
    "        w, h = (ImageOps.exif_transpose(fr.copy()) if n == 0 else fr).size\n"
    "        print(p, n + 1, w, h)\n"
    "        if im.format == 'GIF': break\n";

static bool pil_size(const char *file, int page, int *w, int *h)
{
    FILE *f = fopen(tmp("pilsizes.txt"), "r");
    char name[256];
    int pg, pw, ph;
    bool found = false;
    while (f && !found && fscanf(f, "%255s %d %d %d", name, &pg, &pw, &ph) == 4)
        if (!strcmp(name, file) && pg == page)
            *w = pw, *h = ph, found = true;
    if (f)
        fclose(f);
    return found;
}

/* One answered file: exit 0, a JSON answer whose image size is Pillow's. */
static void answers(const char *file, int page)
{
    char args[2048], what[300];
    int w = 0, h = 0;
    bool sized = pil_size(file, page, &w, &h);
    static int n_files;
    const bool pillow = n_files++ % 2; /* every other file takes Pillow's resize, the rest the default */
    snprintf(args, sizeof args,
             "-m '%s' -p 'What is in it?' --temp 0 -n 3 --image-min-tokens 4 --image-max-tokens 16 --page %d%s --json '%s'",
             model, page, pillow ? " --resize pillow" : "", tmp(file));
    snprintf(what, sizeof what, "%s page %d%s", file, page, pillow ? " (--resize pillow)" : "");
    struct test_run r;
    json_t *j = ask_json(args, &r), *im = json_array_get(json_object_get(j, "images"), 0);
    bool size_ok = sized ? jint(im, "width") == w && jint(im, "height") == h : jint(im, "width") > 0;
    if (!ok(r.status == 0 && json_is_string(json_object_get(j, "text")) && size_ok && jint(im, "tokens") >= 4 &&
                jint(im, "tokens") <= 16 && test_count_lines(r.out) == 1,
            "%s: answered (%lldx%lld%s)", what, (long long)jint(im, "width"), (long long)jint(im, "height"),
            sized ? ", Pillow's size" : ""))
        diag("exit %d, want %dx%d\nstdout: %.300s\nstderr: %.600s", r.status, w, h, r.out, r.err);
    json_decref(j);
    test_run_free(&r);
}

static void formats(void)
{
    if (!ok(if_sh("%s '%s' make '%s' %llu", py, test_src_path("tests/media/pil_ref.py"), dir,
                  (unsigned long long)(test_rand_u64() >> 1)) == 0,
            "Pillow test files made") ||
        !ok(if_sh("cd '%s' && %s -c 'from PIL import Image; Image.open(\"gray.png\").convert(\"1\").save(\"bilevel2.tif\")'",
                  dir, py) == 0,
            "a second bilevel page of another size"))
        return;
    char list[4096] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof pil_files / sizeof *pil_files; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, " %s", pil_files[i]);
    bool tool_ok[sizeof tool_files / sizeof *tool_files];
    for (size_t i = 0; i < sizeof tool_files / sizeof *tool_files; i++) {
        char tool[32];
        sscanf(tool_files[i].cmd, "%31s", tool);
        tool_ok[i] = if_sh("command -v %s >/dev/null", tool) == 0 && if_sh("cd '%s' && %s", dir, tool_files[i].cmd) == 0;
        if (tool_ok[i])
            len += (size_t)snprintf(list + len, sizeof list - len, " %s", tool_files[i].file);
    }
    FILE *f = fopen(tmp("sizes.py"), "w");
    fputs(size_script, f);
    fclose(f);
    ok(if_sh("cd '%s' && %s sizes.py%s > pilsizes.txt", dir, py, list) == 0, "Pillow's image sizes listed");
    for (size_t i = 0; i < sizeof pil_files / sizeof *pil_files; i++)
        answers(pil_files[i], 1);
    answers("multi.tif", 3); /* a greyscale page of another size */
    for (size_t i = 0; i < sizeof tool_files / sizeof *tool_files; i++) {
        if (!tool_ok[i]) {
            missing("ffmpeg / libtiff-tools (apt install ffmpeg libtiff-tools)", tool_files[i].file);
            continue;
        }
#if !SEER_HAVE_PDF
        if (strstr(tool_files[i].file, ".pdf")) {
            skip("built with SEER_PDF=OFF", "a PDF page answered");
            continue;
        }
#endif
        answers(tool_files[i].file, 1);
        if (strstr(tool_files[i].file, "multi") || strstr(tool_files[i].file, ".pdf"))
            answers(tool_files[i].file, 2);
    }
    /* stdin: the same answer as the file */
    char args[2048];
    struct test_run r1, r2;
    snprintf(args, sizeof args, "-m '%s' -p Q --temp 0 -n 4 --json - < '%s'", model, tmp("rgba.png"));
    json_t *a = ask_json(args, &r1);
    snprintf(args, sizeof args, "-m '%s' -p Q --temp 0 -n 4 --json '%s'", model, tmp("rgba.png"));
    json_t *b = ask_json(args, &r2);
    ok(r1.status == 0 && a && json_equal(json_object_get(a, "tokens"), json_object_get(b, "tokens")) &&
           jint(a, "prompt_tokens") == jint(b, "prompt_tokens"),
       "'-' reads the image from stdin: same tokens as the file");
    json_t *ia = json_array_get(json_object_get(a, "images"), 0), *ib = json_array_get(json_object_get(b, "images"), 0);
    ok(jint(ia, "width") == jint(ib, "width") && jint(ia, "tokens") == jint(ib, "tokens"),
       "stdin image's size and tokens reported (%lld tokens, file %lld)", (long long)jint(ia, "tokens"),
       (long long)jint(ib, "tokens"));
    json_decref(a), json_decref(b);
    test_run_free(&r1), test_run_free(&r2);
    snprintf(args, sizeof args, "-m '%s' -p Q --dry-run --json - < '%s'", model, tmp("exif6.jpg"));
    a = ask_json(args, &r1);
    int w = 0, h = 0;
    pil_size("exif6.jpg", 1, &w, &h);
    ia = json_array_get(json_object_get(a, "images"), 0);
    ok(r1.status == 0 && jint(ia, "width") == w && jint(ia, "height") == h, "--dry-run of stdin: %dx%d (rotated)", w,
       h);
    json_decref(a);
    test_run_free(&r1);
}

/* ---- bad inputs ---------------------------------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = b ? (size_t)len : 0;
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
}

static void bad_file(const char *name, const char *what)
{
    char args[2048];
    snprintf(args, sizeof args, "-m '%s' -p Q --temp 0 -n 2 '%s'", model, tmp(name));
    refused(args, 1, name, NULL, what);
}

static void bad_inputs(void)
{
    /* one file per decoder: cut inside the header and at 60 % (past the header, short of the pixels;
       single pages, since a multi-page file cut after its first page still has that page) */
    static const char *const samples[] = {"exif6.jpg", "cmyk.jpg", "rgba.png",    "pal.gif",  "rgb.bmp",
                                          "rgb_lzw.tif", "g4.tif", "lossy.webp", "lossless.webp", "doc.pdf"};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        size_t n;
        unsigned char *b = slurp(tmp(samples[i]), &n);
        if (!b)
            continue; /* its tool is missing: reported where it was made */
        size_t cuts[] = {12, n * 6 / 10};
        for (int c = 0; c < 2; c++) {
            char name[128], what[200];
            snprintf(name, sizeof name, "cut%d_%s", c, samples[i]);
            snprintf(what, sizeof what, "%s cut to %zu of %zu bytes", samples[i], cuts[c], n);
            spit(tmp(name), b, cuts[c]);
            bad_file(name, what);
        }
        free(b);
    }
    /* damaged header fields each decoder must notice */
    size_t n;
    unsigned char *b;
    if ((b = slurp(tmp("rgba.png"), &n))) {
        b[24] = 7; /* IHDR bit depth 7 */
        spit(tmp("bad_ihdr.png"), b, n);
        bad_file("bad_ihdr.png", "a PNG with a damaged IHDR");
        free(b);
    }
    if ((b = slurp(tmp("exif6.jpg"), &n))) {
        for (size_t i = 2; i + 44 < n; i++)
            if (b[i] == 0xff && b[i + 1] == 0xc4) { /* DHT: the Huffman table becomes nonsense */
                memset(b + i + 4, 0xff, 40);
                break;
            }
        spit(tmp("bad_dht.jpg"), b, n);
        bad_file("bad_dht.jpg", "a JPEG with a damaged Huffman table");
        free(b);
    }
    if ((b = slurp(tmp("rgb.bmp"), &n))) {
        b[28] = 7, b[29] = 0; /* 7 bits per pixel */
        spit(tmp("bad.bmp"), b, n);
        bad_file("bad.bmp", "a BMP with 7 bits per pixel");
        free(b);
    }
    if ((b = slurp(tmp("rgb_lzw.tif"), &n))) {
        uint32_t off = (uint32_t)n + 1000; /* the first directory lies past the end (little-endian II) */
        memcpy(b + 4, &off, 4);
        spit(tmp("bad.tif"), b, n);
        bad_file("bad.tif", "a TIFF whose directory is past the end");
        free(b);
    }
    if ((b = slurp(tmp("pal.gif"), &n))) {
        b[6] = b[7] = b[8] = b[9] = 0; /* logical screen 0×0 */
        for (size_t i = 13; i + 10 < n; i++)
            if (b[i] == 0x2c) { /* the image descriptor: its size 0×0 as well */
                memset(b + i + 5, 0, 4);
                break;
            }
        spit(tmp("bad.gif"), b, n);
        bad_file("bad.gif", "a GIF of 0x0 pixels");
        free(b);
    }
    if ((b = slurp(tmp("lossless.webp"), &n))) {
        memset(b + 20, 0, n > 40 ? 20 : 0); /* the VP8L signature and header zeroed */
        spit(tmp("bad.webp"), b, n);
        bad_file("bad.webp", "a WebP with a damaged VP8L header");
        free(b);
    }
    spit(tmp("empty.png"), (const unsigned char *)"", 0);
    bad_file("empty.png", "a zero-byte file");
    if (ok(if_sh("mkdir -p '%s'", tmp("folder.png")) == 0, "a directory named folder.png made"))
        bad_file("folder.png", "a directory");
    spit(tmp("notes.png"), (const unsigned char *)"these are not pixels\n", 21);
    bad_file("notes.png", "a text file named .png");
    bad_file("missing.png", "a missing file");
    /* a decompression bomb: a valid 65535×65535 PNG header with a tiny compressed body */
    if (ok(if_sh("cd '%s' && %s -c 'import struct, zlib\n"
                 "def chunk(t, d): return struct.pack(\">I\", len(d)) + t + d + struct.pack(\">I\", zlib.crc32(t + d))\n"
                 "ihdr = struct.pack(\">IIBBBBB\", 65535, 65535, 8, 2, 0, 0, 0)\n"
                 "body = zlib.compress(bytes(3 * 65535 + 1) * 4, 9)\n"
                 "open(\"bomb.png\", \"wb\").write(b\"\\x89PNG\\r\\n\\x1a\\n\" + chunk(b\"IHDR\", ihdr) + "
                 "chunk(b\"IDAT\", body) + chunk(b\"IEND\", b\"\"))'",
                 dir, py) == 0,
           "decompression bomb written"))
        bad_file("bomb.png", "a 65535x65535 PNG of a few hundred bytes");
    char args[2048];
    snprintf(args, sizeof args, "-m '%s' -p Q --max-image-pixels 40 --dry-run '%s'", model, tmp("src.png"));
    refused(args, 1, "src.png", NULL, "--max-image-pixels 40 refuses a larger image (at least 7x7)");
    snprintf(args, sizeof args, "-m '%s' -p Q --page 9 '%s'", model, tmp("multi.tif"));
    refused(args, 1, "multi.tif", "9", "page 9 of a 3-page TIFF");
    /* usage errors */
    snprintf(args, sizeof args, "-m '%s' -p Q", model);
    refused(args, 2, NULL, "IMAGE", "no image");
    snprintf(args, sizeof args, "-m '%s' -p Q --page 0 '%s'", model, tmp("src.png"));
    refused(args, 2, "--page", NULL, "--page 0");
    snprintf(args, sizeof args, "-m '%s' -p Q --page two '%s'", model, tmp("src.png"));
    refused(args, 2, "--page", NULL, "--page two");
    snprintf(args, sizeof args, "-m '%s' -p Q - - < '%s'", model, tmp("src.png"));
    refused(args, 2, "stdin", NULL, "'-' twice");
    snprintf(args, sizeof args, "-m '%s' -p Q --resize bilinear '%s'", model, tmp("src.png"));
    refused(args, 2, "--resize", "pillow", "--resize bilinear");
    snprintf(args, sizeof args, "-m '%s' --raw -p 'no placeholder' --dry-run '%s'", model, tmp("src.png"));
    refused(args, 1, "placeholder", NULL, "--raw prompt without a placeholder for its image");
}

/* ---- the mmproj beside a GGUF ------------------------------------------------------------------- */

static void mmproj_discovery(const char *gen)
{
    char args[2048];
    struct test_run r;
    /* one mmproj*.gguf beside the model: found without --mmproj */
    if (!ok(if_sh("mkdir -p '%s/one' '%s/two' && cp '%s/model-f32.gguf' '%s/mmproj-f32.gguf' '%s/one/' && "
                  "cp '%s/model-f32.gguf' '%s/mmproj-f32.gguf' '%s/two/' && cp '%s/mmproj-f32.gguf' "
                  "'%s/two/mmproj-copy.gguf'",
                  dir, dir, gen, gen, dir, gen, gen, dir, gen, dir) == 0,
            "model directories laid out"))
        return;
    snprintf(args, sizeof args, "ask -m '%s/one/model-f32.gguf' -p Q --temp 0 -n 2 --json '%s'", dir, tmp("src.png"));
    r = test_seer(args);
    ok(r.status == 0 && !strstr(r.err, "warn"), "one mmproj*.gguf beside the GGUF: used without --mmproj");
    test_run_free(&r);
    snprintf(args, sizeof args, "ask -m '%s/two/model-f32.gguf' -p Q --temp 0 -n 2 --json '%s'", dir, tmp("src.png"));
    r = test_seer(args);
    if (!ok(r.status == 1 && !*r.out && strstr(r.err, "2 mmproj") && strstr(r.err, "--mmproj"),
            "two mmproj*.gguf beside it: a warning naming --mmproj, then refused (exit 1)"))
        diag("exit %d: %s", r.status, r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "ask -m '%s/two/model-f32.gguf' --mmproj '%s/two/mmproj-copy.gguf' -p Q --temp 0 -n 2 "
             "--json '%s'", dir, dir, tmp("src.png"));
    r = test_seer(args);
    ok(r.status == 0 && !strstr(r.err, "warn"), "two beside it: --mmproj picks one, no warning");
    test_run_free(&r);
    /* tiny's text model (hidden 64) with tiny-untied's projector (128 values per token) */
    char other[700];
    snprintf(other, sizeof other, "%s/untied", dir);
    if (ok(if_gen_tiny(other, "tiny-untied", test_rand_u64() >> 1, "", "f32") == 0, "tiny-untied generated")) {
        snprintf(args, sizeof args, "-m '%s/model-f32.gguf' --mmproj '%s/mmproj-f32.gguf' -p Q '%s'", gen, other,
                 tmp("src.png"));
        refused(args, 1, "mmproj-f32.gguf", "128", "an mmproj whose projection size (128) differs from the hidden size");
    }
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    const char *p = if_python_pil();
    if (!p)
        return plan_skip_all("no python3 with PIL and numpy (apt install python3-pil python3-numpy)");
    snprintf(py, sizeof py, "%s", p);
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    char gen[700];
    snprintf(gen, sizeof gen, "%s/tiny", dir);
    if (!ok(if_gen_tiny(gen, "tiny", seed, "", "f32") == 0, "tiny model generated"))
        return done_testing();
    snprintf(model, sizeof model, "%s/hf", gen);
    token_table();
    formats();
    dry_vs_real(tmp("exif6.jpg"), tmp("rgba.png"));
    progress_batches(tmp("exif6.jpg"), tmp("rgba.png"));
    interrupted();
    bad_inputs();
    mmproj_discovery(gen);
    return done_testing();
}
