/* Tests core/utf8.c against utf8proc (utf8proc_iterate / utf8proc_encode_char), an independent
   decoder the library links already: every 1-, 2- and 3-byte string, every 4-byte string whose
   lead is F0..FF and whose other bytes lie around the continuation range, every scalar value
   encoded, named cases for each kind of invalid input, Unicode's example of maximal subparts, and
   utf8_check over random text. */
#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

#include "core/utf8.h"
#include "core/util.h"
#include "support/testutil.h"
#include "tap.h"


/* Whether utf8_decode and utf8proc_iterate agree on s[0..n): both refuse it, or both read the same
   length and code point. */
static int agrees(const unsigned char *s, size_t n)
{
    uint32_t cp = 0;
    utf8proc_int32_t ref = 0;
    size_t l = utf8_decode(s, n, &cp);
    utf8proc_ssize_t r = utf8proc_iterate(s, (utf8proc_ssize_t)n, &ref);
    if (r <= 0)
        return l == 0;
    return l == (size_t)r && cp == (uint32_t)ref;
}

/* Counts the strings of length n (1..3) on which the two decoders disagree. */
static long exhaustive(size_t n)
{
    long bad = 0;
    uint32_t end = 1u << (8 * n);
    for (uint32_t v = 0; v < end; v++) {
        unsigned char s[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        if (!agrees(s + 3 - n, n) && bad++ < 5)
            diag("disagree at %0*x", (int)(2 * n), (unsigned)v);
    }
    return bad;
}

/* 4-byte strings: leads F0..FF, the other bytes 70..CF (every boundary of the continuation range
   80..BF and of the second byte's narrower ranges after F0 and F4, with margin). */
static long four_bytes(void)
{
    long bad = 0;
    for (unsigned a = 0xF0; a <= 0xFF; a++)
        for (unsigned b = 0x70; b < 0xD0; b++)
            for (unsigned c = 0x70; c < 0xD0; c++)
                for (unsigned d = 0x70; d < 0xD0; d++) {
                    unsigned char s[4] = {(unsigned char)a, (unsigned char)b, (unsigned char)c, (unsigned char)d};
                    if (!agrees(s, 4) && bad++ < 5)
                        diag("disagree at %02x %02x %02x %02x", a, b, c, d);
                }
    return bad;
}

/* Every scalar value: utf8_encode writes utf8proc's bytes, and utf8_decode reads cp back. */
static long encode_all(void)
{
    long bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        unsigned char a[4], b[4];
        uint32_t back = 0;
        size_t n = utf8_encode(cp, a);
        utf8proc_ssize_t r = utf8proc_encode_char((utf8proc_int32_t)cp, b);
        if ((n != (size_t)r || memcmp(a, b, n) || utf8_decode(a, n, &back) != n || back != cp) && bad++ < 5)
            diag("U+%04X encodes wrongly", (unsigned)cp);
    }
    return bad;
}

/* Where utf8proc finds the first invalid sequence of s[0..n) (n when there is none). */
static size_t ref_check(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t r = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (r <= 0)
            return i;
        i += (size_t)r;
    }
    return n;
}

/* Random text: mostly valid characters of every length, now and then a random byte. */
static long random_check(void)
{
    long bad = 0;
    for (int t = 0; t < 20000; t++) {
        unsigned char s[64];
        size_t n = 0;
        while (n + 4 <= sizeof s && test_rand_u64() % 8) {
            uint64_t r = test_rand_u64();
            if (r % 16 == 0) {
                s[n++] = (unsigned char)(r >> 8);
                continue;
            }
            static const uint32_t top[4] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
            uint32_t cp = (uint32_t)(r >> 8) % (top[r % 4] + 1);
            if (cp >= 0xD800 && cp <= 0xDFFF)
                cp -= 0x800;
            n += utf8_encode(cp, s + n);
        }
        if (utf8_check(s, n) != ref_check(s, n) && bad++ < 5)
            diag("utf8_check disagrees on a %zu-byte string (first bad: ours %zu, utf8proc %zu)", n,
                 utf8_check(s, n), ref_check(s, n));
    }
    return bad;
}

/* Unicode 15 §3.9 table 3-8: the maximal subparts of "a F1 80 80 E1 80 C2 b 80 c 80 BF d", each
   ill-formed one replaced by one U+FFFD, with the length each would have when complete. */
