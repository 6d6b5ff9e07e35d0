/*
 * server.h - memwall's HTTP front end: a libmicrohttpd daemon in front of the api layer.
 *
 * The server owns everything HTTP-specific: sockets, threads, the per-request context, body
 * accumulation with a hard cap (max_body_bytes, at most API_BODY_MAX), the URI length limit,
 * its own small routes (/healthz, /readyz, /metrics, /openapi.yaml, the dashboard), the access
 * log, the request metrics and the one reply function that sets every header (CORS, ETag,
 * X-Request-Id, nosniff). Its routes are rows of the api's route type (api/route.h), looked up
 * with the api's rows as one list; a request is handed over as a struct api_request.
 *
 * Shutdown is two-phase so that nothing already accepted is cut off: server_drain() turns
 * /readyz to 503 and stops accepting, server_idle() says when the accepted requests are done,
 * then server_stop() releases everything.
 *
 * It is a library (memwall_server) so the live tests can start it in-process on port 0 and
 * the executable (main.c) only parses flags and waits for a signal.
 */
#ifndef MEMWALL_SERVER_H
#define MEMWALL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#define SERVER_THREADS_MAX 256
/* Default longest request target (path + query) served; longer ones get 414. */
#define SERVER_URI_MAX (8 * 1024)
/* Ceiling of max_uri_bytes: the per-connection memory pool (64 KiB) must still hold a target
 * a little over the limit so that it gets a problem+json 414, not MHD's own reply. */
#define SERVER_URI_CEILING         (16 * 1024)
#define SERVER_TIMEOUT_DEFAULT     30
#define SERVER_CONNECTIONS_DEFAULT 4096

enum server_log_format { SERVER_LOG_JSON, SERVER_LOG_TEXT };
enum server_log_level { SERVER_LOG_DEBUG, SERVER_LOG_INFO, SERVER_LOG_WARN, SERVER_LOG_ERROR };

/* Every field has a usable zero: a config with only bind, port and threads set serves with
 * the defaults below and logs nothing per request. */
struct server_config {
    const char *bind;         /* numeric IPv4 or IPv6 address, e.g. "127.0.0.1" or "::1" */
    unsigned port;            /* 0 picks an ephemeral port; server_start() returns the real one */
    unsigned threads;         /* worker threads, 1..SERVER_THREADS_MAX */
    const char *cors_origins; /* "*" or a comma-separated list of origins; NULL means "*" */
    size_t max_body_bytes;    /* 1..API_BODY_MAX; 0 means API_BODY_MAX */
    size_t max_uri_bytes;     /* 1..SERVER_URI_CEILING; 0 means SERVER_URI_MAX */
    unsigned timeout_s;       /* idle seconds before a connection is dropped; 0 means 30 */
    unsigned max_connections; /* open connections in all; 0 means 4096 */
    unsigned max_per_ip;      /* open connections per client address; 0 means no limit */
    enum server_log_format log_format;
    enum server_log_level log_level;
    bool access_log;              /* one line per request */
    unsigned access_log_flush_ms; /* JSON request lines are batched per worker and written at
                                   * least this often (1..10000); 0: each line at once */
    unsigned shutdown_grace_s;    /* used by the executable, carried here to be logged */
    int log_fd;                   /* where log lines go; 0 means stdout (stdin is never a log) */
};

struct server; /* opaque: one running daemon */

/* Start a daemon with cfg (borrowed; strings must outlive the server). On success *out is a
 * new server to release with server_stop() and the bound port (1..65535) is returned. On
 * failure returns -1, *out is NULL and err (when err_len > 0) holds a one-line reason. */
int server_start(const struct server_config *cfg, struct server **out, char *err, size_t err_len);

/* Begin draining: /readyz answers 503, replies carry "Connection: close", and the listening
 * socket stops accepting (new connections are refused). Requests already accepted go on.
 * Idempotent. Safe on NULL. */
void server_drain(struct server *srv);

/* True when no accepted request is in flight and no connection could still deliver one:
 * either no connection is open, or none has carried a request for quiet_ms (an idle
 * keep-alive connection that says nothing must not hold the shutdown up). */
bool server_idle(struct server *srv, unsigned quiet_ms);

/* Requests received but not yet completed (also the in-flight gauge of /metrics). */
unsigned server_in_flight(struct server *srv);

/* Requests that ended without their reply fully sent (client gone, timeout, shutdown). */
unsigned long long server_aborted(struct server *srv);

/* Stop, close every connection (a request still in flight is cut off: drain first) and
 * release srv. Safe on NULL. */
void server_stop(struct server *srv);

#endif
