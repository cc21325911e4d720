/* printable.h — a one-line, bounded copy of a string that came from a file (a tensor name, a JSON
   value, a parser's message), for error messages: control characters become '?' and long text is
   cut with "...", so seer_last_error() stays a single readable line whatever the file holds. */
#ifndef SEER_CORE_PRINTABLE_H
#define SEER_CORE_PRINTABLE_H

#include <stddef.h>

/* Writes the copy into buf[cap] (cap ≥ 4) and returns buf. */
static inline const char *printable(char *buf, size_t cap, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    buf[i] = '\0';
    if (s[i] && cap >= 4)
        buf[cap - 2] = buf[cap - 3] = buf[cap - 4] = '.';
    return buf;
}

/* True when s has no control characters (names read from files must not). */
static inline int printable_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

#endif
