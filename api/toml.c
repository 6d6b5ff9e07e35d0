/*
 * toml.c - the TOML subset of toml.h: a recursive-descent reader over one buffer.
 *
 * Why our own: Debian 12 packages no C TOML library, and the configurations memwall reads
 * (torchtitan's train_configs) use a small, regular part of TOML. Anything outside it is an
 * error naming its line rather than a guess, so a configuration is never half understood.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

#define KEYS_MAX    API_TOML_DEPTH_MAX
#define HEADERS_MAX 256 /* [tables] a document defines */

struct tp {
    const char *s;
    size_t len, i;
    int line;
    char *why;
    size_t size;
    bool failed;
    json_t *root, *table;         /* the document and the current [table] */
    json_t *headers[HEADERS_MAX]; /* tables defined by a header (once each) */
    size_t header_count;
};

static bool fail(struct tp *p, const char *why)
{
    if (!p->failed)
        snprintf(p->why, p->size, "%s", why);
    p->failed = true;
    return false;
}

static int peek(const struct tp *p, size_t ahead)
{
    return p->i + ahead < p->len ? (unsigned char)p->s[p->i + ahead] : -1;
}

static void skip_blanks(struct tp *p)
{
    while (peek(p, 0) == ' ' || peek(p, 0) == '\t')
        p->i++;
}

static void skip_comment(struct tp *p)
{
    if (peek(p, 0) == '#')
        while (p->i < p->len && p->s[p->i] != '\n')
            p->i++;
}

/* Consume one line end (LF or CRLF); true when there was one. */
static bool newline(struct tp *p)
{
    if (peek(p, 0) == '\r' && peek(p, 1) == '\n')
        p->i++;
    if (peek(p, 0) != '\n')
        return false;
    p->i++;
    p->line++;
    return true;
}

/* Blanks, comments and line ends (inside arrays). */
static void skip_space(struct tp *p)
{
    for (;;) {
        skip_blanks(p);
        skip_comment(p);
        if (!newline(p))
            return;
    }
}

/* After a key/value pair or a header: only blanks and a comment before the line end. */
static bool end_of_line(struct tp *p)
{
    skip_blanks(p);
    skip_comment(p);
    if (p->i >= p->len || newline(p))
        return true;
    return fail(p, "unexpected text after the value");
}

