/*
 * logline.c - the two things every log line needs: its time stamp and its one write().
 *
 * A leaf below both log.c (which builds lines) and accesslog.c (which batches request lines),
 * so that neither of those needs the other's header for them.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logline.h"

/* width digits of v, zero-padded, at p; returns the end. */
static char *digits(char *p, long v, int width)
{
    for (int i = width - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
    return p + width;
}

/* The proleptic Gregorian date of a day count since 1970-01-01 (days >= 0). Counted in 400-year
 * eras of 146 097 days from 0000-03-01, so that the leap day is the last day of a year. This
 * replaces gmtime_r, which takes glibc's time-zone lock on every call: under load every worker
 * thread queued on it for each access line. */
static void civil_date(long days, long *year, long *month, long *day)
{
    long z = days + 719468; /* days since 0000-03-01 */
    long era = z / 146097;
    long doe = z - era * 146097;                                      /* 0..146096 */
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365, from March */
    long mp = (5 * doy + 2) / 153;                                    /* 0 = March */

    *day = doy - (153 * mp + 2) / 5 + 1;
    *month = mp < 10 ? mp + 3 : mp - 9;
    *year = yoe + era * 400 + (*month <= 2);
}

void server_log_time(const struct timespec *ts, char *buf, size_t size)
{
    long secs, year, month, day;
    char *p = buf;

    if (size < 25)
        return;
    secs = ts->tv_sec > 0 ? (long)ts->tv_sec : 0;
    civil_date(secs / 86400, &year, &month, &day);
    secs %= 86400;
    p = digits(p, year, 4);
    *p++ = '-';
    p = digits(p, month, 2);
    *p++ = '-';
    p = digits(p, day, 2);
    *p++ = 'T';
    p = digits(p, secs / 3600, 2);
    *p++ = ':';
    p = digits(p, secs / 60 % 60, 2);
    *p++ = ':';
    p = digits(p, secs % 60, 2);
    *p++ = '.';
    p = digits(p, ts->tv_nsec / 1000000L, 3);
    memcpy(p, "Z", 2);
}

void server_log_write(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}
