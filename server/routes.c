/*
 * routes.c - the few paths the server answers itself, before the api layer is asked.
 *
 * /healthz is liveness (it must keep working even if the api layer is broken, so it does not
 * go through it), /readyz is readiness (503 once the server drains, so a load balancer stops
 * sending before the listener goes), /metrics is the Prometheus scrape and /openapi.yaml serves
 * the contract embedded at build time. A small table drives them; a wrong method gets 405 with
 * the route's Allow, OPTIONS gets 204 with it.
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
static void openapi(struct server *srv, const struct api_request *req, struct api_response *resp);

static const struct route routes[] = {
    {"/healthz", "GET, HEAD, OPTIONS", healthz},
    {"/readyz", "GET, HEAD, OPTIONS", readyz},
    {"/metrics", "GET, HEAD, OPTIONS", metrics},
    {"/openapi.yaml", "GET, HEAD, OPTIONS", openapi},
};

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

/* If-None-Match holds a list of entity tags or "*"; a substring match of our strong tag is
 * exact enough because the tag is quoted and 16 hex digits long. */
static bool etag_matches(const char *if_none_match, const char *etag)
{
    if (if_none_match == NULL || etag[0] == '\0')
        return false;
    return strcmp(if_none_match, "*") == 0 || strstr(if_none_match, etag) != NULL;
}

static void openapi(struct server *srv, const struct api_request *req, struct api_response *resp)
{
    (void)srv;
    if (server_openapi_yaml_len == 0) {
        api_problem(resp, 404, "openapi.yaml was not embedded in this build", NULL);
        return;
    }
    if (etag_matches(req->if_none_match, server_openapi_yaml_etag)) {
        resp->status = 304;
    } else {
        resp->body = malloc(server_openapi_yaml_len);
        if (resp->body == NULL) {
            api_problem(resp, 500, "out of memory", NULL);
            return;
        }
        memcpy(resp->body, server_openapi_yaml, server_openapi_yaml_len);
        resp->body_len = server_openapi_yaml_len;
        resp->status = 200;
        resp->content_type = "application/yaml";
    }
    /* The contract only changes with the binary, so caches may keep it a while. */
    resp->cache_control = "public, max-age=3600";
    snprintf(resp->etag, sizeof resp->etag, "%s", server_openapi_yaml_etag);
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
