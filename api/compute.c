/*
 * compute.c - the compute routes (/flops, /memory, /fit, /runtime, /evaluate): one request or a
 * batch.
 *
 * Each is decode -> core_evaluate_parts -> write -> reply, and they differ only in the parts
 * they compute and the members they write after "inputs" (/evaluate: all of them, so a client
 * such as the page needs one request). They stream their replies through the JSON writer (write.c,
 * jsonw.c) because they are the hot path; problem bodies are built with jansson and dumped into the
 * same writer. GET takes the query string (api/fields.c), POST a JSON body (body.c). A POSTed
 * JSON array is a batch (at most API_BATCH_MAX items): an array reply in the same order, 200
 * overall, where an item that fails is its own problem object (with its own status) so the
 * others still count.
 */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "launch.h"

/* What a compute route computes (core_evaluate_parts) and the members it writes after inputs. */
struct compute_route {
    unsigned parts;
    void (*write)(struct api_jsonw *w, const struct core_result *r);
};

static void write_fit(struct api_jsonw *w, const struct core_result *r)
{
    api_write_memory(w, r);
    api_write_fit(w, r);
    api_write_advice(w, r);
}

static void write_runtime(struct api_jsonw *w, const struct core_result *r)
{
    api_write_runtime(w, r);
    api_write_performance(w, r);
}

static void write_everything(struct api_jsonw *w, const struct core_result *r)
{
    api_write_flops(w, r);
    write_fit(w, r);
    write_runtime(w, r);
}

static const struct compute_route flops_route = {CORE_PART_FLOPS, api_write_flops};
static const struct compute_route memory_route = {CORE_PART_MEMORY, api_write_memory};
static const struct compute_route fit_route = {CORE_PART_FIT, write_fit};
static const struct compute_route runtime_route = {CORE_PART_RUNTIME, write_runtime};
static const struct compute_route evaluate_route = {CORE_PART_ALL, write_everything};

static unsigned compute_answer(const struct compute_route *route, const struct core_input *in,
                               const struct api_launch *launch, struct api_jsonw *w)
{
    struct core_result result;
    struct core_problems problems;
    enum core_status status;

    memset(&problems, 0, sizeof problems);
    status = core_evaluate_parts(in, route->parts, &result, &problems);
    if (status != CORE_OK)
        return api_answer_core_problems(w, status, &problems);
    /* Member order: inputs, the route's figures, warnings. */
    api_jsonw_open_object(w);
    api_write_inputs(w, &result, launch->source);
    route->write(w, &result);
    api_write_warnings(w, &result, launch->warnings);
    api_jsonw_close_object(w);
    return 200;
}

/* One JSON value of inputs (a request body, or one item of a batch). A launch configuration
 * in it (launch.h) is resolved into inputs first; the body's own members win over it. */
static unsigned object_answer(const struct compute_route *route, const json_t *item,
                              struct api_jsonw *w)
{
    struct core_input in;
    struct api_launch launch;
    json_t *errors, *inputs;
    unsigned status;

    inputs = api_item_inputs(item, false, &launch, &errors, w, &status);
    if (inputs == NULL)
        return status;
    core_input_init(&in);
    if (!api_decode_object(inputs, &in, errors))
        return api_item_invalid(inputs, &launch, errors, w);
    json_decref(inputs);
    json_decref(errors);
    status = compute_answer(route, &in, &launch, w);
    api_launch_free(&launch);
    return status;
}

/* One batch item (api_reply_batch's answer): ctx is the route. */
static unsigned batch_item(const void *ctx, const json_t *item, struct api_jsonw *w)
{
    return object_answer(ctx, item, w);
}

static void compute(const struct compute_route *route, const struct api_request *req,
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
            status = api_answer_problem(&w, API_E_INTERNAL, "Out of memory.", NULL);
        else if (!api_decode_query(req->query, req->query_count, &in, errors))
            status = api_answer_invalid(&w, errors);
        else {
            struct api_launch none = {NULL, NULL, NULL};

            json_decref(errors);
            status = compute_answer(route, &in, &none, &w);
        }
        api_reply_answer(resp, status, &w);
        return;
    }
    body = api_read_body(req, &w, &status);
    if (body != NULL && json_is_array(body))
        api_reply_batch(body, resp, batch_item, route);
    else {
        if (body != NULL)
            status = object_answer(route, body, &w);
        api_reply_answer(resp, status, &w);
    }
    json_decref(body);
}

void api_handle_flops(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    compute(&flops_route, req, resp);
}

void api_handle_memory(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    compute(&memory_route, req, resp);
}

void api_handle_fit(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    compute(&fit_route, req, resp);
}

void api_handle_runtime(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    compute(&runtime_route, req, resp);
}

void api_handle_evaluate(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    compute(&evaluate_route, req, resp);
}
