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
 * Anything else (tiny, huge, subnormal) goes through snprintf. tests/apiunit compares this
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

void api_jsonw_free(struct api_jsonw *w)
{
    free(w->buf);
    api_jsonw_init(w);
}

/* Room for n more bytes; false (and failed) when out of memory. */
static bool reserve(struct api_jsonw *w, size_t n)
{
    size_t cap;
    char *p;

    if (w->failed)
        return false;
    if (w->cap - w->len >= n)
        return true;
    cap = w->cap ? w->cap : INITIAL_CAP;
    while (cap - w->len < n)
        cap *= 2;
    p = realloc(w->buf, cap);
    if (p == NULL) {
        w->failed = true;
        return false;
    }
    w->buf = p;
    w->cap = cap;
    return true;
}

static void put(struct api_jsonw *w, const char *s, size_t n)
{
    if (n > 0 && reserve(w, n)) { /* n == 0 may meet a buffer not yet allocated */
        memcpy(w->buf + w->len, s, n);
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

/* Bytes that stand for themselves inside a JSON string: printable ASCII but '"' and '\\'. */
static bool plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
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

/* s as a JSON string. Keys and names are plain ASCII: copied in one pass into room reserved for
 * the whole string, and only a byte that is not plain goes the escaping way. */
static void quoted(struct api_jsonw *w, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    char *out;

    if (!reserve(w, strlen(s) + 2))
        return;
    out = w->buf + w->len;
    *out++ = '"';
    while (plain(*p))
        *out++ = (char)*p++;
    w->len = (size_t)(out - w->buf);
    if (*p != '\0')
        escaped(w, p);
    put(w, "\"", 1);
}

/* ---------------------------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------------------------- */

static const char digit_pairs[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546"
    "4748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293"
    "949596979899";

/* Decimal digits of v into out; returns the count. Two digits a step: this runs for every
 * number of every reply. */
static size_t utoa(unsigned long long v, char *out)
{
    char tmp[20];
    char *p = tmp + sizeof tmp;
    size_t n;

    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);

        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    n = (size_t)(tmp + sizeof tmp - p);
    memcpy(out, p, n);
    return n;
}

/* 10^0 .. 10^38 */
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
    /* floor(log10(a)) is floor((q + 52) * log10(2)) or one more; the loop settles it. */
    e = (int)floor((double)(q + 52) * 0.30102999566398120);
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

/* "%.15g" of a 15-digit significand, jansson's rules applied: fixed for -4 <= X < 15 with
 * trailing zeros (and a bare '.') dropped and ".0" when nothing fractional is left; otherwise
 * d.ddde[-]X with the same trimming and the exponent without '+' or leading zeros. */
static size_t layout(unsigned long long digits, int x, char *out)
{
    char d[15];
    size_t nd = 15, n = 0;

    utoa(digits, d);
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    if (x >= -4 && x < 15) {
        size_t ip = x >= 0 ? (size_t)x + 1 : 0; /* digits before the point */
        if (x < 0) {
            memcpy(out, "0.", 2);
            n = 2;
            for (int z = -1; z > x; z--)
                out[n++] = '0';
            memcpy(out + n, d, nd);
            return n + nd;
        }
        memcpy(out, d, ip);
        n = ip;
        out[n++] = '.';
        if (nd > ip) {
            memcpy(out + n, d + ip, nd - ip);
            n += nd - ip;
        } else {
            out[n++] = '0';
        }
        return n;
    }
    out[n++] = d[0];
    if (nd > 1) {
        out[n++] = '.';
        memcpy(out + n, d + 1, nd - 1);
        n += nd - 1;
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
    if (a < 1e15 && a == floor(a)) {
        n += utoa((unsigned long long)a, out + n);
        memcpy(out + n, ".0", 2);
        return n + 2;
    }
    if (digits15(a, &digits, &e))
        return n + layout(digits, e, out + n);
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

void api_jsonw_close_object(struct api_jsonw *w)
{
    put(w, "}", 1);
    w->comma = true;
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
    separate(w);
    quoted(w, key);
    put(w, ":", 1);
    w->comma = false;
}

void api_jsonw_key_encoded(struct api_jsonw *w, const char *encoded, size_t len)
{
    separate(w);
    put(w, encoded, len);
    w->comma = false;
}

void api_jsonw_string(struct api_jsonw *w, const char *s)
{
    if (s == NULL) {
        api_jsonw_null(w);
        return;
    }
    separate(w);
    quoted(w, s);
    w->comma = true;
}

void api_jsonw_int(struct api_jsonw *w, int64_t v)
{
    char buf[24];
    size_t n = 0;
    unsigned long long u = (unsigned long long)v;

    if (v < 0) {
        buf[n++] = '-';
        u = 0 - u; /* well defined for INT64_MIN too */
    }
    n += utoa(u, buf + n);
    separate(w);
    put(w, buf, n);
    w->comma = true;
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

void api_jsonw_double(struct api_jsonw *w, double v)
{
    char buf[40];
    size_t n = api_jsonw_format_double(v, buf);

    if (n == 0) {
        w->failed = true;
        return;
    }
    separate(w);
    put(w, buf, n);
    w->comma = true;
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
