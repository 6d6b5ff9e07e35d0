/*
 * accesslog.h - access lines gathered per worker thread and written in batches.
 *
 * One write() per request was a fifth of the server's throughput (docs/performance.md): the
 * system call costs more than answering the question. Each worker thread appends its lines to
 * a buffer of its own (a mutex it shares only with the flusher, so never contended on the
 * request path); a buffer is written out when it fills and by a flusher thread every flush_ms
 * (--access-log-flush-ms, 100 by default), and all of them when the log stops. Every write() holds
 * whole lines and at most PIPE_BUF bytes, so a pipe reader (a container runtime, journald) never
 * sees a line cut by another writer's. The price: a line can appear up to flush_ms after its
 * request, lines of different workers are ordered by their "time" field rather than by position,
 * and a process killed with SIGKILL loses the lines not yet written.
 */
#ifndef MEMWALL_SERVER_ACCESSLOG_H
#define MEMWALL_SERVER_ACCESSLOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define SERVER_ACCESSLOG_BUFFER (16 * 1024)

struct server_accesslog_slot;

struct server_accesslog {
    int fd;
    unsigned long long generation; /* unique per start; 0: never started */
    unsigned nslots;
    unsigned flush_ms;
    atomic_uint claimed; /* slots handed to threads so far */
    struct server_accesslog_slot *slots;
    pthread_t flusher;
    bool flusher_running;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    bool stopping;
};

/* Start a log writing to fd with one buffer for each of up to `threads` writer threads (a
 * thread past that writes its lines directly) and a flusher thread that writes them out every
 * flush_ms (1..10000). False when flush_ms or threads is 0, or without memory or a thread; the
 * log then writes every line at once. */
bool server_accesslog_start(struct server_accesslog *log, int fd, unsigned threads,
                            unsigned flush_ms);

/* Append one line (with its newline) from the calling thread. */
void server_accesslog_write(struct server_accesslog *log, const char *line, size_t len);

/* Write out every buffer now. */
void server_accesslog_flush(struct server_accesslog *log);

/* Stop the flusher, write out every buffer and release them. The writer threads must be done
 * (MHD stopped). Safe on a log that failed to start or was never started (zeroed). */
void server_accesslog_stop(struct server_accesslog *log);

#endif
