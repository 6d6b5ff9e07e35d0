/*
 * inference.c - GET|POST /inference: will the model serve? (core_serve, core/serve.h).
 *
 * The compute routes' conventions (compute.c): GET takes the query string, POST a JSON object,
 * a POSTed array is a batch answered item by item (at most API_BATCH_MAX), 400 names each bad
 * field, 422 lists core's contradictions. Inputs: every compute row (the model, the replica)
 * plus the serving rows of core_serve_inputs. Reply: "inputs", then "inference".
 */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "launch.h"
#include "serve_time_write.h"
#include "serve_validation.h"

static unsigned serve_answer(const struct core_serve_input *in, const struct api_launch *launch,
                             struct api_jsonw *w)
{
    struct core_serve_result result;
    struct core_serve_time_input timing;
    struct core_serve_time time;
    struct core_problems problems;
    enum core_status status;

    memset(&problems, 0, sizeof problems);
    status = core_serve(in, &result, &problems);
    if (status != CORE_OK)
        return api_answer_core_problems(w, status, &problems);
    api_jsonw_open_object(w);
    api_write_serve_inputs(w, &result, launch->source);
    api_write_inference(w, &result, launch->warnings);
    /* No time for a deployment that does not start, whose max_model_len is shorter than one
     * request of the workload, or whose pool holds no such request. */
    if (core_serve_time_possible(&result)) {
        core_serve_time_input_of(&result, &timing);
        core_serve_time_compute(&timing, NULL, &time);
        api_write_serve_time(w, &timing, &time, core_serve_time_expected_error(&result));
    } else {
        api_jsonw_key(w, "time");
        api_jsonw_null(w);
    }
    api_jsonw_close_object(w);
    return 200;
}

/* One JSON object; vllm_args in it (launch.h) is resolved into inputs first, the body's own
 * members winning. */
static unsigned object_answer(const json_t *item, struct api_jsonw *w)
{
    struct core_serve_input in;
    struct api_launch launch;
    json_t *errors, *inputs;
    unsigned status;

    inputs = api_item_inputs(item, true, &launch, &errors, w, &status);
    if (inputs == NULL)
        return status;
    core_serve_input_init(&in);
    if (!api_decode_serve_object(inputs, &in, errors))
        return api_item_invalid(inputs, &launch, errors, w);
    json_decref(inputs);
    json_decref(errors);
    status = serve_answer(&in, &launch, w);
    api_launch_free(&launch);
    return status;
}

/* One batch item (api_reply_batch's answer; inference has no per-route context). */
static unsigned batch_item(const void *ctx, const json_t *item, struct api_jsonw *w)
{
    (void)ctx;
    return object_answer(item, w);
}

void api_handle_inference(const struct api_request *req, struct api_response *resp, void *ctx)
{
    struct api_jsonw w;
    unsigned status = 0;
    json_t *body, *errors;
    struct core_serve_input in;

    (void)ctx;
    api_jsonw_init(&w);
    if (strcmp(req->method, "POST") != 0) {
        core_serve_input_init(&in);
        errors = json_array();
        if (errors == NULL)
            status = api_answer_problem(&w, API_E_INTERNAL, "Out of memory.", NULL);
        else if (!api_decode_serve_query(req->query, req->query_count, &in, errors))
            status = api_answer_invalid(&w, errors);
        else {
            struct api_launch none = {NULL, NULL, NULL};

            json_decref(errors);
            status = serve_answer(&in, &none, &w);
        }
        api_reply_answer(resp, status, &w);
        return;
    }
    body = api_read_body(req, &w, &status);
    if (body != NULL && json_is_array(body))
        api_reply_batch(body, resp, batch_item, NULL);
    else {
        if (body != NULL)
            status = object_answer(body, &w);
        api_reply_answer(resp, status, &w);
    }
    json_decref(body);
}
