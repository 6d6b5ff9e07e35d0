/*
 * routes.c - the paths the server answers itself, and the one lookup over every route.
 *
 * /healthz is liveness (it must keep working even if the api layer is broken, so it does not
 * go through it), /readyz is readiness (503 once the server drains, so a load balancer stops
 * sending before the listener goes), /metrics is the Prometheus scrape; /openapi.yaml and the
 * dashboard (/, /app.js, /app.css, /favicon.svg) are static files embedded at build time
 * (assets.c). They are rows of the api's own type (api/route.h), so 405 with Allow, OPTIONS
 * and HEAD work exactly as on the api's routes.
 *
 * The server's rows and the api's are numbered as one list, the server's first: a request's
 * route is looked up once, when it is admitted, and that number serves both to answer it and
 * as its metrics label.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "route.h"

static api_handler healthz, readyz, metrics;

#define READ (API_GET | API_HEAD)

static const struct api_route rows[] = {
    {"/healthz", READ, false, healthz},      {"/readyz", READ, false, readyz},
    {"/metrics", READ, false, metrics},      {"/openapi.yaml", READ, false, server_asset},
    {"/", READ, false, server_asset},        {"/app.js", READ, false, server_asset},
    {"/app.css", READ, false, server_asset}, {"/favicon.svg", READ, false, server_asset},
};

static const struct api_route_table server_routes = {
    rows,
    sizeof rows / sizeof rows[0],
    "method not allowed on this resource",
};

/* Every table, in route-number order. */
static const struct api_route_table *const tables[] = {&server_routes, &api_routes};

#define TABLES (sizeof tables / sizeof tables[0])

unsigned server_route_find(const char *path)
{
    unsigned base = 0;

    for (size_t t = 0; t < TABLES; t++) {
        const struct api_route *route = api_route_find(tables[t], path);

        if (route != NULL)
            return base + (unsigned)(route - tables[t]->rows);
        base += (unsigned)tables[t]->count;
    }
    return base;
}

/* The table and row of route number i; false past the last. */
static bool route_at(unsigned i, const struct api_route_table **table,
                     const struct api_route **route)
{
    for (size_t t = 0; t < TABLES; t++) {
        if (i < tables[t]->count) {
            *table = tables[t];
            *route = &tables[t]->rows[i];
            return true;
        }
        i -= (unsigned)tables[t]->count;
    }
    return false;
}

const char *server_route_label(unsigned i)
{
    const struct api_route_table *table;
    const struct api_route *route;

    return route_at(i, &table, &route) ? route->path : NULL;
}

bool server_route(struct server *srv, unsigned i, const struct api_request *req,
                  struct api_response *resp)
{
    const struct api_route_table *table;
    const struct api_route *route;

    if (!route_at(i, &table, &route))
        return false;
    api_route_answer(table, route, req, resp, srv);
    return true;
}

/* {status, version} with status; never cached, since probes must reach the process. */
static void status_reply(struct api_response *resp, unsigned code, const char *status)
{
    json_t *doc = json_pack("{s:s, s:s}", "status", status, "version", MEMWALL_VERSION);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

    json_decref(doc);
    if (text == NULL) {
        api_problem(resp, 500, "out of memory", NULL);
        return;
    }
    resp->status = code;
    resp->content_type = "application/json";
    resp->body = text;
    resp->body_len = strlen(text);
    resp->cache_control = "no-store";
}

static void healthz(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)req;
    (void)ctx;
    status_reply(resp, 200, "ok");
}

static void readyz(const struct api_request *req, struct api_response *resp, void *ctx)
{
    struct server *srv = ctx;

    (void)req;
    if (atomic_load(&srv->draining))
        status_reply(resp, 503, "draining");
    else
        status_reply(resp, 200, "ok");
}

static void metrics(const struct api_request *req, struct api_response *resp, void *ctx)
{
    struct server *srv = ctx;

    (void)req;
    resp->body = server_metrics_render(&srv->metrics, atomic_load(&srv->in_flight),
                                       atomic_load(&srv->connections), &resp->body_len);
    if (resp->body == NULL) {
        api_problem(resp, 500, "out of memory", NULL);
        return;
    }
    resp->status = 200;
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp->cache_control = "no-store";
}
