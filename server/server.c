/*
 * server.c - the libmicrohttpd daemon and the life of one request.
 *
 * A request's context is created when MHD first shows it to us (the URI log callback, which
 * runs just before the first access-handler call and is the only place the raw request target,
 * query included, can be measured) and freed only in the completion callback, so no path can
 * leak it or free it twice. The first access-handler call admits or refuses the request before
 * any body is read: a target over max_uri_bytes gets 414, a Content-Length over max_body_bytes
 * gets 413 and MHD then never reads the body. Body bytes are accumulated centrally under the
 * same cap (a chunked body that grows past it is dropped and gets 413 when it ends); the final
 * call builds a struct api_request and answers it on its route, looked up once at admission
 * among the server's own rows and the api's (routes.c).
 *
 * The same two callbacks bracket every request for operations: the URI callback starts the
 * clock and the in-flight count, the completion callback (after the last byte of the reply, or
 * when the request died) records the metrics and writes the access line. Connections are
 * counted through MHD's connection notifications so that draining knows when nobody is left.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "log.h"

/* Per-connection pool for the request line, the headers and the query arguments: the longest
 * accepted target plus CONNECTION_HEADROOM for the headers, so a target just over
 * max_uri_bytes still fits and gets our problem+json 414 rather than libmicrohttpd's HTML one
 * (8 KiB of headers: nginx's default for one header line). The default target of 8 KiB gives
 * 16 KiB, half of libmicrohttpd's own default. The size is paid twice over: MHD 0.9.75 zeroes
 * the whole pool after every keep-alive request (and a shrunk read buffer on every request),
 * about 1.5 instructions per pool byte per request, and the zeroing keeps every page of the pool
 * resident for each open connection. 32 KiB: 127.8k instructions per GET /fit and 68.6 MiB with
 * 2000 connections; 16 KiB: 103.2k (docs/performance.md). */
#define CONNECTION_HEADROOM (8 * (size_t)1024)

/* The pool for a max_uri_bytes already within 64..SERVER_URI_CEILING (fill_defaults). */
static size_t connection_memory(size_t max_uri_bytes)
{
    return (max_uri_bytes + CONNECTION_HEADROOM + 1023) / 1024 * 1024;
}

/* "[" + an IPv6 address (at most 45) + "]:" + a port (at most 5) + NUL fits with room. */
#define REMOTE_MAX 64
/* Body bytes read and dropped after the cap before the connection is simply closed. */
#define DISCARD_MAX (16 * (size_t)API_BODY_MAX)

struct request {
    size_t uri_len;     /* raw request target, query included */
    bool admitted;      /* the first access-handler call has run */
    bool replied;       /* a reply was queued before the body was read */
    bool too_large;     /* the body grew past max_body_bytes */
    bool too_many_args; /* the query has over SERVER_QUERY_ARGS_MAX arguments (see on_uri) */
    bool oom;
    unsigned long long start_ns; /* CLOCK_MONOTONIC at the request line */
    unsigned route;              /* route number (routes.c), also the metrics label index */
    unsigned method_index;       /* metrics table index */
    unsigned status;             /* of the queued reply; 0 while none */
    size_t bytes;                /* body bytes of the queued reply */
    char id[SERVER_REQUEST_ID_MAX + 1];
    char method[16];
    char path[SERVER_LOG_PATH_MAX + 4]; /* printable copy for the access log */
    char remote[REMOTE_MAX];
    size_t discarded; /* body bytes thrown away once too_large */
    char *body;
    size_t body_len, body_cap;
    struct api_param *params; /* first the record's own few, the heap past them */
    size_t param_count, param_cap;
    struct api_param few[8]; /* most queries have a handful: no allocation for them */
};

/* ---------------------------------------------------------------------------------------------
 * Request context
 * ------------------------------------------------------------------------------------------- */

static unsigned long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* A request context, counted in flight until on_completed() releases it. */
static struct request *new_request(struct server *srv, size_t uri_len)
{
    struct request *rq = calloc(1, sizeof *rq);

    if (rq == NULL)
        return NULL;
    rq->uri_len = uri_len;
    rq->params = rq->few;
    rq->param_cap = sizeof rq->few / sizeof rq->few[0];
    rq->start_ns = now_ns();
    rq->route = UINT_MAX; /* none until admitted: answered 404, counted as "unmatched" */
    rq->method_index = SERVER_METRICS_METHODS - 1;
    atomic_fetch_add(&srv->in_flight, 1U);
    atomic_store(&srv->last_activity_ns, rq->start_ns);
    return rq;
}

