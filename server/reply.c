/*
 * reply.c - the one place a response is built and queued.
 *
 * Every reply, from the api layer or the server itself, success or problem, goes through
 * server_reply() so the headers cannot drift apart between routes: Content-Type, Allow,
 * ETag, Cache-Control, CORS (and the preflight answer), X-Content-Type-Options,
 * Content-Security-Policy and X-Request-Id. The CSP (default-src 'self': the dashboard loads
 * nothing from elsewhere and runs no inline script) goes on everything but JSON: a browser never
 * renders a JSON reply as a document (nosniff holds it to its type), so there it would be inert,
 * and each header costs libmicrohttpd three allocations on the hot path. A HEAD reply keeps the GET
 * body so Content-Length is the GET one; libmicrohttpd never sends the body of a HEAD reply.
 * While the server drains, every reply says "Connection: close" so keep-alive clients move to
 * another replica instead of reusing a connection that is about to go.
 *
 * CORS: with "*" every origin may read replies; with a list, a request's Origin found in it is
 * echoed back (with Vary: Origin, since the reply then depends on it) and any other origin gets
 * no Access-Control-Allow-Origin at all, which is how a browser is told no.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Headers a browser may send cross-origin and read back; kept in one place with the reply. */
static const char cors_request_headers[] = "Content-Type, If-None-Match, X-Request-Id";
static const char cors_exposed_headers[] = "ETag, X-Request-Id, Allow";
static const char cors_default_methods[] = "GET, HEAD, POST, OPTIONS";
static const char cors_max_age[] = "86400";

/* The Origin to allow for this request: "*" for any, the request's own Origin when it is in
 * the configured list (exact, whole-entry match), else NULL. */
static const char *allowed_origin(const struct server *srv, struct MHD_Connection *conn)
{
    const char *list = srv->cfg.cors_origins;
    const char *origin;
    size_t n;

    if (strcmp(list, "*") == 0)
        return "*";
    origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    if (origin == NULL)
        return NULL;
    n = strlen(origin);
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");

        if (len == n && strncmp(p, origin, n) == 0)
            return origin;
        p += len + (p[len] == ',');
    }
    return NULL;
}

/* application/json or application/problem+json, parameters or not. */
static bool is_json(const char *type)
{
    return type != NULL && (strncmp(type, "application/json", 16) == 0 ||
                            strncmp(type, "application/problem+json", 24) == 0);
}

/* Add the headers that depend on the reply; false when MHD refused one (out of memory). */
static bool add_headers(struct server *srv, struct MHD_Connection *conn, const char *method,
                        const char *id, const struct api_response *resp, bool has_body,
                        struct MHD_Response *r)
{
    bool ok = true;
    bool preflight = strcmp(method, "OPTIONS") == 0 && resp->status == 204;
    const char *origin = allowed_origin(srv, conn);
    if (has_body && resp->content_type != NULL)
        ok = ok && MHD_add_response_header(r, "Content-Type", resp->content_type) == MHD_YES;
    if (resp->allow != NULL)
        ok = ok && MHD_add_response_header(r, "Allow", resp->allow) == MHD_YES;
    if (resp->etag[0] != '\0')
        ok = ok && MHD_add_response_header(r, "ETag", resp->etag) == MHD_YES;
    if (resp->cache_control != NULL)
        ok = ok && MHD_add_response_header(r, "Cache-Control", resp->cache_control) == MHD_YES;
    ok = ok && MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") == MHD_YES;
    if (!is_json(resp->content_type))
        ok = ok &&
             MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'") == MHD_YES;
    ok = ok && MHD_add_response_header(r, "X-Request-Id", id) == MHD_YES;
    if (atomic_load(&srv->draining))
        ok = ok && MHD_add_response_header(r, "Connection", "close") == MHD_YES;

    if (origin != NULL)
        ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Origin", origin) == MHD_YES;
    if (strcmp(srv->cfg.cors_origins, "*") != 0)
        ok = ok && MHD_add_response_header(r, "Vary", "Origin") == MHD_YES;
    if (preflight) {
        const char *methods = resp->allow != NULL ? resp->allow : cors_default_methods;

        ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Methods", methods) == MHD_YES;
        ok = ok && MHD_add_response_header(r, "Access-Control-Allow-Headers",
                                           cors_request_headers) == MHD_YES;
        ok = ok && MHD_add_response_header(r, "Access-Control-Max-Age", cors_max_age) == MHD_YES;
    } else {
        ok = ok && MHD_add_response_header(r, "Access-Control-Expose-Headers",
                                           cors_exposed_headers) == MHD_YES;
    }
    return ok;
}

enum MHD_Result server_reply(struct server *srv, struct MHD_Connection *conn, const char *method,
                             const char *request_id, struct api_response *resp)
{
    /* 1xx, 204 and 304 replies carry no body by definition (RFC 9110 6.4.1). */
    bool has_body = resp->status >= 200 && resp->status != 204 && resp->status != 304;
    struct MHD_Response *r;
    enum MHD_Result ret = MHD_NO;

    /* The body (malloc'ed by the api layer) is handed to MHD, which frees it with the reply:
     * no copy. On failure it is still ours and api_response_free() below releases it. */
    if (has_body && resp->body != NULL) {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r != NULL) {
            resp->body = NULL;
            resp->body_len = 0;
        }
    } else {
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    if (r != NULL) {
        if (add_headers(srv, conn, method, request_id, resp, has_body, r))
            ret = MHD_queue_response(conn, resp->status, r);
        MHD_destroy_response(r);
    }
    api_response_free(resp);
    return ret;
}
