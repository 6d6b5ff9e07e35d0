/*
 * log.h - memwall's log lines: one line per event or request, JSON (default) or text.
 *
 * Every line starts with time (RFC 3339, UTC, milliseconds), level and event, then the event's
 * own fields. A line is assembled in memory and handed to the kernel with one write(), so lines
 * from concurrent worker threads never interleave (a pipe keeps writes up to PIPE_BUF, 4096
 * bytes, whole; request lines stay far below that because logged paths are capped). No lock,
 * no stdio buffer shared between threads. JSON request lines can instead be handed to a
 * buffered writer (accesslog.h), which server.c does: whole lines, still at most PIPE_BUF a
 * write().
 */
#ifndef MEMWALL_SERVER_LOG_H
#define MEMWALL_SERVER_LOG_H

#include <stdbool.h>

#include <jansson.h>

#include "logline.h" /* server_log_time, server_log_write: for the callers of log.h too */
#include "server.h"

/* Longest request path written to a log line; the rest is replaced by "...". */
#define SERVER_LOG_PATH_MAX 512

/* Write one line to cfg->log_fd when level is at or above cfg->log_level. fields is an object
 * (stolen; NULL for none) whose members follow time, level and event in order. */
void server_log(const struct server_config *cfg, enum server_log_level level, const char *event,
                json_t *fields);

/* One request's access line (event "request"): its members, all borrowed. */
struct server_access {
    const char *method, *route, *path;
    unsigned status;
    double duration_ms;
    long long bytes;
    const char *request_id, *remote;
};

/* Write the access line at info level: the same line as server_log() with these members in
 * this order. In the JSON format it is streamed without a jansson object, because it is written
 * on every request (docs/performance.md), and handed to sink, which batches it (or writes it at
 * once when it was not started); the text format, for terminals, is written at once. */
struct server_accesslog;
void server_log_access(const struct server_config *cfg, const struct server_access *a,
                       struct server_accesslog *sink);

/* Would a line at this level be written? Lets callers skip building fields. */
bool server_log_enabled(const struct server_config *cfg, enum server_log_level level);

/* "debug", "info", "warn", "error". */
const char *server_log_level_name(enum server_log_level level);

#endif
