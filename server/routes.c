/*
 * routes.c - the few paths the server answers itself, before the api layer is asked.
 *
 * /healthz is liveness (it must keep working even if the api layer is broken, so it does not
 * go through it); /openapi.yaml and the dashboard (/, /app.js, /app.css, /favicon.svg) are static
 * files embedded at build time (assets.c). A small table drives them all; a wrong method gets 405
 * with the route's Allow, OPTIONS gets 204 with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"

struct route {
    const char *path;
    const char *allow;
    void (*get)(const struct api_request *req, struct api_response *resp);
};

static void healthz(const struct api_request *req, struct api_response *resp);

static const struct route routes[] = {
    {"/healthz", "GET, HEAD, OPTIONS", healthz},
    {"/openapi.yaml", "GET, HEAD, OPTIONS", server_asset},
    {"/", "GET, HEAD, OPTIONS", server_asset},
    {"/app.js", "GET, HEAD, OPTIONS", server_asset},
    {"/app.css", "GET, HEAD, OPTIONS", server_asset},
    {"/favicon.svg", "GET, HEAD, OPTIONS", server_asset},
};

static void healthz(const struct api_request *req, struct api_response *resp)
{
    json_t *doc = json_pack("{s:s, s:s}", "status", "ok", "version", MEMWALL_VERSION);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

    (void)req;
    json_decref(doc);
    if (text == NULL) {
        api_problem(resp, 500, "out of memory", NULL);
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = text;
    resp->body_len = strlen(text);
    resp->cache_control = "no-store"; /* liveness must never be answered by a cache */
}

bool server_route(const struct api_request *req, struct api_response *resp)
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
        route->get(req, resp);
    } else if (strcmp(req->method, "OPTIONS") == 0) {
        resp->status = 204;
        resp->allow = route->allow;
    } else {
        api_problem(resp, 405, "method not allowed on this resource", NULL);
        resp->allow = route->allow;
    }
    return true;
}
