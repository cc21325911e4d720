/* fuzz_ocr_parse.c — libFuzzer target: seer_ocr_parse on any answer. The last byte picks the page
   (its size, 0..1000 units or model pixels); the rest is the answer, with token spans and
   log-probabilities made from its own bytes so the confidence code runs too. Beyond not crashing
   or leaking, every page must keep the contract of include/seer.h: boxes ordered and inside the
   page, a box-less block only last, words tiling their line's box, texts NUL-free valid UTF-8,
   confidences -1 or 0..100. */
#include "fuzz_util.h"

#include "core/utf8.h"

static void check_text(const char *s, int word)
{
    size_t n = strlen(s);
    if (!n || utf8_check(s, n) != n)
        abort();
    if (word && (strchr(s, ' ') || strchr(s, '\n') || strchr(s, '\t')))
        abort();
}

static void check_box(seer_box b, const seer_ocr_page *pg)
{
    if (b.x0 < 0 || b.x0 > b.x1 || b.x1 > pg->width || b.y0 < 0 || b.y0 > b.y1 || b.y1 > pg->height)
        abort();
}

static void check_conf(float c)
{
    if (c != -1 && !(c >= 0 && c <= 100))
        abort();
}

static void check_page(const seer_ocr_page *pg)
{
    for (size_t b = 0; b < pg->n_blocks; b++) {
        const seer_ocr_block *bl = &pg->blocks[b];
        if (!bl->n_lines || (!bl->has_box && b + 1 != pg->n_blocks))
            abort();
        for (size_t l = 0; l < bl->n_lines; l++) {
            const seer_ocr_line *ln = &bl->lines[l];
            check_box(ln->box, pg);
            check_text(ln->text, 0);
            check_conf(ln->conf);
            if (ln->has_box != bl->has_box || !ln->n_words)
                abort();
            for (size_t w = 0; w < ln->n_words; w++) {
                const seer_ocr_word *wd = &ln->words[w];
                check_text(wd->text, 1);
                check_conf(wd->conf);
                if (wd->box.x0 != (w ? ln->words[w - 1].box.x1 : ln->box.x0) || wd->box.x0 > wd->box.x1 ||
                    wd->box.y0 != ln->box.y0 || wd->box.y1 != ln->box.y1)
                    abort();
            }
            if (ln->words[ln->n_words - 1].box.x1 != ln->box.x1)
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    if (size < 1)
        return 0;
    uint8_t flags = data[size - 1];
    size_t n = size - 1;
    seer_result r;
    memset(&r, 0, sizeof r);
    r.text = fz_strndup(data, n);
    r.text_len = n;
    /* tokens of 1..4 bytes, the byte at each token's start choosing its length and probability */
    r.logprobs = malloc((n + 1) * sizeof *r.logprobs);
    r.text_ends = malloc((n + 1) * sizeof *r.text_ends);
    if (!r.logprobs || !r.text_ends)
        abort();
    for (size_t p = 0; p < n; r.n_tokens++) {
        p += MIN((size_t)(1 + data[p] % 4), n - p);
        r.logprobs[r.n_tokens] = -0.5f * (float)(data[p - 1] % 8);
        r.text_ends[r.n_tokens] = p;
    }
    seer_ocr_geometry g = {.width = 1 + (flags & 7) * 397, .height = 1 + ((flags >> 3) & 7) * 211,
                           .coords = (flags >> 6) & 1 ? SEER_OCR_COORDS_MODEL_PIXELS : SEER_OCR_COORDS_REL1000,
                           .model_width = flags >> 7 ? 0 : 500, .model_height = flags >> 7 ? 0 : 700};
    seer_ocr_page *pg = NULL;
    int rc = seer_ocr_parse(&r, &g, &pg);
    fz_check_message(rc);
    if (rc == SEER_OK) {
        if (pg->width != g.width || pg->height != g.height)
            abort();
        check_page(pg);
    } else if (rc != SEER_ENOMEM || pg) {
        abort();
    }
    seer_ocr_page_free(pg);
    free(r.text);
    free(r.logprobs);
    free(r.text_ends);
    return 0;
}
