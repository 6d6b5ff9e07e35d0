/*
 * log.c - log lines in JSON or text, one write() each (see log.h for why).
 *
 * JSON lines are built with jansson and dumped into a stack buffer (a heap one only for the
 * rare line that does not fit), so a request line costs one small object and one syscall. The
 * text format renders the same object as "TIME LEVEL EVENT key=value ...", quoting a value
 * only when it holds a space, a quote or an equals sign, for people reading a terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accesslog.h"
#include "jsonw.h"
#include "log.h"

/* 15 significant digits, as in the replies: a duration prints 8.44184, not 8.4418429999999987. */
#define LOG_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

#define LINE_STACK 4096

static const char *const level_names[] = {"debug", "info", "warn", "error"};

const char *server_log_level_name(enum server_log_level level)
{
    return (unsigned)level < sizeof level_names / sizeof level_names[0] ? level_names[level]
                                                                        : "info";
}

bool server_log_enabled(const struct server_config *cfg, enum server_log_level level)
{
    return level >= cfg->log_level;
}

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

static void now_rfc3339(char *buf, size_t size)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    server_log_time(&ts, buf, size);
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

static void emit_json(int fd, const json_t *line)
{
    char stack[LINE_STACK];
    size_t n = json_dumpb(line, stack, sizeof stack - 1, LOG_JSON_FLAGS);
    char *heap;

    if (n == 0)
        return;
    if (n < sizeof stack) {
        stack[n] = '\n';
        server_log_write(fd, stack, n + 1);
        return;
    }
    heap = malloc(n + 1);
    if (heap == NULL)
        return;
    if (json_dumpb(line, heap, n, LOG_JSON_FLAGS) == n) {
        heap[n] = '\n';
        server_log_write(fd, heap, n + 1);
    }
    free(heap);
}

/* A bare word is printed as is; anything a reader could misparse is printed as JSON. */
static bool bare(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++) {
        if (*s <= ' ' || *s == '"' || *s == '=' || *s == '\\' || (unsigned char)*s > 0x7e)
            return false;
    }
    return true;
}

static void emit_text(int fd, const json_t *line)
{
    char buf[LINE_STACK];
    size_t len = 0;
    const char *key;
    json_t *value;

    json_object_foreach ((json_t *)line, key, value) {
        char val[LINE_STACK];
        bool head =
            strcmp(key, "time") == 0 || strcmp(key, "level") == 0 || strcmp(key, "event") == 0;
        int n;

        if (json_is_string(value) && (head || bare(json_string_value(value)))) {
            snprintf(val, sizeof val, "%s", json_string_value(value));
        } else {
            size_t m = json_dumpb(value, val, sizeof val - 1, LOG_JSON_FLAGS | JSON_ENCODE_ANY);

            if (m == 0 || m >= sizeof val)
                snprintf(val, sizeof val, "...");
            else
                val[m] = '\0';
        }
        if (head)
            n = snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", val);
        else
            n = snprintf(buf + len, sizeof buf - len, " %s=%s", key, val);
        if (n < 0 || (size_t)n >= sizeof buf - len) {
            len = sizeof buf - 2; /* truncated: still one whole line */
            break;
        }
        len += (size_t)n;
    }
    buf[len++] = '\n';
    server_log_write(fd, buf, len);
}

void server_log(const struct server_config *cfg, enum server_log_level level, const char *event,
                json_t *fields)
{
    char when[64];
    json_t *line;

    if (!server_log_enabled(cfg, level)) {
        json_decref(fields);
        return;
    }
    now_rfc3339(when, sizeof when);
    line = json_pack("{s:s, s:s, s:s}", "time", when, "level", server_log_level_name(level),
                     "event", event);
    if (line != NULL && fields != NULL)
        json_object_update(line, fields);
    json_decref(fields);
    if (line == NULL)
        return;
    if (cfg->log_format == SERVER_LOG_TEXT)
        emit_text(cfg->log_fd > 0 ? cfg->log_fd : STDOUT_FILENO, line);
    else
        emit_json(cfg->log_fd > 0 ? cfg->log_fd : STDOUT_FILENO, line);
    json_decref(line);
}

static void member(struct api_jsonw *w, const char *key, const char *value)
{
    api_jsonw_key(w, key);
    api_jsonw_string(w, value);
}

/* The JSON access line with its newline into w; false when it must not be written (a string
 * that is not UTF-8). */
static bool access_json(const struct server_access *a, struct api_jsonw *w)
{
    char when[64];

    now_rfc3339(when, sizeof when);
    api_jsonw_open_object(w);
    member(w, "time", when);
    member(w, "level", server_log_level_name(SERVER_LOG_INFO));
    member(w, "event", "request");
    member(w, "method", a->method);
    member(w, "route", a->route);
    member(w, "path", a->path);
    api_jsonw_key(w, "status");
    api_jsonw_int(w, a->status);
    api_jsonw_key(w, "duration_ms");
    api_jsonw_double(w, a->duration_ms);
    api_jsonw_key(w, "bytes");
    api_jsonw_int(w, a->bytes);
    member(w, "request_id", a->request_id);
    member(w, "remote", a->remote);
    api_jsonw_close_object(w);
    api_jsonw_append(w, "\n", 1);
    /* A line jansson would have refused (a string that is not UTF-8) is dropped, as before. */
    return !w->failed;
}

void server_log_access(const struct server_config *cfg, const struct server_access *a,
                       struct server_accesslog *sink)
{
    struct api_jsonw w;

    if (!server_log_enabled(cfg, SERVER_LOG_INFO))
        return;
    if (cfg->log_format == SERVER_LOG_TEXT) {
        server_log(cfg, SERVER_LOG_INFO, "request",
                   json_pack("{s:s, s:s, s:s, s:i, s:f, s:I, s:s, s:s}", "method", a->method,
                             "route", a->route, "path", a->path, "status", (int)a->status,
                             "duration_ms", a->duration_ms, "bytes", (json_int_t)a->bytes,
                             "request_id", a->request_id, "remote", a->remote));
        return;
    }
    api_jsonw_init(&w);
    if (access_json(a, &w))
        server_accesslog_write(sink, w.buf, w.len);
    api_jsonw_free(&w);
}
