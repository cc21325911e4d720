/* layout.c — seer_ocr_parse: a model's grounding answer into a page of blocks, lines and words
   with boxes in page pixels (include/seer.h, "OCR layout"). ocr/scan.c reads the answer's bytes;
   this file maps the boxes, splits lines and words, and gives them confidences.

   The formats, from Qwen's own material (tests/data/ocr/answers/SOURCES.md has the details):
   - Text spotting: the prompt "Spotting all the text in the image with line-level, and output in
     JSON format as [{'bbox_2d': [x1, y1, x2, y2], 'text_content': 'text'}, ...]." (Qwen3-VL
     cookbooks/ocr.ipynb; the shorter "... line-level, and output in JSON format." in
     QwenLM/Qwen2.5-VL cookbooks/ocr.ipynb, whose recorded answer is a ```json fenced array of
     {"bbox_2d": [...], "text_content": "..."} with a trailing comma in every object).
   - Grounding: [{"bbox_2d": [...], "label": "..."}] in a ```json fence (Qwen3-VL
     cookbooks/2d_grounding.ipynb and spatial_understanding.ipynb, whose points are "point_2d").
   - Document parsing, "QwenVL HTML": <h2 data-bbox="x1 y1 x2 y2">, <p data-bbox=...>, <div
     class="image" data-bbox=...><img data-bbox=.../></div> ... in a ```html fence (QwenLM/Qwen2.5-VL
     cookbooks/document_parsing.ipynb).
   - Coordinates: Qwen2.5-VL wrote absolute pixels of the resized image (its cookbooks scale by
     image_grid_thw * 14); Qwen3-VL and later write 0..1000 relative to the image
     (QwenLM/Qwen3-VL#1741 quotes the cookbook, ggml-org/llama.cpp#17131, and the Qwen3-VL
     cookbooks' x / 1000 * width). Some Qwen3-VL material divides by 999 instead (#1741 asks which):
     the difference is 0.1% of the page, under a pixel on a 1000-pixel side. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/utf8.h"
#include "core/util.h"
#include "ocr/scan.h"

/* ---- confidences ------------------------------------------------------------------------------- */

typedef struct tokens {
    const float *logprob;
    const size_t *end; /* seer_result.text_ends */
    size_t n;          /* 0: no confidences */
} tokens;

/* 100 * exp(mean log-probability) of the tokens that wrote any of the raw answer's bytes [r0, r1):
   token i wrote [end[i-1], end[i]); tokens that wrote nothing (reasoning) do not count. -1 when
   there are no logprobs or no token wrote those bytes. */
static float confidence(const tokens *tk, size_t r0, size_t r1)
{
    if (!tk->n || r1 <= r0)
        return -1;
    size_t lo = 0, hi = tk->n; /* the first token ending past r0 */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tk->end[mid] > r0)
            hi = mid;
        else
            lo = mid + 1;
    }
    double sum = 0;
    size_t k = 0;
    for (size_t i = lo; i < tk->n; i++) {
        size_t start = i ? tk->end[i - 1] : 0;
        if (start >= r1)
            break;
        if (tk->end[i] > start)
            sum += tk->logprob[i], k++;
    }
    if (!k)
        return -1;
    double c = 100.0 * exp(sum / (double)k);
    return c >= 0 ? (float)fmin(c, 100) : 0; /* a NaN log-probability gives 0, not NaN */
}

/* ---- lines and words --------------------------------------------------------------------------- */

static size_t cp_at(const ocr_buf *o, size_t p, size_t end, uint32_t *cp)
{
    size_t full, k = utf8_subpart(o->b + p, end - p, &full, cp);
    if (k != full) /* cannot happen: scan.c wrote valid UTF-8; stay bounded anyway */
        *cp = 0xFFFD;
    return k;
}

static int is_break(uint32_t cp) { return cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029; }

/* The next line of o->b[*p .. end): [*a, *b) without the whitespace around it (maybe empty);
   *p moves past its line break. 0 when nothing is left. */
static int next_line(const ocr_buf *o, size_t *p, size_t end, size_t *a, size_t *b)
{
    if (*p >= end)
        return 0;
    size_t q = *p, k;
    uint32_t cp;
    *a = *b = SIZE_MAX;
    for (; q < end; q += k) {
        k = cp_at(o, q, end, &cp);
        if (is_break(cp))
            break;
        if (!ocr_is_space(cp)) {
            if (*a == SIZE_MAX)
                *a = q;
            *b = q + k;
        }
    }
    if (*a == SIZE_MAX)
        *a = *b = q;
    *p = q < end ? q + k : end;
    return 1;
}

