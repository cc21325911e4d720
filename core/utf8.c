/* utf8.c — UTF-8 decoding by the table of well-formed byte sequences (Unicode 15, table 3-7):
   the first byte fixes the length and the range the second byte may take, which rejects
   overlongs, surrogates and code points past U+10FFFF without decoding first, and gives the
   maximal subpart (§3.9) that lossy decoding replaces. */
#include "core/utf8.h"

size_t utf8_subpart(const void *s, size_t n, size_t *full, uint32_t *cp)
{
    const unsigned char *u = s;
    unsigned c = u[0];
    uint32_t v;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range; later bytes are always 80..BF */
    if (c < 0x80) {
        *full = 1, v = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
        *full = 2, v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        *full = 3, v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0; /* below: overlong */
        else if (c == 0xED)
            hi = 0x9F; /* above: surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        *full = 4, v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90; /* below: overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above: past U+10FFFF */
    } else {
        *full = 0; /* a continuation byte, C0/C1 (always overlong) or F5..FF */
        return 1;
    }
    size_t k = 1;
    for (; k < *full && k < n && u[k] >= lo && u[k] <= hi; k++) {
        lo = 0x80, hi = 0xBF;
        v = v << 6 | (u[k] & 0x3F);
    }
    if (k == *full)
        *cp = v;
    return k;
}

size_t utf8_decode(const void *s, size_t n, uint32_t *cp)
{
    size_t full;
    uint32_t v;
    if (n == 0 || utf8_subpart(s, n, &full, &v) != full || !full)
        return 0;
    *cp = v;
    return full;
}

size_t utf8_encode(uint32_t cp, void *out)
{
    unsigned char *o = out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t utf8_check(const void *s, size_t n)
{
    const unsigned char *u = s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_decode(u + i, n - i, &cp);
        if (!l)
            return i;
        i += l;
    }
    return n;
}