static void release_request(struct server *srv, struct request *rq, unsigned long long end)
{
    free(rq->body);
    if (rq->params != rq->few)
        free(rq->params);
    free(rq);
    atomic_store(&srv->last_activity_ns, end);
    atomic_fetch_sub(&srv->in_flight, 1U);
}

/* libmicrohttpd may drop a request between the URI callback and the access handler without
 * ever calling the completion callback (found with a query of ~1 000 arguments, before on_uri
 * cut such queries). Its context would leak and stay "in flight" for ever, so every drain would
 * wait out its whole grace. Each connection's context therefore holds the request the URI
 * callback made and the access handler has not yet seen; the connection's close releases it. */
struct connection {
    struct request *pending;
    char remote[REMOTE_MAX]; /* the client's "a.b.c.d:port" or "[v6]:port", formatted once */
};

/* The connection's context (see on_connection); NULL only when it could not be allocated. */
static struct connection *connection_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return info != NULL ? info->socket_context : NULL;
}

/* Query arguments in a target (one per '&'-separated piece after '?', as libmicrohttpd splits
 * them, empty pieces included), counted up to SERVER_QUERY_ARGS_MAX + 1. */
static size_t count_args(const char *query)
{
    size_t n = 1;

    for (const char *p = query; *p != '\0' && n <= SERVER_QUERY_ARGS_MAX; p++)
        n += *p == '&';
    return n;
}

/* Called with the raw target before libmicrohttpd parses its query. MHD 0.9.75 keeps one record
 * per query argument in the connection pool and handles running out of it badly: a 431 in HTML,
 * and past a few hundred arguments no reply at all until the connection timeout. A target that
 * will be refused anyway (longer than max_uri_bytes, or more than SERVER_QUERY_ARGS_MAX
 * arguments) therefore has its query cut here, so MHD parses nothing and the access handler
 * answers a problem+json 414. `uri` points into MHD's own writable read buffer, the same bytes
 * MHD itself cuts at '?' next; with a libmicrohttpd that passed a copy the cut would do nothing
 * and the old behaviour would return. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct server *srv = cls;
    size_t len = strlen(uri);
    struct request *rq = new_request(srv, len); /* NULL: the access handler retries */
    struct connection *cx = connection_of(conn);
    char *query = strchr(uri, '?');

    /* Only with a record to remember the refusal in: without one the access handler would
     * see a target with no query and answer it as if that had been asked. */
    if (rq != NULL && query != NULL && query[1] != '\0' &&
        (len > srv->cfg.max_uri_bytes || count_args(query + 1) > SERVER_QUERY_ARGS_MAX)) {
        rq->too_many_args = len <= srv->cfg.max_uri_bytes;
        query[1] = '\0';
    }

    if (cx != NULL) {
        if (cx->pending != NULL) /* never seen by the access handler, and the connection went on */
            release_request(srv, cx->pending, now_ns());
        cx->pending = rq;
    }
    return rq;
}

static void log_access(struct server *srv, const struct request *rq, double duration_ms)
{
    struct server_access a = {rq->method,  server_metrics_route_name(&srv->metrics, rq->route),
                              rq->path,    rq->status,
                              duration_ms, (long long)rq->bytes,
                              rq->id,      rq->remote};

    server_log_access(&srv->cfg, &a, &srv->accesslog);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    struct server *srv = cls;
    struct request *rq = *con_cls;
    struct connection *cx;
    unsigned long long end, took;

    if (rq == NULL)
        return;
    end = now_ns();
    took = end - rq->start_ns;
    if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK && rq->status != 0)
        server_metrics_record(&srv->metrics, rq->route, rq->method_index, rq->status, took);
    else if (rq->admitted)
        atomic_fetch_add(&srv->metrics.aborted, 1ULL);
    if (rq->admitted && srv->cfg.access_log && server_log_enabled(&srv->cfg, SERVER_LOG_INFO))
        log_access(srv, rq, (double)(took / 1000ULL) / 1000.0);
    *con_cls = NULL;
    cx = connection_of(conn);
    if (cx != NULL && cx->pending == rq) /* MHD may complete a request the handler never saw */
        cx->pending = NULL;
    release_request(srv, rq, end);
}

