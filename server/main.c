/*
 * main.c - the memwall executable: command line, environment, signals, lifecycle log lines.
 *
 * memwall serve [--SETTING VALUE]...: every setting is a flag and an environment variable
 * (MEMWALL_*); a flag beats the environment, which beats the default. One table drives
 * parsing, validation, the defaults (each default is parsed like a given value), the
 * "config" log line and --help, so they cannot disagree. A bad flag or value exits 2 naming it.
 *
 * Lifecycle, one log line each: "config" (the effective settings), "listening" (with the real
 * port: scripts and the contract tests read it when they pass --port 0), then on
 * SIGINT or SIGTERM "draining": /readyz turns 503, the listener stops accepting, and requests
 * already accepted finish within the shutdown grace; "stopped" says how long that took and
 * whether anything was cut off; exit 0. A second signal during the drain stops at once.
 * SIGINT/SIGTERM are blocked before the daemon's threads exist so that only the main thread,
 * in sigwait()/sigtimedwait(), ever receives them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "api.h"
#include "cli.h"
#include "log.h"
#include "server.h"

#define EXIT_USAGE 2
/* After the drain began, how long open connections may stay silent before they count as idle
 * keep-alives rather than requests on their way. */
#define DRAIN_QUIET_MS 100
/* Descriptors beyond the connections: listener, epoll and ITC per worker, logs, /proc reads. */
#define FD_HEADROOM 64

/* How a setting's text becomes a config field. */
enum kind {
    K_ADDR,    /* numeric IPv4/IPv6 address, const char * */
    K_UINT,    /* unsigned in lo..hi */
    K_SIZE,    /* size_t in lo..hi */
    K_THREADS, /* unsigned in lo..hi, or "auto" for the number of CPUs */
    K_ORIGINS, /* "*" or a comma list of http(s) origins, const char * */
    K_FORMAT,  /* enum server_log_format */
    K_LEVEL,   /* enum server_log_level */
    K_SWITCH,  /* bool: on/off, true/false, yes/no, 1/0 */
};

struct setting {
    const char *flag;
    const char *env;
    const char *key; /* name in the "config" log line */
    const char *metavar;
    const char *def; /* default, parsed like a given value */
    const char *help;
    enum kind kind;
    size_t offset; /* of the field in struct server_config */
    unsigned long lo, hi;
    const char *expected; /* said in the error when the value is refused */
};

#define AT(field) offsetof(struct server_config, field)

/* Connection limits: 4096 in all holds the 1500 idle connections and 300 slow clients of a
 * flood test with room for real traffic (the header pool is only filled by a client that sends
 * that much). One address may hold at most a quarter of that, 1024: a single abusive client
 * cannot take every slot, while a sidecar's clients (all 127.0.0.1) or a load balancer's few
 * addresses are nowhere near it. 0 lifts the per-address limit. */
