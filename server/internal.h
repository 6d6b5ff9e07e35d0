/*
 * internal.h - declarations shared by the files of memwall_server, not part of its interface.
 *
 * server.c runs the daemon and the per-request lifecycle, reply.c is the one function that
 * turns a struct api_response into a queued MHD response, routes.c answers the few paths the
 * server owns itself, and openapi_yaml.c is generated at build time by cmake/embed.cmake.
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

/* openapi.yaml, embedded by cmake/embed.cmake: the bytes (NUL-terminated, length without the
 * NUL; 0 when the file was missing at build time) and a strong ETag derived from its SHA-256. */
extern const unsigned char server_openapi_yaml[];
extern const size_t server_openapi_yaml_len;
extern const char server_openapi_yaml_etag[];

#endif
