/*
 * http.c - test client helpers: libcurl for ordinary requests (status, headers and body kept
 * verbatim so tests can byte-compare replies), a raw socket for protocol-level checks.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http.h"

struct buffer {
    char *data;
    size_t len;
};

static size_t append(struct buffer *b, const char *data, size_t n)
{
    char *grown = realloc(b->data, b->len + n + 1);

    if (grown == NULL)
        return 0;
    memcpy(grown + b->len, data, n);
    b->len += n;
    grown[b->len] = '\0';
    b->data = grown;
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
    return append(user, data, size * nmemb);
}

struct upload {
    const char *data; /* NULL: send 'a' bytes */
    size_t len, sent;
};

static size_t on_read(char *dest, size_t size, size_t nmemb, void *user)
{
    struct upload *up = user;
    size_t n = size * nmemb;

    if (n > up->len - up->sent)
        n = up->len - up->sent;
    if (up->data != NULL)
        memcpy(dest, up->data + up->sent, n);
    else
        memset(dest, 'a', n);
    up->sent += n;
    return n;
}

bool http_do(const char *url, const struct http_request *req, struct http_reply *out)
{
    static const struct http_request plain = {0};
    struct buffer body = {0}, head = {0};
    struct upload up = {0};
    struct curl_slist *list = NULL;
    const char *method;
    CURL *curl = curl_easy_init();
    CURLcode rc;

    memset(out, 0, sizeof *out);
    if (curl == NULL)
        return false;
    if (req == NULL)
        req = &plain;
    method = req->method != NULL ? req->method : "GET";
    for (const char *const *h = req->headers; h != NULL && *h != NULL; h++)
        list = curl_slist_append(list, *h);

    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &head);
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (req->body != NULL || req->declared_len > 0 || req->chunked) {
        up.data = req->body;
        up.len = req->body_len;
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(curl, CURLOPT_READDATA, &up);
        if (req->chunked)
            list = curl_slist_append(list, "Transfer-Encoding: chunked");
        else
            curl_easy_setopt(
                curl, CURLOPT_POSTFIELDSIZE_LARGE,
                (curl_off_t)(req->declared_len > 0 ? (size_t)req->declared_len : req->body_len));
        if (strcmp(method, "POST") != 0)
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);

    rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = body.data != NULL ? body.data : calloc(1, 1);
    out->body_len = body.len;
    out->headers = head.data != NULL ? head.data : calloc(1, 1);
    out->headers_len = head.len;
    out->uploaded = up.sent;
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return rc == CURLE_OK;
}

bool http_get(const char *url, struct http_reply *out)
{
    return http_do(url, NULL, out);
}

const char *http_header(const struct http_reply *r, const char *name, char *buf, size_t size)
{
    size_t name_len = strlen(name);
    const char *found = NULL;
    size_t found_len = 0;

    for (const char *line = r->headers; line != NULL && *line != '\0';) {
        const char *eol = strstr(line, "\r\n");
        size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);

        if (len > name_len && line[name_len] == ':' && strncasecmp(line, name, name_len) == 0) {
            found = line + name_len + 1;
            found_len = len - name_len - 1;
            while (found_len > 0 && *found == ' ') {
                found++;
                found_len--;
            }
        }
        line = eol != NULL ? eol + 2 : NULL;
    }
    if (found == NULL)
        return NULL;
    snprintf(buf, size, "%.*s", (int)found_len, found);
    return buf;
}

void http_reply_free(struct http_reply *r)
{
    free(r->body);
    free(r->headers);
    memset(r, 0, sizeof *r);
}

long raw_exchange(int port, const char *req, size_t len, bool close_write, int timeout_ms,
                  char *buf, size_t size)
{
    struct sockaddr_in addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    size_t got = 0;

    if (fd < 0)
        return -1;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    if (close_write)
        shutdown(fd, SHUT_WR);
    while (got + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        n = recv(fd, buf + got, size - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return (long)got;
}
