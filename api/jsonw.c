/*
 * jsonw.c - the streaming JSON writer (see jsonw.h for why it exists).
 *
 * Numbers are the expensive part of a reply: glibc's exact "%.15g" costs ~3k instructions a
 * number. A double is written as jansson 2.14's jsonp_dtostr writes it ("%.15g", then ".0" when
 * the text has neither '.' nor 'e', then the exponent's '+' and leading zeros dropped), through
 * two exact fast paths:
 *  - integral and |x| < 1e15: the integer's digits and ".0" (15 digits hold it exactly);
 *  - 1e-4 <= |x| < 1e38: x = m * 2^q exactly (m < 2^53), so x * 10^k is computed exactly in
 *    128-bit integers and rounded to 15 significant digits half-to-even, as glibc rounds an
 *    exact tie in the default rounding mode; the %g layout is then applied by hand.
 * Anything else (tiny, huge, subnormal) goes through snprintf. tests/api compares this
 * with jansson's own output over more than a million random and edge values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

__extension__ typedef unsigned __int128 u128;

#define INITIAL_CAP 4096

/* ---------------------------------------------------------------------------------------------
 * Buffer
 * ------------------------------------------------------------------------------------------- */

void api_jsonw_init(struct api_jsonw *w)
{
    memset(w, 0, sizeof *w);
}

void api_jsonw_init_buffer(struct api_jsonw *w, char *buf, size_t size)
{
    memset(w, 0, sizeof *w);
    w->buf = buf;
    w->cap = size;
    w->borrowed = true;
}

void api_jsonw_free(struct api_jsonw *w)
{
    if (!w->borrowed)
        free(w->buf);
    api_jsonw_init(w);
}

bool api_jsonw_grow(struct api_jsonw *w, size_t n)
{
    size_t cap;
    char *p;

    cap = w->cap ? w->cap : INITIAL_CAP;
    while (cap - w->len < n)
        cap *= 2;
    p = w->borrowed ? malloc(cap) : realloc(w->buf, cap);
    if (p == NULL) {
        w->failed = true;
        return false;
    }
    if (w->borrowed && w->len > 0)
        memcpy(p, w->buf, w->len);
    w->borrowed = false;
    w->buf = p;
    w->cap = cap;
    return true;
}

/* Room for n more bytes; false (and failed) when out of memory. Inline: it runs for every key
 * and value, and the room is nearly always there. */
static inline bool reserve(struct api_jsonw *w, size_t n)
{
    return !w->failed && (w->cap - w->len >= n || api_jsonw_grow(w, n));
}

/* memcpy for the short runs of a reply (keys, names): up to 32 bytes as two fixed-size copies
 * that may overlap, which the compiler turns into a few moves instead of a call. Reads and
 * writes exactly [s, s + n) and [d, d + n). */
static inline void copy(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) { /* the most frequent first */
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n > 16 && n <= 32) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 4 && n < 8) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

static void put(struct api_jsonw *w, const char *s, size_t n)
{
    if (n > 0 && reserve(w, n)) { /* n == 0 may meet a buffer not yet allocated */
        copy(w->buf + w->len, s, n);
        w->len += n;
    }
}

/* Before a value or a key: the separator from the previous sibling. */
static void separate(struct api_jsonw *w)
{
    if (w->comma)
        put(w, ",", 1);
}

/* ---------------------------------------------------------------------------------------------
 * Strings
 * ------------------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0; the same rules as
 * jansson's utf8_check_full: no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n, i;
    unsigned long cp;

    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Bytes that stand for themselves inside a JSON string: printable ASCII but '"' and '\\'. A
 * table built at compile time: one load a byte instead of four comparisons. */
#define PLAIN(c)   ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define PLAIN4(c)  PLAIN(c), PLAIN((c) + 1), PLAIN((c) + 2), PLAIN((c) + 3)
#define PLAIN16(c) PLAIN4(c), PLAIN4((c) + 4), PLAIN4((c) + 8), PLAIN4((c) + 12)
#define PLAIN64(c) PLAIN16(c), PLAIN16((c) + 16), PLAIN16((c) + 32), PLAIN16((c) + 48)
static const bool plain_table[256] = {PLAIN64(0), PLAIN64(64), PLAIN64(128), PLAIN64(192)};

static bool plain(unsigned char c)
{
    return plain_table[c];
}

/* The rest of a string from its first byte that is not plain: jansson's escapes, the short ones
 * and \u00XX (upper-case hex) for the other control characters; DEL and valid UTF-8 as is. */