static const struct setting settings[] = {
    {"--bind", "MEMWALL_BIND", "bind", "ADDR", "127.0.0.1",
     "numeric IPv4 or IPv6 address to listen on", K_ADDR, AT(bind), 0, 0,
     "a numeric IPv4 or IPv6 address"},
    {"--port", "MEMWALL_PORT", "port", "N", "8080", "TCP port, 0 for an ephemeral one", K_UINT,
     AT(port), 0, 65535, "an integer 0..65535"},
    {"--threads", "MEMWALL_THREADS", "threads", "N", "auto",
     "worker threads, 1..256; auto = number of CPUs", K_THREADS, AT(threads), 1, SERVER_THREADS_MAX,
     "an integer 1..256 or auto"},
    {"--max-body-bytes", "MEMWALL_MAX_BODY_BYTES", "max_body_bytes", "N", "65536",
     "largest request body accepted (413 beyond); at most 65536", K_SIZE, AT(max_body_bytes), 1,
     API_BODY_MAX, "an integer 1..65536"},
    {"--max-uri-bytes", "MEMWALL_MAX_URI_BYTES", "max_uri_bytes", "N", "8192",
     "longest request target, path and query (414 beyond); + 8 KiB = header memory per connection",
     K_SIZE, AT(max_uri_bytes), 64, SERVER_URI_CEILING, "an integer 64..16384"},
    {"--connection-timeout", "MEMWALL_CONNECTION_TIMEOUT", "connection_timeout_s", "SECONDS", "30",
     "drop a connection idle or stalled this long", K_UINT, AT(timeout_s), 1, 3600,
     "an integer 1..3600"},
    {"--max-connections", "MEMWALL_MAX_CONNECTIONS", "max_connections", "N", "4096",
     "open connections in all; more are refused", K_UINT, AT(max_connections), 1, 1000000,
     "an integer 1..1000000"},
    {"--max-connections-per-ip", "MEMWALL_MAX_CONNECTIONS_PER_IP", "max_connections_per_ip", "N",
     "1024", "open connections per client address; 0 = no limit", K_UINT, AT(max_per_ip), 0,
     1000000, "an integer 0..1000000"},
    {"--cors-origins", "MEMWALL_CORS_ORIGINS", "cors_origins", "LIST", "*",
     "origins allowed to read replies: * or a comma list of http(s)://host[:port]", K_ORIGINS,
     AT(cors_origins), 0, 0, "* or a comma-separated list of http(s)://host[:port] origins"},
    {"--log-format", "MEMWALL_LOG_FORMAT", "log_format", "FORMAT", "json",
     "log line format: json or text", K_FORMAT, AT(log_format), 0, 0, "json or text"},
    {"--log-level", "MEMWALL_LOG_LEVEL", "log_level", "LEVEL", "info",
     "least severe level logged: debug, info, warn or error", K_LEVEL, AT(log_level), 0, 0,
     "debug, info, warn or error"},
    {"--access-log", "MEMWALL_ACCESS_LOG", "access_log", "on|off", "on", "one log line per request",
     K_SWITCH, AT(access_log), 0, 0, "on, off, true, false, 1 or 0"},
    {"--access-log-flush-ms", "MEMWALL_ACCESS_LOG_FLUSH_MS", "access_log_flush_ms", "MS", "100",
     "JSON request lines are written in batches at least this often; 0 = each line at once", K_UINT,
     AT(access_log_flush_ms), 0, 10000, "an integer 0..10000"},
    {"--shutdown-grace", "MEMWALL_SHUTDOWN_GRACE", "shutdown_grace_s", "SECONDS", "10",
     "on SIGTERM/SIGINT, how long accepted requests may take to finish", K_UINT,
     AT(shutdown_grace_s), 0, 3600, "an integer 0..3600"},
};

enum { N_SETTINGS = sizeof settings / sizeof settings[0] };

static const char *const format_names[] = {"json", "text"};
static const char *const level_names[] = {"debug", "info", "warn", "error"};
static const struct {
    const char *text;
    bool value;
} switches[] = {{"on", true},  {"off", false}, {"true", true}, {"false", false},
                {"yes", true}, {"no", false},  {"1", true},    {"0", false}};

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

/* A decimal integer in lo..hi and nothing else (no sign, no spaces, no suffix). */
static bool parse_ulong(const char *text, unsigned long lo, unsigned long hi, unsigned long *out)
{
    char *end;
    unsigned long v;

    if (text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int name_index(const char *text, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(text, names[i]) == 0)
            return (int)i;
    }
    return -1;
}

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (n < 1)
        return 1;
    return n > SERVER_THREADS_MAX ? SERVER_THREADS_MAX : (unsigned)n;
}

/* One origin as browsers send it: http or https, a host of letters, digits, dots, dashes (or a
 * bracketed IPv6 address), an optional port, no path and no trailing slash. */
static bool origin_ok(const char *s, size_t len)
{
    size_t scheme = strncmp(s, "https://", 8) == 0 ? 8 : strncmp(s, "http://", 7) == 0 ? 7 : 0;

    if (scheme == 0 || len <= scheme)
        return false;
    for (size_t i = scheme; i < len; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
            return false;
    }
    return true;
}

static bool origins_ok(const char *text)
{
    if (strcmp(text, "*") == 0)
        return true;
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");

        if (!origin_ok(p, len))
            return false;
        p += len;
        if (*p == '\0')
            return true;
    }
}

