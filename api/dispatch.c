/*
 * dispatch.c - the route table, the thin handlers and HTTP caching (ETag / 304).
 *
 * A static table maps a path to its allowed methods and handler; a path not in it returns
 * false so the server can try its own routes before a 404. A known path with a wrong method
 * is a 405 carrying Allow; OPTIONS is a bodiless 204 carrying Allow (the server adds CORS);
 * HEAD is answered exactly like GET and the server drops the body.
 *
 * Compute handlers are decode -> core_evaluate -> encode -> reply. POST bodies: at most
 * API_BODY_MAX bytes (413), Content-Type application/json with any parameters (415), parsed
 * with JSON_REJECT_DUPLICATES (400 with line and column), must be an object (400); an empty
 * body means {} (all defaults), whatever its Content-Type, so `curl -X POST` works. A POST
 * does not also take query parameters (400): one request, one source of inputs. A JSON number
 * beyond double range (1e309) fails in the parser, so it is a malformed-json 400, not a field
 * error; as a string ("1e309") it is a field error like the query.
 *
 * ETag: 64-bit FNV-1a of the body, strong, on 200 GET/HEAD replies; If-None-Match (a list, "*",
 * or weak tags compared weakly as RFC 9110 asks) turns a match into a bodiless 304.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_internal.h"

#define ALLOW_COMPUTE "GET, HEAD, POST, OPTIONS"
#define ALLOW_CATALOG "GET, HEAD, OPTIONS"
#define CACHE_CONTROL "public, max-age=3600"

enum method { M_GET = 1, M_HEAD = 2, M_POST = 4, M_OPTIONS = 8 };

/* Adds the route's own members to a reply that already holds inputs; false when out of memory. */
typedef bool encode_fn(json_t *reply, const struct core_result *r);

struct route {
    const char *path;
    unsigned methods;
    const char *allow;
    void (*handler)(const struct route *route, const struct api_request *req,
                    struct api_response *resp);
    encode_fn *encode; /* compute routes only */
};

/* ---------------------------------------------------------------------------------------------
 * Route-specific members
 * ------------------------------------------------------------------------------------------- */

static bool put(json_t *obj, const char *key, json_t *value)
{
    return json_object_set_new(obj, key, value) == 0;
}

static bool encode_flops(json_t *reply, const struct core_result *r)
{
    return put(reply, "flops", api_encode_flops(r));
}

static bool encode_memory(json_t *reply, const struct core_result *r)
{
    return put(reply, "memory", api_encode_memory(r));
}

static bool encode_fit(json_t *reply, const struct core_result *r)
{
    return put(reply, "memory", api_encode_memory(r)) && put(reply, "fit", api_encode_fit(r)) &&
           put(reply, "advice", api_encode_advice(r));
}

static bool encode_runtime(json_t *reply, const struct core_result *r)
{
    return put(reply, "runtime", api_encode_runtime(r));
}

/* ---------------------------------------------------------------------------------------------
 * Decoding a request into a core_input
 * ------------------------------------------------------------------------------------------- */