static void escaped(struct api_jsonw *w, const unsigned char *p)
{
    static const char hex[] = "0123456789ABCDEF";

    while (*p != '\0' && !w->failed) {
        const unsigned char *run = p;
        char esc[6];
        size_t n;

        while (plain(*p))
            p++;
        if (p > run)
            put(w, (const char *)run, (size_t)(p - run));
        if (*p == '\0')
            break;
        if (*p >= 0x80) {
            n = utf8_sequence(p);
            if (n == 0) {
                w->failed = true;
                return;
            }
            put(w, (const char *)p, n);
            p += n;
            continue;
        }
        esc[0] = '\\';
        n = 2;
        switch (*p) {
        case '"':
        case '\\':
            esc[1] = (char)*p;
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[*p >> 4];
            esc[5] = hex[*p & 15];
            n = 6;
        }
        put(w, esc, n);
        p++;
    }
}

/* Whether all 8 bytes in x are plain, 8 at a time (the usual bit tricks, exact for "any byte"):
 * none below 0x20, none with the high bit, none equal to '"' or '\\'. */
static inline bool plain8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t quote = x ^ (ones * '"'), slash = x ^ (ones * '\\');
    uint64_t bad =
        ((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) | ((slash - ones) & ~slash) | x;

    return (bad & (ones * 0x80)) == 0;
}

/* s as a JSON string after the separator, and a ':' after it when it is a key. Keys and names
 * are plain ASCII: checked and copied 8 bytes at a time into room reserved for the whole
 * string, and only from a chunk with a byte that is not plain does it go the escaping way. */
static void quoted(struct api_jsonw *w, const char *s, bool key)
{
    size_t len = strlen(s), i = 0;
    char *out = api_jsonw_room(w, len + 3);
    uint64_t x;

    if (out == NULL)
        return;
    *out++ = '"';
    for (; i + 8 <= len; i += 8) {
        memcpy(&x, s + i, 8);
        if (!plain8(x))
            break;
        memcpy(out + i, &x, 8);
    }
    if (i + 8 > len && len >= 8) { /* the last 1..7 bytes: the last 8, overlapping */
        memcpy(&x, s + len - 8, 8);
        if (plain8(x)) {
            memcpy(out + len - 8, &x, 8);
            i = len;
        }
    }
    while (i < len && plain((unsigned char)s[i])) {
        out[i] = s[i];
        i++;
    }
    if (i == len) {
        out += len;
        *out++ = '"';
        if (key)
            *out++ = ':';
        api_jsonw_done(w, out, !key);
        return;
    }
    api_jsonw_done(w, out + i, false);
    escaped(w, (const unsigned char *)s + i);
    put(w, "\":", key ? 2 : 1);
    w->comma = !key;
}

/* ---------------------------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------------------------- */

