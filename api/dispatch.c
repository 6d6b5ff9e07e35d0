/*
 * dispatch.c - the route table, the thin handlers and HTTP caching (ETag / 304).
 *
 * A static table maps a path to its allowed methods and handler; a path not in it returns
 * false so the server can try its own routes before a 404. A known path with a wrong method
 * is a 405 carrying Allow; OPTIONS is a bodiless 204 carrying Allow (the server adds CORS);
 * HEAD is answered exactly like GET and the server drops the body.
 *
 * Compute handlers are decode -> core_evaluate -> write -> reply; they stream their replies
 * through the JSON writer (write.c, jsonw.c) because they are the hot path, while problem
 * bodies, /plan and the catalogs are built with jansson and dumped into the same writer. A POSTed
 * JSON array is a batch (at most API_BATCH_MAX items): an array reply in the same order, 200
 * overall, where an item that fails is its own problem object (with its own status) so the others
 * still count. POST /plan is decode -> core_plan_search -> encode. POST bodies: at most
 * API_BODY_MAX bytes (413), Content-Type application/json with any parameters (415), parsed
 * with JSON_REJECT_DUPLICATES (400 with line and column), must be an object (400); an empty
 * body means {} (all defaults), whatever its Content-Type, so `curl -X POST` works. A POST
 * does not also take query parameters (400): one request, one source of inputs. A JSON number
 * beyond double range (1e309) fails in the parser, so it is a malformed-json 400, not a field
 * error; as a string ("1e309") it is a field error like the query.
 *
 * ETag: a 64-bit hash of the body (FNV-1a over 8-byte words, then a final mix), strong, on 200
 * GET/HEAD replies; If-None-Match (a list, "*", or weak tags compared weakly as RFC 9110 asks)
 * turns a match into a bodiless 304.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api_internal.h"

#define ALLOW_COMPUTE "GET, HEAD, POST, OPTIONS"
#define ALLOW_CATALOG "GET, HEAD, OPTIONS"
#define ALLOW_PLAN    "POST, OPTIONS"
#define CACHE_CONTROL "public, max-age=3600"

enum method { M_GET = 1, M_HEAD = 2, M_POST = 4, M_OPTIONS = 8 };

/* Writes the route's own members into a reply that already holds inputs. */
typedef void write_fn(struct api_jsonw *w, const struct core_result *r);

struct route {
    const char *path;
    unsigned methods;
    const char *allow;
    void (*handler)(const struct route *route, const struct api_request *req,
                    struct api_response *resp);
    write_fn *write; /* compute routes only */
};

/* ---------------------------------------------------------------------------------------------
 * Route-specific members
 * ------------------------------------------------------------------------------------------- */

