/*
 * logline.h - time stamps and whole-line writes, shared by log.c and accesslog.c.
 *
 * A leaf: it includes nothing of the server's, so log.c -> accesslog.h -> (nothing) and
 * accesslog.c -> logline.h keep the include graph free of cycles.
 */
#ifndef MEMWALL_SERVER_LOGLINE_H
#define MEMWALL_SERVER_LOGLINE_H

#include <stddef.h>

/* ts (CLOCK_REALTIME; before 1970 counts as 1970) as "2026-11-29T15:07:44.573Z": 24 bytes and
 * a NUL, so size >= 25 (else buf is left alone). UTC, milliseconds truncated. Formatted by
 * hand: strftime and snprintf cost more than the rest of an access line, and gmtime_r takes
 * glibc's time-zone lock, which every worker thread queued on under load. */
struct timespec;
void server_log_time(const struct timespec *ts, char *buf, size_t size);

/* All of buf to fd, retrying short writes and EINTR; what cannot be written is dropped (a log
 * must never stop the server). */
void server_log_write(int fd, const char *buf, size_t len);

#endif
