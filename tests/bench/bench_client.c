/*
 * bench_client.c - the small HTTP client the benchmark needs where wrk does not fit.
 *
 *   bench_client repeat PORT N METHOD PATH [BODY]
 *       N requests, one after another on one keep-alive connection to 127.0.0.1:PORT; every
 *       reply must be a 200. Used under callgrind, where only the server is instrumented and
 *       a deterministic request count matters more than speed.
 *   bench_client hold PORT N PATH
 *       Opens N connections, sends one GET PATH on each and reads the reply, keeps them all
 *       open, prints "held N" and waits for SIGTERM: the server's RSS with N live connections.
 *       They come from 127.0.0.1, .2, ... (500 from each), so memwall's per-address limit
 *       (1024 by default) is not what stops them.
 *   bench_client startup RUNS PROGRAM ARGS...
 *       Starts PROGRAM RUNS times; each time measures from just before fork() to the first 200
 *       answer of GET /healthz. The program must print its JSON "listening" line with
 *       "port":N on stdout (memwall serve --port 0 does; a settings line may come first). Prints
 * each time and the median.
 *
 * Replies are framed by Content-Length only (memwall and nginx both send it); no chunked
 * decoding is needed for what the benchmark asks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX (256 * 1024)

static bool parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A connection to 127.0.0.1:PORT from 127.0.0.SOURCE (1..254; 0: the kernel's choice). */
static int dial_from(unsigned port, unsigned source)
{
    struct sockaddr_in sa;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    if (source != 0) {
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK - 1 + source);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fd);
            return -1;
        }
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int dial(unsigned port)
{
    return dial_from(port, 0);
}

/* Connections a hold client opens from one source address: under memwall's default per-address
 * limit (1024), as many clients behind a load balancer would be. */
#define HOLD_PER_SOURCE 500

static bool send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* Read one reply; returns its status, or -1 on a broken or unframed reply. */
static int read_reply(int fd, char *buf, size_t cap)
{
    size_t have = 0;
    char *eoh = NULL;
    long status, length = -1;

    while (eoh == NULL) {
        ssize_t n;

        if (have + 1 >= cap)
            return -1;
        n = recv(fd, buf + have, cap - 1 - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        have += (size_t)n;
        buf[have] = '\0';
        eoh = strstr(buf, "\r\n\r\n");
    }
    if (strncmp(buf, "HTTP/1.1 ", 9) != 0)
        return -1;
    status = strtol(buf + 9, NULL, 10);
    for (char *line = strstr(buf, "\r\n"); line != NULL && line < eoh;
         line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0) {
            char *end;

            length = strtol(line + 17, &end, 10);
            break;
        }
    }
    if (length < 0)
        return -1;
    {
        size_t need = (size_t)(eoh + 4 - buf) + (size_t)length;

        if (need >= cap)
            return -1;
        while (have < need) {
            ssize_t n = recv(fd, buf + have, need - have, 0);

            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1;
            have += (size_t)n;
        }
        if (have != need)
            return -1; /* no pipelining: nothing may follow the reply */
    }
    return (int)status;
}

