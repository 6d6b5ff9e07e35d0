/*
 * serve_plan.c - POST /inference/plan: decode -> core_serve_plan_search -> the reply.
 *
 * The body is one JSON object: /inference's inputs (the model, engine and knobs; input_len and
 * output_len) plus the planner's (a load, SLOs, the GPUs and their prices, the quantizations and
 * KV dtypes to consider; core_serve_plan_inputs). Each plan in the reply carries `request`, the
 * inputs the planner chose, and the `inputs`, `inference` and `time` members /inference answers
 * for the request's inputs with those merged in: the same functions compute them, so re-asking
 * gives the same bytes. The reply carries the search's own wall time (elapsed_seconds).
 */
#include <stdlib.h>
#include <time.h>

#include "api_internal.h"
#include "serve_plan.h"
#include "serve_time_write.h"
#include "serve_validation.h"

static double monotonic_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void real_or_null(struct api_jsonw *w, const char *key, double v, bool given)
{
    api_jsonw_key(w, key);
    if (given)
        api_jsonw_double(w, v);
    else
        api_jsonw_null(w);
}

/* What the planner chose: the /inference inputs to merge into the request. */
static void request(struct api_jsonw *w, const struct core_serve_input *serve)
{
    api_jsonw_key(w, "request");
    api_jsonw_open_object(w);
    api_jsonw_key(w, "gpu");
    api_jsonw_string(w, core_gpus[serve->base.gpu].id);
    api_jsonw_key(w, "gpus");
    api_jsonw_int(w, serve->base.gpus);
    api_jsonw_key(w, "tp");
    api_jsonw_int(w, serve->base.tp);
    api_jsonw_key(w, "quantization");
    api_jsonw_string(w, core_quant_names[serve->quantization]);
    api_jsonw_key(w, "kv_cache_dtype");
    api_jsonw_string(w, core_kv_dtype_names[serve->kv_cache_dtype]);
    api_jsonw_key(w, "max_model_len");
    api_jsonw_int(w, serve->max_model_len);
    api_jsonw_key(w, "concurrency");
    api_jsonw_int(w, serve->concurrency);
    api_jsonw_key(w, "batching");
    api_jsonw_string(w, core_batching_names[serve->batching]);
    if (serve->base.usd_per_gpu_hour >= 0) {
        api_jsonw_key(w, "usd_per_gpu_hour");
        api_jsonw_double(w, serve->base.usd_per_gpu_hour);
    }
    api_jsonw_close_object(w);
}

/* One plan: its summary, the request that reproduces it, and /inference's members for it. */
static void plan_object(struct api_jsonw *w, const struct core_serve_plan_input *in,
                        const struct core_serve_plan *p)
{
    struct core_serve_input serve;
    struct core_serve_result res;
    struct core_serve_time_input ti;
    struct core_problems problems = {0};

    core_serve_plan_request(in, p, &serve);
    api_jsonw_open_object(w);
    api_jsonw_key(w, "gpu");
    api_jsonw_string(w, core_gpus[p->gpu].id);
    api_jsonw_key(w, "tp");
    api_jsonw_int(w, p->tp);
    api_jsonw_key(w, "replicas");
    api_jsonw_int(w, p->replicas);
    api_jsonw_key(w, "gpus");
    api_jsonw_int(w, p->gpus);
    api_jsonw_key(w, "quantization");
    api_jsonw_string(w, core_quant_names[p->quantization]);
    api_jsonw_key(w, "kv_cache_dtype");
    api_jsonw_string(w, core_kv_dtype_names[p->kv_cache_dtype]);
    api_jsonw_key(w, "concurrency");
    api_jsonw_int(w, p->concurrency);
    api_jsonw_key(w, "max_concurrency");
    api_jsonw_int(w, p->max_concurrency);
    real_or_null(w, "usd_per_hour", p->usd_per_hour, p->usd_per_hour >= 0);
    api_jsonw_key(w, "requests_per_second");
    api_jsonw_double(w, p->requests_per_second);
    api_jsonw_key(w, "ttft_seconds");
    api_jsonw_double(w, p->time.ttft_seconds);
    api_jsonw_key(w, "tpot_seconds");
    api_jsonw_double(w, p->time.tpot_seconds);
    request(w, &serve);
    if (core_serve(&serve, &res, &problems) == CORE_OK) { /* it was sized so in the search */
        api_write_serve_inputs(w, &res, NULL);
        api_write_inference(w, &res, NULL);
        core_serve_time_input_of(&res, &ti);
        api_write_serve_time(w, &ti, &p->time, core_serve_time_expected_error(&res));
    }
    api_jsonw_close_object(w);
}

static void plan_list(struct api_jsonw *w, const char *key, const struct core_serve_plan_input *in,
                      const struct core_serve_plan *plans, int n)
{
    api_jsonw_key(w, key);
    api_jsonw_open_array(w);
    for (int i = 0; i < n && !w->failed; i++)
        plan_object(w, in, &plans[i]);
    api_jsonw_close_array(w);
}

