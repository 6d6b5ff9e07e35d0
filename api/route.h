/*
 * route.h - the one route row type, for the api's routes and the server's own alike.
 *
 * A route is a path, the methods it answers (a bitmask) and a handler. Everything else about
 * routing is derived from those rows by api_route_answer(), so it cannot drift between routes
 * or between the api and the server: a method outside the mask is a 405 whose Allow header is
 * spelled from the mask (api_route_allow), OPTIONS is a bodiless 204 with the same Allow, HEAD
 * runs the GET handler (the server drops the body), and a row marked cacheable gets an ETag on
 * its 200 GET/HEAD replies (If-None-Match may turn them into 304). The metrics label routes by
 * their paths, taken from the same rows.
 *
 * The api owns its table (api_routes); the server declares its own rows (health, metrics,
 * static files) with this type and walks both tables with one lookup.
 */
#ifndef MEMWALL_API_ROUTE_H
#define MEMWALL_API_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "api.h"

/* The methods memwall answers, one bit each. Every route answers OPTIONS (a 204 carrying
 * Allow), so OPTIONS is not a bit: it is always allowed and always listed last. */
enum api_method {
    API_GET = 1u,
    API_HEAD = 2u,
    API_POST = 4u,
    API_OPTIONS = 8u, /* what api_method() returns for "OPTIONS"; never set in a row */
};

/* Fills resp for req; called only with a method the row allows, never with OPTIONS. ctx is
 * what the caller of api_route_answer() passed (the server's state for its own rows, NULL for
 * the api's). resp is zeroed before the call. */
typedef void api_handler(const struct api_request *req, struct api_response *resp, void *ctx);

struct api_route {
    const char *path; /* exact match, e.g. "/fit" */
    unsigned methods; /* API_GET | API_HEAD | API_POST bits */
    bool cacheable;   /* 200 GET/HEAD replies get ETag + Cache-Control, and may become 304 */
    api_handler *handler;
};

/* A table of rows and the sentence its 405 replies carry (the api's and the server's have
 * always worded it differently, and replies are kept byte for byte). */
struct api_route_table {
    const struct api_route *rows;
    size_t count;
    const char *not_allowed;
};

/* The api's routes: /flops /memory /fit /runtime (GET, HEAD, POST), /plan (POST), /gpus
 * /models (GET, HEAD). */
extern const struct api_route_table api_routes;

/* The row of table whose path is path, or NULL. */
const struct api_route *api_route_find(const struct api_route_table *table, const char *path);

/* The API_* bit of a method name; 0 for a method memwall never answers. */
unsigned api_method(const char *method);

/* "GET, HEAD, POST, OPTIONS" and the like for a row's methods: a static string spelled from
 * the bits (a table indexed by the mask, built at compile time), in that fixed order, OPTIONS
 * always last. */
const char *api_route_allow(unsigned methods);

/* Answer req on route (a row of table): 405 with Allow for a method the row does not take,
 * 204 with Allow for OPTIONS, else the handler (HEAD as GET) and, for a cacheable row, the
 * ETag. resp is overwritten. */
void api_route_answer(const struct api_route_table *table, const struct api_route *route,
                      const struct api_request *req, struct api_response *resp, void *ctx);

#endif
