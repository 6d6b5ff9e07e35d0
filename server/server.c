/*
 * server.c - the libmicrohttpd daemon and the life of one request.
 *
 * A request's context is created when MHD first shows it to us (the URI log callback, which
 * runs just before the first access-handler call and is the only place the raw request target,
 * query included, can be measured) and freed only in the completion callback, so no path can
 * leak it or free it twice. The first access-handler call admits or refuses the request before
 * any body is read: a target over SERVER_URI_MAX gets 414, a Content-Length over API_BODY_MAX
 * gets 413 and MHD then never reads the body. Body bytes are accumulated centrally under the
 * same cap (a chunked body that grows past it is dropped and gets 413 when it ends); the final
 * call builds a struct api_request and hands it to the server's own routes, then to
 * api_dispatch().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

/* Idle seconds before MHD drops a connection: slow clients cannot pin a worker forever. */
#define CONNECTION_TIMEOUT_S 30
#define CONNECTION_LIMIT     1024
/* Per-connection pool for the request line and headers. Above MHD's 32 KiB default so that a
 * target a little over SERVER_URI_MAX still reaches us and gets a problem+json 414 rather
 * than MHD's own HTML one. */
#define CONNECTION_MEMORY (64 * 1024)
/* Body bytes read and dropped after the cap before the connection is simply closed. */
#define DISCARD_MAX (16 * (size_t)API_BODY_MAX)

struct request {
    size_t uri_len; /* raw request target, query included */
    bool admitted;  /* the first access-handler call has run */
    bool replied;   /* a reply was queued before the body was read */
    bool too_large; /* the body grew past API_BODY_MAX */
    bool oom;
    size_t discarded; /* body bytes thrown away once too_large */
    char *body;
    size_t body_len, body_cap;
    struct api_param *params;
    size_t param_count, param_cap;
};

/* ---------------------------------------------------------------------------------------------
 * Request context
 * ------------------------------------------------------------------------------------------- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct request *rq = calloc(1, sizeof *rq);

    (void)cls;
    (void)conn;
    if (rq != NULL)
        rq->uri_len = strlen(uri);
    return rq; /* NULL is fine: the access handler retries the allocation */
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    struct request *rq = *con_cls;

    (void)cls;
    (void)conn;
    (void)code;
    if (rq == NULL)
        return;
    free(rq->body);
    free(rq->params);
    free(rq);
    *con_cls = NULL;
}

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_len, const char *value, size_t value_len)
{
    struct request *rq = cls;

    (void)kind;
    if (rq->param_count == rq->param_cap) {
        size_t cap = rq->param_cap != 0 ? 2 * rq->param_cap : 8;
        struct api_param *grown = realloc(rq->params, cap * sizeof *grown);

        if (grown == NULL) {
            rq->oom = true;
            return MHD_NO;
        }
        rq->params = grown;
        rq->param_cap = cap;
    }
    rq->params[rq->param_count++] = (struct api_param){key, key_len, value, value_len};
    return MHD_YES;
}

/* ---------------------------------------------------------------------------------------------
 * Access handler
 * ------------------------------------------------------------------------------------------- */

static enum MHD_Result refuse(struct server *srv, struct MHD_Connection *conn, const char *method,
                              struct request *rq, unsigned status, const char *detail)
{
    struct api_response resp;

    memset(&resp, 0, sizeof resp);
    api_problem(&resp, status, detail, NULL);
    rq->replied = true;
    return server_reply(srv, conn, method, &resp);
}

/* First call: headers are in, no body read yet. Refuse what we will never serve. */
static enum MHD_Result admit(struct server *srv, struct MHD_Connection *conn, const char *method,
                             struct request *rq)
{
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");

    rq->admitted = true;
    if (rq->uri_len > SERVER_URI_MAX)
        return refuse(srv, conn, method, rq, 414, "request target longer than 8192 bytes");
    if (length != NULL) {
        char *end;
        unsigned long long n;

        errno = 0;
        n = strtoull(length, &end, 10);
        /* MHD already rejected malformed lengths; be strict anyway. */
        if (errno != 0 || end == length || n > API_BODY_MAX)
            return refuse(srv, conn, method, rq, 413, "request body larger than 65536 bytes");
    }
    return MHD_YES;
}

