/* tests/media/decode.c — media/ decodes real files, made at test time with Pillow, ffmpeg,
   libtiff-tools and poppler-utils, to the same pixels Pillow gives (Pillow is what Hugging Face's
   load_image + convert_to_rgb use): every format and colour layout, all eight EXIF orientations,
   alpha over white, multi-page TIFF and PDF. Tolerances are stated next to each file: 0 where
   both sides run the same lossless arithmetic (and for JPEG: both are libjpeg-turbo with the same
   settings), 1 where libtiff's RGBA interface rounds differently from Pillow (premultiplied
   alpha, CMYK), larger only for lossy WebP (FFmpeg's VP8 + libswscale vs libwebp). Failures and
   limits are in tests/media/hostile.c. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "core/util.h"
#include "media_test.h"

static const char *dir;

/* poppler's fontconfig cache, which LeakSanitizer would report, is suppressed for every sanitizer
   build in cmake/lsan_suppressions.c. */

/* Files Pillow makes (pil_ref.py make) and the tolerance each is held to. */
static const struct {
    const char *file;
    int tol;
} pil_files[] = {
    {"rgba.png", 0}, {"la.png", 0}, {"gray.png", 0}, {"gray16.png", 0}, {"bilevel.png", 0},
    {"pal_trns.png", 0}, {"gray_trns.png", 0}, {"rgb_trns.png", 0}, {"smooth.png", 0}, {"pal.gif", 0}, {"pal_trns.gif", 0}, {"pal.bmp", 0},
    {"rgb.bmp", 0}, {"rgba_v5.bmp", 0}, {"rgb_lzw.tif", 0}, {"gray16.tif", 0}, {"bilevel.tif", 0}, {"pal.tif", 0},
    {"orient6.tif", 0}, {"cmyk.jpg", 0}, {"gray.jpg", 0}, {"sub444.jpg", 0}, {"progressive.jpg", 0},
    {"exif1.jpg", 0}, {"exif2.jpg", 0}, {"exif3.jpg", 0}, {"exif4.jpg", 0},
    {"exif5.jpg", 0}, {"exif6.jpg", 0}, {"exif7.jpg", 0}, {"exif8.jpg", 0}, {"exif6.png", 0},
    {"exif7.webp", 0},
    /* libtiff premultiplies unassociated alpha / converts CMYK with a truncating division;
       Pillow rounds: at most 1 apart */
    {"rgba.tif", 1}, {"cmyk.tif", 1},
};

/* Files ffmpeg and libtiff-tools make from Pillow's, and their tolerances. */
static const struct {
    const char *file, *cmd;
    int tol;
} tool_files[] = {
    {"ff_lossless.webp", "ffmpeg -y -v error -i src.png -c:v libwebp -lossless 1 ff_lossless.webp", 0},
    {"ff_rgba.webp", "ffmpeg -y -v error -i rgba.png -c:v libwebp -lossless 1 -pix_fmt bgra ff_rgba.webp", 0},
    /* lossy WebP: FFmpeg's VP8 decoder + libswscale's YUV→RGB against libwebp's fancy upsampling;
       the pictures agree to a few levels, bounded here at 32 (any real bug, a wrong matrix or a
       swapped plane, is far larger) */
    {"ff_lossy.webp", "ffmpeg -y -v error -i smooth.png -c:v libwebp -quality 95 ff_lossy.webp", 32},
    {"ff_rgb48.png", "ffmpeg -y -v error -i src.png -pix_fmt rgb48be ff_rgb48.png", 0},
    {"ff_rgba64.png", "ffmpeg -y -v error -i rgba.png -pix_fmt rgba64be ff_rgba64.png", 0},
    {"ff_ya16.png", "ffmpeg -y -v error -i la.png -pix_fmt ya16be ff_ya16.png", 0},
    {"ff_pal.png", "ffmpeg -y -v error -i src.png -pix_fmt pal8 ff_pal.png", 0},
    {"ff.bmp", "ffmpeg -y -v error -i src.png -pix_fmt bgr24 ff.bmp", 0},
    /* 32-bit BI_RGB with alpha bytes: Pillow reads "BGRX" (no alpha), FFmpeg BGRA */
    {"ff_bgra.bmp", "ffmpeg -y -v error -i rgba.png -pix_fmt bgra ff_bgra.bmp", 0},
    {"ff.gif", "ffmpeg -y -v error -i src.png -vf 'split[a][b];[a]palettegen[p];[b][p]paletteuse' ff.gif", 0},
    {"ff_deflate.tif", "ffmpeg -y -v error -i src.png -compression_algo deflate ff_deflate.tif", 0},
    {"ff_packbits.tif", "ffmpeg -y -v error -i src.png -compression_algo packbits ff_packbits.tif", 0},
    {"ff_rgba.tif", "ffmpeg -y -v error -i rgba.png -pix_fmt rgba -compression_algo lzw ff_rgba.tif", 1},
    /* 16-bit RGB TIFF: libtiff's RGBA interface rounds 16 → 8 bits, Pillow keeps the high byte */
    {"ff_rgb48.tif", "ffmpeg -y -v error -i src.png -pix_fmt rgb48le ff_rgb48.tif", 1},
    {"ff_gray16.tif", "ffmpeg -y -v error -i src.png -pix_fmt gray16le ff_gray16.tif", 0},
    {"tiled.tif", "tiffcp -t -w 16 -l 16 rgb_lzw.tif tiled.tif", 0},
    {"g4.tif", "tiffcp -c g4 bilevel.tif g4.tif", 0},
    {"g3.tif", "tiffcp -c g3:2d bilevel.tif g3.tif", 0},
    {"jpeg_in.tif", "tiffcp -c jpeg:r:90 rgb_lzw.tif jpeg_in.tif", 0},
};

