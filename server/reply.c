/*
 * reply.c - the one place a response is built and queued.
 *
 * Every reply, from the api layer or the server itself, success or problem, goes through
 * server_reply() so the headers cannot drift apart between routes: Content-Type, Allow,
 * ETag, Cache-Control, CORS (and the preflight answer), X-Content-Type-Options,
 * Content-Security-Policy (default-src 'self': the dashboard loads nothing from elsewhere and
 * runs no inline script; on a JSON reply it is inert) and X-Request-Id. A HEAD reply keeps the GET
 * body so Content-Length is the GET one; libmicrohttpd never sends the body of a HEAD reply.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define REQUEST_ID_MAX 128

/* Headers a browser may send cross-origin and read back; kept in one place with the reply. */
static const char cors_request_headers[] = "Content-Type, If-None-Match, X-Request-Id";
static const char cors_exposed_headers[] = "ETag, X-Request-Id, Allow";
static const char cors_default_methods[] = "GET, HEAD, POST, OPTIONS";
static const char cors_max_age[] = "86400";

/* An incoming id is echoed only when it is safe to put back in a header and a log line:
 * 1..REQUEST_ID_MAX bytes of printable ASCII. */
static bool request_id_sane(const char *id, size_t len)
{
    if (id == NULL || len == 0 || len > REQUEST_ID_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (id[i] < 0x20 || id[i] > 0x7e)
            return false;
    }
    return true;
}

static void request_id(struct server *srv, struct MHD_Connection *conn, char *buf, size_t size)
{
    const char *in = NULL;
    size_t in_len = 0;

    if (MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, "X-Request-Id", strlen("X-Request-Id"),
                                      &in, &in_len) == MHD_YES &&
        request_id_sane(in, in_len)) {
        snprintf(buf, size, "%.*s", (int)in_len, in);
        return;
    }
    snprintf(buf, size, "%s-%llx", srv->id_prefix, atomic_fetch_add(&srv->next_id, 1ULL));
}

/* Add the headers that depend on the reply; false when MHD refused one (out of memory). */
static bool add_headers(struct server *srv, struct MHD_Connection *conn, const char *method,
                        const struct api_response *resp, bool has_body, struct MHD_Response *r)
{
    char id[REQUEST_ID_MAX + 1];
    bool ok = true;
    bool preflight = strcmp(method, "OPTIONS") == 0 && resp->status == 204;

    request_id(srv, conn, id, sizeof id);
    if (has_body && resp->content_type != NULL)
        ok = ok && MHD_add_response_header(r, "Content-Type", resp->content_type) == MHD_YES;
    if (resp->allow != NULL)
        ok = ok && MHD_add_response_header(r, "Allow", resp->allow) == MHD_YES;
    if (resp->etag[0] != '\0')
        ok = ok && MHD_add_response_header(r, "ETag", resp->etag) == MHD_YES;
    if (resp->cache_control != NULL)
        ok = ok && MHD_add_response_header(r, "Cache-Control", resp->cache_control) == MHD_YES;
    ok = ok && MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") == MHD_YES;
    ok = ok &&
         MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'") == MHD_YES;
    ok = ok && MHD_add_response_header(r, "X-Request-Id", id) == MHD_YES;

    ok = ok &&
         MHD_add_response_header(r, "Access-Control-Allow-Origin", srv->cfg.cors_origin) == MHD_YES;
    if (strcmp(srv->cfg.cors_origin, "*") != 0)
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
                             struct api_response *resp)
{
    /* 1xx, 204 and 304 replies carry no body by definition (RFC 9110 6.4.1). */
    bool has_body = resp->status >= 200 && resp->status != 204 && resp->status != 304;
    struct MHD_Response *r;
    enum MHD_Result ret = MHD_NO;

    /* MUST_COPY: the api body is released right here, whatever MHD does with the reply. */
    if (has_body)
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_COPY);
    else
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (r != NULL) {
        if (add_headers(srv, conn, method, resp, has_body, r))
            ret = MHD_queue_response(conn, resp->status, r);
        MHD_destroy_response(r);
    }
    api_response_free(resp);
    return ret;
}
