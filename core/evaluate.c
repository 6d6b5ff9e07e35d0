/*
 * evaluate.c - defaults, validation and the evaluation pipeline.
 *
 * core_evaluate() is a fixed sequence: check raw ranges (the api bounds-checks, but a fuzzer or
 * another caller may not, and the core must never divide by zero or overflow), resolve every
 * input (shape, N, precisions, catalog), check combinations, then compute FLOPs, memory, fit,
 * runtime and notes. Problems are collected rather than returned at the first one, so a
 * caller sees every offending field at once. Field names are the API's.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_SEQ_LEN 512
#define DEFAULT_TOKENS  1.4e12
#define DEFAULT_MFU     0.5

void core_input_init(struct core_input *in)
{
    memset(in, 0, sizeof *in);
    in->preset = -1;
    in->gated_mlp = CORE_FLAG_AUTO;
    in->tied_embeddings = CORE_FLAG_AUTO;
    in->batch = 1;
    in->seq_len = DEFAULT_SEQ_LEN;
    in->tokens = DEFAULT_TOKENS;
    in->precision = CORE_PREC_BF16;
    in->grad_precision = -1;
    in->master_weights = CORE_FLAG_AUTO;
    in->optimizer = CORE_OPT_ADAMW;
    in->checkpointing = CORE_CKPT_NONE;
    in->flash_attention = false;
    in->attention_flops = CORE_ATTN_FULL;
    in->gpus = 1;
    in->gpu = CORE_GPU_DEFAULT;
    in->zero_stage = 3;
    in->tp = 1;
    in->pp = 1;
    in->sequence_parallel = CORE_FLAG_AUTO;
    in->mfu = DEFAULT_MFU;
    in->count = CORE_COUNT_SIX_ND;
    in->usd_per_gpu_hour = -1.0;
}

/* ---------------------------------------------------------------------------------------------
 * Raw ranges, one table row per numeric field. "zero_ok" marks the 0 = not given fields.
 * ------------------------------------------------------------------------------------------- */

struct int_bound {
    const char *field;
    size_t offset;
    int64_t min, max;
    bool zero_ok;
};

#define IB(name, member, lo, hi, z)                                                                \
    {                                                                                              \
        name, offsetof(struct core_input, member), lo, hi, z                                       \
    }
static const struct int_bound int_bounds[] = {
    IB("params", params, 1, (int64_t)CORE_PARAMS_MAX, true),
    IB("active_params", active_params, 1, (int64_t)CORE_PARAMS_MAX, true),
    IB("layers", layers, 1, CORE_LAYERS_MAX, true),
    IB("hidden", hidden, 1, CORE_HIDDEN_MAX, true),
    IB("heads", heads, 1, CORE_HEADS_MAX, true),
    IB("kv_heads", kv_heads, 1, CORE_HEADS_MAX, true),
    IB("head_dim", head_dim, 1, CORE_HIDDEN_MAX, true),
    IB("ffn_hidden", ffn_hidden, 1, 64LL * CORE_HIDDEN_MAX, true),
    IB("vocab", vocab, 1, CORE_VOCAB_MAX, true),
    IB("batch", batch, 1, CORE_BATCH_MAX, false),
    IB("seq_len", seq_len, 1, CORE_SEQ_LEN_MAX, false),
    IB("gpus", gpus, 1, CORE_GPUS_MAX, false),
    IB("tp", tp, 1, CORE_PARALLEL_MAX, false),
    IB("pp", pp, 1, CORE_PARALLEL_MAX, false),
};

struct real_bound {
    const char *field;
    size_t offset;
    double min, max;
    bool zero_ok;
};

#define RB(name, member, lo, hi, z)                                                                \
    {                                                                                              \
        name, offsetof(struct core_input, member), lo, hi, z                                       \
    }
static const struct real_bound real_bounds[] = {
    RB("tokens", tokens, 1.0, CORE_TOKENS_MAX, false),
    RB("memory_gb", memory_gb, 1e-9, CORE_MEMORY_GB_MAX, true),
    RB("peak_tflops", peak_tflops, CORE_PEAK_TFLOPS_MIN, CORE_PEAK_TFLOPS_MAX, true),
    RB("reserve_gb", reserve_gb, 0.0, CORE_MEMORY_GB_MAX, true),
    RB("mfu", mfu, CORE_MFU_MIN, 1.0, false),
    RB("tokens_per_second", tokens_per_second, 1e-9, CORE_TPS_MAX, true),
    RB("global_batch_tokens", global_batch_tokens, 1.0, CORE_TOKENS_MAX, true),
};

