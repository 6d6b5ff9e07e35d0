/*
 * main.c - the memwall executable: command line, environment, signals, log lines.
 *
 * memwall serve [--bind ADDR] [--port N] [--threads N]; every setting also comes from an
 * environment variable (MEMWALL_BIND, MEMWALL_PORT, MEMWALL_THREADS) and a flag beats the
 * environment, which beats the default. One table drives parsing, validation and --help so
 * they cannot disagree. A bad flag or value exits 2 naming it. On start one JSON line
 * ("event":"listening", with the real port) goes to stdout, which scripts and the contract
 * tests read when they pass --port 0; SIGINT or SIGTERM stops the daemon, logs "stopped" and
 * exits 0. SIGINT/SIGTERM are blocked before the daemon's threads exist so that only the main
 * thread, in sigwait(), ever receives them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "server.h"

#define EXIT_USAGE 2

struct setting {
    const char *flag;
    const char *env;
    const char *metavar;
    const char *help;
    /* Store text into cfg; false when it is not a valid value. */
    bool (*parse)(const char *text, struct server_config *cfg);
    const char *expected; /* said in the error when parse fails */
};

static bool parse_bind(const char *text, struct server_config *cfg);
static bool parse_port(const char *text, struct server_config *cfg);
static bool parse_threads(const char *text, struct server_config *cfg);

static const struct setting settings[] = {
    {"--bind", "MEMWALL_BIND", "ADDR",
     "numeric IPv4 or IPv6 address to listen on (default 127.0.0.1)", parse_bind,
     "a numeric IPv4 or IPv6 address"},
    {"--port", "MEMWALL_PORT", "N", "TCP port, 0 for an ephemeral one (default 8080)", parse_port,
     "an integer 0..65535"},
    {"--threads", "MEMWALL_THREADS", "N", "worker threads, 1..256 (default: number of CPUs)",
     parse_threads, "an integer 1..256"},
};

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

