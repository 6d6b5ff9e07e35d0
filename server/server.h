/*
 * server.h - memwall's HTTP front end: a libmicrohttpd daemon in front of the api layer.
 *
 * The server owns everything HTTP-specific: sockets, threads, the per-request context, body
 * accumulation with a hard cap (API_BODY_MAX), the URI length limit, its own small routes
 * (/healthz, /openapi.yaml) and the one reply function that sets every header (CORS, ETag,
 * X-Request-Id, nosniff). Everything else is handed to api_dispatch() as a struct api_request.
 *
 * It is a library (memwall_server) so the live tests can start it in-process on port 0 and
 * the executable (main.c) only parses flags and waits for a signal.
 */
#ifndef MEMWALL_SERVER_H
#define MEMWALL_SERVER_H

#include <stddef.h>

#define SERVER_THREADS_MAX 256
/* Longest request target (path + query) served; longer ones get 414. */
#define SERVER_URI_MAX (8 * 1024)

struct server_config {
    const char *bind;        /* numeric IPv4 or IPv6 address, e.g. "127.0.0.1" or "::1" */
    unsigned port;           /* 0 picks an ephemeral port; server_start() returns the real one */
    unsigned threads;        /* worker threads, 1..SERVER_THREADS_MAX */
    const char *cors_origin; /* Access-Control-Allow-Origin value; NULL means "*" */
};

struct server; /* opaque: one running daemon */

/* Start a daemon with cfg (borrowed; strings must outlive the server). On success *out is a
 * new server to release with server_stop() and the bound port (1..65535) is returned. On
 * failure returns -1, *out is NULL and err (when err_len > 0) holds a one-line reason. */
int server_start(const struct server_config *cfg, struct server **out, char *err, size_t err_len);

/* Stop accepting, finish or drop in-flight requests and release srv. Safe on NULL. */
void server_stop(struct server *srv);

#endif