static size_t count_lines(const ocr_buf *o, size_t off, size_t len)
{
    size_t n = 0, p = off, a, b;
    while (next_line(o, &p, off + len, &a, &b))
        n += b > a;
    return n;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = seer_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* The line o->b[a .. b) (trimmed, not empty) with its box: words are its runs of non-space,
   each given the part of the line's box in proportion to code points, the boundary between two
   words halfway through the space between them, so the words tile the line's box exactly. The
   model gave only the line's box: a word's box is an estimate, good for monospaced text and
   rough for proportional type. */
static int fill_line(seer_ocr_line *ln, const ocr_buf *o, size_t a, size_t b, seer_box box, int has_box,
                     const tokens *tk)
{
    ln->box = box;
    ln->has_box = has_box;
    ln->conf = confidence(tk, o->r0[a], o->r1[b - 1]);
    if (!(ln->text = dup_bytes(o->b + a, b - a)))
        return SEER_ENOMEM;
    size_t n_cp = 0, n_words = 0, k = 1;
    uint32_t cp;
    int in_word = 0;
    for (size_t p = a; p < b; p += k, n_cp++) {
        k = cp_at(o, p, b, &cp);
        int sp = ocr_is_space(cp);
        n_words += !sp && !in_word;
        in_word = !sp;
    }
    if (!(ln->words = seer_calloc(n_words, sizeof *ln->words)))
        return SEER_ENOMEM;
    ln->n_words = n_words;
    int64_t w = (int64_t)box.x1 - box.x0;
    size_t i = 0, c = 0, bs = 0, prev_end = 0; /* prev_end: the code point after the last word */
    in_word = 0;
    for (size_t p = a; p <= b; p += k, c++) {
        int sp = 1;
        if (p < b) {
            k = cp_at(o, p, b, &cp);
            sp = ocr_is_space(cp);
        }
        if (!sp && !in_word) { /* a word starts: its boundary with the last one, halfway between */
            seer_ocr_word *wd = &ln->words[i];
            wd->box = box;
            if (i) {
                wd->box.x0 = (int32_t)(box.x0 + w * (int64_t)(prev_end + c) / (int64_t)(2 * n_cp));
                ln->words[i - 1].box.x1 = wd->box.x0;
            }
            bs = p;
        } else if (sp && in_word) { /* a word ends (the line ends in one: it is trimmed) */
            seer_ocr_word *wd = &ln->words[i++];
            wd->conf = confidence(tk, o->r0[bs], o->r1[p - 1]);
            if (!(wd->text = dup_bytes(o->b + bs, p - bs)))
                return SEER_ENOMEM;
            prev_end = c;
        }
        in_word = !sp;
        if (p == b)
            break;
    }
    return SEER_OK;
}

/* One block of the lines in o->b[off .. off+len). With a box (has_box), k lines share it as k
   equal bands from top to bottom: the model gave one box for text it wrote on several lines (a
   paragraph of Qwen's HTML, a JSON item with "\n"), and bands are the estimate that keeps each
   line's words inside it. Without one, every line has the page's box. */
static int fill_block(seer_ocr_block *bl, const ocr_buf *o, size_t off, size_t len, seer_box box, int has_box,
                      const tokens *tk)
{
    size_t k = count_lines(o, off, len), p = off, a, b, j = 0;
    bl->box = box;
    bl->has_box = has_box;
    if (!(bl->lines = seer_calloc(k, sizeof *bl->lines)))
        return SEER_ENOMEM;
    int64_t h = (int64_t)box.y1 - box.y0;
    while (next_line(o, &p, off + len, &a, &b)) {
        if (b == a)
            continue;
        seer_box lb = box;
        if (has_box && h >= (int64_t)k) { /* thinner bands than a pixel: each line keeps the box */
            lb.y0 = (int32_t)(box.y0 + h * (int64_t)j / (int64_t)k);
            lb.y1 = (int32_t)(box.y0 + h * (int64_t)(j + 1) / (int64_t)k);
        }
        bl->n_lines = ++j; /* counted before filling, so a failure frees what was allocated */
        int rc = fill_line(&bl->lines[j - 1], o, a, b, lb, has_box, tk);
        if (rc)
            return rc;
    }
    return SEER_OK;
}

/* The tokens' spans, when the answer has them and they fit it: non-decreasing ends within the
   text. Anything else (a caller's mistake) means no confidences rather than a wrong one. */
static tokens tokens_of(const seer_result *r)
{
    tokens tk = {r->logprobs, r->text_ends, 0};
    if (!r->logprobs || !r->text_ends || !r->n_tokens)
        return tk;
    for (size_t i = 0; i < r->n_tokens; i++)
        if (r->text_ends[i] > r->text_len || (i && r->text_ends[i] < r->text_ends[i - 1]))
            return tk;
    tk.n = r->n_tokens;
    return tk;
}

static int build(seer_ocr_page *pg, const ocr_scan *s, const tokens *tk)
{
    if (!(pg->blocks = seer_calloc(s->n_items + 1, sizeof *pg->blocks)))
        return SEER_ENOMEM;
    seer_box page = {0, 0, pg->width, pg->height};
    for (size_t i = 0; i <= s->n_items; i++) {
        const ocr_buf *o = i < s->n_items ? &s->dec : &s->loose;
        size_t off = i < s->n_items ? s->items[i].off : 0, len = i < s->n_items ? s->items[i].len : s->loose.n;
        if (!count_lines(o, off, len))
            continue; /* an element without text, such as an image in Qwen's HTML */
        seer_ocr_block *bl = &pg->blocks[pg->n_blocks++];
        int rc = fill_block(bl, o, off, len, i < s->n_items ? s->items[i].box : page, i < s->n_items, tk);
        if (rc)
            return rc;
    }
    return SEER_OK;
}

int seer_ocr_parse(const seer_result *answer, const seer_ocr_geometry *geometry, seer_ocr_page **out)
{
    if (!out)
        return seer_err(SEER_EINVAL, "seer_ocr_parse: out is NULL");
    *out = NULL;
    if (!answer || !geometry || (!answer->text && answer->text_len))
        return seer_err(SEER_EINVAL, "seer_ocr_parse: no answer or no geometry");
    if (geometry->width <= 0 || geometry->height <= 0 || geometry->model_width < 0 || geometry->model_height < 0)
        return seer_err(SEER_EINVAL, "seer_ocr_parse: a page of %dx%d pixels (model %dx%d) has no pixels",
                        (int)geometry->width, (int)geometry->height, (int)geometry->model_width,
                        (int)geometry->model_height);
    if (geometry->coords != SEER_OCR_COORDS_REL1000 && geometry->coords != SEER_OCR_COORDS_MODEL_PIXELS)
        return seer_err(SEER_EINVAL, "seer_ocr_parse: unknown coordinate convention %d", (int)geometry->coords);
    seer_ocr_page *pg = seer_calloc(1, sizeof *pg);
    if (!pg)
        return seer_err(SEER_ENOMEM, "seer_ocr_parse: out of memory");
    pg->width = geometry->width;
    pg->height = geometry->height;
    pg->dpi = geometry->dpi;
    ocr_scan s;
    memset(&s, 0, sizeof s);
    tokens tk = tokens_of(answer);
    int rc = ocr_scan_answer(answer->text ? answer->text : "", answer->text_len, geometry, &s);
    if (rc == SEER_OK)
        rc = build(pg, &s, &tk);
    pg->n_dropped = s.n_dropped;
    ocr_scan_free(&s);
    if (rc) {
        seer_ocr_page_free(pg);
        return seer_err(rc, "seer_ocr_parse: out of memory reading a %zu-byte answer", answer->text_len);
    }
    *out = pg;
    return SEER_OK;
}

void seer_ocr_page_free(seer_ocr_page *page)
{
    if (!page)
        return;
    for (size_t b = 0; b < page->n_blocks; b++) {
        seer_ocr_block *bl = &page->blocks[b];
        for (size_t l = 0; l < bl->n_lines; l++) {
            seer_ocr_line *ln = &bl->lines[l];
            for (size_t w = 0; w < ln->n_words; w++)
                seer_free(ln->words[w].text);
            seer_free(ln->words);
            seer_free(ln->text);
        }
        seer_free(bl->lines);
    }
    seer_free(page->blocks);
    seer_free(page);
}
