/*
 * metrics.h - request counters and latency histograms for /metrics, lock-free.
 *
 * Every series lives in a fixed array of C11 atomics indexed by small bounded tables (route
 * template, method, status code), so recording a request is a few relaxed atomic adds and no
 * lock, and a hostile client cannot grow the label space: an unknown path counts as route
 * "unmatched", an unknown method as "other", a status outside the table as its class ("5xx").
 * Routes are numbers here; their labels are handed over once, by whoever owns the routes, so
 * this file depends on no route table.
 * A scrape reads the atomics one by one; a request recorded mid-scrape may show in one series
 * and not yet in another, which Prometheus tolerates.
 */
#ifndef MEMWALL_SERVER_METRICS_H
#define MEMWALL_SERVER_METRICS_H

#include <stdatomic.h>
#include <stddef.h>

#define SERVER_METRICS_ROUTES  32 /* room for the route templates, "unmatched" after them */
#define SERVER_METRICS_METHODS 8  /* GET HEAD POST PUT DELETE PATCH OPTIONS other */
#define SERVER_METRICS_CODES   17 /* the statuses memwall sends, then 1xx..5xx */
#define SERVER_METRICS_BUCKETS 13 /* finite histogram bounds; +Inf is one more */

struct server_metrics {
    atomic_ullong requests[SERVER_METRICS_ROUTES][SERVER_METRICS_METHODS][SERVER_METRICS_CODES];
    /* per bucket, not cumulative (the scrape sums); the last slot is above every bound */
    atomic_ullong buckets[SERVER_METRICS_ROUTES][SERVER_METRICS_BUCKETS + 1];
    atomic_ullong sum_ns[SERVER_METRICS_ROUTES];
    atomic_ullong aborted; /* requests that ended without their reply fully sent */
    double start_time;     /* process start, seconds since the epoch (from /proc) */
    /* route labels (static strings), then "unmatched" at index route_count */
    const char *route_names[SERVER_METRICS_ROUTES];
    unsigned route_count;
};

/* Zero every series, read the process start time and take the route labels: route_label(i)
 * for i = 0, 1, ... until it returns NULL (strings borrowed for the life of m; beyond
 * SERVER_METRICS_ROUTES - 1 routes the rest count as "unmatched"). */
void server_metrics_init(struct server_metrics *m, const char *(*route_label)(unsigned i));

/* The label of a route number ("unmatched" for any past the labelled ones). */
const char *server_metrics_route_name(const struct server_metrics *m, unsigned route);

/* Index of a request method; the "other" index when not a known one. */
unsigned server_metrics_method(const char *method);

/* Count one answered request and its duration; a route past the labelled ones counts as
 * "unmatched". */
void server_metrics_record(struct server_metrics *m, unsigned route, unsigned method,
                           unsigned status, unsigned long long duration_ns);

/* The exposition (text format 0.0.4), malloc'd, NUL-terminated, length in *len; NULL when out
 * of memory. in_flight and connections are the live gauges the server keeps. */
char *server_metrics_render(struct server_metrics *m, unsigned in_flight, unsigned connections,
                            size_t *len);

#endif
