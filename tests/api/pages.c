/* Tests seer.h's "tokens and pages" (api/tokens.c, api/pages.c) through the public API:
   seer_utf8_check against an independent validator (tok_test.h's, Unicode Table 3-7) on random
   byte strings; seer_token_piece on a hand-checkable vocabulary loaded with vocab_only
   (support/tiny_vocab.h): known pieces, no piece for ids without a token, and the pieces of a
   random text's tokens joined give the text back; seer_document_* on files PIL writes at test time
   (random noise, random sizes): a PNG and a 3-page TIFF decode to exactly the RGB bytes PIL reads,
   a page measures as its file does, pages out of range, max_image_pixels from the params, a video,
   a missing file and a non-image fail naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm/tok_test.h"
#include "seer.h"
#include "support/image_files.h"
#include "support/testutil.h"
#include "support/tiny_vocab.h"
#include "tap.h"

/* Random bytes that are mostly valid UTF-8: whole characters of every length, with now and then
   a stray byte, a truncated character, an overlong form or a surrogate. */
static size_t random_utf8ish(unsigned char *b, size_t cap)
{
    static const char *const bad[] = {"\x80", "\xc0\xaf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xff", "\xe3\x81", "\xf0\x9f\x99"};
    static const char *const good[] = {"a", " ", "\n", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x99\x82", "\x7f",
                                       "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xc2\x80"};
    size_t n = 0;
    while (n + 4 < cap && test_rand_u64() % 40) {
        const char *p = test_rand_u64() % 12 ? good[test_rand_u64() % 10] : bad[test_rand_u64() % 8];
        memcpy(b + n, p, strlen(p));
        n += strlen(p);
    }
    return n;
}

static void utf8_check_tests(void)
{
    int wrong = 0, invalid = 0;
    for (int t = 0; t < 2000; t++) {
        unsigned char b[256];
        size_t n = random_utf8ish(b, sizeof b), k = seer_utf8_check((const char *)b, n);
        /* b[0..k) is valid, and no character (of 1..4 bytes) starts at k */
        bool right = k <= n && ref_utf8_valid((const char *)b, k);
        for (size_t l = 1; right && k < n && l <= 4 && k + l <= n; l++)
            right = !ref_utf8_valid((const char *)b + k, l);
        wrong += !right;
        invalid += k < n;
    }
    ok(wrong == 0 && invalid > 100, "seer_utf8_check: the first invalid byte of 2000 random strings, as the "
       "reference finds it (%d wrong; %d strings were invalid)", wrong, invalid);
    ok(seer_utf8_check("a\xed\xa0\x80", 4) == 1 && seer_utf8_check("ab\xc0\x80", 4) == 2 &&
           seer_utf8_check("\xf4\x90\x80\x80", 4) == 0 && seer_utf8_check("\xe6\x97", 2) == 0 &&
           seer_utf8_check("", 0) == 0 && seer_utf8_check("a\0b", 3) == 3,
       "seer_utf8_check: a surrogate, an overlong NUL, past U+10FFFF and a cut character are invalid; U+0000 is "
       "valid");
}

static void token_piece_tests(const char *dir)
{
    seer_model_params mp = seer_model_params_default();
    mp.vocab_only = 1;
    seer_model *m = NULL;
    int rc = seer_model_load(dir, &mp, &m);
    if (!ok(rc == SEER_OK, "the tiny vocabulary loads with vocab_only: %s", rc ? seer_last_error() : "ok"))
        return;
    size_t len = 99;
    const char *p = seer_token_piece(m, 257, &len);
    bool known = p && len == 3 && !memcmp(p, "abc", 3);
    p = seer_token_piece(m, 258, &len);
    known = known && p && len == 2 && !memcmp(p, " x", 2);
    p = seer_token_piece(m, TV_ID_IM_END, &len);
    known = known && p && len == 10 && !memcmp(p, "<|im_end|>", 10);
    p = seer_token_piece(m, 0xc3, &len);
    known = known && p && len == 1 && (unsigned char)p[0] == 0xc3; /* half a character: the byte itself */
    ok(known, "seer_token_piece: \"abc\", \" x\", <|im_end|> and a lone byte as the vocabulary has them");
    len = 99;
    ok(!seer_token_piece(m, -1, &len) && len == 0 && !seer_token_piece(m, TV_N_VOCAB, &len) &&
           !seer_token_piece(m, INT32_MAX, NULL),
       "seer_token_piece: NULL (length 0) for ids with no token");

    static const char *const parts[] = {"a", "b", "c", "ab", " x", "abc", "x", " ", "\xc3\xa9", "\xf0\x9f\x99\x82",
                                        "<s>", "<t>", "\n"};
    int bad = 0;
    for (int t = 0; t < 50; t++) {
        char text[512], joined[2048];
        size_t n = 0, j = 0;
        for (int k = (int)(test_rand_u64() % 40); k >= 0; k--) {
            const char *s = parts[test_rand_u64() % (sizeof parts / sizeof *parts)];
            memcpy(text + n, s, strlen(s));
            n += strlen(s);
        }
        int32_t *ids = NULL;
        size_t n_ids = 0;
        int special = (int)(test_rand_u64() % 2);
        if (seer_tokenize(m, text, n, special, &ids, &n_ids) != SEER_OK) {
            bad++;
            continue;
        }
        for (size_t i = 0; i < n_ids; i++) {
            p = seer_token_piece(m, ids[i], &len);
            if (p && j + len <= sizeof joined)
                memcpy(joined + j, p, len), j += len;
        }
        bad += j != n || memcmp(joined, text, n) != 0;
        seer_free(ids);
    }
    ok(bad == 0, "the pieces of a random text's tokens, joined, are the text (%d of 50 wrong)", bad);
    seer_model_free(m);
}

