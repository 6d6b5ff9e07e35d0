/*
 * http.h - a small libcurl client for the live tests, plus a raw-socket exchange for the
 * cases where libcurl would hide what the server did (HEAD bodies, replies sent before the
 * request body).
 */
#ifndef MEMWALL_TEST_HTTP_H
#define MEMWALL_TEST_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct http_reply {
    long status;
    char *body; /* NUL-terminated copy of the body (body_len excludes the NUL) */
    size_t body_len;
    char *headers; /* raw header block(s), NUL-terminated */
    size_t headers_len;
    size_t uploaded; /* request body bytes libcurl actually sent */
};

struct http_request {
    const char *method; /* "GET" when NULL; "HEAD" uses CURLOPT_NOBODY */
    const char *body;   /* request body or NULL */
    size_t body_len;
    const char *const *headers; /* NULL-terminated "Name: value" list, or NULL */
    bool chunked;               /* stream body with Transfer-Encoding: chunked */
    long declared_len;          /* > 0: declare this Content-Length and stream body_len bytes
                                   of 'a' at most through a read callback */
};

/* Perform req against url; fills out (release with http_reply_free). Returns false when the
 * transfer failed at the transport level (out->status is then 0). */
bool http_do(const char *url, const struct http_request *req, struct http_reply *out);

/* GET url with no extra headers. */
bool http_get(const char *url, struct http_reply *out);

/* The value of the last header called name (case-insensitive), copied into buf; NULL when the
 * reply has no such header. */
const char *http_header(const struct http_reply *r, const char *name, char *buf, size_t size);

void http_reply_free(struct http_reply *r);

/* Connect to 127.0.0.1:port, send len bytes of req, shut the write side only when
 * close_write, and read until EOF, timeout_ms of silence or size-1 bytes. Returns the number
 * of bytes read into buf (NUL-terminated), or -1 when the connection failed. */
long raw_exchange(int port, const char *req, size_t len, bool close_write, int timeout_ms,
                  char *buf, size_t size);

#endif