/* \uXXXX as UTF-8 into out (at least 3 bytes); the number of bytes, 0 when invalid. */
static size_t utf8_of_escape(struct tp *p, char *out)
{
    unsigned cp = 0;

    for (int k = 0; k < 4; k++) {
        int c = peek(p, 0);

        cp <<= 4;
        if (c >= '0' && c <= '9')
            cp |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            cp |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            cp |= (unsigned)(c - 'A' + 10);
        else
            return 0;
        p->i++;
    }
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

static char escape_char(int c)
{
    switch (c) {
    case '"':
        return '"';
    case '\\':
        return '\\';
    case 'b':
        return '\b';
    case 't':
        return '\t';
    case 'n':
        return '\n';
    case 'f':
        return '\f';
    case 'r':
        return '\r';
    default:
        return '\0';
    }
}

/* A one-line string at the opening quote (basic "..." or literal '...'), as a JSON string. */
static json_t *string_value(struct tp *p)
{
    char q = p->s[p->i];
    size_t end = p->i + 1, n = 0;
    char *buf;
    json_t *j;

    if (peek(p, 1) == q && peek(p, 2) == q) {
        fail(p, "multi-line strings are not supported");
        return NULL;
    }
    while (end < p->len && p->s[end] != '\n') /* a string never spans lines: bound it */
        end++;
    buf = malloc(end - p->i + 1);
    if (buf == NULL) {
        fail(p, "out of memory");
        return NULL;
    }
    p->i++;
    while (p->i < end && p->s[p->i] != q) {
        unsigned char c = (unsigned char)p->s[p->i++];

        if (c < 0x20 && c != '\t') {
            free(buf);
            fail(p, "a control character in a string");
            return NULL;
        }
        if (q == '"' && c == '\\') {
            int e = peek(p, 0);
            size_t k;

            p->i++;
            if (e == 'u' && (k = utf8_of_escape(p, buf + n)) > 0) {
                n += k;
                continue;
            }
            if (escape_char(e) == '\0') {
                free(buf);
                fail(p, "an escape in a string that is not supported");
                return NULL;
            }
            buf[n++] = escape_char(e);
            continue;
        }
        buf[n++] = (char)c;
    }
    if (p->i >= end) {
        free(buf);
        fail(p, "a string that is not closed on its line");
        return NULL;
    }
    p->i++; /* the closing quote */
    j = json_stringn(buf, n);
    free(buf);
    if (j == NULL)
        fail(p, "a string that is not valid UTF-8");
    return j;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Digits with single '_' between them, appended to buf (without the '_'); false if malformed. */
static bool digits(struct tp *p, char *buf, size_t *n, size_t cap)
{
    bool any = false;

    while (is_digit(peek(p, 0)) || (any && peek(p, 0) == '_' && is_digit(peek(p, 1)))) {
        if (peek(p, 0) != '_') {
            if (*n + 1 >= cap)
                return false;
            buf[(*n)++] = p->s[p->i];
        }
        p->i++;
        any = true;
    }
    return any;
}

/* An integer from its digits (sign first when there is one), or NULL beyond int64. */
static json_t *integer_of(struct tp *p, const char *buf, size_t n)
{
    bool neg = buf[0] == '-';
    int64_t v = 0;

    for (size_t k = is_digit(buf[0]) ? 0 : 1; k < n; k++) {
        int d = buf[k] - '0';

        if (v > (INT64_MAX - d) / 10) {
            fail(p, "an integer out of range");
            return NULL;
        }
        v = v * 10 + d;
    }
    return json_integer(neg ? -v : v);
}

static json_t *number_value(struct tp *p)
{
    char buf[64];
    size_t n = 0, first;
    bool real = false;

    if (peek(p, 0) == '+' || peek(p, 0) == '-')
        buf[n++] = p->s[p->i++];
    first = n;
    if (peek(p, 0) == '0' && (peek(p, 1) == 'x' || peek(p, 1) == 'o' || peek(p, 1) == 'b')) {
        fail(p, "hexadecimal, octal and binary integers are not supported");
        return NULL;
    }
    if (peek(p, 0) == 'i' || peek(p, 0) == 'n') {
        fail(p, "inf and nan are not accepted");
        return NULL;
    }
    if (!digits(p, buf, &n, sizeof buf - 8) || (buf[first] == '0' && n - first > 1)) {
        fail(p, "a malformed number (no digits, a leading zero or too long)");
        return NULL;
    }
    if (peek(p, 0) == '-' || peek(p, 0) == ':') {
        fail(p, "dates and times are not supported");
        return NULL;
    }
    if (peek(p, 0) == '.') {
        buf[n++] = p->s[p->i++];
        real = true;
        if (!digits(p, buf, &n, sizeof buf - 4)) {
            fail(p, "a malformed number (no digits after the point)");
            return NULL;
        }
    }
    if (peek(p, 0) == 'e' || peek(p, 0) == 'E') {
        buf[n++] = 'e';
        p->i++;
        real = true;
        if (peek(p, 0) == '+' || peek(p, 0) == '-')
            buf[n++] = p->s[p->i++];
        if (!digits(p, buf, &n, sizeof buf)) {
            fail(p, "a malformed number (no digits in the exponent, or too long)");
            return NULL;
        }
    }
    buf[n] = '\0';
    if (!real)
        return integer_of(p, buf, n);
    {
        double d = strtod(buf, NULL);

        if (!(d >= -1.7976931348623157e308 && d <= 1.7976931348623157e308)) {
            fail(p, "a number out of range");
            return NULL;
        }
        return json_real(d);
    }
}

static json_t *value(struct tp *p, int depth);

/* [v, v, ...] over any number of lines, trailing comma allowed. */
static json_t *array_value(struct tp *p, int depth)
{
    json_t *a = json_array();

    p->i++; /* '[' */
    if (a == NULL) {
        fail(p, "out of memory");
        return NULL;
    }
    for (;;) {
        json_t *v;

        skip_space(p);
        if (peek(p, 0) == ']')
            break;
        v = value(p, depth + 1);
        if (v == NULL || json_array_append_new(a, v) != 0) {
            json_decref(a);
            return NULL;
        }
        skip_space(p);
        if (peek(p, 0) == ',') {
            p->i++;
            continue;
        }
        if (peek(p, 0) != ']') {
            json_decref(a);
            fail(p, "an array whose items are not separated by commas or that is not closed");
            return NULL;
        }
    }
    p->i++; /* ']' */
    return a;
}

static bool word_is(const struct tp *p, const char *w)
{
    size_t n = strlen(w);
    int after = p->i + n < p->len ? (unsigned char)p->s[p->i + n] : -1;

    return p->len - p->i >= n && memcmp(p->s + p->i, w, n) == 0 &&
           !((after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') || is_digit(after) ||
             after == '_' || after == '-');
}

static json_t *value(struct tp *p, int depth)
{
    int c = peek(p, 0);

    if (depth > API_TOML_DEPTH_MAX) {
        fail(p, "arrays nested too deeply");
        return NULL;
    }
    if (c == '"' || c == '\'')
        return string_value(p);
    if (c == '[')
        return array_value(p, depth);
    if (c == '{') {
        fail(p, "inline tables are not supported");
        return NULL;
    }
    if (word_is(p, "true") || word_is(p, "false")) {
        bool t = c == 't';

        p->i += t ? 4 : 5;
        return json_boolean(t);
    }
    if (c == '+' || c == '-' || is_digit(c) || c == 'i' || c == 'n')
        return number_value(p);
    fail(p, c < 0 || c == '\n' || c == '\r' ? "a key without a value"
                                            : "a value that is not a string, number, boolean or "
                                              "array");
    return NULL;
}

static bool bare_key_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '-';
}

/* One key part (bare or quoted) into json string *out; a dotted key is several of these. */
static json_t *key_part(struct tp *p)
{
    size_t from = p->i;

    if (peek(p, 0) == '"' || peek(p, 0) == '\'')
        return string_value(p);
    while (bare_key_char(peek(p, 0)))
        p->i++;
    if (p->i == from) {
        fail(p, "a malformed key");
        return NULL;
    }
    return json_stringn(p->s + from, p->i - from);
}

/* a.b."c" into keys[]; the count, 0 after an error (the caller frees keys[0..count)). */
static size_t key_path(struct tp *p, json_t **keys)
{
    size_t n = 0;

    for (;;) {
        skip_blanks(p);
        if (n == KEYS_MAX) {
            fail(p, "a key with too many dotted parts");
            return n;
        }
        keys[n] = key_part(p);
        if (keys[n] == NULL)
            return n;
        n++;
        skip_blanks(p);
        if (peek(p, 0) != '.')
            return n;
        p->i++;
    }
}

static void free_keys(json_t **keys, size_t n)
{
    for (size_t k = 0; k < n; k++)
        json_decref(keys[k]);
}

/* The object at keys[0..n) under base, created as needed; NULL when a value is in the way. */
static json_t *descend(struct tp *p, json_t *base, json_t **keys, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const char *name = json_string_value(keys[k]);
        json_t *next = json_object_get(base, name);

        if (next == NULL) {
            next = json_object();
            if (next == NULL || json_object_set_new(base, name, next) != 0) {
                fail(p, "out of memory");
                return NULL;
            }
        } else if (!json_is_object(next)) {
            fail(p, "a key used both as a value and as a table");
            return NULL;
        }
        base = next;
    }
    return base;
}

static bool header(struct tp *p)
{
    json_t *keys[KEYS_MAX], *t;
    size_t n;

    p->i++; /* '[' */
    if (peek(p, 0) == '[')
        return fail(p, "arrays of tables ([[...]]) are not supported");
    n = key_path(p, keys);
    if (p->failed || peek(p, 0) != ']') {
        free_keys(keys, n);
        return fail(p, "a malformed table header");
    }
    p->i++;
    t = descend(p, p->root, keys, n);
    free_keys(keys, n);
    if (t == NULL)
        return false;
    for (size_t k = 0; k < p->header_count; k++)
        if (p->headers[k] == t)
            return fail(p, "a table defined twice");
    if (p->header_count == HEADERS_MAX)
        return fail(p, "too many tables");
    p->headers[p->header_count++] = t;
    p->table = t;
    return end_of_line(p);
}

static bool key_value(struct tp *p)
{
    json_t *keys[KEYS_MAX], *t, *v;
    size_t n = key_path(p, keys);
    const char *last;

    if (p->failed) {
        free_keys(keys, n);
        return false;
    }
    skip_blanks(p);
    if (peek(p, 0) != '=') {
        free_keys(keys, n);
        return fail(p, "a key without '='");
    }
    p->i++;
    skip_blanks(p);
    t = descend(p, p->table, keys, n - 1);
    last = json_string_value(keys[n - 1]);
    if (t != NULL && json_object_get(t, last) != NULL) {
        free_keys(keys, n);
        return fail(p, "a key defined twice");
    }
    v = t != NULL ? value(p, 0) : NULL;
    if (v == NULL || json_object_set_new(t, last, v) != 0) {
        free_keys(keys, n);
        return fail(p, "out of memory");
    }
    free_keys(keys, n);
    return end_of_line(p);
}

json_t *api_toml_parse(const char *s, size_t len, int *line, char *why, size_t size)
{
    struct tp p = {.s = s, .len = len, .line = 1, .why = why, .size = size};

    p.root = p.table = json_object();
    if (p.root == NULL) {
        *line = 0;
        snprintf(why, size, "out of memory");
        return NULL;
    }
    while (p.i < len) {
        int c;

        skip_blanks(&p);
        skip_comment(&p);
        c = peek(&p, 0);
        if (c < 0 || newline(&p))
            continue;
        if (c == '\r' || !(c == '[' ? header(&p) : key_value(&p)))
            break;
    }
    if (p.failed || p.i < len) {
        if (!p.failed)
            fail(&p, "a stray carriage return");
        *line = p.line;
        json_decref(p.root);
        return NULL;
    }
    return p.root;
}