/* The document's page `page` against PIL's RGB bytes in `raw` (w × h). */
static bool page_is(seer_document *d, int32_t page, const char *raw, int w, int h)
{
    uint8_t *rgb = NULL;
    int32_t dw = 0, dh = 0;
    size_t n = (size_t)w * (size_t)h * 3, got = 0;
    char *want = malloc(n + 1);
    FILE *f = fopen(raw, "rb");
    if (f && want)
        got = fread(want, 1, n + 1, f); /* one more than the page: a longer file is wrong too */
    if (f)
        fclose(f);
    int rc = seer_document_decode(d, page, &rgb, &dw, &dh);
    bool same = rc == SEER_OK && dw == w && dh == h && got == n && !memcmp(rgb, want, n);
    if (!same)
        diag("page %d: rc %d (%s), %dx%d, want %dx%d", page, rc, rc ? seer_last_error() : "", dw, dh, w, h);
    seer_free(rgb);
    free(want);
    return same;
}

static void document_tests(const char *dir, const char *model_dir)
{
    const char *py = if_python_pil();
    if (!py) {
        skip("python3 with PIL and numpy is missing: no test images", "seer_document_* on PNG and TIFF files");
        return;
    }
    int w[3], h[3];
    for (int k = 0; k < 3; k++)
        w[k] = 9 + (int)(test_rand_u64() % 300), h[k] = 9 + (int)(test_rand_u64() % 300);
    if (!ok(if_sh("cd '%s' && %s -c \"\nimport numpy as np, PIL.Image as I\nr = np.random.default_rng(%llu)\n"
                  "sz = [(%d, %d), (%d, %d), (%d, %d)]\n"
                  "ims = [I.fromarray(r.integers(0, 256, (h, w, 3), dtype=np.uint8)) for w, h in sz]\n"
                  "ims[0].save('one.png')\nims[0].save('big.png')\n"
                  "ims[0].save('multi.tif', save_all=True, append_images=ims[1:], compression='tiff_deflate')\n"
                  "t = I.open('multi.tif')\n"
                  "for k in range(3):\n    t.seek(k); open('p%%d.rgb' %% k, 'wb').write(t.convert('RGB').tobytes())\n"
                  "open('one.rgb', 'wb').write(I.open('one.png').convert('RGB').tobytes())\n"
                  "open('text.png', 'w').write('not an image')\n\"",
                  dir, py, (unsigned long long)test_rand_u64(), w[0], h[0], w[1], h[1], w[2], h[2]) == 0,
            "PIL wrote a PNG and a 3-page TIFF of random noise (%dx%d, %dx%d, %dx%d)", w[0], h[0], w[1], h[1], w[2],
            h[2]))
        return;
    char path[1024], raw[1024];
    seer_document *d = NULL;
    snprintf(path, sizeof path, "%s/one.png", dir);
    snprintf(raw, sizeof raw, "%s/one.rgb", dir);
    if (ok(seer_document_open(path, NULL, &d) == SEER_OK && seer_document_pages(d) == 1, "a PNG has one page"))
        ok(page_is(d, 0, raw, w[0], h[0]), "the PNG decodes to PIL's pixels");
    seer_document_close(d);

    d = NULL;
    snprintf(path, sizeof path, "%s/multi.tif", dir);
    if (ok(seer_document_open(path, NULL, &d) == SEER_OK && seer_document_pages(d) == 3, "the TIFF has 3 pages")) {
        bool all = true;
        for (int k = 2; k >= 0; k--) { /* any order: a page is not read twice by luck */
            snprintf(raw, sizeof raw, "%s/p%d.rgb", dir, k);
            all = page_is(d, k, raw, w[k], h[k]) && all;
        }
        ok(all, "each TIFF page decodes to PIL's pixels, last page first");
        uint8_t *rgb = (uint8_t *)0x1;
        int32_t dw = -7, dh = -7;
        ok(seer_document_decode(d, 3, &rgb, &dw, &dh) == SEER_EINVAL && rgb == (uint8_t *)0x1 && dw == -7 &&
               strstr(seer_last_error(), "multi.tif"),
           "page 4 of 3: SEER_EINVAL naming the file, outputs untouched: %s", seer_last_error());
        ok(seer_document_decode(d, -1, &rgb, &dw, &dh) == SEER_EINVAL, "page -1: SEER_EINVAL");

        /* the pixels of page 2 measure as the file's page 2 does on a model (the same decoding) */
        seer_model_params vp = seer_model_params_default();
        vp.vocab_only = 1;
        seer_model *m = NULL;
        seer_image_info a = {0}, b = {0};
        int32_t pw, ph;
        int ra = seer_model_load(model_dir, &vp, &m), rb = ra;
        if (!ra && !(ra = seer_document_decode(d, 1, &rgb, &pw, &ph))) {
            seer_image_input px = {.rgb = rgb, .width = pw, .height = ph}, file = {.path = path, .page = 1};
            ra = seer_image_measure(m, &px, &a);
            rb = seer_image_measure(m, &file, &b);
            seer_free(rgb);
        }
        ok(ra == SEER_OK && rb == SEER_OK && a.tokens > 0 && !memcmp(&a, &b, sizeof a),
           "page 2's pixels measure as the file's page 2: %dx%d, %lld tokens (%s)", a.resized_width,
           a.resized_height, (long long)a.tokens, ra || rb ? seer_last_error() : "ok");
        seer_model_free(m);
    }
    seer_document_close(d);

    /* max_image_pixels and pdf_dpi come from the params: a limit below the page refuses it */
    seer_model_params mp = seer_model_params_default();
    mp.max_image_pixels = (int64_t)w[0] * h[0] - 1;
    snprintf(path, sizeof path, "%s/big.png", dir);
    d = NULL;
    uint8_t *rgb = NULL;
    int32_t dw, dh;
    int rc = seer_document_open(path, &mp, &d);
    if (rc == SEER_OK)
        rc = seer_document_decode(d, 0, &rgb, &dw, &dh);
    ok(rc != SEER_OK && !rgb && strstr(seer_last_error(), "big.png"),
       "max_image_pixels one below the page's pixels refuses it, naming the file: %s", seer_last_error());
    seer_document_close(d);

    static const char *const refused[] = {"text.png", "missing.png"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, refused[k]);
        d = (seer_document *)0x1;
        rc = seer_document_open(path, NULL, &d);
        ok(rc != SEER_OK && d == (seer_document *)0x1 && strstr(seer_last_error(), refused[k]),
           "%s: refused naming it, *out untouched: %s", refused[k], seer_last_error());
    }
    d = (seer_document *)0x1;
    rc = seer_document_open(test_src_path("samples/shapes.mp4"), NULL, &d);
    ok(rc == SEER_EUNSUPPORTED && d == (seer_document *)0x1 && strstr(seer_last_error(), "shapes.mp4: is a video"),
       "a video has no pages: SEER_EUNSUPPORTED: %s", seer_last_error());
    seer_document_close(NULL);
    ok(seer_document_pages(NULL) == 0, "seer_document_close(NULL) is fine; a NULL document has no pages");
}

