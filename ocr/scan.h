/* scan.h — reading a model's grounding answer (JSON items or Qwen's HTML with data-bbox, prose
   around them) into items of decoded text with boxes, for ocr/layout.c. The answer is hostile
   input: every read is bounded by its length, nothing is quadratic, and decoded text is valid
   UTF-8 without NUL. Each decoded byte remembers the raw answer bytes it came from, because the
   tokens' log-probabilities (seer_result.text_ends) count bytes of the raw answer, while the text
   the pages hold has its JSON escapes and HTML entities decoded. */
#ifndef SEER_OCR_SCAN_H
#define SEER_OCR_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "seer.h"

/* Decoded text: byte b[i] came from the raw answer's bytes [r0[i], r1[i]) (an escape such as
   \u00e9 gives both of its UTF-8 bytes the escape's 6 raw bytes; a separator the scanner put
   between HTML elements has an empty range). */
typedef struct ocr_buf {
    char *b;
    size_t *r0, *r1;
    size_t n, cap;
    int oom;   /* an allocation failed: later writes are dropped, the scan reports SEER_ENOMEM */
    char pend; /* 0, ' ' or '\n': whitespace owed before the next visible character (HTML) */
} ocr_buf;

/* One answer item with a usable box: its text is dec.b[off .. off+len) (lines split at '\n' or
   '\r'); len 0 is an element that held no text (an HTML image), which has no line. */
typedef struct ocr_item {
    size_t off, len;
    seer_box box;
} ocr_item;

typedef struct ocr_scan {
    ocr_buf dec;      /* the boxed items' text */
    ocr_buf loose;    /* text outside any usable box, in answer order, one line per piece */
    ocr_buf tmp;      /* one JSON item's text while it is decided where it goes */
    ocr_item *items;  /* in the order the model wrote them */
    size_t n_items, cap_items;
    int32_t n_dropped;
    int oom;          /* an allocation failed: the scan is incomplete */
    const seer_ocr_geometry *geo;
} ocr_scan;

/* Scans text[0..n) (any bytes) into s (zero it first; release with ocr_scan_free even on
   failure). SEER_OK or SEER_ENOMEM. */
int ocr_scan_answer(const char *text, size_t n, const seer_ocr_geometry *geo, ocr_scan *s);
void ocr_scan_free(ocr_scan *s);

/* ocr/box.c: the model's box v = (x1, y1, x2, y2) in the geometry's units mapped to
   page pixels, corners ordered and clamped to the page; 0 when nothing usable is left (a NaN, or
   no area after clamping), else 1. */
int ocr_map_box(const seer_ocr_geometry *geo, const double v[4], seer_box *out);
/* Whether cp separates words (Unicode White_Space: Zs, tab, line breaks, U+0085, U+2028/9). */
int ocr_is_space(uint32_t cp);

#endif