/* The client's address as "a.b.c.d:port" or "[v6]:port" (empty when unknown). */
static void remote_address(struct MHD_Connection *conn, char *buf, size_t size)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info != NULL ? info->client_addr : NULL;
    char host[INET6_ADDRSTRLEN];

    buf[0] = '\0';
    if (sa == NULL)
        return;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

        if (inet_ntop(AF_INET, &in->sin_addr, host, sizeof host) != NULL)
            snprintf(buf, size, "%s:%u", host, ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

        if (inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host) != NULL)
            snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct server *srv = cls;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        /* NULL only without memory: then a dropped request leaks as it did before, and the
         * access log shows no address */
        struct connection *cx = calloc(1, sizeof *cx);

        /* the address is the connection's: formatted here once, not for each request */
        if (cx != NULL && srv->cfg.access_log)
            remote_address(conn, cx->remote, sizeof cx->remote);
        *socket_context = cx;
        atomic_fetch_add(&srv->connections, 1U);
        atomic_store(&srv->last_activity_ns, now_ns()); /* a request may be on its way */
    } else {
        struct connection *cx = *socket_context;

        if (cx != NULL && cx->pending != NULL)
            release_request(srv, cx->pending, now_ns());
        free(cx);
        *socket_context = NULL;
        atomic_fetch_sub(&srv->connections, 1U);
    }
}

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_len, const char *value, size_t value_len)
{
    struct request *rq = cls;

    (void)kind;
    if (rq->param_count == rq->param_cap) {
        size_t cap = 2 * rq->param_cap;
        struct api_param *grown = rq->params == rq->few ? malloc(cap * sizeof *grown)
                                                        : realloc(rq->params, cap * sizeof *grown);

        if (grown == NULL) {
            rq->oom = true;
            return MHD_NO;
        }
        if (rq->params == rq->few)
            memcpy(grown, rq->few, sizeof rq->few);
        rq->params = grown;
        rq->param_cap = cap;
    }
    rq->params[rq->param_count++] = (struct api_param){key, key_len, value, value_len};
    return MHD_YES;
}

/* ---------------------------------------------------------------------------------------------
 * Access handler
 * ------------------------------------------------------------------------------------------- */

/* Every reply of a request goes through here, so the access log and metrics see its status. */
static enum MHD_Result reply(struct server *srv, struct MHD_Connection *conn, const char *method,
                             struct request *rq, struct api_response *resp)
{
    rq->status = resp->status;
    rq->bytes = strcmp(method, "HEAD") == 0 ? 0 : resp->body_len;
    return server_reply(srv, conn, method, rq->id, resp);
}

static enum MHD_Result refuse(struct server *srv, struct MHD_Connection *conn, const char *method,
                              struct request *rq, unsigned status, const char *detail)
{
    struct api_response resp;

    memset(&resp, 0, sizeof resp);
    api_problem(&resp, status, detail, NULL);
    rq->replied = true;
    return reply(srv, conn, method, rq, &resp);
}

/* An incoming id is echoed only when it is safe to put back in a header and a log line:
 * 1..SERVER_REQUEST_ID_MAX bytes of printable ASCII. */
static bool request_id_sane(const char *id, size_t len)
{
    if (id == NULL || len == 0 || len > SERVER_REQUEST_ID_MAX)
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
        if (in_len >= size)
            in_len = size - 1;
        memcpy(buf, in, in_len);
        buf[in_len] = '\0';
        return;
    }
    /* "<prefix>-<counter in hex>", formatted by hand: snprintf cost ~1.5k instructions here */
    {
        static const char hex[] = "0123456789abcdef";
        unsigned long long n = atomic_fetch_add(&srv->next_id, 1ULL);
        char digits[16];
        size_t nd = 0, at = strlen(srv->id_prefix);

        do {
            digits[nd++] = hex[n & 15];
            n >>= 4;
        } while (n != 0);
        if (at + 1 + nd >= size) { /* cannot happen with SERVER_REQUEST_ID_MAX; stay in bounds */
            buf[0] = '\0';
            return;
        }
        memcpy(buf, srv->id_prefix, at);
        buf[at++] = '-';
        while (nd > 0)
            buf[at++] = digits[--nd];
        buf[at] = '\0';
    }
}

/* Copy s into buf for a log line: bytes outside printable ASCII become %XX (a path is
 * client-controlled and must not forge lines or break JSON), cut with "..." at the cap. */
