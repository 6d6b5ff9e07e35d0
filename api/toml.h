/*
 * toml.h - the subset of TOML that training configurations use, parsed into a jansson object.
 *
 * Accepted: comments (#), blank lines, [table] and [dotted.table] headers, key = value with
 * bare, quoted or dotted keys; values: basic strings "..." (escapes \" \\ \b \t \n \f \r and
 * \uXXXX), literal strings '...', decimal integers (sign, '_' separators; within int64),
 * decimal floats (fraction and/or exponent), true/false, and arrays of them (nested, over
 * several lines, trailing comma allowed). Rejected with the line number: everything else in
 * TOML (multi-line strings, inline tables, [[arrays of tables]], dates and times, hexadecimal /
 * octal / binary integers, inf and nan), a key or table defined twice, and text after a value.
 * Tables become JSON objects, integers json_integer, floats json_real.
 */
#ifndef MEMWALL_API_TOML_H
#define MEMWALL_API_TOML_H

#include <stddef.h>

#include <jansson.h>

#define API_TOML_DEPTH_MAX 32 /* nesting of arrays and dotted tables */

/* The document s[0..len) as a new JSON object, or NULL with *line (1-based) and why[size]
 * filled. */
json_t *api_toml_parse(const char *s, size_t len, int *line, char *why, size_t size);

#endif
