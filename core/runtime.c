/*
 * runtime.c - wall-clock, throughput and cost (lesson sections 2 and 5).
 *
 * seconds = F / (G * peak * mfu): the FLOPs the run needs over the FLOP/s the cluster delivers.
 * F is six_nd, model or hardware FLOPs as the caller chose. Given a measured cluster throughput
 * instead, the same identity is solved for MFU (PaLM's definition: model FLOPs per token times
 * tokens per second over peak).
 */
#include <math.h>

#include "internal.h"
#include "perf.h"

/* Achieved MFU from a measured cluster throughput (tokens/s). */
double core_measured_mfu(const struct core_resolved *r, const struct core_flops *f, double tps)
{
    return tps * core_flops_per_token(r, f) / ((double)r->gpus * r->peak_tflops * 1e12);
}

/* The model's prediction for one step, and for the whole run: ceil(D / tokens per step) steps. */
static void predict(const struct core_resolved *r, struct core_runtime *rt, struct core_perf *perf)
{
    struct core_perf_input pin;
    double g = (double)r->gpus;

    core_perf_input_resolved(&pin, r);
    core_perf_predict(&pin, perf);
    rt->predicted_seconds = rt->steps * perf->step_seconds;
    rt->predicted_days = rt->predicted_seconds / 86400.0;
    rt->predicted_gpu_hours = rt->predicted_seconds / 3600.0 * g;
    rt->predicted_cost_usd =
        r->usd_per_gpu_hour >= 0 ? rt->predicted_gpu_hours * r->usd_per_gpu_hour : -1.0;
}

void core_runtime_compute(const struct core_resolved *r, const struct core_flops *f,
                          struct core_runtime *rt, struct core_perf *perf)
{
    double g = (double)r->gpus;

    rt->flops = core_flops_counted(f, r->count);
    rt->peak_flops_per_gpu = r->peak_tflops * 1e12;
    rt->global_batch_tokens = r->global_batch_tokens;
    rt->steps = ceil(r->tokens / r->global_batch_tokens);
    predict(r, rt, perf);
    rt->mfu_measured = r->tokens_per_second > 0;
    if (rt->mfu_measured) {
        rt->seconds = r->tokens / r->tokens_per_second;
        rt->mfu = core_measured_mfu(r, f, r->tokens_per_second);
    } else if (r->mfu_predicted) {
        /* The prediction, read back as the MFU of the `count` convention. */
        rt->seconds = rt->predicted_seconds;
        rt->mfu = rt->flops / (g * rt->peak_flops_per_gpu * rt->seconds);
    } else {
        rt->mfu = r->mfu;
        rt->seconds = rt->flops / (g * rt->peak_flops_per_gpu * r->mfu);
    }
    rt->hours = rt->seconds / 3600.0;
    rt->days = rt->seconds / 86400.0;
    rt->gpu_hours = rt->hours * g;
    rt->tokens_per_second = rt->mfu_measured ? r->tokens_per_second : r->tokens / rt->seconds;
    rt->tokens_per_second_per_gpu = rt->tokens_per_second / g;
    rt->step_seconds = rt->seconds / rt->steps;
    rt->cost_usd = r->usd_per_gpu_hour >= 0 ? rt->gpu_hours * r->usd_per_gpu_hour : -1.0;
}
