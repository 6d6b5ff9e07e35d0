/*
 * route.c - the api's route table and the one function that answers a request on a row.
 *
 * A path not in the table makes api_dispatch() return false so the server can try its own
 * rows before a 404. A known path with a method the row does not take is a 405 carrying
 * Allow; OPTIONS is a bodiless 204 carrying Allow (the server adds CORS); HEAD is answered
 * exactly like GET and the server drops the body. Allow is spelled from the row's method bits
 * through one static table, so it can never disagree with what the row actually answers.
 * The handlers live with their families: compute.c, plan.c, catalog.c.
 */
#include <string.h>

#include "api_internal.h"

/* The method names, once: api_method() reads them and the Allow strings are built of them. */
#define NAME_GET     "GET"
#define NAME_HEAD    "HEAD"
#define NAME_POST    "POST"
#define NAME_OPTIONS "OPTIONS"

/* Allow for a mask, built by the preprocessor from its three bits (POST, HEAD, GET, most
 * significant first, so the rows below count 000 to 111 in binary): each set bit adds its
 * name, and OPTIONS, always answered, comes last. */
#define PART_GET_0             ""
#define PART_GET_1             NAME_GET ", "
#define PART_HEAD_0            ""
#define PART_HEAD_1            NAME_HEAD ", "
#define PART_POST_0            ""
#define PART_POST_1            NAME_POST ", "
#define ALLOW(post, head, get) PART_GET_##get PART_HEAD_##head PART_POST_##post NAME_OPTIONS

_Static_assert(API_GET == 1u && API_HEAD == 2u && API_POST == 4u,
               "allow_text is indexed by the method bits in this order");
static const char *const allow_text[(API_GET | API_HEAD | API_POST) + 1u] = {
    ALLOW(0, 0, 0), ALLOW(0, 0, 1), ALLOW(0, 1, 0), ALLOW(0, 1, 1),
    ALLOW(1, 0, 0), ALLOW(1, 0, 1), ALLOW(1, 1, 0), ALLOW(1, 1, 1),
};

#define COMPUTE (API_GET | API_HEAD | API_POST)
#define CATALOG (API_GET | API_HEAD)

static const struct api_route rows[] = {
    {"/flops", COMPUTE, true, api_handle_flops},
    {"/memory", COMPUTE, true, api_handle_memory},
    {"/fit", COMPUTE, true, api_handle_fit},
    {"/runtime", COMPUTE, true, api_handle_runtime},
    {"/evaluate", COMPUTE, true, api_handle_evaluate},
    {"/inference", COMPUTE, true, api_handle_inference},
    {"/inference/plan", API_POST, false, api_handle_inference_plan},
    {"/plan", API_POST, false, api_handle_plan},
    {"/gpus", CATALOG, true, api_handle_gpus},
    {"/models", CATALOG, true, api_handle_models},
    {"/inputs", CATALOG, true, api_handle_inputs},
};

const struct api_route_table api_routes = {
    rows,
    sizeof rows / sizeof rows[0],
    "This method is not allowed here.",
};

const char *api_route_allow(unsigned methods)
{
    return allow_text[methods & (API_GET | API_HEAD | API_POST)];
}

unsigned api_method(const char *method)
{
    if (strcmp(method, NAME_GET) == 0)
        return API_GET;
    if (strcmp(method, NAME_HEAD) == 0)
        return API_HEAD;
    if (strcmp(method, NAME_POST) == 0)
        return API_POST;
    if (strcmp(method, NAME_OPTIONS) == 0)
        return API_OPTIONS;
    return 0;
}

const struct api_route *api_route_find(const struct api_route_table *table, const char *path)
{
    for (size_t i = 0; i < table->count; i++) {
        if (strcmp(path, table->rows[i].path) == 0)
            return &table->rows[i];
    }
    return NULL;
}

void api_route_answer(const struct api_route_table *table, const struct api_route *route,
                      const struct api_request *req, struct api_response *resp, void *ctx)
{
    unsigned method = api_method(req->method);

    memset(resp, 0, sizeof *resp);
    if (method == API_OPTIONS) {
        resp->status = 204;
        resp->allow = api_route_allow(route->methods);
        return;
    }
    if ((route->methods & method) == 0) {
        api_reply_problem(resp, API_E_METHOD_NOT_ALLOWED, table->not_allowed, NULL);
        resp->allow = api_route_allow(route->methods);
        return;
    }
    route->handler(req, resp, ctx);
    if (route->cacheable && resp->status == 200 && (method & (API_GET | API_HEAD)) != 0)
        api_etag(req, resp);
}

bool api_dispatch(const struct api_request *req, struct api_response *resp)
{
    const struct api_route *route;

    if (req == NULL || req->path == NULL || req->method == NULL)
        return false;
    route = api_route_find(&api_routes, req->path);
    if (route == NULL)
        return false;
    api_route_answer(&api_routes, route, req, resp, NULL);
    return true;
}
