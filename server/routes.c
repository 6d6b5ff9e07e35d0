/*
 * routes.c - the few paths the server answers itself, before the api layer is asked.
 *
 * /healthz is liveness (it must keep working even if the api layer is broken, so it does not
 * go through it) and /openapi.yaml serves the contract embedded at build time. A small table
 * drives both; a wrong method gets 405 with the route's Allow, OPTIONS gets 204 with it.
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
static void openapi(const struct api_request *req, struct api_response *resp);

static const struct route routes[] = {
    {"/healthz", "GET, HEAD, OPTIONS", healthz},
    {"/openapi.yaml", "GET, HEAD, OPTIONS", openapi},
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

/* If-None-Match holds a list of entity tags or "*"; a substring match of our strong tag is
 * exact enough because the tag is quoted and 16 hex digits long. */
static bool etag_matches(const char *if_none_match, const char *etag)
{
    if (if_none_match == NULL || etag[0] == '\0')
        return false;
    return strcmp(if_none_match, "*") == 0 || strstr(if_none_match, etag) != NULL;
}

static void openapi(const struct api_request *req, struct api_response *resp)
{
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