static enum MHD_Result take_body(struct request *rq, const char *data, size_t *len)
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
    if (n > API_BODY_MAX - rq->body_len) {
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
        if (cap > API_BODY_MAX)
            cap = API_BODY_MAX;
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
    bool head = strcmp(method, "HEAD") == 0;

    if (rq->too_large)
        return refuse(srv, conn, method, rq, 413, "request body larger than 65536 bytes");
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_param, rq);
    if (rq->oom)
        return refuse(srv, conn, method, rq, 500, "out of memory");

    memset(&req, 0, sizeof req);
    /* HEAD is GET without the body, which MHD drops; the routes only ever see GET. */
    req.method = head ? "GET" : method;
    req.path = url;
    req.query = rq->params;
    req.query_count = rq->param_count;
    req.body = rq->body;
    req.body_len = rq->body_len;
    req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    req.if_none_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match");

    memset(&resp, 0, sizeof resp);
    if (!server_route(&req, &resp) && !api_dispatch(&req, &resp))
        api_problem(&resp, 404, "no such resource", NULL);
    /* A preflight or OPTIONS answer is bodiless whatever the route produced. */
    if (strcmp(method, "OPTIONS") == 0 && resp.status < 300 && resp.status != 204) {
        api_response_free(&resp);
        resp.status = 204;
        resp.body = NULL;
        resp.body_len = 0;
    }
    return server_reply(srv, conn, method, &resp);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_len, void **con_cls)
{
    struct server *srv = cls;
    struct request *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        /* The URI log callback could not allocate; try once more, measuring the path only. */
        rq = calloc(1, sizeof *rq);
        if (rq == NULL)
            return MHD_NO;
        rq->uri_len = strlen(url);
        *con_cls = rq;
    }
    if (!rq->admitted)
        return admit(srv, conn, method, rq);
    if (rq->replied) {
        *upload_len = 0;
        return MHD_YES;
    }
    if (*upload_len != 0)
        return take_body(rq, upload, upload_len);
    return finish(srv, conn, url, method, rq);
}

/* ---------------------------------------------------------------------------------------------
 * Daemon
 * ------------------------------------------------------------------------------------------- */

/* MHD's own diagnostics, one JSON line each on stderr like the rest of memwall's logs. */
__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char text[512];
    json_t *line;
    char *out;
    size_t len;

    (void)cls;
    vsnprintf(text, sizeof text, fmt, ap);
    len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    line = json_pack("{s:s, s:s, s:s}", "level", "warn", "event", "mhd", "message", text);
    out = line ? json_dumps(line, JSON_COMPACT) : NULL;
    if (out != NULL)
        fprintf(stderr, "%s\n", out);
    free(out);
    json_decref(line);
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

int server_start(const struct server_config *cfg, struct server **out, char *err, size_t err_len)
{
    struct server *srv;
    struct sockaddr_storage addr;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    unsigned port;
    struct MHD_OptionItem pool[2] = {{MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL}};

    *out = NULL;
    if (cfg->threads < 1 || cfg->threads > SERVER_THREADS_MAX)
        return fail(err, err_len, "threads must be 1..256", NULL);
    if (cfg->port > 65535)
        return fail(err, err_len, "port must be 0..65535", NULL);

    memset(&addr, 0, sizeof addr);
    if (cfg->bind == NULL)
        return fail(err, err_len, "no bind address", NULL);
    if (inet_pton(AF_INET, cfg->bind, &((struct sockaddr_in *)&addr)->sin_addr) == 1) {
        ((struct sockaddr_in *)&addr)->sin_family = AF_INET;
        ((struct sockaddr_in *)&addr)->sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, cfg->bind, &((struct sockaddr_in6 *)&addr)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)&addr)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&addr)->sin6_port = htons((uint16_t)cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        return fail(err, err_len, "bind address is not a numeric IPv4 or IPv6 address", cfg->bind);
    }

    srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return fail(err, err_len, "out of memory", NULL);
    srv->cfg = *cfg;
    if (srv->cfg.cors_origin == NULL)
        srv->cfg.cors_origin = "*";
    seed_ids(srv);

    /* epoll scales with the thread pool; poll is the portable fallback (never select: its
     * FD_SETSIZE would cap the connection limit). */
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
    /* One thread means no pool (MHD warns about a pool of one or zero), so the option is
     * passed through an array that is empty in that case. */
    pool[0].option = cfg->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END;
    pool[0].value = (intptr_t)cfg->threads;
    /* one option and its arguments per line */
    /* clang-format off */
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_access, srv,
        /* the logger first, or MHD logs its option parsing with its own logger */
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_ARRAY, pool,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNECTION_LIMIT,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_END);
    /* clang-format on */
    if (srv->daemon == NULL) {
        free(srv);
        return fail(err, err_len, "cannot start the HTTP daemon (address in use?)", cfg->bind);
    }
    port = bound_port(srv->daemon);
    if (port == 0) {
        server_stop(srv);
        return fail(err, err_len, "cannot read the bound port", NULL);
    }
    *out = srv;
    return (int)port;
}

void server_stop(struct server *srv)
{
    if (srv == NULL)
        return;
    MHD_stop_daemon(srv->daemon);
    free(srv);
}