static const char digit_pairs[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546"
    "4748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293"
    "949596979899";

/* 10^0 .. 10^38; the first 20 also serve 64-bit integers */
static const u128 pow10_table[39] = {1ULL,
                                     10ULL,
                                     100ULL,
                                     1000ULL,
                                     10000ULL,
                                     100000ULL,
                                     1000000ULL,
                                     10000000ULL,
                                     100000000ULL,
                                     1000000000ULL,
                                     10000000000ULL,
                                     100000000000ULL,
                                     1000000000000ULL,
                                     10000000000000ULL,
                                     100000000000000ULL,
                                     1000000000000000ULL,
                                     10000000000000000ULL,
                                     100000000000000000ULL,
                                     1000000000000000000ULL,
                                     10000000000000000000ULL,
                                     (u128)10000000000000000000ULL * 10ULL,
                                     (u128)10000000000000000000ULL * 100ULL,
                                     (u128)10000000000000000000ULL * 1000ULL,
                                     (u128)10000000000000000000ULL * 10000ULL,
                                     (u128)10000000000000000000ULL * 100000ULL,
                                     (u128)10000000000000000000ULL * 1000000ULL,
                                     (u128)10000000000000000000ULL * 10000000ULL,
                                     (u128)10000000000000000000ULL * 100000000ULL,
                                     (u128)10000000000000000000ULL * 1000000000ULL,
                                     (u128)10000000000000000000ULL * 10000000000ULL,
                                     (u128)10000000000000000000ULL * 100000000000ULL,
                                     (u128)10000000000000000000ULL * 1000000000000ULL,
                                     (u128)10000000000000000000ULL * 10000000000000ULL,
                                     (u128)10000000000000000000ULL * 100000000000000ULL,
                                     (u128)10000000000000000000ULL * 1000000000000000ULL,
                                     (u128)10000000000000000000ULL * 10000000000000000ULL,
                                     (u128)10000000000000000000ULL * 100000000000000000ULL,
                                     (u128)10000000000000000000ULL * 1000000000000000000ULL,
                                     (u128)10000000000000000000ULL * 10000000000000000000ULL};

/* The number of decimal digits of v: log10 from the bit length (1233 / 4096 ~ log10(2)), one
 * too many at most, which one comparison corrects. */
static size_t digit_count(unsigned long long v)
{
    unsigned long long u = v | 1; /* 0 has one digit, as 1 */
    unsigned t = ((unsigned)(64 - __builtin_clzll(u)) * 1233u) >> 12;

    return (size_t)t + 1 - (u < (unsigned long long)pow10_table[t]);
}

/* 2^56 / 10^d rounded up, d = 0, 2, 4, 6: n * frac_mul[i] holds n / 10^d in 8.56 fixed point.
 * For n < 10^(d+2) the rounding error stays below n / 2^56 < 10^(d+2) / 2^56, under 10^-d,
 * so each of the d/2 multiplications of the fraction by 100 that follow yields the exact next
 * pair of digits (the last one sees an error under 10^(2d+2) / 2^56 < 1 of its integer). */
static const uint64_t frac_mul[4] = {72057594037927936ULL, 720575940379280ULL, 7205759403793ULL,
                                     72057594038ULL};
#define FRAC_MASK ((1ULL << 56) - 1)

/* n < 10^nd, nd from 1 to 8, as exactly nd digits (leading zeros included) at p; returns the
 * end. One multiplication a pair instead of a division: this runs for every number. */
static inline char *chunk(char *p, uint32_t n, size_t nd)
{
    size_t pairs = (nd - 1) >> 1; /* after the first one or two digits */
    uint64_t y = (uint64_t)n * frac_mul[pairs];
    unsigned lead = (unsigned)(y >> 56);

    if (nd & 1) {
        *p++ = (char)('0' + lead);
    } else {
        memcpy(p, digit_pairs + 2 * lead, 2);
        p += 2;
    }
    while (pairs-- > 0) {
        y = (y & FRAC_MASK) * 100;
        memcpy(p, digit_pairs + 2 * (y >> 56), 2);
        p += 2;
    }
    return p;
}

/* Decimal digits of v into out; returns the count. In chunks of 8 digits below the first. */
static size_t utoa(unsigned long long v, char *out)
{
    size_t n;

    if (v < 100000000u) {
        n = digit_count(v);
        chunk(out, (uint32_t)v, n);
        return n;
    }
    if (v < 10000000000000000ULL) {
        uint32_t hi = (uint32_t)(v / 100000000u);

        n = digit_count(hi);
        chunk(chunk(out, hi, n), (uint32_t)(v % 100000000u), 8);
        return n + 8;
    } else {
        uint32_t top = (uint32_t)(v / 10000000000000000ULL);
        unsigned long long rest = v % 10000000000000000ULL;

        n = digit_count(top);
        chunk(chunk(chunk(out, top, n), (uint32_t)(rest / 100000000u), 8),
              (uint32_t)(rest % 100000000u), 8);
        return n + 16;
    }
}

#define P14 100000000000000ULL  /* 10^14: the smallest 15-digit integer */
#define P15 1000000000000000ULL /* 10^15 */

/* The 15 significant digits of a (finite, > 0, normal) rounded half-to-even, and its decimal
 * exponent: a ~= digits * 10^(exp10 - 14) with 10^14 <= digits < 10^15. False when a is
 * outside the exact range (then the caller falls back on snprintf). */
static bool digits15(double a, unsigned long long *digits, int *exp10)
{
    unsigned long long bits, m;
    int q, e;

    memcpy(&bits, &a, sizeof bits);
    if ((bits >> 52) == 0) /* subnormal */
        return false;
    m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    q = (int)(bits >> 52) - 1075; /* a = m * 2^q exactly */
    /* floor(log10(a)) is about floor((q + 52) * log10(2)), give or take one; the loop settles
     * it. */
    e = ((q + 52) * 78913) >> 18; /* 78913 / 2^18 ~ log10(2); a floor, also below zero */
    for (int tries = 0; tries < 3; tries++) {
        u128 whole, rest, half;
        bool up;

        if (e < -4 || e > 37)
            return false;
        if (e <= 14) {
            /* a * 10^(14-e) = m * 10^(14-e) / 2^-q; m * 10^18 < 2^113, and q > -128 here. */
            u128 p = (u128)m * pow10_table[14 - e];
            int s = -q;
            if (s >= 120 || q > 14)
                return false;
            if (s <= 0) { /* an integer: exact, nothing to round */
                whole = p << q;
                up = false;
            } else {
                whole = p >> s;
                rest = p & (((u128)1 << s) - 1);
                half = (u128)1 << (s - 1);
                up = rest > half || (rest == half && (whole & 1) != 0);
            }
        } else {
            /* a is an integer below 2^127: a / 10^(e-14). */
            u128 d = pow10_table[e - 14], v;
            if (q < 0 || q > 74)
                return false;
            v = (u128)m << q;
            whole = v / d;
            rest = v % d;
            up = rest * 2 > d || (rest * 2 == d && (whole & 1) != 0);
        }
        if (whole >= P15) {
            e++;
            continue;
        }
        if (whole < P14) {
            e--;
            continue;
        }
        whole += up;
        if (whole == P15) { /* 999...95 rounded up to the next power of ten */
            whole = P14;
            e++;
        }
        *digits = (unsigned long long)whole;
        *exp10 = e;
        return true;
    }
    return false;
}

/* Strips the trailing zeros of digits (> 0, nd digits, at most 15 zeros), 8, 4, 2 and 1 at a
 * time: most reply numbers are short (6.5, 14.5227776), and each digit not converted saves a
 * step of utoa. */
static unsigned long long strip_zeros(unsigned long long digits, size_t *nd)
{
    if (digits % 100000000u == 0) {
        digits /= 100000000u;
        *nd -= 8;
    }
    if (digits % 10000u == 0) {
        digits /= 10000u;
        *nd -= 4;
    }
    if (digits % 100u == 0) {
        digits /= 100u;
        *nd -= 2;
    }
    if (digits % 10u == 0) {
        digits /= 10u;
        *nd -= 1;
    }
    return digits;
}

/* "%.15g" of a significand of nd digits (no trailing zeros) whose first digit has the decimal
 * exponent x, jansson's rules applied: fixed for -4 <= X < 15 with ".0" when nothing
 * fractional is left; otherwise d.ddde[-]X with the exponent without '+' or leading zeros. The
 * digits are converted straight into out, where the layout wants them, and the few digits
 * before the point moved one place left to make room for it: no temporary and no memcpy call. */
static size_t layout(unsigned long long digits, size_t nd, int x, char *out)
{
    size_t n;

    if (x >= -4 && x < 15) {
        size_t ip; /* digits before the point */

        if (x < 0) { /* 0.000ddd: 0 to 3 zeros after the point */
            n = 2;
            out[0] = '0';
            out[1] = '.';
            for (int z = -1; z > x; z--)
                out[n++] = '0';
            utoa(digits, out + n);
            return n + nd;
        }
        ip = (size_t)x + 1;
        if (nd > ip) { /* ddd.ddd */
            utoa(digits, out + 1);
            for (size_t i = 0; i < ip; i++)
                out[i] = out[i + 1];
            out[ip] = '.';
            return nd + 1;
        }
        utoa(digits, out); /* an integer: its own trailing zeros, then ".0" */
        for (size_t i = nd; i < ip; i++)
            out[i] = '0';
        out[ip] = '.';
        out[ip + 1] = '0';
        return ip + 2;
    }
    utoa(digits, out + 1); /* d[.ddd]e[-]X */
    out[0] = out[1];
    n = 1;
    if (nd > 1) {
        out[1] = '.';
        n = nd + 1;
    }
    out[n++] = 'e';
    if (x < 0) {
        out[n++] = '-';
        x = -x;
    }
    return n + utoa((unsigned long long)x, out + n);
}

/* snprintf and jansson's post-processing, for the values outside the fast paths. */
static size_t slow_format(double x, char *out)
{
    char buf[40];
    int r = snprintf(buf, sizeof buf, "%.15g", x);
    size_t n, i, j;
    char *e;

    if (r <= 0 || (size_t)r >= sizeof buf - 3)
        return 0;
    n = (size_t)r;
    if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    e = strchr(buf, 'e');
    if (e != NULL) {
        i = (size_t)(e - buf) + 1; /* first exponent char */
        j = i + 1;
        if (buf[i] == '-')
            i++;
        while (buf[j] == '0')
            j++;
        memmove(buf + i, buf + j, n - j);
        n -= j - i;
    }
    memcpy(out, buf, n);
    return n;
}

size_t api_jsonw_format_double(double x, char *out)
{
    size_t n = 0;
    double a = fabs(x);
    unsigned long long digits;
    int e;

    if (!isfinite(x))
        return 0;
    if (signbit(x))
        out[n++] = '-';
    if (a < 1e15 && (double)(long long)a == a) { /* integral; the cast is exact below 1e15 */
        n += utoa((unsigned long long)a, out + n);
        memcpy(out + n, ".0", 2);
        return n + 2;
    }
    if (digits15(a, &digits, &e)) {
        size_t nd = 15;

        digits = strip_zeros(digits, &nd);
        return n + layout(digits, nd, e, out + n);
    }
    return slow_format(x, out);
}

/* ---------------------------------------------------------------------------------------------
 * Structure and values
 * ------------------------------------------------------------------------------------------- */

void api_jsonw_open_object(struct api_jsonw *w)
{
    separate(w);
    put(w, "{", 1);
    w->comma = false;
}

void api_jsonw_open_array(struct api_jsonw *w)
{
    separate(w);
    put(w, "[", 1);
    w->comma = false;
}

void api_jsonw_close_array(struct api_jsonw *w)
{
    put(w, "]", 1);
    w->comma = true;
}

void api_jsonw_key(struct api_jsonw *w, const char *key)
{
    quoted(w, key, true);
}

void api_jsonw_string(struct api_jsonw *w, const char *s)
{
    if (s == NULL) {
        api_jsonw_null(w);
        return;
    }
    quoted(w, s, false);
}

char *api_jsonw_put_int(char *p, int64_t v)
{
    unsigned long long u = (unsigned long long)v;

    if (v < 0) {
        *p++ = '-';
        u = 0 - u; /* well defined for INT64_MIN too */
    }
    return p + utoa(u, p);
}

void api_jsonw_int(struct api_jsonw *w, int64_t v)
{
    char *p = api_jsonw_room(w, 20); /* "-" and 19 digits */

    if (p != NULL)
        api_jsonw_done(w, api_jsonw_put_int(p, v), true);
}

void api_jsonw_bool(struct api_jsonw *w, bool v)
{
    separate(w);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
    w->comma = true;
}

void api_jsonw_null(struct api_jsonw *w)
{
    separate(w);
    put(w, "null", 4);
    w->comma = true;
}

/* b / 1e9 without the division's double: for |b| < 10^15 the quotient has at most 15
 * significant digits, b's own, and a decimal of at most 15 digits survives the trip to the
 * nearest double and back to 15 digits unchanged (DBL_DIG is 15); the double b / 1e9 is that
 * nearest double (b is exact, 1e9 is exact, IEEE division rounds to nearest). So "%.15g" of it
 * is b's digits with the point moved 9 places, and layout() writes that directly. */
char *api_jsonw_put_gb(char *p, int64_t b)
{
    unsigned long long u = (unsigned long long)b, digits;
    size_t nd;
    int x;

    if (b < 0)
        u = 0 - u;
    if (u == 0 || u >= P15)
        return api_jsonw_put_double(p, (double)b / 1e9);
    if (b < 0)
        *p++ = '-';
    nd = digit_count(u);
    x = (int)nd - 10; /* the first digit's exponent, 9 places down */
    digits = strip_zeros(u, &nd);
    return p + layout(digits, nd, x, p);
}

char *api_jsonw_put_double(char *p, double v)
{
    size_t n = api_jsonw_format_double(v, p);

    return n == 0 ? NULL : p + n;
}

void api_jsonw_double(struct api_jsonw *w, double v)
{
    char *p = api_jsonw_room(w, 40); /* format_double writes at most 38 bytes */
    size_t n;

    if (p == NULL)
        return;
    n = api_jsonw_format_double(v, p);
    if (n == 0) {
        w->failed = true;
        return;
    }
    api_jsonw_done(w, p + n, true);
}

void api_jsonw_append(struct api_jsonw *w, const char *bytes, size_t len)
{
    put(w, bytes, len);
}

void api_jsonw_raw(struct api_jsonw *w, const char *json, size_t len)
{
    separate(w);
    put(w, json, len);
    w->comma = true;
}