static int format_request(char *buf, size_t cap, const char *method, const char *path,
                          const char *body)
{
    if (body == NULL)
        return snprintf(buf, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", method, path);
    return snprintf(buf, cap,
                    "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\n\r\n%s",
                    method, path, strlen(body), body);
}

static int repeat(unsigned port, long n, const char *method, const char *path, const char *body)
{
    static char reply[REPLY_MAX];
    char req[8192];
    int len = format_request(req, sizeof req, method, path, body);
    int fd = dial(port);

    if (fd < 0 || len < 0 || (size_t)len >= sizeof req) {
        fprintf(stderr, "bench_client: cannot connect or request too long\n");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        int status;

        if (!send_all(fd, req, (size_t)len) ||
            (status = read_reply(fd, reply, sizeof reply)) != 200) {
            fprintf(stderr, "bench_client: request %ld failed\n", i + 1);
            close(fd);
            return 1;
        }
    }
    close(fd);
    return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int hold(unsigned port, long n, const char *path)
{
    static char reply[REPLY_MAX];
    char req[8192];
    int len = format_request(req, sizeof req, "GET", path, NULL);
    int *fds = calloc((size_t)n, sizeof *fds);

    if (fds == NULL || len < 0 || (size_t)len >= sizeof req)
        return 1;
    signal(SIGTERM, on_term);
    for (long i = 0; i < n; i++) {
        fds[i] = dial_from(port, 1 + (unsigned)(i / HOLD_PER_SOURCE) % 254);
        if (fds[i] < 0 || !send_all(fds[i], req, (size_t)len) ||
            read_reply(fds[i], reply, sizeof reply) != 200) {
            fprintf(stderr, "bench_client: connection %ld failed\n", i + 1);
            return 1;
        }
    }
    printf("held %ld\n", n);
    fflush(stdout);
    while (!stop)
        pause();
    for (long i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One start: fork/exec, read the listening line for the port, poll /healthz until 200. */
static double start_once(char **argv)
{
    static char reply[REPLY_MAX];
    char line[4096], req[256];
    size_t have = 0;
    int pipefd[2], status = -1, len;
    long port = 0;
    pid_t pid;
    double t0 = now_ms(), t1 = -1;
    char *p;

    if (pipe(pipefd) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], STDOUT_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pipefd[1]);
    /* The settings line comes first and carries the configured port (0): wait for the
     * listening line, which carries the bound one. */
    line[0] = '\0';
    while (have < sizeof line - 1) {
        ssize_t n;

        p = strstr(line, "\"listening\"");
        if (p != NULL && strchr(p, '\n') != NULL)
            break;
        n = read(pipefd[0], line + have, sizeof line - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        line[have] = '\0';
    }
    p = strstr(line, "\"listening\"");
    p = p != NULL ? strstr(p, "\"port\":") : NULL;
    if (pid > 0 && p != NULL) {
        port = strtol(p + 7, NULL, 10);
        len = format_request(req, sizeof req, "GET", "/healthz", NULL);
        while (status != 200 && now_ms() - t0 < 5000) {
            int fd = dial((unsigned)port);

            if (fd >= 0) {
                status = send_all(fd, req, (size_t)len) ? read_reply(fd, reply, sizeof reply) : -1;
                close(fd);
            }
        }
        if (status == 200)
            t1 = now_ms();
    }
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    close(pipefd[0]);
    return t1 < 0 ? -1 : t1 - t0;
}

static int startup(long runs, char **argv)
{
    double times[64];

    for (long i = 0; i < runs; i++) {
        times[i] = start_once(argv);
        if (times[i] < 0) {
            fprintf(stderr, "bench_client: start %ld never answered /healthz\n", i + 1);
            return 1;
        }
        printf("start %ld: %.2f ms\n", i + 1, times[i]);
    }
    qsort(times, (size_t)runs, sizeof times[0], cmp_double);
    printf("median %.2f ms\n", times[runs / 2]);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_client repeat PORT N METHOD PATH [BODY]\n"
                    "       bench_client hold PORT N PATH\n"
                    "       bench_client startup RUNS PROGRAM ARGS...\n");
    return 2;
}

int main(int argc, char **argv)
{
    long port, n;

    if (argc >= 6 && strcmp(argv[1], "repeat") == 0 && parse_long(argv[2], 1, 65535, &port) &&
        parse_long(argv[3], 0, 100000000, &n))
        return repeat((unsigned)port, n, argv[4], argv[5], argc > 6 ? argv[6] : NULL);
    if (argc == 5 && strcmp(argv[1], "hold") == 0 && parse_long(argv[2], 1, 65535, &port) &&
        parse_long(argv[3], 1, 1000000, &n))
        return hold((unsigned)port, n, argv[4]);
    if (argc >= 4 && strcmp(argv[1], "startup") == 0 && parse_long(argv[2], 1, 64, &n))
        return startup(n, argv + 3);
    return usage();
}
