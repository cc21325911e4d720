/* utf8.h — the library's one UTF-8 decoder and encoder. Strict as RFC 3629 and Python's codec
   are: overlong forms, surrogates (U+D800..U+DFFF), code points past U+10FFFF, lone continuation
   bytes and truncated sequences are all invalid, so the tokenizer, the chat template, the grammar
   compiler and the JSON-schema regex agree on what text is. */
#ifndef SEER_CORE_UTF8_H
#define SEER_CORE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The code point starting at s[0..n) into *cp; returns its length (1..4), or 0 when the bytes
   are not valid UTF-8 or n is 0 (*cp untouched then). */
size_t utf8_decode(const void *s, size_t n, uint32_t *cp);
/* The maximal subpart at s[0..n), n >= 1 (Unicode §3.9, the unit lossy decoders replace with one
   U+FFFD): returns how many bytes, at least 1, begin a well-formed sequence, and sets *full to the
   length that sequence has when complete (0 when s[0] begins none). When the two are equal the
   sequence is complete and *cp holds its code point. */
size_t utf8_subpart(const void *s, size_t n, size_t *full, uint32_t *cp);
/* Writes cp (a Unicode scalar value, at most U+10FFFF) as UTF-8 into out, which has room for 4
   bytes; returns its length. */
size_t utf8_encode(uint32_t cp, void *out);
/* Byte offset of the first invalid sequence in s[0..n), or n when all of it is valid UTF-8. */
size_t utf8_check(const void *s, size_t n);

#endif
