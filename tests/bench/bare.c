/*
 * bare.c - the ceiling of memwall's design: libmicrohttpd started exactly as server/server.c
 * starts it (flags, thread pool, connection memory, limits, turbo), answering every request
 * with the same bytes from memory. Nothing is parsed, computed, logged or counted.
 *
 *   bare PORT THREADS BODY_FILE HEADERS_FILE
 *
 * HEADERS_FILE is `curl -D` of memwall's own GET /fit reply; every header in it but the ones
 * libmicrohttpd writes itself (Date, Content-Length, Connection) is added to one response built
 * at start, which every request then queues: so the reply is memwall's byte for byte, save the
 * X-Request-Id value (the same length) and the Date. Prints {"event":"listening","port":N} like
 * memwall and runs until SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

static struct MHD_Response *reply;

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_len, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload;
    /* as memwall: a reply queued on the first call, before the request is complete, would make
     * libmicrohttpd close the connection after it; a body is read and dropped */
    if (*con_cls == NULL) {
        *con_cls = reply;
        return MHD_YES;
    }
    if (*upload_len != 0) {
        *upload_len = 0;
        return MHD_YES;
    }
    return MHD_queue_response(conn, MHD_HTTP_OK, reply);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = f != NULL ? malloc(1 << 20) : NULL;

    *len = buf != NULL ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    if (buf != NULL)
        buf[*len] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    static const char *const own[] = {"Date", "Content-Length", "Connection"};
    size_t body_len, head_len;
    char *body = argc == 5 ? slurp(argv[3], &body_len) : NULL;
    char *head = argc == 5 ? slurp(argv[4], &head_len) : NULL;
    unsigned threads = argc == 5 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_EPOLL |
                     MHD_USE_ITC | MHD_USE_TURBO;
    struct MHD_OptionItem pool[2] = {{MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL}};
    struct sockaddr_in addr = {0};
    struct MHD_Daemon *d;
    sigset_t stop;
    int sig;

    if (body == NULL || head == NULL || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: bare PORT THREADS BODY_FILE HEADERS_FILE\n");
        return 2;
    }
    reply = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
    /* after the status line, "Name: value\r\n" lines up to the blank one */
    for (char *line = strstr(head, "\r\n"); line != NULL;) {
        char *name = line + 2, *end = strstr(name, "\r\n"), *colon = strchr(name, ':');
        bool skip = false;

        if (end == NULL || end == name || colon == NULL || colon > end)
            break;
        *colon = *end = '\0';
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            skip = skip || strcasecmp(name, own[i]) == 0;
        if (!skip && MHD_add_response_header(reply, name, colon + 1 + (colon[1] == ' ')) != MHD_YES)
            return 1;
        line = end;
    }
    /* as server_start() with the defaults of `memwall serve` and 127.0.0.1 */
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* MHD's threads inherit the mask */
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)strtoul(argv[1], NULL, 10));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    pool[0].option = threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END;
    pool[0].value = (intptr_t)threads;
    d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, NULL, MHD_OPTION_SOCK_ADDR, &addr,
                         MHD_OPTION_ARRAY, pool, MHD_OPTION_CONNECTION_TIMEOUT, 30U,
                         MHD_OPTION_CONNECTION_LIMIT, 4096U, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                         1024U, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_END);
    if (d == NULL)
        return 1;
    printf("{\"event\":\"listening\",\"port\":%u}\n",
           MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
    fflush(stdout);
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(reply);
    free(body);
    free(head);
    return 0;
}
