/*
 * metrics.c - the tables behind /metrics and its text exposition (see metrics.h).
 *
 * Prometheus text format 0.0.4: a HELP and a TYPE line per family, then `name{labels} value`
 * lines. Request counters are printed only for combinations seen at least once (a counter that
 * appears at its first increment is what Prometheus expects), histograms for every route. The
 * process_* families follow the conventions of the official client libraries and are read
 * from /proc at scrape time, except the start time, which cannot change.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "api.h"
#include "internal.h"
#include "metrics.h"

/* Route templates, taken once from the route tables themselves (the server's own, then the
 * api's), so a new route is labelled without a second list to keep in step; "unmatched" last.
 * Filled before any daemon thread runs (pthread_once), read-only afterwards. */
static const char *route_names[SERVER_METRICS_ROUTES];
static size_t route_lens[SERVER_METRICS_ROUTES]; /* strlen of each: most lookups stop at it */
static unsigned route_count;                     /* named routes, "unmatched" excluded */
static pthread_once_t routes_once = PTHREAD_ONCE_INIT;

static void collect_routes(void)
{
    const char *path;

    for (size_t i = 0; (path = server_route_path(i)) != NULL; i++)
        if (route_count + 1 < SERVER_METRICS_ROUTES)
            route_names[route_count++] = path;
    for (size_t i = 0; (path = api_route_path(i)) != NULL; i++)
        if (route_count + 1 < SERVER_METRICS_ROUTES)
            route_names[route_count++] = path;
    route_names[route_count] = "unmatched";
    for (unsigned i = 0; i < route_count; i++)
        route_lens[i] = strlen(route_names[i]);
}

static const char *const method_names[SERVER_METRICS_METHODS] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other",
};

/* The statuses memwall sends (api.md, errors.def, the server's own refusals); anything else
 * falls into its class, the last five entries. */
static const unsigned codes[SERVER_METRICS_CODES - 5] = {200, 204, 304, 400, 404, 405,
                                                         413, 414, 415, 422, 500, 503};
static const char *const code_classes[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

/* Upper bounds in nanoseconds and as printed; memwall answers in microseconds, so the finest
 * buckets matter and anything past 5 s is already an incident. */
static const unsigned long long bounds_ns[SERVER_METRICS_BUCKETS] = {
    500000ULL,     1000000ULL,    2500000ULL,   5000000ULL,   10000000ULL,
    25000000ULL,   50000000ULL,   100000000ULL, 250000000ULL, 500000000ULL,
    1000000000ULL, 2500000000ULL, 5000000000ULL};
static const char *const bounds_text[SERVER_METRICS_BUCKETS] = {
    "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
    "0.1",    "0.25",  "0.5",    "1",     "2.5",  "5"};

/* ---------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------- */

/* Runs for every request: a length compared first spares a strcmp call per template. */
unsigned server_metrics_route(const char *path)
{
    size_t n = strlen(path);

    for (unsigned i = 0; i < route_count; i++) {
        if (route_lens[i] == n && memcmp(path, route_names[i], n) == 0)
            return i;
    }
    return route_count;
}

const char *server_metrics_route_name(unsigned route)
{
    return route_names[route < route_count ? route : route_count];
}

unsigned server_metrics_method(const char *method)
{
    for (unsigned i = 0; i + 1 < SERVER_METRICS_METHODS; i++) {
        if (strcmp(method, method_names[i]) == 0)
            return i;
    }
    return SERVER_METRICS_METHODS - 1;
}

static unsigned code_index(unsigned status)
{
    for (unsigned i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (codes[i] == status)
            return i;
    }
    if (status < 100 || status > 599)
        status = 500; /* cannot happen; keep the index in range anyway */
    return (unsigned)(sizeof codes / sizeof codes[0]) + status / 100 - 1;
}

static void code_label(unsigned index, char *buf, size_t size)
{
    if (index < sizeof codes / sizeof codes[0])
        snprintf(buf, size, "%u", codes[index]);
    else
        snprintf(buf, size, "%s", code_classes[index - sizeof codes / sizeof codes[0]]);
}

/* ---------------------------------------------------------------------------------------------
 * Recording
 * ------------------------------------------------------------------------------------------- */

/* Seconds since the epoch at which this process started: boot time (/proc/stat btime) plus
 * the start tick (/proc/self/stat field 22). 0 when /proc cannot be read. */
static double process_start_time(void)
{
    char buf[1024], line[256];
    unsigned long long btime = 0, ticks = 0;
    long hz = sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    const char *p;
    size_t n;

    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "btime ", 6) == 0)
            btime = strtoull(line + 6, NULL, 10);
    }
    if (f != NULL)
        fclose(f);
    f = fopen("/proc/self/stat", "r");
    if (f == NULL)
        return 0.0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (hz <= 0)
        return 0.0;
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: count from the last ')'.
     * Field 3 follows it; starttime is field 22, i.e. 19 fields further. */
    p = strrchr(buf, ')');
    for (int field = 2; p != NULL && field < 22; field++) {
        p = strchr(p + 1, ' ');
    }
    if (p == NULL)
        return 0.0;
    ticks = strtoull(p + 1, NULL, 10);
    return (double)btime + (double)ticks / (double)hz;
}

