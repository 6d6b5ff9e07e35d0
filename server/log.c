/*
 * log.c - log lines in JSON or text, one write() each (see log.h for why).
 *
 * JSON lines are built with jansson and dumped into a stack buffer (a heap one only for the
 * rare line that does not fit), so a request line costs one small object and one syscall. The
 * text format renders the same object as "TIME LEVEL EVENT key=value ...", quoting a value
 * only when it holds a space, a quote or an equals sign, for people reading a terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* STDOUT_FILENO */

#include "accesslog.h"
#include "jsonw.h"
#include "log.h"
#include "logline.h"

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

static void now_rfc3339(char *buf, size_t size)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    server_log_time(&ts, buf, size);
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

/* A string member whose key is fixed: KEY("name") (jsonw.h) and the value. */
static void member(struct api_jsonw *w, const char *key, size_t klen, const char *value)
{
    api_jsonw_key_encoded(w, key, klen);
    api_jsonw_string(w, value);
}

/* The JSON access line with its newline into w; false when it must not be written (a string
 * that is not UTF-8). The keys are pre-encoded, and "level" and "event" are the same for every
 * line: one run of bytes. */
static bool access_json(const struct server_access *a, struct api_jsonw *w)
{
    static const char fixed[] = "\"level\":\"info\",\"event\":\"request\"";
    char when[64];
    char *p;

    now_rfc3339(when, sizeof when);
    api_jsonw_open_object(w);
    member(w, API_JSONW_KEY("time"), when);
    p = api_jsonw_room(w, sizeof fixed - 1);
    if (p != NULL) {
        memcpy(p, fixed, sizeof fixed - 1);
        api_jsonw_done(w, p + sizeof fixed - 1, true);
    }
    member(w, API_JSONW_KEY("method"), a->method);
    member(w, API_JSONW_KEY("route"), a->route);
    member(w, API_JSONW_KEY("path"), a->path);
    api_jsonw_key_encoded(w, API_JSONW_KEY("status"));
    api_jsonw_int(w, a->status);
    api_jsonw_key_encoded(w, API_JSONW_KEY("duration_ms"));
    api_jsonw_double(w, a->duration_ms);
    api_jsonw_key_encoded(w, API_JSONW_KEY("bytes"));
    api_jsonw_int(w, a->bytes);
    member(w, API_JSONW_KEY("request_id"), a->request_id);
    member(w, API_JSONW_KEY("remote"), a->remote);
    api_jsonw_close_object(w);
    api_jsonw_append(w, "\n", 1);
    /* A line jansson would have refused (a string that is not UTF-8) is dropped, as before. */
    return !w->failed;
}

void server_log_access(const struct server_config *cfg, const struct server_access *a,
                       struct server_accesslog *sink)
{
    struct api_jsonw w;
    char line[1024];

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
    api_jsonw_init_buffer(&w, line, sizeof line); /* a line is ~250 bytes: no allocation */
    if (access_json(a, &w))
        server_accesslog_write(sink, w.buf, w.len);
    api_jsonw_free(&w);
}
