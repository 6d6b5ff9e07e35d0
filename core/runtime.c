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

/* Catalog peak for a precision in TFLOP/s; 0 = the GPU lacks it. fp32 trains on tf32 units. */
double core_catalog_peak_tflops(int gpu, enum core_precision precision)
{
    const struct core_gpu *g = &core_gpus[gpu];

    switch (precision) {
    case CORE_PREC_FP16:
        return g->fp16_tflops;
    case CORE_PREC_FP32:
        return g->tf32_tflops;
    case CORE_PREC_FP8:
        return g->fp8_tflops;
    case CORE_PREC_BF16:
    default:
        return g->bf16_tflops;
    }
}

static double run_flops(const struct core_resolved *r, const struct core_flops *f)
{
    switch (r->count) {
    case CORE_COUNT_MODEL:
        return f->model;
    case CORE_COUNT_HARDWARE:
        return f->hardware;
    case CORE_COUNT_SIX_ND:
    default:
        return f->six_nd;
    }
}

/* Achieved MFU from a measured cluster throughput (tokens/s). */
double core_measured_mfu(const struct core_resolved *r, const struct core_flops *f, double tps)
{
    return tps * core_flops_per_token(r, f) / ((double)r->gpus * r->peak_tflops * 1e12);
}

void core_runtime_compute(const struct core_resolved *r, const struct core_flops *f,
                          struct core_runtime *rt)
{
    double g = (double)r->gpus;

    rt->flops = run_flops(r, f);
    rt->peak_flops_per_gpu = r->peak_tflops * 1e12;
    rt->mfu_measured = r->tokens_per_second > 0;
    if (rt->mfu_measured) {
        rt->seconds = r->tokens / r->tokens_per_second;
        rt->mfu = core_measured_mfu(r, f, r->tokens_per_second);
    } else {
        rt->mfu = r->mfu;
        rt->seconds = rt->flops / (g * rt->peak_flops_per_gpu * r->mfu);
    }
    rt->hours = rt->seconds / 3600.0;
    rt->days = rt->seconds / 86400.0;
    rt->gpu_hours = rt->hours * g;
    rt->tokens_per_second = rt->mfu_measured ? r->tokens_per_second : r->tokens / rt->seconds;
    rt->tokens_per_second_per_gpu = rt->tokens_per_second / g;
    rt->global_batch_tokens = r->global_batch_tokens;
    rt->steps = ceil(r->tokens / r->global_batch_tokens);
    rt->step_seconds = rt->seconds / rt->steps;
    rt->cost_usd = r->usd_per_gpu_hour >= 0 ? rt->gpu_hours * r->usd_per_gpu_hour : -1.0;
}