/* A YCCK JPEG: TurboJPEG compresses CMYK pixels as YCCK (what Photoshop writes for CMYK). */
static int make_ycck(const char *path)
{
    enum { W = 45, H = 31 };
    static uint8_t cmyk[W * H * 4];
    for (size_t i = 0; i < sizeof cmyk; i++)
        cmyk[i] = (uint8_t)(test_rand_u64() % 64 + (i % 4) * 40 + (i / 4 % W) * 2);
    tjhandle tj = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long n = 0;
    int rc = tj ? tjCompress2(tj, cmyk, W, 0, H, TJPF_CMYK, &jpg, &n, TJSAMP_444, 95, 0) : -1;
    FILE *f = rc == 0 ? fopen(path, "wb") : NULL;
    if (f) {
        rc = fwrite(jpg, 1, n, f) == n ? 0 : -1;
        fclose(f);
    }
    tjFree(jpg);
    if (tj)
        tjDestroy(tj);
    return f ? rc : -1;
}

/* Every page of a multi-page file decodes like Pillow's frames; the page count is right. */
static void check_pages(const char *name, int n_expect, int tol)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    media_doc *d = NULL;
    int rc = media_open(path, NULL, &d);
    ok(rc == SEER_OK && media_page_count(d) == n_expect, "%s: %d pages (found %d)", name, n_expect,
       d ? media_page_count(d) : -1);
    media_close(d);
    for (int p = 0; p < n_expect; p++)
        mt_compare(path, p, NULL, NULL, tol, name);
}

static void check_kind(const char *name, enum media_kind k)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    media_doc *d = NULL;
    int rc = media_open(path, NULL, &d);
    ok(rc == SEER_OK && media_kind_of(d) == k, "%s is %s", name, media_kind_name(k));
    media_close(d);
}

/* PDF: tiff2pdf makes a 3-page PDF; pdftocairo (poppler's cairo renderer, as ours) is the
   reference at the same dpi. */
static void check_pdf(void)
{
#if defined(SEER_HAVE_PDF)
    if (!mt_have("command -v tiff2pdf && command -v pdftocairo")) {
        mt_missing("tiff2pdf / pdftocairo (apt install libtiff-tools poppler-utils)", "PDF pages match pdftocairo");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/doc.pdf", dir);
    if (!ok(mt_sh("cd '%s' && tiff2pdf -x 40 -y 40 -o doc.pdf multi.tif && pdftocairo -png -r 137 doc.pdf pc && "
                  "pdftocairo -png -r 137 vector.pdf vc && %s '%s' ref pc-1.png pc-2.png pc-3.png vc-1.png vc-2.png",
                  dir, mt_python, test_src_path("tests/media/pil_ref.py")) == 0,
            "tiff2pdf + pdftocairo make a 3-page PDF and the renderings of it and of vector.pdf"))
        return;
    struct media_limits lim = media_limits_default();
    lim.dpi = 137; /* not a multiple of 72: page sizes round up as pdftocairo does */
    media_doc *d = NULL;
    ok(media_open(path, &lim, &d) == SEER_OK && media_kind_of(d) == MEDIA_PDF && media_page_count(d) == 3,
       "doc.pdf: a PDF of 3 pages");
    media_close(d);
    for (int p = 0; p < 3; p++) {
        char ref[1024];
        snprintf(ref, sizeof ref, "%s/pc-%d.png.0.ppm", dir, p + 1);
        /* same poppler + cairo code as pdftocairo, white paper: identical pixels expected */
        mt_compare(path, p, ref, &lim, 0, "doc.pdf at 137 dpi vs pdftocairo");
    }
    /* shapes and text; page 2 is 200.5 x 100.25 pt with /Rotate 90: 191 x 382 pixels */
    snprintf(path, sizeof path, "%s/vector.pdf", dir);
    for (int p = 0; p < 2; p++) {
        char ref[1024];
        snprintf(ref, sizeof ref, "%s/vc-%d.png.0.ppm", dir, p + 1);
        mt_compare(path, p, ref, &lim, 0, "vector.pdf at 137 dpi vs pdftocairo");
    }
#else
    skip("built with SEER_PDF=OFF", "PDF pages match pdftocairo");
#endif
}

/* "-" reads stdin; media_open_memory gives the same pixels as the file. */
static void check_stdin_and_memory(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/rgba.png", dir);
    struct image_rgb8 a = {0}, b = {0}, c = {0};
    int rc_a = mt_decode(path, NULL, 0, &a);

    int saved = dup(0), fd = open(path, O_RDONLY);
    dup2(fd, 0);
    close(fd);
    int rc_b = mt_decode("-", NULL, 0, &b);
    dup2(saved, 0);
    close(saved);
    ok(rc_a == SEER_OK && rc_b == SEER_OK && a.width == b.width && a.height == b.height &&
           !memcmp(a.px, b.px, (size_t)a.width * a.height * 3),
       "\"-\" reads the image from stdin");

    char *bytes = NULL;
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        n = (size_t)ftell(f);
        rewind(f);
        bytes = malloc(n);
        if (bytes && fread(bytes, 1, n, f) != n)
            n = 0;
        fclose(f);
    }
    media_doc *d = NULL;
    int rc_c = bytes ? media_open_memory(bytes, n, "mem.png", NULL, &d) : SEER_EIO;
    free(bytes); /* the document keeps its own copy */
    if (rc_c == SEER_OK)
        rc_c = media_decode_page(d, 0, &c);
    ok(rc_c == SEER_OK && media_kind_of(d) == MEDIA_PNG && c.width == a.width &&
           !memcmp(a.px, c.px, (size_t)a.width * a.height * 3),
       "media_open_memory decodes the same bytes to the same pixels");
    ok(d && !strcmp(media_name(d), "mem.png"), "the in-memory document keeps its name");
    media_close(d);
    image_rgb8_free(&a);
    image_rgb8_free(&b);
    image_rgb8_free(&c);
}

