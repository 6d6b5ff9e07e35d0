/*
 * assets.c - the static files memwall serves itself: openapi.yaml and the calculator dashboard
 * (/, /app.js, /app.css).
 *
 * The bytes live in server_assets[], a table generated at build time by cmake/embed.cmake, so
 * the binary is the whole deployment and the page can never drift from the API it talks to.
 * Every file is answered with Cache-Control: no-cache and a strong ETag: a browser keeps its copy
 * but revalidates it (a cheap 304) on every load, so a new binary's page and contract are picked
 * up at once. The Content-Security-Policy and nosniff headers are added by server_reply() for
 * every reply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct server_asset *find(const char *path)
{
    for (size_t i = 0; i < server_assets_count; i++) {
        if (strcmp(server_assets[i].path, path) == 0)
            return &server_assets[i];
    }
    return NULL;
}

/* If-None-Match holds a list of entity tags or "*"; a substring match of our strong tag is
 * exact enough because the tag is quoted and 16 hex digits long. */
static bool etag_matches(const char *if_none_match, const char *etag)
{
    if (if_none_match == NULL || etag[0] == '\0')
        return false;
    return strcmp(if_none_match, "*") == 0 || strstr(if_none_match, etag) != NULL;
}

void server_asset(const struct api_request *req, struct api_response *resp, void *ctx)
{
    const struct server_asset *asset = find(req->path);

    (void)ctx; /* static files need no server state */
    if (asset == NULL || asset->len == 0) {
        char detail[128];
        const char *name = strcmp(req->path, "/") == 0 ? "index.html" : req->path + 1;

        snprintf(detail, sizeof detail, "%s was not embedded in this build", name);
        api_problem(resp, 404, detail, NULL);
        return;
    }
    if (etag_matches(req->if_none_match, asset->etag)) {
        resp->status = 304;
    } else {
        resp->body = malloc(asset->len);
        if (resp->body == NULL) {
            api_problem(resp, 500, "out of memory", NULL);
            return;
        }
        memcpy(resp->body, asset->bytes, asset->len);
        resp->body_len = asset->len;
        resp->status = 200;
        resp->content_type = asset->content_type;
    }
    resp->cache_control = "no-cache";
    snprintf(resp->etag, sizeof resp->etag, "%s", asset->etag);
}