/* Small enumerations and indexes: value must lie in [min, max]. */
struct choice {
    const char *field;
    int value, min, max;
};

static void check_ints(const struct core_input *in, struct core_problems *p)
{
    for (size_t i = 0; i < sizeof int_bounds / sizeof int_bounds[0]; i++) {
        const struct int_bound *b = &int_bounds[i];
        int64_t v;
        memcpy(&v, (const char *)in + b->offset, sizeof v);
        if ((v == 0 && b->zero_ok) || (v >= b->min && v <= b->max))
            continue;
        core_problem_add(p, b->field, "%lld is outside [%lld, %lld]", (long long)v,
                         (long long)b->min, (long long)b->max);
    }
}

static void check_reals(const struct core_input *in, struct core_problems *p)
{
    for (size_t i = 0; i < sizeof real_bounds / sizeof real_bounds[0]; i++) {
        const struct real_bound *b = &real_bounds[i];
        double v;
        memcpy(&v, (const char *)in + b->offset, sizeof v);
        if ((v == 0 && b->zero_ok) || (v >= b->min && v <= b->max)) /* false for NaN */
            continue;
        core_problem_add(p, b->field, "%g is outside [%g, %g]", v, b->min, b->max);
    }
    /* Any negative price means "not given"; NaN and inf are refused. */
    if (!isfinite(in->usd_per_gpu_hour) || in->usd_per_gpu_hour > CORE_USD_MAX)
        core_problem_add(p, "usd_per_gpu_hour", "must be a finite price of at most %g",
                         CORE_USD_MAX);
}

static void check_choices(const struct core_input *in, struct core_problems *p)
{
    const struct choice choices[] = {
        {"model", in->preset, -1, (int)core_preset_count - 1},
        {"gpu", in->gpu, 0, (int)core_gpu_count - 1},
        {"precision", (int)in->precision, CORE_PREC_BF16, CORE_PREC_FP8},
        /* Gradients are kept in bf16, fp16 or fp32 (an fp8 run keeps bf16 gradients). */
        {"grad_precision", in->grad_precision, -1, CORE_PREC_FP32},
        {"optimizer", (int)in->optimizer, CORE_OPT_ADAMW, CORE_OPT_ADAFACTOR},
        {"checkpointing", (int)in->checkpointing, CORE_CKPT_NONE, CORE_CKPT_FULL},
        {"attention_flops", (int)in->attention_flops, CORE_ATTN_FULL, CORE_ATTN_CAUSAL},
        {"count", (int)in->count, CORE_COUNT_SIX_ND, CORE_COUNT_HARDWARE},
        {"zero_stage", in->zero_stage, 0, 3},
        {"gated_mlp", (int)in->gated_mlp, CORE_FLAG_AUTO, CORE_FLAG_YES},
        {"tied_embeddings", (int)in->tied_embeddings, CORE_FLAG_AUTO, CORE_FLAG_YES},
        {"master_weights", (int)in->master_weights, CORE_FLAG_AUTO, CORE_FLAG_YES},
        {"sequence_parallel", (int)in->sequence_parallel, CORE_FLAG_AUTO, CORE_FLAG_YES},
    };

    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++)
        if (choices[i].value < choices[i].min || choices[i].value > choices[i].max)
            core_problem_add(p, choices[i].field, "%d is not a valid choice", choices[i].value);
}

static bool check_ranges(const struct core_input *in, struct core_problems *p)
{
    check_ints(in, p);
    check_reals(in, p);
    check_choices(in, p);
    return p->count == 0;
}

/* ---------------------------------------------------------------------------------------------
 * Resolution
 * ------------------------------------------------------------------------------------------- */

static bool flag_or(enum core_flag f, bool dflt)
{
    return f == CORE_FLAG_AUTO ? dflt : f == CORE_FLAG_YES;
}

