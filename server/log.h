/*
 * log.h - memwall's log lines: one line per event or request, JSON (default) or text.
 *
 * Every line starts with time (RFC 3339, UTC, milliseconds), level and event, then the event's
 * own fields. A line is assembled in memory and handed to the kernel with one write(), so lines
 * from concurrent worker threads never interleave (a pipe keeps writes up to PIPE_BUF, 4096
 * bytes, whole; request lines stay far below that because logged paths are capped). No lock,
 * no stdio buffer shared between threads.
 */
#ifndef MEMWALL_SERVER_LOG_H
#define MEMWALL_SERVER_LOG_H

#include <stdbool.h>

#include <jansson.h>

#include "server.h"

/* Longest request path written to a log line; the rest is replaced by "...". */
#define SERVER_LOG_PATH_MAX 512

/* Write one line to cfg->log_fd when level is at or above cfg->log_level. fields is an object
 * (stolen; NULL for none) whose members follow time, level and event in order. */
void server_log(const struct server_config *cfg, enum server_log_level level, const char *event,
                json_t *fields);

/* Would a line at this level be written? Lets callers skip building fields. */
bool server_log_enabled(const struct server_config *cfg, enum server_log_level level);

/* "debug", "info", "warn", "error". */
const char *server_log_level_name(enum server_log_level level);

#endif
