/*
 * plan.c - POST /plan: decode -> core_plan_search -> encode.
 *
 * The body must be one JSON object (no batches: a plan search is already the expensive kind of
 * request). The reply is built with jansson (encode.c) and carries the search's own wall time.
 */
#include <stdlib.h>
#include <time.h>

#include "api_internal.h"

static double monotonic_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The plan arrays live in the request's own allocation (about 20 KB, too big for a worker's
 * stack). Every way out goes through cleanup, which replies and releases what was taken. */
void api_handle_plan(const struct api_request *req, struct api_response *resp, void *ctx)
{
    struct plan_work {
        struct core_plan_input in;
        struct core_plan plans[CORE_PLAN_TOP], pareto[CORE_PLAN_PARETO_MAX];
        struct core_plan_summary summary;
        struct core_problems problems;
    } *work = NULL;
    struct api_jsonw out;
    unsigned reply_status = 0;
    json_t *body, *errors = NULL;
    enum core_status status;
    double start = monotonic_seconds();

    (void)ctx;
    api_jsonw_init(&out);
    body = api_read_body(req, &out, &reply_status);
    if (body == NULL)
        goto cleanup; /* the problem is already in out */
    if (!json_is_object(body)) {
        reply_status =
            api_answer_problem(&out, API_E_MALFORMED_JSON, "The body must be a JSON object.", NULL);
        goto cleanup;
    }
    work = calloc(1, sizeof *work);
    errors = json_array();
    if (work == NULL || errors == NULL) {
        reply_status = api_answer_problem(&out, API_E_INTERNAL, "Out of memory.", NULL);
        goto cleanup;
    }
    core_plan_input_init(&work->in);
    if (!api_decode_plan_object(body, &work->in, errors)) {
        reply_status = api_answer_invalid(&out, errors);
        errors = NULL; /* stolen by the problem body */
        goto cleanup;
    }
    status = core_plan_search(&work->in, work->plans, CORE_PLAN_TOP, work->pareto,
                              CORE_PLAN_PARETO_MAX, &work->summary, &work->problems);
    if (status != CORE_OK) {
        reply_status = api_answer_core_problems(&out, status, &work->problems);
        goto cleanup;
    }
    reply_status = 200;
    api_write_json(&out, api_encode_plan(&work->in, &work->summary, work->plans, work->pareto,
                                         monotonic_seconds() - start));
cleanup:
    api_reply_answer(resp, reply_status, &out);
    json_decref(errors);
    free(work);
    json_decref(body);
}
