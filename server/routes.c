/*
 * routes.c - the few paths the server answers itself, before the api layer is asked.
 *
 * /healthz is liveness (it must keep working even if the api layer is broken, so it does not
 * go through it), /readyz is readiness (503 once the server drains, so a load balancer stops
 * sending before the listener goes), /metrics is the Prometheus scrape; /openapi.yaml and the
 * dashboard (/, /app.js, /app.css, /favicon.svg) are static files embedded at build time
 * (assets.c). A small table drives them all; a wrong method gets 405 with the route's Allow,
 * OPTIONS gets 204 with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"

struct route {
    const char *path;
    const char *allow;
    void (*get)(struct server *srv, const struct api_request *req, struct api_response *resp);
};

static void healthz(struct server *srv, const struct api_request *req, struct api_response *resp);
static void readyz(struct server *srv, const struct api_request *req, struct api_response *resp);
static void metrics(struct server *srv, const struct api_request *req, struct api_response *resp);
static void asset(struct server *srv, const struct api_request *req, struct api_response *resp);

static const struct route routes[] = {
    {"/healthz", "GET, HEAD, OPTIONS", healthz}, {"/readyz", "GET, HEAD, OPTIONS", readyz},
    {"/metrics", "GET, HEAD, OPTIONS", metrics}, {"/openapi.yaml", "GET, HEAD, OPTIONS", asset},
    {"/", "GET, HEAD, OPTIONS", asset},          {"/app.js", "GET, HEAD, OPTIONS", asset},
    {"/app.css", "GET, HEAD, OPTIONS", asset},   {"/favicon.svg", "GET, HEAD, OPTIONS", asset},
};

const char *server_route_path(size_t i)
{
    return i < sizeof routes / sizeof routes[0] ? routes[i].path : NULL;
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

static void healthz(struct server *srv, const struct api_request *req, struct api_response *resp)
{
    (void)srv;
    (void)req;
    status_reply(resp, 200, "ok");
}

static void readyz(struct server *srv, const struct api_request *req, struct api_response *resp)
{
    (void)req;
    if (atomic_load(&srv->draining))
        status_reply(resp, 503, "draining");
    else
        status_reply(resp, 200, "ok");
}

static void metrics(struct server *srv, const struct api_request *req, struct api_response *resp)
{
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

/* Embedded static files (assets.c) need no server state. */
static void asset(struct server *srv, const struct api_request *req, struct api_response *resp)
{
    (void)srv;
    server_asset(req, resp);
}

bool server_route(struct server *srv, const struct api_request *req, struct api_response *resp)
{
    const struct route *route = NULL;

    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(req->path, routes[i].path) == 0) {
            route = &routes[i];
            break;
        }
    }
    if (route == NULL)
        return false;

    memset(resp, 0, sizeof *resp);
    if (strcmp(req->method, "GET") == 0) {
        route->get(srv, req, resp);
    } else if (strcmp(req->method, "OPTIONS") == 0) {
        resp->status = 204;
        resp->allow = route->allow;
    } else {
        api_problem(resp, 405, "method not allowed on this resource", NULL);
        resp->allow = route->allow;
    }
    return true;
}