static void printable(const char *s, char *buf, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        size_t need = c > 0x20 && c < 0x7f ? 1 : 3;

        if (n + need + 4 > size) {
            snprintf(buf + n, size - n, "...");
            return;
        }
        if (need == 1) {
            buf[n++] = (char)c;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[c >> 4];
            buf[n++] = hex[c & 15];
        }
    }
    buf[n] = '\0';
}

/* First call: headers are in, no body read yet. Note who asked, refuse what we will never
 * serve. */
static enum MHD_Result admit(struct server *srv, struct MHD_Connection *conn, const char *url,
                             const char *method, struct request *rq)
{
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    char detail[96];

    rq->admitted = true;
    rq->route = server_route_find(url);
    rq->method_index = server_metrics_method(method);
    request_id(srv, conn, rq->id, sizeof rq->id);
    if (srv->cfg.access_log) {
        const struct connection *cx = connection_of(conn);

        printable(method, rq->method, sizeof rq->method);
        printable(url, rq->path, sizeof rq->path);
        if (cx != NULL)
            memcpy(rq->remote, cx->remote, REMOTE_MAX);
    }
    if (rq->uri_len > srv->cfg.max_uri_bytes) {
        snprintf(detail, sizeof detail, "request target longer than %zu bytes",
                 srv->cfg.max_uri_bytes);
        return refuse(srv, conn, method, rq, 414, detail);
    }
    if (rq->too_many_args) {
        snprintf(detail, sizeof detail, "request target with more than %d query parameters",
                 SERVER_QUERY_ARGS_MAX);
        return refuse(srv, conn, method, rq, 414, detail);
    }
    if (length != NULL) {
        char *end;
        unsigned long long n;

        errno = 0;
        n = strtoull(length, &end, 10);
        /* MHD already rejected malformed lengths; be strict anyway. */
        if (errno != 0 || end == length || n > srv->cfg.max_body_bytes) {
            snprintf(detail, sizeof detail, "request body larger than %zu bytes",
                     srv->cfg.max_body_bytes);
            return refuse(srv, conn, method, rq, 413, detail);
        }
    }
    return MHD_YES;
}

static enum MHD_Result take_body(struct request *rq, size_t max, const char *data, size_t *len)
{
    size_t n = *len;

    *len = 0; /* consumed, whatever happens below */
    if (rq->too_large) {
        /* libmicrohttpd 0.9.75 refuses to queue a reply while it is reading a body, so the
         * 413 waits for the end of it; a client that keeps streaming long past the cap is cut
         * off instead of being read forever. */
        rq->discarded += n;
        return rq->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
    }
    if (rq->oom)
        return MHD_YES;
    if (n > max - rq->body_len) {
        rq->too_large = true;
        rq->discarded = rq->body_len + n;
        free(rq->body);
        rq->body = NULL;
        rq->body_len = rq->body_cap = 0;
        return MHD_YES;
    }
    if (rq->body_len + n > rq->body_cap) {
        size_t cap = rq->body_cap != 0 ? rq->body_cap : 1024;
        char *grown;

        while (cap < rq->body_len + n)
            cap *= 2;
        if (cap > max)
            cap = max;
        grown = realloc(rq->body, cap);
        if (grown == NULL) {
            rq->oom = true;
            return MHD_YES;
        }
        rq->body = grown;
        rq->body_cap = cap;
    }
    memcpy(rq->body + rq->body_len, data, n);
    rq->body_len += n;
    return MHD_YES;
}

/* Final call: the whole request is in. Route it and reply. */
static enum MHD_Result finish(struct server *srv, struct MHD_Connection *conn, const char *url,
                              const char *method, struct request *rq)
{
    struct api_request req;
    struct api_response resp;
    char detail[96];

    if (rq->too_large) {
        snprintf(detail, sizeof detail, "request body larger than %zu bytes",
                 srv->cfg.max_body_bytes);
        return refuse(srv, conn, method, rq, 413, detail);
    }
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_param, rq);
    if (rq->oom)
        return refuse(srv, conn, method, rq, 500, "out of memory");

    memset(&req, 0, sizeof req);
    req.method = method; /* HEAD runs the GET handler; MHD drops the body */
    req.path = url;
    req.query = rq->params;
    req.query_count = rq->param_count;
    req.body = rq->body;
    req.body_len = rq->body_len;
    req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    req.if_none_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match");

    /* rq->route was looked up when the request was admitted (the path cannot change since) */
    if (!server_route(srv, rq->route, &req, &resp))
        api_problem(&resp, 404, "no such resource", NULL);
    return reply(srv, conn, method, rq, &resp);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_len, void **con_cls)
{
    struct server *srv = cls;
    struct request *rq = *con_cls;
    struct connection *cx = connection_of(conn);

    (void)version;
    if (cx != NULL)
        cx->pending = NULL; /* the access handler has seen it: on_completed() releases it */
    if (rq == NULL) {
        /* The URI log callback could not allocate; try once more, measuring the path only. */
        rq = new_request(srv, strlen(url));
        if (rq == NULL)
            return MHD_NO;
        *con_cls = rq;
    }
    if (!rq->admitted)
        return admit(srv, conn, url, method, rq);
    if (rq->replied) {
        *upload_len = 0;
        return MHD_YES;
    }
    if (*upload_len != 0)
        return take_body(rq, srv->cfg.max_body_bytes, upload, upload_len);
    return finish(srv, conn, url, method, rq);
}

