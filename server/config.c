/*
 * config.c - the settings table of `memwall serve` and everything derived from it.
 *
 * A setting is declared once, in settings[]: its flag, environment variable, key in the
 * "config" log line, default, kind, bounds, unit and a sentence of documentation. From that
 * row come the parser and its validation, the error message ("expected an integer 1..3600"),
 * the flag's placeholder in --help (N, SECONDS, json|text), the help text and the environment
 * fallback. A bad flag or value exits 2 naming it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "cli.h"
#include "config.h"

#define EXIT_USAGE 2

/* How a setting's text becomes a config field. */
enum kind {
    K_ADDR,    /* numeric IPv4/IPv6 address, const char * */
    K_UINT,    /* unsigned in lo..hi */
    K_SIZE,    /* size_t in lo..hi */
    K_THREADS, /* unsigned in lo..hi, or "auto" for the number of CPUs */
    K_ORIGINS, /* "*" or a comma list of http(s) origins, const char * */
    K_FORMAT,  /* enum server_log_format, by format_names */
    K_LEVEL,   /* enum server_log_level, by level_names */
    K_SWITCH,  /* bool, by switches */
};

/* The unit of a number, said in --help; time units also name the flag's placeholder. */
enum unit { U_NONE, U_BYTES, U_SECONDS, U_MS };
static const char *const unit_names[] = {"", "bytes", "seconds", "milliseconds"};
static const char *const unit_metavars[] = {"N", "N", "SECONDS", "MS"};

struct setting {
    const char *flag;
    const char *env;
    const char *key; /* name in the "config" log line */
    const char *def; /* default, parsed like a given value */
    enum kind kind;
    unsigned long lo, hi; /* bounds of a number */
    enum unit unit;
    const char *doc;
    size_t offset; /* of the field in struct server_config */
};

#define AT(field) offsetof(struct server_config, field)

/* Connection limits: 4096 in all holds the 1500 idle connections and 300 slow clients of a
 * flood test with room for real traffic (the header pool is only filled by a client that sends
 * that much). One address may hold at most a quarter of that, 1024: a single abusive client
 * cannot take every slot, while a sidecar's clients (all 127.0.0.1) or a load balancer's few
 * addresses are nowhere near it. 0 lifts the per-address limit. */
static const struct setting settings[] = {
    {"--bind", "MEMWALL_BIND", "bind", "127.0.0.1", K_ADDR, 0, 0, U_NONE, "address to listen on",
     AT(bind)},
    {"--port", "MEMWALL_PORT", "port", "8080", K_UINT, 0, 65535, U_NONE,
     "TCP port, 0 for an ephemeral one", AT(port)},
    {"--threads", "MEMWALL_THREADS", "threads", "auto", K_THREADS, 1, SERVER_THREADS_MAX, U_NONE,
     "worker threads; auto = number of CPUs", AT(threads)},
    {"--max-body-bytes", "MEMWALL_MAX_BODY_BYTES", "max_body_bytes", "65536", K_SIZE, 1,
     API_BODY_MAX, U_BYTES, "largest request body accepted; 413 beyond", AT(max_body_bytes)},
    {"--max-uri-bytes", "MEMWALL_MAX_URI_BYTES", "max_uri_bytes", "8192", K_SIZE, 64,
     SERVER_URI_CEILING, U_BYTES,
     "longest request target, path and query; 414 beyond, also over 64 query parameters; "
     "each connection's header memory is this + 8 KiB",
     AT(max_uri_bytes)},
    {"--connection-timeout", "MEMWALL_CONNECTION_TIMEOUT", "connection_timeout_s", "30", K_UINT, 1,
     3600, U_SECONDS, "drop a connection idle or stalled this long", AT(timeout_s)},
    {"--max-connections", "MEMWALL_MAX_CONNECTIONS", "max_connections", "4096", K_UINT, 1, 1000000,
     U_NONE, "open connections in all; more are refused", AT(max_connections)},
    {"--max-connections-per-ip", "MEMWALL_MAX_CONNECTIONS_PER_IP", "max_connections_per_ip", "1024",
     K_UINT, 0, 1000000, U_NONE, "open connections per client address; 0 = no limit",
     AT(max_per_ip)},
    {"--cors-origins", "MEMWALL_CORS_ORIGINS", "cors_origins", "*", K_ORIGINS, 0, 0, U_NONE,
     "origins allowed to read replies", AT(cors_origins)},
    {"--log-format", "MEMWALL_LOG_FORMAT", "log_format", "json", K_FORMAT, 0, 0, U_NONE,
     "log line format", AT(log_format)},
    {"--log-level", "MEMWALL_LOG_LEVEL", "log_level", "info", K_LEVEL, 0, 0, U_NONE,
     "least severe level logged", AT(log_level)},
    {"--access-log", "MEMWALL_ACCESS_LOG", "access_log", "on", K_SWITCH, 0, 0, U_NONE,
     "one log line per request", AT(access_log)},
    {"--access-log-flush-ms", "MEMWALL_ACCESS_LOG_FLUSH_MS", "access_log_flush_ms", "100", K_UINT,
     0, 10000, U_MS,
     "JSON request lines are written in batches at least this often; 0 = each line at once",
     AT(access_log_flush_ms)},
    {"--shutdown-grace", "MEMWALL_SHUTDOWN_GRACE", "shutdown_grace_s", "10", K_UINT, 0, 3600,
     U_SECONDS, "on SIGTERM/SIGINT, how long accepted requests may take to finish",
     AT(shutdown_grace_s)},
};