void server_metrics_init(struct server_metrics *m)
{
    memset(m, 0, sizeof *m); /* all-zero bits is a valid zero for atomic_ullong on Linux */
    pthread_once(&routes_once, collect_routes);
    m->start_time = process_start_time();
}

void server_metrics_record(struct server_metrics *m, unsigned route, unsigned method,
                           unsigned status, unsigned long long duration_ns)
{
    unsigned b = 0;

    while (b < SERVER_METRICS_BUCKETS && duration_ns > bounds_ns[b])
        b++;
    atomic_fetch_add_explicit(&m->requests[route][method][code_index(status)], 1ULL,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&m->buckets[route][b], 1ULL, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->sum_ns[route], duration_ns, memory_order_relaxed);
}

/* ---------------------------------------------------------------------------------------------
 * Exposition
 * ------------------------------------------------------------------------------------------- */

struct text {
    char *data;
    size_t len, cap;
    bool failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        char *grown = realloc(t->data, 2 * t->cap + (size_t)n);
        if (grown == NULL) {
            t->failed = true;
            return;
        }
        t->data = grown;
        t->cap = 2 * t->cap + (size_t)n;
    }
}

static void family(struct text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* VmRSS from /proc/self/status, in bytes; 0 when unreadable. */
static unsigned long long resident_bytes(void)
{
    char line[256];
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/self/status", "r");

    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtoull(line + 6, NULL, 10);
    }
    if (f != NULL)
        fclose(f);
    return kb * 1024ULL;
}

/* Entries of /proc/self/fd, not counting the directory stream opened to read it. */
static unsigned long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    unsigned long n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.')
            n++;
    }
    closedir(d);
    return n > 0 ? n - 1 : 0;
}

static void render_requests(struct text *t, struct server_metrics *m)
{
    char code[8];

    family(t, "memwall_http_requests_total", "counter",
           "HTTP requests answered, by route template, method and status code.");
    for (unsigned r = 0; r <= route_count; r++) {
        for (unsigned me = 0; me < SERVER_METRICS_METHODS; me++) {
            for (unsigned c = 0; c < SERVER_METRICS_CODES; c++) {
                unsigned long long v =
                    atomic_load_explicit(&m->requests[r][me][c], memory_order_relaxed);
                if (v == 0)
                    continue;
                code_label(c, code, sizeof code);
                put(t, "memwall_http_requests_total{route=\"%s\",method=\"%s\",code=\"%s\"} %llu\n",
                    route_names[r], method_names[me], code, v);
            }
        }
    }
}

static void render_durations(struct text *t, struct server_metrics *m)
{
    family(t, "memwall_http_request_duration_seconds", "histogram",
           "Time from the request line to the last byte of the reply, by route template.");
    for (unsigned r = 0; r <= route_count; r++) {
        unsigned long long cumulative = 0;

        for (unsigned b = 0; b <= SERVER_METRICS_BUCKETS; b++) {
            cumulative += atomic_load_explicit(&m->buckets[r][b], memory_order_relaxed);
            put(t, "memwall_http_request_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %llu\n",
                route_names[r], b < SERVER_METRICS_BUCKETS ? bounds_text[b] : "+Inf", cumulative);
        }
        put(t, "memwall_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n", route_names[r],
            (double)atomic_load_explicit(&m->sum_ns[r], memory_order_relaxed) / 1e9);
        /* _count is the +Inf bucket by definition; printing the same sum keeps them equal. */
        put(t, "memwall_http_request_duration_seconds_count{route=\"%s\"} %llu\n", route_names[r],
            cumulative);
    }
}

char *server_metrics_render(struct server_metrics *m, unsigned in_flight, unsigned connections,
                            size_t *len)
{
    struct text t = {.data = malloc(16384), .len = 0, .cap = 16384, .failed = false};

    if (t.data == NULL)
        return NULL;
    render_requests(&t, m);
    render_durations(&t, m);
    family(&t, "memwall_http_requests_in_flight", "gauge",
           "Requests received and not yet completed.");
    put(&t, "memwall_http_requests_in_flight %u\n", in_flight);
    family(&t, "memwall_http_connections_open", "gauge", "Open client connections.");
    put(&t, "memwall_http_connections_open %u\n", connections);
    family(&t, "memwall_http_requests_aborted_total", "counter",
           "Requests that ended before their reply was fully sent.");
    put(&t, "memwall_http_requests_aborted_total %llu\n",
        atomic_load_explicit(&m->aborted, memory_order_relaxed));
    family(&t, "memwall_build_info", "gauge", "Build information; the value is always 1.");
    put(&t, "memwall_build_info{version=\"%s\"} 1\n", MEMWALL_VERSION);
    family(&t, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    put(&t, "process_resident_memory_bytes %llu\n", resident_bytes());
    family(&t, "process_open_fds", "gauge", "Number of open file descriptors.");
    put(&t, "process_open_fds %lu\n", open_fds());
    family(&t, "process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.");
    put(&t, "process_start_time_seconds %.2f\n", m->start_time);
    if (t.failed) {
        free(t.data);
        return NULL;
    }
    *len = t.len;
    return t.data;
}