/* ---------------------------------------------------------------------------------------------
 * Daemon
 * ------------------------------------------------------------------------------------------- */

/* MHD's own diagnostics, one warn line each like the rest of memwall's logs. */
__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct server *srv = cls;
    char text[512];
    size_t len;

    vsnprintf(text, sizeof text, fmt, ap);
    len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (text[i] < 0x20 || text[i] > 0x7e)
            text[i] = '?'; /* jansson refuses strings that are not UTF-8 */
    }
    server_log(&srv->cfg, SERVER_LOG_WARN, "mhd", json_pack("{s:s}", "message", text));
}

static void seed_ids(struct server *srv)
{
    unsigned long long seed = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd < 0 || read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
        seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
    if (fd >= 0)
        close(fd);
    snprintf(srv->id_prefix, sizeof srv->id_prefix, "%016llx", seed);
    atomic_init(&srv->next_id, 1ULL);
}

/* A config where every zero has become its default (see server.h). */
static void fill_defaults(struct server_config *out, const struct server_config *in)
{
    *out = *in;
    if (out->cors_origins == NULL)
        out->cors_origins = "*";
    if (out->max_body_bytes == 0 || out->max_body_bytes > API_BODY_MAX)
        out->max_body_bytes = API_BODY_MAX;
    if (out->max_uri_bytes == 0 || out->max_uri_bytes > SERVER_URI_CEILING)
        out->max_uri_bytes = out->max_uri_bytes == 0 ? SERVER_URI_MAX : SERVER_URI_CEILING;
    if (out->timeout_s == 0)
        out->timeout_s = SERVER_TIMEOUT_DEFAULT;
    if (out->max_connections == 0)
        out->max_connections = SERVER_CONNECTIONS_DEFAULT;
}

static int fail(char *err, size_t err_len, const char *what, const char *value)
{
    if (err_len > 0)
        snprintf(err, err_len, "%s%s%s", what, value ? ": " : "", value ? value : "");
    return -1;
}

static unsigned bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    struct sockaddr_storage ss;
    socklen_t ss_len = sizeof ss;

    if (info != NULL && info->port != 0)
        return info->port;
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    if (info == NULL || getsockname(info->listen_fd, (struct sockaddr *)&ss, &ss_len) != 0)
        return 0;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* The numeric IPv4 or IPv6 address to listen on, with MHD_USE_IPv6 added for the latter; -1
 * with the reason in err when there is none. */
static int bind_address(const struct server_config *cfg, struct sockaddr_storage *addr_out,
                        unsigned *flags, char *err, size_t err_len)
{
    struct sockaddr_storage addr;

    memset(&addr, 0, sizeof addr);
    if (cfg->bind == NULL)
        return fail(err, err_len, "no bind address", NULL);
    if (inet_pton(AF_INET, cfg->bind, &((struct sockaddr_in *)&addr)->sin_addr) == 1) {
        ((struct sockaddr_in *)&addr)->sin_family = AF_INET;
        ((struct sockaddr_in *)&addr)->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->bind, &((struct sockaddr_in6 *)&addr)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)&addr)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&addr)->sin6_port = htons((uint16_t)cfg->port);
        *flags |= MHD_USE_IPv6;
    } else {
        return fail(err, err_len, "bind address is not a numeric IPv4 or IPv6 address", cfg->bind);
    }
    *addr_out = addr;
    return 0;
}

