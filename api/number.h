/*
 * number.h - the value grammar shared by query strings and JSON strings.
 *
 * Numbers: [+-] digits [. digits] [e[+-]digits], nothing else (no hex, NaN, inf, spaces, empty).
 * Size inputs may end in one SI suffix K, M, B/G, T (any case) instead of an exponent: "7B",
 * "1.3b", "1.4T". The suffix becomes a decimal exponent before strtod, so "1.3B" is exactly
 * 1.3e9, not 1.3 * 1e9. Booleans: true/false/1/0/yes/no (lower case).
 */
#ifndef MEMWALL_API_NUMBER_H
#define MEMWALL_API_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

/* Parse s[0..len) as a finite decimal number (si: an SI suffix is allowed). Returns NULL and
 * sets *out, or returns the reason it is not one (a static sentence). */
const char *api_parse_number(const char *s, size_t len, bool si, double *out);

/* 1 true, 0 false, -1 not a boolean word. */
int api_parse_bool(const char *s, size_t len);

/* s[0..len) equals the NUL-terminated word. */
bool api_text_is(const char *s, size_t len, const char *word);

#endif
