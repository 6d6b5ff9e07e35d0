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

#include "log.h"

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

static void now_rfc3339(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    char secs[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(secs, sizeof secs, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03ldZ", secs, ts.tv_nsec / 1000000L);
}

/* All of buf, retrying short writes and EINTR; a log that cannot be written is dropped. */
static void write_all(int fd, const char *buf, size_t len)
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
    size_t n = json_dumpb(line, stack, sizeof stack - 1, JSON_COMPACT);
    char *heap;

    if (n == 0)
        return;
    if (n < sizeof stack) {
        stack[n] = '\n';
        write_all(fd, stack, n + 1);
        return;
    }
    heap = malloc(n + 1);
    if (heap == NULL)
        return;
    if (json_dumpb(line, heap, n, JSON_COMPACT) == n) {
        heap[n] = '\n';
        write_all(fd, heap, n + 1);
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
            size_t m = json_dumpb(value, val, sizeof val - 1, JSON_COMPACT | JSON_ENCODE_ANY);

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
    write_all(fd, buf, len);
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