int server_start(const struct server_config *cfg, struct server **out, char *err, size_t err_len)
{
    struct server *srv;
    struct sockaddr_storage addr;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    unsigned port;
    struct MHD_OptionItem pool[3] = {
        {MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL}};

    *out = NULL;
    if (cfg->threads < 1 || cfg->threads > SERVER_THREADS_MAX)
        return fail(err, err_len, "threads must be 1..256", NULL);
    if (cfg->port > 65535)
        return fail(err, err_len, "port must be 0..65535", NULL);

    if (bind_address(cfg, &addr, &flags, err, err_len) < 0)
        return -1;

    srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return fail(err, err_len, "out of memory", NULL);
    fill_defaults(&srv->cfg, cfg);
    srv->listen_fd = -1;
    seed_ids(srv);
    server_metrics_init(&srv->metrics, server_route_label);

    /* epoll scales with the thread pool; poll is the portable fallback (never select: its
     * FD_SETSIZE would cap the connection limit). ITC lets MHD_quiesce_daemon() reach every
     * worker of the pool. */
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
    flags |= MHD_USE_ITC;
    /* Turbo: read, write and accept first and ask epoll only on EAGAIN; with keep-alive
     * connections that are usually ready this saves a system call per step. */
    flags |= MHD_USE_TURBO;
    /* One thread means no pool (MHD warns about a pool of one or zero), so the option is
     * passed through an array that is empty in that case. */
    pool[0].option = cfg->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END;
    pool[0].value = (intptr_t)cfg->threads;
    /* 0 means no per-address limit, which MHD spells by leaving the option out. */
    pool[1].option = srv->cfg.max_per_ip > 0 ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_END;
    pool[1].value = (intptr_t)srv->cfg.max_per_ip;
    /* One buffer per MHD worker, and one for a thread MHD may complete requests on while it
     * stops. Without them (flush interval 0, no memory or thread) every line is written at
     * once. */
    if (srv->cfg.access_log)
        server_accesslog_start(&srv->accesslog,
                               srv->cfg.log_fd > 0 ? srv->cfg.log_fd : STDOUT_FILENO,
                               srv->cfg.threads + 1, srv->cfg.access_log_flush_ms);
    /* one option and its arguments per line */
    /* clang-format off */
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_access, srv,
        /* the logger first, or MHD logs its option parsing with its own logger */
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_ARRAY, pool,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)srv->cfg.max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory(srv->cfg.max_uri_bytes),
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_END);
    /* clang-format on */
    if (srv->daemon == NULL) {
        fail(err, err_len, "cannot start the HTTP daemon (address in use?)", cfg->bind);
        goto cleanup;
    }
    port = bound_port(srv->daemon);
    if (port == 0) {
        fail(err, err_len, "cannot read the bound port", NULL);
        goto cleanup;
    }
    *out = srv;
    return (int)port;

cleanup:
    /* Whatever was started so far; server_stop() copes with a daemon that never started. */
    server_stop(srv);
    return -1;
}

void server_drain(struct server *srv)
{
    MHD_socket fd;

    if (srv == NULL || atomic_exchange(&srv->draining, true))
        return;
    /* Quiet is measured from now: a connection accepted a moment ago gets its chance. */
    atomic_store(&srv->last_activity_ns, now_ns());
    fd = MHD_quiesce_daemon(srv->daemon);
    if (fd == MHD_INVALID_SOCKET)
        return;
    /* MHD's threads may still hold the descriptor, so it is closed only after they stop;
     * shutting the listening socket down now makes the kernel refuse new connections (and
     * reset those waiting in the backlog, which were never accepted) instead of queueing them
     * for a server that will not read them. */
    shutdown(fd, SHUT_RDWR);
    srv->listen_fd = fd;
}

bool server_idle(struct server *srv, unsigned quiet_ms)
{
    unsigned long long last = atomic_load(&srv->last_activity_ns);

    if (atomic_load(&srv->in_flight) != 0)
        return false;
    return atomic_load(&srv->connections) == 0 ||
           now_ns() - last >= (unsigned long long)quiet_ms * 1000000ULL;
}

unsigned server_in_flight(struct server *srv)
{
    return atomic_load(&srv->in_flight);
}

unsigned long long server_aborted(struct server *srv)
{
    return atomic_load(&srv->metrics.aborted);
}

void server_stop(struct server *srv)
{
    if (srv == NULL)
        return;
    if (srv->daemon != NULL)
        MHD_stop_daemon(srv->daemon);
    server_accesslog_stop(&srv->accesslog); /* every request is complete and logged */
    if (srv->listen_fd >= 0)
        close(srv->listen_fd);
    free(srv);
}
