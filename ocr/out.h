/* out.h — the growing byte string ocr/ writes into: render.c's hOCR, ALTO and TSV documents and
   the bytes cairo hands pdf.c for a PDF. Kept here rather than borrowed from api/ so that ocr/
   needs only core/ (docs/ARCHITECTURE.md). */
#ifndef SEER_OCR_OUT_H
#define SEER_OCR_OUT_H

#include <stddef.h>

typedef struct ocr_out {
    char *s;         /* NUL-terminated after its n bytes; the caller frees it */
    size_t n, cap;
    int rc;          /* sticky: SEER_ENOMEM after a failed append, and nothing is added after it */
} ocr_out;

/* Appends s[0..n) and returns o->rc (SEER_OK, or SEER_ENOMEM with the message set once). */
int ocr_out_add(ocr_out *o, const char *s, size_t n);

#endif