/* seer_document_dpi: each format's density as Pillow writes it (PNG pHYs in pixels per metre, so 150
   dpi comes back as 5906 / 39.37 = 150.01; JFIF and TIFF exactly), a PDF's rasterisation dpi, and 0
   where the file says nothing. Values written by Pillow, not by seer. */
static void dpi_tests(const char *dir)
{
    const char *py = if_python_pil();
    if (!py) {
        skip("python3 with PIL is missing: no test images", "seer_document_dpi");
        return;
    }
    const int jd = 72 + (int)(test_rand_u64() % 500), td = 72 + (int)(test_rand_u64() % 500);
    if (!ok(if_sh("cd '%s' && %s -c \"\nimport PIL.Image as I\nim = I.new('RGB', (40, 30), 'white')\n"
                  "im.save('d.png', dpi=(150, 150))\nim.save('n.png')\nim.save('d.jpg', dpi=(%d, %d))\n"
                  "im.save('d.tif', dpi=(%d, %d))\nim.save('d.pdf', resolution=100)\n\"", dir, py, jd, jd, td, td) == 0,
            "PIL wrote a PNG at 150 dpi, one without, a JPEG at %d dpi, a TIFF at %d dpi and a PDF", jd, td))
        return;
    const struct { const char *name; double want; } cases[] = {
        {"d.png", 5906 / 39.37}, {"n.png", 0}, {"d.jpg", jd}, {"d.tif", td}, {"d.pdf", 200},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char path[1024];
        seer_document *d = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, cases[k].name);
        int rc = seer_document_open(path, NULL, &d);
        double got = rc ? -1 : seer_document_dpi(d, 0);
        if (strstr(cases[k].name, ".pdf") && rc == SEER_EUNSUPPORTED)
            skip("a build without PDF support", "seer_document_dpi of a PDF");
        else
            ok(rc == SEER_OK && fabs(got - cases[k].want) < 0.01 && seer_document_dpi(d, 1) == 0,
               "%s: %.3f dpi (want %.3f); page 1 (none): 0", cases[k].name, got, cases[k].want);
        seer_document_close(d);
    }
}

int main(void)
{
    plan_no_plan();
    test_seed();
    seer_set_log_level(SEER_LOG_ERROR);
    utf8_check_tests();
    char dir[600];
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    tv_write_model(dir);
    token_piece_tests(dir);
    document_tests(dir, dir);
    dpi_tests(dir);
    return done_testing();
}