enum { N_SETTINGS = sizeof settings / sizeof settings[0] };

/* The names of the choice kinds, in the order of their enums. */
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

/* The effective value of a setting as JSON. New reference. */
static json_t *value_json(const struct setting *s, const struct server_config *cfg)
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

json_t *server_config_json(const struct server_config *cfg)
{
    json_t *fields = json_object();

    for (size_t i = 0; fields != NULL && i < N_SETTINGS; i++)
        json_object_set_new(fields, settings[i].key, value_json(&settings[i], cfg));
    return fields;
}

/* ---------------------------------------------------------------------------------------------
 * What a setting accepts, in words: derived from its kind, bounds and names
 * ------------------------------------------------------------------------------------------- */

/* names joined as "a, b or c" (sep ", " and last " or "), or as "a|b|c" (both "|"). */
static void join(char *buf, size_t size, const char *const *names, size_t n, size_t stride,
                 const char *sep, const char *last)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++) {
        const char *name = *(const char *const *)((const char *)names + i * stride);
        int w = snprintf(buf + len, size - len, "%s%s",
                         i == 0       ? ""
                         : i + 1 == n ? last
                                      : sep,
                         name);

        len += w > 0 ? (size_t)w : 0;
    }
}

#define NAMES(a) (const char *const *)(a), sizeof(a) / sizeof(a)[0], sizeof(a)[0]

/* The values accepted, e.g. "an integer 1..256 or auto", "json or text". */
static void expected(const struct setting *s, char *buf, size_t size)
{
    switch (s->kind) {
    case K_ADDR:
        snprintf(buf, size, "a numeric IPv4 or IPv6 address");
        return;
    case K_UINT:
    case K_SIZE:
    case K_THREADS:
        snprintf(buf, size, "an integer %lu..%lu%s", s->lo, s->hi,
                 s->kind == K_THREADS ? " or auto" : "");
        return;
    case K_ORIGINS:
        snprintf(buf, size, "* or a comma-separated list of http(s)://host[:port] origins");
        return;
    case K_FORMAT:
        join(buf, size, NAMES(format_names), ", ", " or ");
        return;
    case K_LEVEL:
        join(buf, size, NAMES(level_names), ", ", " or ");
        return;
    case K_SWITCH:
        join(buf, size, NAMES(switches), ", ", " or ");
        return;
    }
    buf[0] = '\0';
}

/* The flag's placeholder in --help: "ADDR", "N", "SECONDS", "json|text", ... */
static void metavar(const struct setting *s, char *buf, size_t size)
{
    switch (s->kind) {
    case K_ADDR:
        snprintf(buf, size, "ADDR");
        return;
    case K_ORIGINS:
        snprintf(buf, size, "LIST");
        return;
    case K_FORMAT:
        join(buf, size, NAMES(format_names), "|", "|");
        return;
    case K_LEVEL:
        join(buf, size, NAMES(level_names), "|", "|");
        return;
    case K_SWITCH: /* the first two spellings say it */
        join(buf, size, (const char *const *)switches, 2, sizeof switches[0], "|", "|");
        return;
    case K_UINT:
    case K_SIZE:
    case K_THREADS:
        break;
    }
    snprintf(buf, size, "%s", unit_metavars[s->unit]);
}

void server_config_help(FILE *to)
{
    fprintf(to, "usage: memwall serve [--SETTING VALUE]...\n\n"
                "Serve the memwall HTTP API until SIGINT or SIGTERM. Each setting is a flag\n"
                "(--name VALUE or --name=VALUE) or an environment variable; the flag wins.\n\n");
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const struct setting *s = &settings[i];
        char meta[64], name[96], accepts[128];

        metavar(s, meta, sizeof meta);
        expected(s, accepts, sizeof accepts);
        snprintf(name, sizeof name, "%s %s", s->flag, meta);
        fprintf(to, "  %-34s env %-31s default %s\n      %s (%s%s%s)\n", name, s->env, s->def,
                s->doc, unit_names[s->unit], s->unit != U_NONE ? ", " : "", accepts);
    }
    fprintf(to, "  %-34s show this help\n\n", "--help");
    fprintf(to, "On start two JSON lines go to stdout: {\"event\":\"config\",...} with every\n"
                "effective setting, then {\"event\":\"listening\",\"port\":N,...}.\n");
}

/* ---------------------------------------------------------------------------------------------
 * Flags and the environment
 * ------------------------------------------------------------------------------------------- */

static bool apply(const struct setting *s, const char *text, const char *source,
                  struct server_config *cfg)
{
    char accepts[128];

    if (parse_setting(s, text, cfg))
        return true;
    expected(s, accepts, sizeof accepts);
    fprintf(stderr, "memwall: invalid value '%s' for %s (expected %s)\n", text, source, accepts);
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

int server_config_parse(int argc, char **argv, struct server_config *cfg)
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
            server_config_help(stdout);
            return 0;
        }
        s = find_setting(arg, eq ? (size_t)(eq - arg) : strlen(arg));
        if (s == NULL) {
            fprintf(stderr, "memwall: unknown option '%s' (see 'memwall serve --help')\n", arg);
            return EXIT_USAGE;
        }
        value = cli_option_value(argc, argv, &i);
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