/* Store text into the setting's field of cfg; false when it is not a valid value. */
static bool parse_setting(const struct setting *s, const char *text, struct server_config *cfg)
{
    void *field = (char *)cfg + s->offset;
    unsigned long v;
    int i;

    switch (s->kind) {
    case K_ADDR: {
        struct in6_addr buf;

        if (inet_pton(AF_INET, text, &buf) != 1 && inet_pton(AF_INET6, text, &buf) != 1)
            return false;
        *(const char **)field = text;
        return true;
    }
    case K_THREADS:
        if (strcmp(text, "auto") == 0) {
            *(unsigned *)field = default_threads();
            return true;
        }
        /* fall through */
    case K_UINT:
        if (!parse_ulong(text, s->lo, s->hi, &v))
            return false;
        *(unsigned *)field = (unsigned)v;
        return true;
    case K_SIZE:
        if (!parse_ulong(text, s->lo, s->hi, &v))
            return false;
        *(size_t *)field = (size_t)v;
        return true;
    case K_ORIGINS:
        if (!origins_ok(text))
            return false;
        *(const char **)field = text;
        return true;
    case K_FORMAT:
        i = name_index(text, format_names, sizeof format_names / sizeof format_names[0]);
        if (i < 0)
            return false;
        *(enum server_log_format *)field = (enum server_log_format)i;
        return true;
    case K_LEVEL:
        i = name_index(text, level_names, sizeof level_names / sizeof level_names[0]);
        if (i < 0)
            return false;
        *(enum server_log_level *)field = (enum server_log_level)i;
        return true;
    case K_SWITCH:
        for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++) {
            if (strcmp(text, switches[k].text) == 0) {
                *(bool *)field = switches[k].value;
                return true;
            }
        }
        return false;
    }
    return false;
}

/* The effective value of a setting as JSON, for the "config" line. New reference. */
static json_t *show_setting(const struct setting *s, const struct server_config *cfg)
{
    const void *field = (const char *)cfg + s->offset;

    switch (s->kind) {
    case K_ADDR:
    case K_ORIGINS:
        return json_string(*(const char *const *)field);
    case K_UINT:
    case K_THREADS:
        return json_integer(*(const unsigned *)field);
    case K_SIZE:
        return json_integer((json_int_t) * (const size_t *)field);
    case K_FORMAT:
        return json_string(format_names[*(const enum server_log_format *)field]);
    case K_LEVEL:
        return json_string(level_names[*(const enum server_log_level *)field]);
    case K_SWITCH:
        return json_boolean(*(const bool *)field);
    }
    return json_null();
}

/* ---------------------------------------------------------------------------------------------
 * Help
 * ------------------------------------------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to, "usage: memwall serve [--SETTING VALUE]...\n"
                "       memwall flops|memory|fit|runtime|plan [--NAME VALUE]... [--json] [FILE]\n"
                "       memwall --help | --version\n"
                "\n"
                "memwall prices a Transformer training run over HTTP: FLOPs, per-GPU memory,\n"
                "fit against a GPU and wall-clock. 'memwall serve --help' lists the settings.\n");
}

static void serve_usage(FILE *to)
{
    fprintf(to, "usage: memwall serve [--SETTING VALUE]...\n\n"
                "Serve the memwall HTTP API until SIGINT or SIGTERM. Each setting is a flag\n"
                "(--name VALUE or --name=VALUE) or an environment variable; the flag wins.\n\n");
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const struct setting *s = &settings[i];
        char name[48];

        snprintf(name, sizeof name, "%s %s", s->flag, s->metavar);
        fprintf(to, "  %-32s env %-31s default %s\n      %s\n", name, s->env, s->def, s->help);
    }
    fprintf(to, "  %-32s show this help\n\n", "--help");
    fprintf(to, "On start two JSON lines go to stdout: {\"event\":\"config\",...} with every\n"
                "effective setting, then {\"event\":\"listening\",\"port\":N,...}.\n");
}

/* ---------------------------------------------------------------------------------------------
 * serve
 * ------------------------------------------------------------------------------------------- */

static bool apply(const struct setting *s, const char *text, const char *source,
                  struct server_config *cfg)
{
    if (parse_setting(s, text, cfg))
        return true;
    fprintf(stderr, "memwall: invalid value '%s' for %s (expected %s)\n", text, source,
            s->expected);
    return false;
}

static const struct setting *find_setting(const char *arg, size_t len)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
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
    bool given[N_SETTINGS] = {false};

    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < N_SETTINGS; i++) {
        if (!parse_setting(&settings[i], settings[i].def, cfg))
            abort(); /* a default the table itself refuses is a bug */
    }
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
        value = server_cli_option_value(argc, argv, &i);
        if (value == NULL)
            return EXIT_USAGE;
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
    json_t *fields = json_object();

    for (size_t i = 0; fields != NULL && i < N_SETTINGS; i++)
        json_object_set_new(fields, settings[i].key, show_setting(&settings[i], cfg));
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
    int status = configure(argc, argv, &cfg);
    unsigned long long fd_limit;
    int port;
    int sig;

    if (status >= 0)
        return status;
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