int main(void)
{
    uint64_t seed = test_seed();
    dir = test_tmp_dir();
    if (!mt_pil()) {
        if (mt_required())
            return ok(0, "python3 with PIL and numpy (apt install python3-pil python3-numpy)"), done_testing();
        return plan_skip_all("python3 with PIL and numpy is missing (apt install python3-pil python3-numpy)");
    }
    const char *script = test_src_path("tests/media/pil_ref.py");
    if (!ok(mt_sh("%s '%s' make '%s' %llu", mt_python, script, dir, (unsigned long long)seed) == 0,
            "Pillow makes the test images"))
        return done_testing();

    /* ffmpeg / libtiff-tools files, then Pillow's reference decodes of everything */
    int have_ff = mt_have("command -v ffmpeg"), have_tiffcp = mt_have("command -v tiffcp");
    char refs[8192];
    int len = snprintf(refs, sizeof refs, "cd '%s' && %s '%s' ref", dir, mt_python, script);
    for (size_t i = 0; i < ARRAY_LEN(pil_files); i++)
        len += snprintf(refs + len, sizeof refs - len, " %s", pil_files[i].file);
    bool made[ARRAY_LEN(tool_files)] = {0};
    for (size_t i = 0; i < ARRAY_LEN(tool_files); i++) {
        bool ff = !strncmp(tool_files[i].cmd, "ffmpeg", 6);
        if ((ff && !have_ff) || (!ff && !have_tiffcp))
            continue;
        made[i] = mt_sh("cd '%s' && %s", dir, tool_files[i].cmd) == 0;
        ok(made[i], "made %s", tool_files[i].file);
        if (made[i])
            len += snprintf(refs + len, sizeof refs - len, " %s", tool_files[i].file);
    }
    len += snprintf(refs + len, sizeof refs - len, " multi.tif");
    char ycck[1024];
    snprintf(ycck, sizeof ycck, "%s/ycck.jpg", dir);
    bool ycck_ok = make_ycck(ycck) == 0;
    ok(ycck_ok, "TurboJPEG writes a YCCK JPEG");
    if (ycck_ok)
        snprintf(refs + len, sizeof refs - len, " ycck.jpg");
    if (!ok(mt_sh("%s", refs) == 0, "Pillow decodes every test file"))
        return done_testing();

    for (size_t i = 0; i < ARRAY_LEN(pil_files); i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, pil_files[i].file);
        mt_compare(path, 0, NULL, NULL, pil_files[i].tol, pil_files[i].file);
    }
    for (size_t i = 0; i < ARRAY_LEN(tool_files); i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, tool_files[i].file);
        if (made[i])
            mt_compare(path, 0, NULL, NULL, tool_files[i].tol, tool_files[i].file);
        else if (!strncmp(tool_files[i].cmd, "ffmpeg", 6) ? !have_ff : !have_tiffcp)
            mt_missing("ffmpeg / tiffcp (apt install ffmpeg libtiff-tools)", tool_files[i].file);
    }
    if (ycck_ok)
        mt_compare(ycck, 0, NULL, NULL, 0, "ycck.jpg (CMYK stored as YCCK)");
    check_pages("multi.tif", 3, 0);
    check_kind("exif6.jpg", MEDIA_JPEG);
    check_kind("rgba.png", MEDIA_PNG);
    check_kind("pal.gif", MEDIA_GIF);
    check_kind("pal.bmp", MEDIA_BMP);
    check_kind("g4.tif", MEDIA_TIFF);
    if (have_ff)
        check_kind("ff_lossy.webp", MEDIA_WEBP);
    check_pdf();
    check_stdin_and_memory();
    return done_testing();
}