static int table_3_8(void)
{
    static const unsigned char s[] = {0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64};
    static const size_t want_k[] = {1, 3, 2, 1, 1, 1, 1, 1, 1, 1}, want_full[] = {1, 4, 3, 2, 1, 0, 1, 0, 0, 1};
    size_t i = 0, j = 0;
    for (; i < sizeof s && j < ARRAY_LEN(want_k); j++) {
        size_t full;
        uint32_t cp;
        size_t k = utf8_subpart(s + i, sizeof s - i, &full, &cp);
        if (k != want_k[j] || full != want_full[j] || (k == full && cp != s[i]))
            return diag("subpart %zu: %zu of %zu bytes, want %zu of %zu", j, k, full, want_k[j], want_full[j]), 0;
        i += k;
    }
    return i == sizeof s && j == ARRAY_LEN(want_k);
}

/* utf8_decode's length for the bytes of str (n of them), with the code point in *cp. */
static size_t dec(const char *str, size_t n, uint32_t *cp) { return utf8_decode(str, n, cp); }

int main(void)
{
    plan_no_plan();
    test_seed();
    uint32_t cp = 0;

    ok(dec("A", 1, &cp) == 1 && cp == 'A', "1 byte: A");
    ok(dec("", 1, &cp) == 1 && cp == 0, "1 byte: NUL is a character");
    ok(dec("\xC3\xA9", 2, &cp) == 2 && cp == 0xE9, "2 bytes: U+00E9");
    ok(dec("\xE2\x82\xAC", 3, &cp) == 3 && cp == 0x20AC, "3 bytes: U+20AC");
    ok(dec("\xEF\xBF\xBF", 3, &cp) == 3 && cp == 0xFFFF, "3 bytes: U+FFFF");
    ok(dec("\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600, "4 bytes: U+1F600");
    ok(dec("\xF4\x8F\xBF\xBF", 4, &cp) == 4 && cp == 0x10FFFF, "4 bytes: U+10FFFF, the last");
    ok(dec("\xC0\xAF", 2, &cp) == 0 && dec("\xC1\xBF", 2, &cp) == 0, "overlong 2-byte forms (C0, C1)");
    ok(dec("\xE0\x80\xAF", 3, &cp) == 0 && dec("\xE0\x9F\xBF", 3, &cp) == 0, "overlong 3-byte forms");
    ok(dec("\xF0\x80\x80\xAF", 4, &cp) == 0 && dec("\xF0\x8F\xBF\xBF", 4, &cp) == 0, "overlong 4-byte forms");
    ok(dec("\xED\xA0\x80", 3, &cp) == 0 && dec("\xED\xBF\xBF", 3, &cp) == 0, "surrogates U+D800, U+DFFF");
    ok(dec("\xED\x9F\xBF", 3, &cp) == 3 && cp == 0xD7FF, "U+D7FF just below the surrogates");
    ok(dec("\xF4\x90\x80\x80", 4, &cp) == 0, "U+110000 is past the last code point");
    ok(dec("\xF5\x80\x80\x80", 4, &cp) == 0 && dec("\xFF", 1, &cp) == 0, "leads F5..FF");
    ok(dec("\xE2\x82", 2, &cp) == 0 && dec("\xF0\x9F\x98", 3, &cp) == 0 && dec("\xC3", 1, &cp) == 0,
       "truncated sequences");
    ok(dec("\xE2\x82\xAC", 2, &cp) == 0, "a sequence cut by n (the bytes after n are not read)");
    ok(dec("\x80", 1, &cp) == 0 && dec("\xBF\x80", 2, &cp) == 0, "continuation bytes alone");
    ok(dec("\xC3\x41", 2, &cp) == 0 && dec("\xE2\xC2\xAC", 3, &cp) == 0, "a lead followed by a non-continuation");
    cp = 7;
    ok(dec("A", 0, &cp) == 0 && cp == 7, "n = 0 reads nothing");
    ok(utf8_check("ab\xC3\xA9", 4) == 4, "utf8_check: valid text gives its length");
    ok(utf8_check("ab\xE2\x82", 4) == 2, "utf8_check: offset of a truncated last character");

    ok(table_3_8(), "maximal subparts as Unicode's table 3-8 splits them");
    ok(exhaustive(1) == 0, "every 1-byte string as utf8proc decodes it");
    ok(exhaustive(2) == 0, "every 2-byte string as utf8proc decodes it");
    ok(exhaustive(3) == 0, "every 3-byte string as utf8proc decodes it");
    ok(four_bytes() == 0, "4-byte strings with leads F0..FF as utf8proc decodes them");
    ok(encode_all() == 0, "every scalar value encodes to utf8proc's bytes and decodes back");
    ok(random_check() == 0, "utf8_check finds utf8proc's first invalid byte in random text");
    return done_testing();
}