static void resolve_training(const struct core_input *in, struct core_resolved *r)
{
    bool fp32 = in->precision == CORE_PREC_FP32;

    r->batch = in->batch;
    r->seq_len = in->seq_len;
    r->tokens = in->tokens;
    r->precision = in->precision;
    /* Gradients follow the weights; fp8 runs keep bf16 gradients. */
    if (in->grad_precision >= 0)
        r->grad_precision = (enum core_precision)in->grad_precision;
    else
        r->grad_precision = in->precision == CORE_PREC_FP8 ? CORE_PREC_BF16 : in->precision;
    r->master_weights = flag_or(in->master_weights, !fp32);
    r->optimizer = in->optimizer;
    r->checkpointing = in->checkpointing;
    r->flash_attention = in->flash_attention;
    r->attention_flops = in->attention_flops;
    r->count = in->count;
}

static void resolve_cluster(const struct core_input *in, struct core_resolved *r)
{
    const struct core_gpu *g = &core_gpus[in->gpu];
    int64_t ways = in->tp * in->pp; /* <= 1e12: no overflow */

    r->gpus = in->gpus;
    r->tp = in->tp;
    r->pp = in->pp;
    r->dp = in->gpus / ways > 0 ? in->gpus / ways : 1;
    r->gpu = in->gpu;
    r->zero_stage = in->zero_stage;
    r->sequence_parallel = flag_or(in->sequence_parallel, in->tp > 1);
    r->memory_gb = in->memory_gb > 0 ? in->memory_gb : g->memory_gb;
    r->peak_tflops =
        in->peak_tflops > 0 ? in->peak_tflops : core_catalog_peak_tflops(in->gpu, in->precision);
    r->reserve_gb = in->reserve_gb;
    r->mfu = in->mfu;
    r->usd_per_gpu_hour = in->usd_per_gpu_hour < 0 ? -1.0 : in->usd_per_gpu_hour;
    r->tokens_per_second = in->tokens_per_second;
    r->global_batch_tokens = in->global_batch_tokens > 0
                                 ? in->global_batch_tokens
                                 : (double)in->batch * (double)in->seq_len * (double)r->dp;
}

static enum core_status resolve(const struct core_input *in, struct core_resolved *r,
                                struct core_problems *p)
{
    enum core_status st = core_resolve_shape(in, &r->shape, p);

    resolve_training(in, r);
    resolve_cluster(in, r);
    /* Without a shape, N is known only when given; the combination checks still use it. */
    r->params = st == CORE_OK ? core_resolve_params(in, &r->shape) : in->params;
    r->active_params = in->active_params > 0 ? in->active_params : r->params;
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Combinations: each input is in range but together they are impossible.
 * ------------------------------------------------------------------------------------------- */

static int64_t capacity_bytes(const struct core_resolved *r)
{
    return (int64_t)llround(r->memory_gb * 1e9) - (int64_t)llround(r->reserve_gb * 1e9);
}

static void check_cluster(const struct core_resolved *r, struct core_problems *p)
{
    int64_t ways = r->tp * r->pp;

    if (ways > r->gpus)
        core_problem_add(p, "gpus", "tp*pp = %lld exceeds gpus = %lld", (long long)ways,
                         (long long)r->gpus);
    else if (r->gpus % ways != 0)
        core_problem_add(p, "gpus", "%lld is not a multiple of tp*pp = %lld", (long long)r->gpus,
                         (long long)ways);
    if (r->peak_tflops <= 0)
        core_problem_add(p, "precision",
                         "%s does not support %s; choose another precision or "
                         "give peak_tflops",
                         core_gpus[r->gpu].id, core_precision_names[r->precision]);
    if (capacity_bytes(r) <= 0)
        core_problem_add(p, "reserve_gb", "reserve_gb %g leaves no memory of the %g GB",
                         r->reserve_gb, r->memory_gb);
}

static void check_training(const struct core_input *in, const struct core_resolved *r,
                           struct core_problems *p)
{
    if (r->precision == CORE_PREC_FP32 && in->master_weights == CORE_FLAG_YES)
        core_problem_add(p, "master_weights", "fp32 training has no separate master copy");
    if (r->params > 0 && r->active_params > r->params)
        core_problem_add(p, "active_params", "active_params %lld exceeds params %lld",
                         (long long)r->active_params, (long long)r->params);
}

/* A measured throughput must not imply more than the peak. Needs the FLOPs per token. */
static void check_measured(const struct core_resolved *r, const struct core_flops *f,
                           struct core_problems *p)
{
    double mfu;

