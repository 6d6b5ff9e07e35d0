/*
 * number.c - the value grammar (number.h): decimal numbers with an optional SI suffix, and
 * boolean words. Strict on purpose: "7B" is a number, "7 B", "0x10", "NaN" and "" are not.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"

static size_t count_digits(const char *s, size_t len, size_t i)
{
    size_t n = 0;
    while (i + n < len && isdigit((unsigned char)s[i + n]))
        n++;
    return n;
}

/* Clinger's fast path: s[0, len) is [sign] digits [. digits] [e [sign] digits] (already
 * checked), and extra is the SI suffix's power of ten. When the digits, point removed, make an
 * integer m <= 2^53 and the decimal exponent e has |e| <= 22, both m and 10^|e| are doubles
 * exactly, so m * 10^e or m / 10^-e is one correctly rounded IEEE operation: the same double
 * strtod returns (its result is the correctly rounded value too). False for anything else,
 * which goes to strtod. The query values of the API (13e9, 4, 2048, 7B, 0.5) all take it. */
static bool fast_decimal(const char *s, size_t len, int extra, double *out)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    unsigned long long m = 0;
    size_t i = 0, ndigits = 0;
    int e = extra, x = 0;
    bool negative = false, xneg = false;
    double v;

    if (s[i] == '+' || s[i] == '-')
        negative = s[i++] == '-';
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++)
        m = m * 10 + (unsigned)(s[i] - '0');
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++, e--)
            m = m * 10 + (unsigned)(s[i] - '0');
    if (ndigits > 19) /* m may have wrapped */
        return false;
    if (i < len) { /* the exponent */
        size_t xdigits = 0;

        i++;
        if (s[i] == '+' || s[i] == '-')
            xneg = s[i++] == '-';
        for (; i < len; i++) {
            if (++xdigits > 4) /* before x could overflow */
                return false;
            x = x * 10 + (s[i] - '0');
        }
        e += xneg ? -x : x;
    }
    if (m > (1ULL << 53) || e < -22 || e > 22)
        return false;
    v = (double)m;
    v = e < 0 ? v / pow10[-e] : v * pow10[e];
    *out = negative ? -v : v;
    return true;
}

const char *api_parse_number(const char *s, size_t len, bool si, double *out)
{
    char buf[80];
    size_t i = 0, digits, mantissa_len;
    int exponent = 0;
    bool has_exponent = false;
    char *end;
    double v;

    if (len == 0)
        return "empty value; expected a number";
    if (len >= sizeof buf - 8)
        return "too long for a number";
    if (s[i] == '+' || s[i] == '-')
        i++;
    digits = count_digits(s, len, i);
    i += digits;
    if (i < len && s[i] == '.') {
        size_t frac = count_digits(s, len, i + 1);
        digits += frac;
        i += 1 + frac;
    }
    if (digits == 0)
        return si ? "not a number (e.g. 7e9 or 7B)" : "not a number";
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        digits = count_digits(s, len, j);
        if (digits == 0)
            return "not a number: exponent without digits";
        i = j + digits;
        has_exponent = true;
    }
    mantissa_len = i;
    if (si && i < len) {
        switch (tolower((unsigned char)s[i])) {
        case 'k':
            exponent = 3;
            break;
        case 'm':
            exponent = 6;
            break;
        case 'b':
        case 'g':
            exponent = 9;
            break;
        case 't':
            exponent = 12;
            break;
        default:
            break;
        }
        if (exponent != 0) {
            if (has_exponent)
                return "not a number: use an exponent or an SI suffix, not both";
            i++;
        }
    }
    if (i != len) {
        if (memchr(s, '\0', len) != NULL)
            return "contains a NUL byte";
        return si ? "not a number (SI suffixes: K, M, B/G, T)" : "not a number";
    }
    if (fast_decimal(s, mantissa_len, exponent, out))
        return NULL;
    memcpy(buf, s, mantissa_len);
    if (exponent != 0)
        snprintf(buf + mantissa_len, sizeof buf - mantissa_len, "e%d", exponent);
    else
        buf[mantissa_len] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (*end != '\0')
        return "not a number";
    if (errno == ERANGE || !isfinite(v))
        return "out of range";
    *out = v;
    return NULL;
}

bool api_text_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

int api_parse_bool(const char *s, size_t len)
{
    if (api_text_is(s, len, "true") || api_text_is(s, len, "1") || api_text_is(s, len, "yes"))
        return 1;
    if (api_text_is(s, len, "false") || api_text_is(s, len, "0") || api_text_is(s, len, "no"))
        return 0;
    return -1;
}
