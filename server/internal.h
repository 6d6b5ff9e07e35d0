/*
 * internal.h - declarations shared by the files of memwall_server, not part of its interface.
 *
 * server.c runs the daemon and the per-request lifecycle, reply.c is the one function that
 * turns a struct api_response into a queued MHD response, routes.c answers the few paths the
 * server owns itself, assets.c serves the static files that assets_embedded.c (generated at
 * build time by cmake/embed.cmake) holds.
 */
#ifndef MEMWALL_SERVER_INTERNAL_H
#define MEMWALL_SERVER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "api.h"
#include "server.h"

/* One running daemon. The counter is the only state requests share, hence atomic. */
struct server {
    struct MHD_Daemon *daemon;
    struct server_config cfg; /* copy; its strings are borrowed from the caller */
    char id_prefix[17];       /* random per process: generated request ids stay unique */
    atomic_ullong next_id;
};

/* Queue resp on conn with every header memwall sends (Content-Type, Allow, ETag,
 * Cache-Control, CORS, nosniff, X-Request-Id). method is the request's own method (HEAD,
 * OPTIONS, ...). Always consumes resp (its body is released). Returns MHD's verdict: MHD_NO
 * makes MHD close the connection. */
enum MHD_Result server_reply(struct server *srv, struct MHD_Connection *conn, const char *method,
                             struct api_response *resp);

/* Answer req when its path is one of the server's own routes and return true; return false
 * (resp untouched) otherwise. req->method is never "HEAD" here: the caller maps it to GET. */
bool server_route(const struct api_request *req, struct api_response *resp);

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

/* GET handler for every embedded file: looks req->path up in server_assets and answers 200 with
 * the bytes, 304 when If-None-Match holds its ETag, or 404 when the file was not embedded. */
void server_asset(const struct api_request *req, struct api_response *resp);

#endif