/* "application/json", any case, optionally followed by parameters ("; charset=utf-8"). */
static bool is_json_media_type(const char *ct)
{
    static const char want[] = "application/json";
    size_t n = sizeof want - 1;

    if (ct == NULL)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (strncasecmp(ct, want, n) != 0)
        return false;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

/* Our own words for jansson's error codes: library messages never reach clients. */
static const char *json_problem(const json_error_t *err)
{
    switch (json_error_code(err)) {
    case json_error_premature_end_of_input:
        return "unexpected end of input";
    case json_error_end_of_input_expected:
        return "unexpected data after the JSON value";
    case json_error_invalid_utf8:
        return "invalid UTF-8";
    case json_error_null_character:
    case json_error_null_byte_in_key:
        return "NUL character";
    case json_error_duplicate_key:
        return "duplicate object key";
    case json_error_numeric_overflow:
        return "number out of range";
    case json_error_stack_overflow:
        return "nested too deeply";
    default:
        return "invalid JSON syntax";
    }
}

/* Fills *in from the body or the query. On failure the problem reply is already in resp. */
static bool decode_request(const struct api_request *req, struct api_response *resp,
                           struct core_input *in)
{
    bool post = strcmp(req->method, "POST") == 0;
    json_t *errors = json_array(), *body = NULL;
    json_error_t jerr;
    char detail[160];
    size_t i;
    bool ok;

    core_input_init(in);
    if (errors == NULL) {
        api_reply_problem(resp, API_E_INTERNAL, "Out of memory.", NULL);
        return false;
    }
    if (post && req->query_count > 0) {
        for (i = 0; i < req->query_count; i++)
            api_errors_add(errors, req->query[i].key, req->query[i].key_len,
                           "query parameters are not accepted with POST; put inputs in the "
                           "JSON body");
        api_reply_problem(resp, API_E_INVALID_INPUT, "POST takes its inputs from the JSON body.",
                          errors);
        return false;
    }
    if (post && req->body_len > API_BODY_MAX) {
        snprintf(detail, sizeof detail, "The request body exceeds %d bytes.", API_BODY_MAX);
        api_reply_problem(resp, API_E_BODY_TOO_LARGE, detail, errors);
        return false;
    }
    if (post && req->body_len > 0 && !is_json_media_type(req->content_type)) {
        api_reply_problem(resp, API_E_UNSUPPORTED_MEDIA_TYPE,
                          "POST bodies must be Content-Type: application/json.", errors);
        return false;
    }
    if (post && req->body_len > 0) {
        body =
            json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (body == NULL) {
            if (json_error_code(&jerr) == json_error_out_of_memory) {
                api_reply_problem(resp, API_E_INTERNAL, "Out of memory.", errors);
                return false;
            }
            snprintf(detail, sizeof detail, "Malformed JSON at line %d, column %d: %s.", jerr.line,
                     jerr.column, json_problem(&jerr));
            api_reply_problem(resp, API_E_MALFORMED_JSON, detail, errors);
            return false;
        }
        if (!json_is_object(body)) {
            json_decref(body);
            api_reply_problem(resp, API_E_MALFORMED_JSON, "The body must be a JSON object.",
                              errors);
            return false;
        }
        ok = api_decode_object(body, in, errors);
        json_decref(body);
    } else if (post) {
        ok = true; /* an empty body is {}: every input at its default */
    } else {
        ok = api_decode_query(req->query, req->query_count, in, errors);
    }
    if (!ok) {
        size_t n = json_array_size(errors);
        snprintf(detail, sizeof detail, "%zu input%s invalid; see errors.", n,
                 n == 1 ? " is" : "s are");
        api_reply_problem(resp, API_E_INVALID_INPUT, detail, errors);
        return false;
    }
    json_decref(errors);
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Handlers
 * ------------------------------------------------------------------------------------------- */

static void reply_core_problems(struct api_response *resp, enum core_status status,
                                const struct core_problems *problems)
{
    json_t *errors = json_array();
    int i;

    for (i = 0; errors != NULL && i < problems->count; i++) {
        const struct core_problem *p = &problems->items[i];
        const char *field = p->field ? p->field : "";
        api_errors_add(errors, field, strlen(field), p->message);
    }
    if (status == CORE_ERANGE)
        api_reply_problem(resp, API_E_OUT_OF_RANGE,
                          "A result would not fit in 64-bit bytes; reduce the inputs named.",
                          errors);
    else
        api_reply_problem(resp, API_E_IMPOSSIBLE_INPUTS,
                          "The inputs are valid one by one but impossible together.", errors);
}

static void handle_compute(const struct route *route, const struct api_request *req,
                           struct api_response *resp)
{
    struct core_input in;
    struct core_result result;
    struct core_problems problems;
    enum core_status status;
    json_t *reply;

    if (!decode_request(req, resp, &in))
        return;
    memset(&problems, 0, sizeof problems);
    status = core_evaluate(&in, &result, &problems);
    if (status != CORE_OK) {
        reply_core_problems(resp, status, &problems);
        return;
    }
    /* Member order: inputs, the route's figures, warnings. */
    reply = json_object();
    if (reply != NULL &&
        !(put(reply, "inputs", api_encode_inputs(&result)) && route->encode(reply, &result) &&
          put(reply, "warnings", api_encode_warnings(&result)))) {
        json_decref(reply);
        reply = NULL;
    }
    api_reply_json(resp, 200, API_CT_JSON, reply);
}

/* The catalogs take no inputs, and unknown names are errors everywhere. */
static void handle_catalog(const struct route *route, const struct api_request *req,
                           struct api_response *resp)
{
    json_t *errors;
    size_t i;

    if (req->query_count > 0) {
        errors = json_array();
        for (i = 0; errors != NULL && i < req->query_count; i++)
            api_errors_add(errors, req->query[i].key, req->query[i].key_len, "unknown input");
        api_reply_problem(resp, API_E_INVALID_INPUT, "This resource takes no inputs.", errors);
        return;
    }
    api_reply_json(resp, 200, API_CT_JSON,
                   strcmp(route->path, "/gpus") == 0 ? api_encode_gpus() : api_encode_models());
}

static const struct route routes[] = {
    {"/flops", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute, encode_flops},
    {"/memory", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute, encode_memory},
    {"/fit", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute, encode_fit},
    {"/runtime", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute,
     encode_runtime},
    {"/gpus", M_GET | M_HEAD | M_OPTIONS, ALLOW_CATALOG, handle_catalog, NULL},
    {"/models", M_GET | M_HEAD | M_OPTIONS, ALLOW_CATALOG, handle_catalog, NULL},
};

/* ---------------------------------------------------------------------------------------------
 * Caching
 * ------------------------------------------------------------------------------------------- */

static unsigned long long fnv1a64(const char *data, size_t len)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= (unsigned char)data[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Does If-None-Match (e.g. `"a", W/"b"` or `*`) match our tag? Weak comparison. */
static bool none_match(const char *header, const char *etag)
{
    size_t n = strlen(etag);
    const char *p = header;

    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return true;
        if (strncmp(p, "W/", 2) == 0)
            p += 2;
        if (strncmp(p, etag, n) == 0 &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return true;
        while (*p != '\0' && *p != ',')
            p++;
    }
    return false;
}

static void add_caching(const struct api_request *req, struct api_response *resp)
{
    resp->cache_control = CACHE_CONTROL;
    snprintf(resp->etag, sizeof resp->etag, "\"%016llx\"", fnv1a64(resp->body, resp->body_len));
    if (req->if_none_match != NULL && none_match(req->if_none_match, resp->etag)) {
        api_response_free(resp);
        resp->status = 304;
        resp->content_type = NULL;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Entry point
 * ------------------------------------------------------------------------------------------- */

static unsigned method_bit(const char *method)
{
    if (strcmp(method, "GET") == 0)
        return M_GET;
    if (strcmp(method, "HEAD") == 0)
        return M_HEAD;
    if (strcmp(method, "POST") == 0)
        return M_POST;
    if (strcmp(method, "OPTIONS") == 0)
        return M_OPTIONS;
    return 0;
}

bool api_dispatch(const struct api_request *req, struct api_response *resp)
{
    const struct route *route = NULL;
    unsigned method;
    size_t i;

    if (req == NULL || req->path == NULL || req->method == NULL)
        return false;
    for (i = 0; i < sizeof routes / sizeof routes[0] && route == NULL; i++)
        if (strcmp(req->path, routes[i].path) == 0)
            route = &routes[i];
    if (route == NULL)
        return false;

    memset(resp, 0, sizeof *resp);
    method = method_bit(req->method);
    if ((route->methods & method) == 0) {
        api_reply_problem(resp, API_E_METHOD_NOT_ALLOWED, "This method is not allowed here.", NULL);
        resp->allow = route->allow;
        return true;
    }
    if (method == M_OPTIONS) {
        resp->status = 204;
        resp->allow = route->allow;
        return true;
    }
    route->handler(route, req, resp);
    if (resp->status == 200 && (method == M_GET || method == M_HEAD))
        add_caching(req, resp);
    return true;
}