    if (r->tokens_per_second <= 0 || r->peak_tflops <= 0)
        return;
    mfu = core_measured_mfu(r, f, r->tokens_per_second);
    if (!(mfu <= 1.0))
        core_problem_add(p, "tokens_per_second",
                         "%g tokens/s would need %.3g x the GPUs' peak (mfu > 1)",
                         r->tokens_per_second, mfu);
}

/* ---------------------------------------------------------------------------------------------
 * Every double leaves finite (a NaN or inf would poison JSON): otherwise CORE_ERANGE.
 * ------------------------------------------------------------------------------------------- */

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static enum core_status check_finite(const struct core_result *res, struct core_problems *p)
{
    const struct core_flops *f = &res->flops;
    const struct core_runtime *rt = &res->runtime;
    const double flops[] = {f->six_nd,
                            f->model,
                            f->hardware,
                            f->per_token.forward,
                            f->per_token.backward,
                            f->per_token.recompute,
                            f->per_token.attention,
                            f->attention_fraction};
    const double runtime[] = {rt->flops,
                              rt->seconds,
                              rt->hours,
                              rt->days,
                              rt->gpu_hours,
                              rt->tokens_per_second,
                              rt->tokens_per_second_per_gpu,
                              rt->mfu,
                              rt->peak_flops_per_gpu,
                              rt->global_batch_tokens,
                              rt->steps,
                              rt->step_seconds,
                              rt->cost_usd,
                              res->fit.utilization};

    if (!all_finite(flops, sizeof flops / sizeof flops[0]))
        core_problem_add(p, "tokens", "result out of range");
    else if (!all_finite(runtime, sizeof runtime / sizeof runtime[0]))
        core_problem_add(p, "tokens", "result out of range");
    else
        return CORE_OK;
    return CORE_ERANGE;
}

/* ---------------------------------------------------------------------------------------------
 * The pipeline
 * ------------------------------------------------------------------------------------------- */

/* Zero the figures; the note lists are only emptied (their ~8 KB of text buffers are written
 * as notes are added), which keeps an evaluation cheap. */
static void clear_result(struct core_result *out)
{
    memset(&out->resolved, 0, sizeof out->resolved);
    memset(&out->flops, 0, sizeof out->flops);
    memset(&out->memory, 0, sizeof out->memory);
    memset(&out->fit, 0, sizeof out->fit);
    memset(&out->runtime, 0, sizeof out->runtime);
    out->warning_count = 0;
    out->advice_count = 0;
}

enum core_status core_evaluate(const struct core_input *in, struct core_result *out,
                               struct core_problems *problems)
{
    struct core_problems scratch;
    struct core_problems *p = problems != NULL ? problems : &scratch;
    struct core_resolved *r;
    struct core_state mp;
    enum core_status st;

    p->count = 0;
    if (in == NULL || out == NULL) {
        core_problem_add(p, "input", "no input or no result to fill");
        return CORE_EINVAL;
    }
    clear_result(out);
    r = &out->resolved;
    if (!check_ranges(in, p))
        return CORE_EINVAL;
    st = resolve(in, r, p);
    check_cluster(r, p);
    check_training(in, r, p);
    if (st == CORE_OK) {
        core_flops_compute(r, &out->flops);
        check_measured(r, &out->flops, p);
    }
    if (p->count > 0)
        return st == CORE_ERANGE && p->count == 1 ? CORE_ERANGE : CORE_EINVAL;
    st = core_memory_compute(r, &out->memory, &mp, p);
    if (st != CORE_OK)
        return st;
    core_fit_compute(r, &out->memory, &mp, capacity_bytes(r), &out->fit);
    core_runtime_compute(r, &out->flops, &out->runtime);
    st = check_finite(out, p);
    if (st != CORE_OK)
        return st;
    core_warnings(in, out);
    core_advice(&out->memory, &mp, out);
    return CORE_OK;
}
