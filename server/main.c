/*
 * main.c - the memwall executable: which command runs, and the lifecycle of `memwall serve`.
 *
 * `memwall serve [--SETTING VALUE]...` takes its settings from config.c; the commands (flops,
 * memory, fit, runtime, plan) are the cli library's (cli/), which answers them without a
 * server. One binary serves both, so installing memwall installs its preflight too.
 *
 * Lifecycle, one log line each: "config" (the effective settings), "listening" (with the real
 * port: scripts and the contract tests read it when they pass --port 0), then on
 * SIGINT or SIGTERM "draining": /readyz turns 503, the listener stops accepting, and requests
 * already accepted finish within the shutdown grace; "stopped" says how long that took and
 * whether anything was cut off; exit 0. A second signal during the drain stops at once.
 * SIGINT/SIGTERM are blocked before the daemon's threads exist so that only the main thread,
 * in sigwait()/sigtimedwait(), ever receives them.
 */
#include <malloc.h> /* mallopt */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "server.h"

#define EXIT_USAGE 2
/* After the drain began, how long open connections may stay silent before they count as idle
 * keep-alives rather than requests on their way. */
#define DRAIN_QUIET_MS 100
/* Descriptors beyond the connections: listener, epoll and ITC per worker, logs, /proc reads. */
#define FD_HEADROOM 64

/* Raise the soft descriptor limit so max_connections can be reached (the default soft limit
 * is often 1024); returns the limit in force. */
static unsigned long long raise_fd_limit(const struct server_config *cfg)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)cfg->max_connections + 2 * (rlim_t)cfg->threads + FD_HEADROOM;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < want && rl.rlim_cur != RLIM_INFINITY) {
        rlim_t old = rl.rlim_cur;

        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = old;
    }
    return (unsigned long long)rl.rlim_cur;
}

static void log_config(const struct server_config *cfg, unsigned long long fd_limit)
{
    json_t *fields = server_config_json(cfg);

    if (fields != NULL)
        json_object_set_new(fields, "fd_limit", json_integer((json_int_t)fd_limit));
    server_log(cfg, SERVER_LOG_INFO, "config", fields);
    if (fd_limit < (unsigned long long)cfg->max_connections + FD_HEADROOM)
        server_log(cfg, SERVER_LOG_WARN, "fd_limit",
                   json_pack("{s:I, s:i, s:s}", "fd_limit", (json_int_t)fd_limit, "max_connections",
                             (int)cfg->max_connections, "message",
                             "the descriptor limit is below max_connections; raise ulimit -n"));
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : "SIGTERM";
}

/* Drain after sig: stop accepting, wait for accepted requests up to the grace (or a second
 * signal), stop. */
static void drain_and_stop(struct server *srv, const struct server_config *cfg,
                           const sigset_t *stop_signals, int sig)
{
    struct timespec t0;
    unsigned cut;
    unsigned long long aborted;
    bool hurried = false;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    server_log(cfg, SERVER_LOG_INFO, "draining",
               json_pack("{s:s, s:i, s:i}", "signal", signal_name(sig), "grace_s",
                         (int)cfg->shutdown_grace_s, "in_flight", (int)server_in_flight(srv)));
    server_drain(srv);
    while (!server_idle(srv, DRAIN_QUIET_MS)) {
        double left = (double)cfg->shutdown_grace_s - seconds_since(&t0);
        struct timespec tick = {0, 10000000L};

        if (left <= 0)
            break;
        if (left < 0.01)
            tick.tv_nsec = (long)(left * 1e9);
        if (sigtimedwait(stop_signals, NULL, &tick) > 0) {
            hurried = true;
            break;
        }
    }
    cut = server_in_flight(srv);
    aborted = server_aborted(srv);
    server_stop(srv);
    server_log(cfg, cut > 0 ? SERVER_LOG_WARN : SERVER_LOG_INFO, "stopped",
               json_pack("{s:s, s:s, s:f, s:i, s:I, s:b, s:b}", "signal", signal_name(sig),
                         "version", MEMWALL_VERSION, "shutdown_ms", seconds_since(&t0) * 1000.0,
                         "in_flight_cut", (int)cut, "aborted", (json_int_t)aborted, "drained",
                         cut == 0, "second_signal", hurried));
}

static int serve(int argc, char **argv)
{
    struct server_config cfg;
    struct server *srv;
    sigset_t stop_signals;
    char err[256];
    int status = server_config_parse(argc, argv, &cfg);
    unsigned long long fd_limit;
    int port;
    int sig;

    if (status >= 0)
        return status;
    /* No fastbins: a reply frees ~20 small blocks (libmicrohttpd copies each header name and
     * value), more of one size than glibc's per-thread cache keeps, and the rest went to the
     * fastbins, which the next large request (the 4 KiB reply writer) then consolidated: ~400
     * instructions per GET /fit (docs/performance.md, fourth round). Small blocks still go to
     * the per-thread cache first. */
    mallopt(M_MXFAST, 0);
    fd_limit = raise_fd_limit(&cfg);

    /* Block before the daemon starts so its threads inherit the mask; a dead client must
     * not kill the process either. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* Before the daemon starts, so it is always the first line and no request line can
     * come before it. */
    log_config(&cfg, fd_limit);
    port = server_start(&cfg, &srv, err, sizeof err);
    if (port < 0) {
        struct server_config to_stderr = cfg;

        to_stderr.log_fd = STDERR_FILENO;
        server_log(&to_stderr, SERVER_LOG_ERROR, "start_failed",
                   json_pack("{s:s}", "message", err));
        return EXIT_FAILURE;
    }
    server_log(&cfg, SERVER_LOG_INFO, "listening",
               json_pack("{s:s, s:i, s:i, s:s, s:i}", "bind", cfg.bind, "port", port, "threads",
                         (int)cfg.threads, "version", MEMWALL_VERSION, "pid", (int)getpid()));

    do {
        if (sigwait(&stop_signals, &sig) != 0)
            sig = SIGTERM;
    } while (sig != SIGINT && sig != SIGTERM);

    drain_and_stop(srv, &cfg, &stop_signals, sig);
    return EXIT_SUCCESS;
}

static void usage(FILE *to)
{
    fprintf(
        to,
        "usage: memwall serve [--SETTING VALUE]...\n"
        "       memwall flops|memory|fit|runtime|plan|inference [--NAME VALUE]... [--json] [FILE]\n"
        "       memwall --help | --version\n"
        "\n"
        "memwall prices a Transformer training run over HTTP: FLOPs, per-GPU memory,\n"
        "fit against a GPU and wall-clock. 'memwall serve --help' lists the settings.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("memwall %s\n", MEMWALL_VERSION);
        return EXIT_SUCCESS;
    }
    if (strcmp(argv[1], "serve") == 0)
        return serve(argc - 2, argv + 2);
    if (cli_is_command(argv[1])) /* flops, memory, fit, runtime, plan */
        return cli_main(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        fprintf(stderr, "memwall: unknown option '%s' (see 'memwall --help')\n", argv[1]);
    else
        fprintf(stderr, "memwall: unknown command '%s' (see 'memwall --help')\n", argv[1]);
    return EXIT_USAGE;
}