static void write_fit(struct api_jsonw *w, const struct core_result *r)
{
    api_write_memory(w, r);
    api_write_fit(w, r);
    api_write_advice(w, r);
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

/* One answer is written into a writer as one JSON value (a reply body or a problem body) and
 * its HTTP status returned. A single request replies with the writer's bytes; a batch writes
 * each item's answer as one element of the reply array. Out of memory fails the writer. */

/* errors: stolen, NULL means []. */
static unsigned problem_answer(struct api_jsonw *w, enum api_error code, const char *detail,
                               json_t *errors)
{
    api_write_json(w, api_problem_body(code, detail, errors));
    return api_error_status(code);
}

static unsigned invalid_input_answer(struct api_jsonw *w, json_t *errors)
{
    char detail[160];
    size_t n = json_array_size(errors);

    snprintf(detail, sizeof detail, "%zu input%s invalid; see errors.", n,
             n == 1 ? " is" : "s are");
    return problem_answer(w, API_E_INVALID_INPUT, detail, errors);
}

static void reply_answer(struct api_response *resp, unsigned status, struct api_jsonw *w)
{
    api_reply_writer(resp, status, status == 200 ? API_CT_JSON : API_CT_PROBLEM, w);
}

/* The POST body parsed (new reference), any JSON value; NULL with the problem written into w
 * and its status in *status. An empty body is {}. */
static json_t *read_body(const struct api_request *req, struct api_jsonw *w, unsigned *status)
{
    json_error_t jerr;
    char detail[160];
    json_t *body, *errors;

    if (req->query_count > 0) {
        errors = json_array();
        for (size_t i = 0; errors != NULL && i < req->query_count; i++)
            api_errors_add(errors, req->query[i].key, req->query[i].key_len,
                           "query parameters are not accepted with POST; put inputs in the "
                           "JSON body");
        *status = problem_answer(w, API_E_INVALID_INPUT,
                                 "POST takes its inputs from the JSON body.", errors);
        return NULL;
    }
    if (req->body_len > API_BODY_MAX) {
        snprintf(detail, sizeof detail, "The request body exceeds %d bytes.", API_BODY_MAX);
        *status = problem_answer(w, API_E_BODY_TOO_LARGE, detail, NULL);
        return NULL;
    }
    if (req->body_len == 0)
        return json_object(); /* every input at its default, so `curl -X POST` works */
    if (!is_json_media_type(req->content_type)) {
        *status = problem_answer(w, API_E_UNSUPPORTED_MEDIA_TYPE,
                                 "POST bodies must be Content-Type: application/json.", NULL);
        return NULL;
    }
    body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (body == NULL) {
        if (json_error_code(&jerr) == json_error_out_of_memory) {
            *status = problem_answer(w, API_E_INTERNAL, "Out of memory.", NULL);
            return NULL;
        }
        snprintf(detail, sizeof detail, "Malformed JSON at line %d, column %d: %s.", jerr.line,
                 jerr.column, json_problem(&jerr));
        *status = problem_answer(w, API_E_MALFORMED_JSON, detail, NULL);
    }
    return body;
}

/* ---------------------------------------------------------------------------------------------
 * Handlers
 * ------------------------------------------------------------------------------------------- */

static unsigned core_problems_answer(struct api_jsonw *w, enum core_status status,
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
        return problem_answer(w, API_E_OUT_OF_RANGE,
                              "A result would not fit in 64-bit bytes; reduce the inputs named.",
                              errors);
    return problem_answer(w, API_E_IMPOSSIBLE_INPUTS,
                          "The inputs are valid one by one but impossible together.", errors);
}

static unsigned compute_answer(const struct route *route, const struct core_input *in,
                               struct api_jsonw *w)
{
    struct core_result result;
    struct core_problems problems;
    enum core_status status;

    memset(&problems, 0, sizeof problems);
    status = core_evaluate(in, &result, &problems);
    if (status != CORE_OK)
        return core_problems_answer(w, status, &problems);
    /* Member order: inputs, the route's figures, warnings. */
    api_jsonw_open_object(w);
    api_write_inputs(w, &result);
    route->write(w, &result);
    api_write_warnings(w, &result);
    api_jsonw_close_object(w);
    return 200;
}

/* One JSON value of inputs (a request body, or one item of a batch). */
static unsigned object_answer(const struct route *route, const json_t *item, struct api_jsonw *w)
{
    struct core_input in;
    json_t *errors;

    if (!json_is_object(item))
        return problem_answer(w, API_E_MALFORMED_JSON,
                              "The body must be a JSON object (or, for a batch, an array of them).",
                              NULL);
    core_input_init(&in);
    errors = json_array();
    if (errors == NULL)
        return problem_answer(w, API_E_INTERNAL, "Out of memory.", NULL);
    if (!api_decode_object(item, &in, errors))
        return invalid_input_answer(w, errors);
    json_decref(errors);
    return compute_answer(route, &in, w);
}

/* A batch: each item answered on its own, in order; a bad item is its problem object in
 * place (carrying its own status) and the batch as a whole is 200. */
static void batch_reply(const struct route *route, const json_t *items, struct api_response *resp)
{
    struct api_jsonw w;
    json_t *item;
    size_t i;
    char detail[120];

    if (json_array_size(items) > API_BATCH_MAX) {
        snprintf(detail, sizeof detail, "A batch holds at most %d items; this one has %zu.",
                 API_BATCH_MAX, json_array_size(items));
        api_reply_problem(resp, API_E_INVALID_INPUT, detail, NULL);
        return;
    }
    api_jsonw_init(&w);
    api_jsonw_open_array(&w);
    json_array_foreach (items, i, item) {
        if (w.failed)
            break;
        object_answer(route, item, &w); /* an item's own status is inside its problem body */
    }
    api_jsonw_close_array(&w);
    api_reply_writer(resp, 200, API_CT_JSON, &w);
}

static void handle_compute(const struct route *route, const struct api_request *req,
                           struct api_response *resp)
{
    struct api_jsonw w;
    unsigned status = 0;
    json_t *body, *errors;
    struct core_input in;

    api_jsonw_init(&w);
    if (strcmp(req->method, "POST") != 0) {
        core_input_init(&in);
        errors = json_array();
        if (errors == NULL)
            status = problem_answer(&w, API_E_INTERNAL, "Out of memory.", NULL);
        else if (!api_decode_query(req->query, req->query_count, &in, errors))
            status = invalid_input_answer(&w, errors);
        else {
            json_decref(errors);
            status = compute_answer(route, &in, &w);
        }
        reply_answer(resp, status, &w);
        return;
    }
    body = read_body(req, &w, &status);
    if (body != NULL && json_is_array(body))
        batch_reply(route, body, resp);
    else {
        if (body != NULL)
            status = object_answer(route, body, &w);
        reply_answer(resp, status, &w);
    }
    json_decref(body);
}

static double monotonic_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* POST /plan: decode -> core_plan_search -> encode. The plan arrays live in the request's own
 * allocation (about 20 KB, too big for a worker's stack). */
static void handle_plan(const struct route *route, const struct api_request *req,
                        struct api_response *resp)
{
    struct plan_work {
        struct core_plan_input in;
        struct core_plan plans[CORE_PLAN_TOP], pareto[CORE_PLAN_PARETO_MAX];
        struct core_plan_summary summary;
        struct core_problems problems;
    } *w = NULL;
    struct api_jsonw out;
    unsigned reply_status = 0;
    json_t *body, *errors = NULL;
    enum core_status status;
    double start = monotonic_seconds();

    (void)route;
    api_jsonw_init(&out);
    body = read_body(req, &out, &reply_status);
    if (body != NULL && !json_is_object(body)) {
        reply_status =
            problem_answer(&out, API_E_MALFORMED_JSON, "The body must be a JSON object.", NULL);
    } else if (body != NULL) {
        w = calloc(1, sizeof *w);
        errors = json_array();
        if (w == NULL || errors == NULL) {
            reply_status = problem_answer(&out, API_E_INTERNAL, "Out of memory.", NULL);
            json_decref(errors);
        } else {
            core_plan_input_init(&w->in);
            if (!api_decode_plan_object(body, &w->in, errors)) {
                reply_status = invalid_input_answer(&out, errors);
            } else {
                json_decref(errors);
                status = core_plan_search(&w->in, w->plans, CORE_PLAN_TOP, w->pareto,
                                          CORE_PLAN_PARETO_MAX, &w->summary, &w->problems);
                if (status != CORE_OK) {
                    reply_status = core_problems_answer(&out, status, &w->problems);
                } else {
                    reply_status = 200;
                    api_write_json(&out, api_encode_plan(&w->in, &w->summary, w->plans, w->pareto,
                                                         monotonic_seconds() - start));
                }
            }
        }
    }
    reply_answer(resp, reply_status, &out);
    free(w);
    json_decref(body);
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
                   strcmp(route->path, "/gpus") == 0     ? api_encode_gpus()
                   : strcmp(route->path, "/models") == 0 ? api_encode_models()
                                                         : api_encode_input_table());
}

static const struct route routes[] = {
    {"/flops", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute, api_write_flops},
    {"/memory", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute,
     api_write_memory},
    {"/fit", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute, write_fit},
    {"/runtime", M_GET | M_HEAD | M_POST | M_OPTIONS, ALLOW_COMPUTE, handle_compute,
     api_write_runtime},
    {"/plan", M_POST | M_OPTIONS, ALLOW_PLAN, handle_plan, NULL},
    {"/gpus", M_GET | M_HEAD | M_OPTIONS, ALLOW_CATALOG, handle_catalog, NULL},
    {"/models", M_GET | M_HEAD | M_OPTIONS, ALLOW_CATALOG, handle_catalog, NULL},
    {"/inputs", M_GET | M_HEAD | M_OPTIONS, ALLOW_CATALOG, handle_catalog, NULL},
};

const char *api_route_path(size_t i)
{
    return i < sizeof routes / sizeof routes[0] ? routes[i].path : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Caching
 * ------------------------------------------------------------------------------------------- */

/* The ETag hash: FNV-1a taken a 64-bit word at a time (eight times fewer multiplications than
 * byte-wise FNV-1a, which cost 9k instructions of a 1.5 KB /fit reply), the tail bytes and the
 * length folded in, then splitmix64's finalizer so every input bit reaches every output bit.
 * Each step (h ^ w) * odd is a bijection of h, so two bodies of the same length that differ in
 * one word always get different tags. Words are read in host byte order: a tag is only ever
 * compared with tags from the same server binary. */
static unsigned long long body_hash(const char *data, size_t len)
{
    const unsigned long long prime = 0x100000001b3ULL;
    unsigned long long h = 0xcbf29ce484222325ULL ^ (unsigned long long)len;
    unsigned long long w;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        memcpy(&w, data + i, 8);
        h = (h ^ w) * prime;
    }
    if (i < len) {
        w = 0;
        memcpy(&w, data + i, len - i);
        h = (h ^ w) * prime;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/* "\"<16 lowercase hex digits>\"" into out (at least 19 bytes). */
static void format_etag(unsigned long long h, char *out)
{
    static const char hex[] = "0123456789abcdef";

    out[0] = '"';
    for (int i = 0; i < 16; i++)
        out[1 + i] = hex[(h >> (60 - 4 * i)) & 15];
    out[17] = '"';
    out[18] = '\0';
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
    format_etag(body_hash(resp->body, resp->body_len), resp->etag);
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
