/*
 * internal.h - declarations shared by the files of memwall_server, not part of its interface.
 *
 * server.c runs the daemon and the per-request lifecycle, reply.c is the one function that
 * turns a struct api_response into a queued MHD response, routes.c holds the few paths the
 * server owns itself and numbers them with the api's as one list of routes, log.c writes log
 * lines (accesslog.c batches the request lines per worker thread), metrics.c keeps the /metrics
 * series (it knows routes only as numbers and labels handed to it), and assets.c serves the
 * static files that assets_embedded.c (generated at build time by cmake/embed.cmake) holds.
 */
#ifndef MEMWALL_SERVER_INTERNAL_H
#define MEMWALL_SERVER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "accesslog.h"
#include "api.h"
#include "metrics.h"
#include "server.h"

#define SERVER_REQUEST_ID_MAX 128
/* Query arguments a target may carry (414 beyond; see on_uri in server.c). Every field of the
 * api fits with room to spare, and 64 records of libmicrohttpd's (~64 bytes each) leave room
 * in the 16 KiB pool for a full 8 KiB target and its headers. */
#define SERVER_QUERY_ARGS_MAX 64

/* One running daemon. Everything requests share is atomic: no lock on the request path. */
struct server {
    struct MHD_Daemon *daemon;
    struct server_config cfg; /* copy with defaults filled; strings borrowed from the caller */
    char id_prefix[17];       /* random per process: generated request ids stay unique */
    atomic_ullong next_id;
    atomic_bool draining;           /* /readyz 503, replies close their connection */
    atomic_uint in_flight;          /* requests between their request line and completion */
    atomic_uint connections;        /* open client connections */
    atomic_ullong last_activity_ns; /* CLOCK_MONOTONIC of the latest request start or end */
    int listen_fd;                  /* after server_drain(): closed only after MHD stops */
    struct server_metrics metrics;
    struct server_accesslog accesslog; /* JSON access lines, buffered per worker thread */
};

/* Queue resp on conn with every header memwall sends (Content-Type, Allow, ETag,
 * Cache-Control, CORS, nosniff, X-Request-Id = request_id, Connection: close while draining).
 * method is the request's own method (HEAD, OPTIONS, ...). Always consumes resp (its body is
 * released). Returns MHD's verdict: MHD_NO makes MHD close the connection. */
enum MHD_Result server_reply(struct server *srv, struct MHD_Connection *conn, const char *method,
                             const char *request_id, struct api_response *resp);

/* Routes are numbered as one list: the server's own rows (routes.c), then the api's
 * (api_routes). The number of the route whose path is path; the count of routes (one past the
 * last) when there is none. */
unsigned server_route_find(const char *path);

/* The path of route number i (its metrics label), or NULL past the last. */
const char *server_route_label(unsigned i);

/* Answer req on route number i (from server_route_find) and return true: 405, OPTIONS, HEAD
 * and the handler as api_route_answer() does them. False (resp untouched) past the last. */
bool server_route(struct server *srv, unsigned i, const struct api_request *req,
                  struct api_response *resp);

/* A static file embedded by cmake/embed.cmake: the URL path it is served at, its Content-Type,
 * the bytes (NUL-terminated, len without the NUL; 0 when the file was missing at build time)
 * and a strong ETag derived from its SHA-256. */
struct server_asset {
    const char *path;
    const char *content_type;
    const unsigned char *bytes;
    size_t len;
    const char *etag;
};

/* The generated table (openapi.yaml, the dashboard's index.html, app.js, app.css). */
extern const struct server_asset server_assets[];
extern const size_t server_assets_count;

/* GET handler (an api_handler) for every embedded file: looks req->path up in server_assets
 * and answers 200 with the bytes, 304 when If-None-Match holds its ETag, or 404 when the file
 * was not embedded. ctx is unused. */
void server_asset(const struct api_request *req, struct api_response *resp, void *ctx);

#endif