/* The planner's own inputs as searched. */
static void plan_inputs(struct api_jsonw *w, const struct core_serve_plan_input *in,
                        const struct core_serve_plan_summary *s)
{
    api_jsonw_key(w, "inputs");
    api_jsonw_open_object(w);
    api_jsonw_key(w, "engine"); /* every candidate's, and the release of its sizing code */
    api_jsonw_string(w, core_engine_names[in->base.engine]);
    api_jsonw_key(w, "engine_version");
    api_jsonw_string(w, core_engine_version_names[in->base.engine_version]);
    api_jsonw_key(w, "input_len");
    api_jsonw_int(w, in->base.input_len);
    api_jsonw_key(w, "output_len");
    api_jsonw_int(w, in->base.output_len);
    real_or_null(w, "requests_per_second", in->requests_per_second, in->requests_per_second > 0);
    api_jsonw_key(w, "concurrency");
    if (in->concurrency > 0 || in->requests_per_second <= 0)
        api_jsonw_int(w, in->concurrency > 0 ? in->concurrency : 1);
    else
        api_jsonw_null(w);
    real_or_null(w, "ttft_slo_seconds", in->ttft_slo_seconds, in->ttft_slo_seconds > 0);
    real_or_null(w, "tpot_slo_seconds", in->tpot_slo_seconds, in->tpot_slo_seconds > 0);
    api_jsonw_key(w, "tp_max");
    api_jsonw_int(w, in->tp_max);
    api_jsonw_key(w, "replicas_max");
    api_jsonw_int(w, in->replicas_max);
    api_jsonw_key(w, "gpu");
    api_jsonw_open_array(w);
    for (int i = 0; i < s->gpus_searched; i++)
        api_jsonw_string(w, core_gpus[s->searched[i]].id);
    api_jsonw_close_array(w);
    api_jsonw_key(w, "usd_per_gpu_hour");
    if (s->ranked_by_cost) {
        api_jsonw_open_object(w);
        for (int i = 0; i < s->gpus_searched; i++) {
            api_jsonw_key(w, core_gpus[s->searched[i]].id);
            api_jsonw_double(w, in->usd_per_gpu_hour[s->searched[i]]);
        }
        api_jsonw_close_object(w);
    } else {
        api_jsonw_null(w);
    }
    api_jsonw_key(w, "quantization");
    api_jsonw_open_array(w);
    for (int i = 0; i < s->quant_count; i++)
        api_jsonw_string(w, core_quant_names[s->quantizations[i]]);
    api_jsonw_close_array(w);
    api_jsonw_key(w, "kv_cache_dtype");
    api_jsonw_open_array(w);
    for (int i = 0; i < s->kv_count; i++)
        api_jsonw_string(w, core_kv_dtype_names[s->kv_cache_dtypes[i]]);
    api_jsonw_close_array(w);
    api_jsonw_close_object(w);
}

static void counts(struct api_jsonw *w, const struct core_serve_plan_summary *s, double elapsed)
{
    static const char *const keys[] = {"evaluated", "fitting", "timed", "feasible"};
    const int64_t values[] = {s->evaluated, s->fitting, s->timed, s->feasible};

    for (int i = 0; i < 4; i++) {
        api_jsonw_key(w, keys[i]);
        api_jsonw_int(w, values[i]);
    }
    api_jsonw_key(w, "elapsed_seconds");
    api_jsonw_double(w, elapsed);
}

static void encode(struct api_jsonw *w, const struct core_serve_plan_input *in,
                   const struct core_serve_plan_summary *s, const struct core_serve_plan *plans,
                   const struct core_serve_plan *pareto, double elapsed)
{
    api_jsonw_open_object(w);
    plan_inputs(w, in, s);
    api_jsonw_key(w, "ranked_by");
    api_jsonw_string(w, s->ranked_by_cost ? "usd_per_hour" : "gpus");
    plan_list(w, "plans", in, plans, s->plan_count);
    plan_list(w, "pareto", in, pareto, s->pareto_count);
    counts(w, s, elapsed);
    api_jsonw_key(w, "reasons");
    api_jsonw_open_array(w);
    for (int i = 0; i < s->reason_count; i++) {
        api_jsonw_open_object(w);
        api_jsonw_key(w, "field");
        api_jsonw_string(w, s->reasons[i].field);
        api_jsonw_key(w, "message");
        api_jsonw_string(w, s->reasons[i].message);
        api_jsonw_close_object(w);
    }
    api_jsonw_close_array(w);
    api_jsonw_close_object(w);
}

/* The plan arrays live in the request's own allocation (too big for a worker's stack). */
void api_handle_inference_plan(const struct api_request *req, struct api_response *resp, void *ctx)
{
    struct work {
        struct core_serve_plan_input in;
        struct core_serve_plan plans[CORE_SPLAN_TOP], pareto[CORE_SPLAN_PARETO_MAX];
        struct core_serve_plan_summary summary;
        struct core_problems problems;
    } *work = NULL;
    struct api_jsonw out;
    unsigned status = 0;
    json_t *body, *errors = NULL;
    double start = monotonic_seconds();

    (void)ctx;
    api_jsonw_init(&out);
    body = api_read_body(req, &out, &status);
    if (body == NULL)
        goto cleanup;
    if (!json_is_object(body)) {
        status =
            api_answer_problem(&out, API_E_MALFORMED_JSON, "The body must be a JSON object.", NULL);
        goto cleanup;
    }
    work = calloc(1, sizeof *work);
    errors = json_array();
    if (work == NULL || errors == NULL) {
        status = api_answer_problem(&out, API_E_INTERNAL, "Out of memory.", NULL);
        goto cleanup;
    }
    core_serve_plan_input_init(&work->in);
    if (!api_decode_serve_plan_object(body, &work->in, errors)) {
        status = api_answer_invalid(&out, errors);
        errors = NULL; /* stolen by the problem body */
        goto cleanup;
    }
    if (core_serve_plan_search(&work->in, work->plans, CORE_SPLAN_TOP, work->pareto,
                               CORE_SPLAN_PARETO_MAX, &work->summary, &work->problems) != CORE_OK) {
        status = api_answer_core_problems(&out, CORE_EINVAL, &work->problems);
        goto cleanup;
    }
    status = 200;
    encode(&out, &work->in, &work->summary, work->plans, work->pareto, monotonic_seconds() - start);
cleanup:
    api_reply_answer(resp, status, &out);
    json_decref(errors);
    free(work);
    json_decref(body);
}
