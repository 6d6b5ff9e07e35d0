/*
 * api.h - memwall's HTTP-independent API layer: routing, request decoding, reply encoding.
 *
 * The server hands over a transport-neutral struct api_request (method, path, decoded query
 * pairs, body bytes, a few headers) and gets back a struct api_response (status, content type,
 * body, a few headers). The api layer knows jansson and core/, never sockets or libmicrohttpd.
 *
 * One table of field specs (api/fields.c) drives GET query strings and POST JSON bodies alike,
 * so the same inputs give byte-identical replies. Every error is an RFC 9457 problem+json
 * built from the error registry (api/errors.def). The route row type and the api's table are
 * in route.h; the server declares its own rows with the same type.
 */
#ifndef MEMWALL_API_H
#define MEMWALL_API_H

#include <stdbool.h>
#include <stddef.h>

/* Hard limit on a request body; the server refuses larger ones (413) without reading them. */
#define API_BODY_MAX (64 * 1024)
/* Most items a batch (a JSON array POSTed to /flops, /memory, /fit or /runtime) may hold. */
#define API_BATCH_MAX 1000

/* One decoded query pair. Borrowed; value may contain NUL bytes, hence the lengths. */
struct api_param {
    const char *key;
    size_t key_len;
    const char *value; /* NULL when the key had no '=' */
    size_t value_len;
};

/* A request as the server saw it. All pointers borrowed for the duration of api_dispatch(). */
struct api_request {
    const char *method; /* "GET", "POST", "HEAD", "OPTIONS", ... */
    const char *path;   /* decoded path without the query string */
    const struct api_param *query;
    size_t query_count;
    const char *body; /* POST body, not NUL-terminated; may be NULL when body_len is 0 */
    size_t body_len;
    const char *content_type;  /* Content-Type header or NULL */
    const char *if_none_match; /* If-None-Match header or NULL */
};

/* The reply. body is malloc'd and owned by the response: release with api_response_free(). */
struct api_response {
    unsigned status;
    const char *content_type; /* static string; NULL on bodiless 204 (OPTIONS) and 304 */
    char *body;               /* owned, may be NULL when body_len is 0 */
    size_t body_len;
    const char *allow;         /* static; set on 405 and OPTIONS replies, else NULL */
    const char *cache_control; /* static or NULL */
    char etag[24];             /* "\"<16 hex>\"" for cacheable GET replies, else "" */
};

/* Route a request on the api's table (route.h) and build the reply. Routes: /flops /memory
 * /fit /runtime (GET, HEAD, POST, OPTIONS; a POSTed array is a batch answered by an array),
 * /plan (POST, OPTIONS) and /gpus /models (GET, HEAD, OPTIONS). A 200 GET/HEAD reply carries
 * etag and cache_control; a matching if_none_match turns it into a bodiless 304. Decoding
 * rules (SI suffixes, booleans, empty POST body = {}, strict names) are documented in
 * api/fields.c and api/body.c. Never fails: errors become problem+json replies.
 * Returns false when the path is not one of the api's routes (resp untouched), so the server
 * can try its own routes (e.g. /healthz, /openapi.yaml) before answering 404. */
bool api_dispatch(const struct api_request *req, struct api_response *resp);

/* A problem+json reply for transport-level errors the server detects (404, 405, 413, 414,
 * 415, 500): status, a detail sentence, and optionally the offending field (or NULL). */
void api_problem(struct api_response *resp, unsigned status, const char *detail, const char *field);

/* Release the body of a response filled by this module; safe on an empty response. */
void api_response_free(struct api_response *resp);

#endif