/* A decimal integer in lo..hi and nothing else (no sign, no spaces, no suffix). */
static bool parse_uint(const char *text, unsigned long lo, unsigned long hi, unsigned *out)
{
    char *end;
    unsigned long v;

    if (text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_bind(const char *text, struct server_config *cfg)
{
    struct in6_addr buf;

    if (inet_pton(AF_INET, text, &buf) != 1 && inet_pton(AF_INET6, text, &buf) != 1)
        return false;
    cfg->bind = text;
    return true;
}

static bool parse_port(const char *text, struct server_config *cfg)
{
    return parse_uint(text, 0, 65535, &cfg->port);
}

static bool parse_threads(const char *text, struct server_config *cfg)
{
    return parse_uint(text, 1, SERVER_THREADS_MAX, &cfg->threads);
}

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (n < 1)
        return 1;
    return n > SERVER_THREADS_MAX ? SERVER_THREADS_MAX : (unsigned)n;
}

/* ---------------------------------------------------------------------------------------------
 * Help
 * ------------------------------------------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to, "usage: memwall serve [--bind ADDR] [--port N] [--threads N]\n"
                "       memwall flops|memory|fit|runtime|plan [--NAME VALUE]... [--json] [FILE]\n"
                "       memwall --help | --version\n"
                "\n"
                "memwall prices a Transformer training run over HTTP: FLOPs, per-GPU memory,\n"
                "fit against a GPU and wall-clock. 'memwall serve --help' lists the settings.\n");
}

static void serve_usage(FILE *to)
{
    fprintf(to, "usage: memwall serve [--bind ADDR] [--port N] [--threads N]\n\n"
                "Serve the memwall HTTP API until SIGINT or SIGTERM. Each setting is a flag or\n"
                "an environment variable; the flag wins.\n\n");
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const struct setting *s = &settings[i];
        char name[32];

        snprintf(name, sizeof name, "%s %s", s->flag, s->metavar);
        fprintf(to, "  %-13s  env %-16s %s\n", name, s->env, s->help);
    }
    fprintf(to, "  %-13s  %s\n\n", "--help", "show this help");
    fprintf(
        to,
        "On start one JSON line {\"event\":\"listening\",\"port\":N,...} is printed on stdout.\n");
}

/* ---------------------------------------------------------------------------------------------
 * Log lines
 * ------------------------------------------------------------------------------------------- */

static void now_rfc3339(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    char secs[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(secs, sizeof secs, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03ldZ", secs, ts.tv_nsec / 1000000L);
}

/* Print one JSON log line: time, level, event, then fields (stolen; may be NULL). */
static void log_line(FILE *to, const char *level, const char *event, json_t *fields)
{
    char when[64];
    json_t *line;
    char *text;

    now_rfc3339(when, sizeof when);
    line = json_pack("{s:s, s:s, s:s}", "time", when, "level", level, "event", event);
    if (line != NULL && fields != NULL)
        json_object_update(line, fields);
    json_decref(fields);
    text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    if (text != NULL) {
        fprintf(to, "%s\n", text);
        fflush(to);
    }
    free(text);
    json_decref(line);
}

/* ---------------------------------------------------------------------------------------------
 * serve
 * ------------------------------------------------------------------------------------------- */

static bool apply(const struct setting *s, const char *text, const char *source,
                  struct server_config *cfg)
{
    if (s->parse(text, cfg))
        return true;
    fprintf(stderr, "memwall: invalid value '%s' for %s (expected %s)\n", text, source,
            s->expected);
    return false;
}

static const struct setting *find_setting(const char *arg, size_t len)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        if (strlen(settings[i].flag) == len && strncmp(arg, settings[i].flag, len) == 0)
            return &settings[i];
    }
    return NULL;
}

/* Fill cfg from the defaults, the environment and argv; a flag beats its variable, so a
 * variable is only read (and checked) for settings no flag gave. Returns -1 to go on, else the
 * exit status (0 after --help, EXIT_USAGE after an error, already reported). */
static int configure(int argc, char **argv, struct server_config *cfg)
{
    enum { N_SETTINGS = sizeof settings / sizeof settings[0] };
    bool given[N_SETTINGS] = {false};

    cfg->bind = "127.0.0.1";
    cfg->port = 8080;
    cfg->threads = default_threads();
    cfg->cors_origin = "*";

    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        const struct setting *s;
        const char *value;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            serve_usage(stdout);
            return 0;
        }
        s = find_setting(arg, eq ? (size_t)(eq - arg) : strlen(arg));
        if (s == NULL) {
            fprintf(stderr, "memwall: unknown option '%s' (see 'memwall serve --help')\n", arg);
            return EXIT_USAGE;
        }
        if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            fprintf(stderr, "memwall: option '%s' needs a value\n", arg);
            return EXIT_USAGE;
        }
        if (!apply(s, value, s->flag, cfg))
            return EXIT_USAGE;
        given[s - settings] = true;
    }
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const char *v = given[i] ? NULL : getenv(settings[i].env);

        if (v != NULL && !apply(&settings[i], v, settings[i].env, cfg))
            return EXIT_USAGE;
    }
    return -1;
}

static int serve(int argc, char **argv)
{
    struct server_config cfg;
    struct server *srv;
    sigset_t stop_signals;
    char err[256];
    int status = configure(argc, argv, &cfg);
    int port;
    int sig;

    if (status >= 0)
        return status;

    /* Block before the daemon starts so its threads inherit the mask; a dead client must
     * not kill the process either. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    port = server_start(&cfg, &srv, err, sizeof err);
    if (port < 0) {
        log_line(stderr, "error", "start_failed", json_pack("{s:s}", "message", err));
        return EXIT_FAILURE;
    }
    log_line(stdout, "info", "listening",
             json_pack("{s:s, s:i, s:i, s:s}", "bind", cfg.bind, "port", port, "threads",
                       (int)cfg.threads, "version", MEMWALL_VERSION));

    do {
        if (sigwait(&stop_signals, &sig) != 0)
            sig = SIGTERM;
    } while (sig != SIGINT && sig != SIGTERM);

    server_stop(srv);
    log_line(stdout, "info", "stopped",
             json_pack("{s:s, s:s}", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", "version",
                       MEMWALL_VERSION));
    return EXIT_SUCCESS;
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
    if (server_cli_is_command(argv[1])) /* flops, memory, fit, runtime, plan: cli.c */
        return server_cli(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        fprintf(stderr, "memwall: unknown option '%s' (see 'memwall --help')\n", argv[1]);
    else
        fprintf(stderr, "memwall: unknown command '%s' (see 'memwall --help')\n", argv[1]);
    return EXIT_USAGE;
}
