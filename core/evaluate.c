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
#include "rules.h"
#include "validation.h"
#include "peak.h"

void core_input_init(struct core_input *in)
{
    memset(in, 0, sizeof *in);
    for (size_t i = 0; i < core_input_count; i++)
        core_input_store_default(&core_inputs[i], in);
}

/* ---------------------------------------------------------------------------------------------
 * Raw ranges: every row of the input table. The api layer checks the same rows (a range error
 * is its 400), so a problem here means a caller that bypassed it (a fuzzer, a test, the planner).
 * ------------------------------------------------------------------------------------------- */

static void check_row(const struct core_input_spec *spec, const void *base, struct core_problems *p)
{
    if (core_input_valid(spec, base))
        return;
    if (spec->kind == CORE_KIND_INT || spec->kind == CORE_KIND_SIZE || spec->kind == CORE_KIND_REAL)
        core_problem_add(p, spec->name, "must be %s %.15g and <= %.15g",
                         spec->min_exclusive ? ">" : ">=", spec->min, spec->max);
    else
        core_problem_add(p, spec->name, "not a valid choice");
}

static bool check_ranges(const struct core_input *in, struct core_problems *p)
{
    /* The walk over the rows runs in inputs.c, where the row check inlines: only the bad rows
     * come back here. */
    for (size_t i = core_input_next_invalid(core_inputs, core_input_count, in, 0);
         i < core_input_count;
         i = core_input_next_invalid(core_inputs, core_input_count, in, i + 1))
        check_row(&core_inputs[i], in, p);
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
    /* Gradients follow the weights; fp8 runs keep bf16 gradients. Megatron-LM accumulates and
     * reduces bf16 (and fp8) runs' gradients in fp32 (arguments.py: "accumulate and all-reduce
     * gradients in fp32 for bfloat16 data type", main_grads_dtype fp32 by default). */
    if (in->grad_precision >= 0)
        r->grad_precision = (enum core_precision)in->grad_precision;
    else if (in->framework == CORE_FW_MEGATRON &&
             (in->precision == CORE_PREC_BF16 || in->precision == CORE_PREC_FP8))
        r->grad_precision = CORE_PREC_FP32;
    else
        r->grad_precision = in->precision == CORE_PREC_FP8 ? CORE_PREC_BF16 : in->precision;
    r->master_weights = flag_or(in->master_weights, !fp32);
    r->optimizer = in->optimizer;
    r->checkpointing = in->checkpointing;
    if (!core_recompute_parse(in->recompute_modules, strnlen(in->recompute_modules, CORE_TEXT_MAX),
                              &r->recompute_modules))
        r->recompute_modules = CORE_RC_CORE_ATTN; /* refused by the row check first */
    core_recompute_text(r->recompute_modules, r->recompute_text);
    if (!core_cuda_graph_parse(in->cuda_graph_modules,
                               strnlen(in->cuda_graph_modules, CORE_TEXT_MAX),
                               &r->cuda_graph_modules))
        r->cuda_graph_modules = 0; /* refused by the row check first */
    core_cuda_graph_text(r->cuda_graph_modules, r->cuda_graph_text);
    r->flash_attention = flag_or(in->flash_attention, core_peak_default_flash(in->framework));
    r->attention_flops = in->attention_flops;
    r->count = in->count;
}

/* Sequences and tokens per optimizer step: global_batch, else global_batch_tokens, else one
 * micro-batch on every data-parallel rank (a context-parallel group shares its sequences). */
static void resolve_batch(const struct core_input *in, struct core_resolved *r)
{
    double seq = (double)in->seq_len, per_step = (double)in->batch * (double)r->dp;

    r->global_batch_given = in->global_batch > 0 || in->global_batch_tokens > 0;
    if (in->global_batch > 0) {
        r->global_batch = in->global_batch;
        r->global_batch_tokens =
            in->global_batch_tokens > 0 ? in->global_batch_tokens : in->global_batch * seq;
    } else if (in->global_batch_tokens > 0) {
        r->global_batch_tokens = in->global_batch_tokens;
        r->global_batch = in->global_batch_tokens / seq;
    } else {
        r->global_batch = per_step;
        r->global_batch_tokens = per_step * seq;
    }
    r->micro_batches = r->global_batch / per_step;
}

/* The peak's framework profile and overrides (peak.c, docs/frameworks.md). */
static void resolve_peak(const struct core_input *in, struct core_resolved *r)
{
    r->framework = in->framework;
    r->loss = in->loss >= 0 ? (enum core_loss)in->loss : core_peak_default_loss(in->framework);
    r->compile = in->compile;
    r->optimizer_in_backward = in->optimizer_in_backward;
    r->activation_offload = in->activation_offload;
    r->memory_metric = in->memory_metric;
}

void core_resolve_hardware(const struct core_input *in, int gpu, struct core_resolved *r)
{
    const struct core_gpu *g = &core_gpus[gpu];

    r->memory_gb = in->memory_gb > 0 ? in->memory_gb : g->memory_gb;
    r->usable_bytes =
        in->memory_gb > 0 ? (int64_t)llround(in->memory_gb * 1e9) : core_gpu_usable_bytes(gpu);
    r->peak_tflops =
        in->peak_tflops > 0 ? in->peak_tflops : core_catalog_peak_tflops(gpu, in->precision);
    r->gpus_per_node = in->gpus_per_node > 0 ? in->gpus_per_node : g->gpus_per_node;
    r->intra_node_gbs = in->intra_node_gbs > 0 ? in->intra_node_gbs : g->scale_up_gbs;
    r->inter_node_gbs = in->inter_node_gbs > 0 ? in->inter_node_gbs : g->network_gbs;
    /* Megatron-LM's practice: the gradient reduce and parameter gather overlap the backward
     * (--overlap-grad-reduce, --overlap-param-gather in its recipes); TP communication overlaps
     * its GEMMs only with sequence parallelism and a scale-up link (Transformer Engine's
     * userbuffers, --tp-comm-overlap). */
    r->dp_comm_overlap = flag_or(in->dp_comm_overlap, true);
    r->tp_comm_overlap = flag_or(in->tp_comm_overlap,
                                 r->sequence_parallel && r->tp > 1 && r->tp <= r->gpus_per_node);
}

static void resolve_cluster(const struct core_input *in, struct core_resolved *r)
{
    int64_t ways = in->tp * in->pp * in->cp; /* each <= 1e6: <= 1e18, no overflow */

    r->gpus = in->gpus;
    r->tp = in->tp;
    r->pp = in->pp;
    r->cp = in->cp;
    r->virtual_stages = in->virtual_stages;
    r->dp = in->gpus / ways > 0 ? in->gpus / ways : 1;
    r->gpu = in->gpu;
    r->zero_stage = in->zero_stage;
    r->sequence_parallel = flag_or(in->sequence_parallel, in->tp > 1);
    core_resolve_hardware(in, in->gpu, r);
    r->reserve_gb = in->reserve_gb;
    r->mfu_predicted = in->mfu == CORE_MFU_PREDICTED;
    r->mfu = in->mfu; /* a prediction replaces it once the time model has run */
    r->usd_per_gpu_hour = in->usd_per_gpu_hour < 0 ? -1.0 : in->usd_per_gpu_hour;
    r->tokens_per_second = in->tokens_per_second;
    resolve_batch(in, r);
    resolve_peak(in, r);
}

static enum core_status resolve(const struct core_input *in, struct core_resolved *r,
                                struct core_problems *p)
{
    enum core_status st = core_resolve_shape(in, &r->shape, p);

    resolve_training(in, r);
    resolve_cluster(in, r);
    /* Without a shape, N is known only when given; the combination checks still use it. */
    r->params = st == CORE_OK ? core_resolve_params(in, &r->shape) : in->params;
    r->active_params = r->params;
    r->expert_params = 0;
    if (st == CORE_OK)
        core_resolve_moe_split(&r->shape, r->params, &r->active_params, &r->expert_params);
    if (in->active_params > 0)
        r->active_params = in->active_params;
    r->ep = in->ep;
    r->offload_optimizer = in->offload_optimizer;
    r->offload_params = in->offload_params;
    r->moe_dispatcher = in->moe_dispatcher;
    r->moe_comm_overlap = in->moe_comm_overlap;
    r->moe_load_imbalance = in->moe_load_imbalance;
    core_layout_resolve(in, st == CORE_OK, r);
    return st;
}

/* The experts' layout and the pipeline split are layout.c's (Megatron-Core's rules); ZeRO-Infinity
 * offloads parameters only under stage 3. */
static void check_moe(const struct core_input *in, const struct core_resolved *r, bool shaped,
                      struct core_problems *p)
{
    core_layout_check(in, r, shaped, p);
    /* Megatron-Core's MoELayer.forward (transformer/moe/moe_layer.py) raises in training when
     * the attention tp group is larger than one without sequence parallelism ("performance may
     * degrade if MoE and tensor parallelism are enabled without also enabling sequence
     * parallelism"): the run does not start. */
    if (shaped && r->framework == CORE_FW_MEGATRON && core_arch_moe_layers(&r->shape.arch) > 0 &&
        r->tp > 1 && !r->sequence_parallel)
        core_problem_add(p, "sequence_parallel",
                         "Megatron-Core's MoE layers do not train at tp = %lld without sequence "
                         "parallelism (moe_layer.py); set it true or tp 1",
                         (long long)r->tp);
    if (r->offload_params == CORE_OFFLOAD_CPU && r->zero_stage < 3)
        core_problem_add(p, "offload_params",
                         "parameter offload needs zero_stage 3 (ZeRO-Infinity); zero_stage is %d",
                         r->zero_stage);
}

/* ---------------------------------------------------------------------------------------------
 * Combinations: each input is in range but together they are impossible.
 * ------------------------------------------------------------------------------------------- */

/* "tp*pp" or, with context parallelism, "tp*pp*cp" (the words of the 422). */
static const char *ways_name(const struct core_resolved *r)
{
    return r->cp > 1 ? "tp*pp*cp" : "tp*pp";
}

static void check_cluster(const struct core_resolved *r, struct core_problems *p)
{
    int64_t ways = r->tp * r->pp * r->cp;

    if (ways > r->gpus)
        core_problem_add(p, "gpus", "%s = %lld exceeds gpus = %lld", ways_name(r), (long long)ways,
                         (long long)r->gpus);
    else if (r->gpus % ways != 0)
        core_problem_add(p, "gpus", "%lld is not a multiple of %s = %lld", (long long)r->gpus,
                         ways_name(r), (long long)ways);
    if (r->seq_len % r->cp != 0)
        core_problem_add(p, "cp", "cp = %lld does not divide seq_len = %lld", (long long)r->cp,
                         (long long)r->seq_len);
    if (r->peak_tflops <= 0)
        core_problem_add(p, "precision",
                         "%s does not support %s; choose another precision or "
                         "give peak_tflops",
                         core_gpus[r->gpu].id, core_precision_names[r->precision]);
    if (core_capacity_bytes(r) <= 0)
        core_problem_add(p, "reserve_gb", "reserve_gb %g leaves no memory of the %g GB",
                         r->reserve_gb, r->memory_gb);
}

/* A step's micro-batches must fill whole micro-batches on every data-parallel rank, and two
 * batch sizes must agree (the pipeline split is layout.c's). */
static void check_schedule(const struct core_input *in, const struct core_resolved *r,
                           struct core_problems *p)
{
    double per_step = (double)r->batch * (double)r->dp;

    if (in->global_batch > 0 && fmod(in->global_batch, per_step) != 0)
        core_problem_add(p, "global_batch", "%.15g sequences is not a multiple of batch*dp = %.15g",
                         in->global_batch, per_step);
    if (in->global_batch > 0 && in->global_batch_tokens > 0 &&
        in->global_batch * (double)r->seq_len != in->global_batch_tokens)
        core_problem_add(p, "global_batch_tokens",
                         "%.15g tokens disagrees with global_batch*seq_len = %.15g",
                         in->global_batch_tokens, in->global_batch * (double)r->seq_len);
}

static void check_training(const struct core_input *in, const struct core_resolved *r,
                           struct core_problems *p)
{
    /* transformer_config.py: "mla_up_proj in recompute_modules is only supported with
     * multi-latent attention". */
    if ((r->recompute_modules & CORE_RC_MLA_UP_PROJ) && r->shape.arch.kv_lora_rank == 0)
        core_problem_add(p, "recompute_modules",
                         "mla_up_proj needs multi-latent attention (kv_lora_rank > 0)");
    /* transformer_config.py: "moe_preprocess cuda graph is only supported with moe_router cuda
     * graph"; "moe cuda graph is only supported for MoE". */
    if ((r->cuda_graph_modules & CORE_CG_MOE_PREPROCESS) &&
        !(r->cuda_graph_modules & CORE_CG_MOE_ROUTER))
        core_problem_add(p, "cuda_graph_modules", "moe_preprocess needs moe_router");
    if ((r->cuda_graph_modules & (CORE_CG_MOE_ROUTER | CORE_CG_MOE_PREPROCESS)) &&
        r->shape.arch.experts == 0)
        core_problem_add(p, "cuda_graph_modules",
                         "moe_router and moe_preprocess need a mixture-of-experts model");
    /* transformer_config.py: "full recompute is only supported with full iteration CUDA
     * graph"; "moe recompute is not supported with moe_router CUDA graph" (transformer_engine). */
    if (r->cuda_graph_modules != 0 && r->checkpointing == CORE_CKPT_FULL)
        core_problem_add(p, "cuda_graph_modules",
                         "per-layer CUDA graphs do not run with full recompute");
    if ((r->cuda_graph_modules & CORE_CG_MOE_ROUTER) && r->checkpointing == CORE_CKPT_SELECTIVE &&
        (r->recompute_modules & CORE_RC_MOE))
        core_problem_add(p, "cuda_graph_modules",
                         "moe_router graphs do not run with recompute_modules moe");
    if (r->precision == CORE_PREC_FP32 && in->master_weights == CORE_FLAG_YES)
        core_problem_add(p, "master_weights", "fp32 training has no separate master copy");
    /* An architecture can imply more parameters than params itself may be given as. */
    if ((double)r->params > CORE_PARAMS_MAX)
        core_problem_add(p, "params", "the architecture's %lld parameters exceed %g",
                         (long long)r->params, CORE_PARAMS_MAX);
    /* Derived, N_active may exceed N by the MTP depths' second run of the shared output layer
     * (layout.c, mtp_params: V d per depth, a FLOP count), which a dense model's active count
     * (= N) cannot absorb; only a given active_params, or one derived without MTP, is wrong. */
    if (r->params > 0 && r->active_params > r->params &&
        (in->active_params > 0 || r->mtp_params == 0))
        core_problem_add(p, "active_params", "active_params %lld exceeds params %lld",
                         (long long)r->active_params, (long long)r->params);
}

/* Megatron-Core's rules for --overlap-moe-expert-parallel-comm (transformer_config.py,
 * __post_init__): "virtual_pipeline_model_parallel_size must be specified when
 * pipeline_model_parallel_size > 1" (the combined 1F1B schedule exists only for the interleaved
 * and the no-pipeline schedules), "only supported with expert model parallelism", "disable full
 * recomputation", "disable moe in recompute_modules", "only supported with bf16 or fp16 model",
 * "MTP supports at most one layer". Checked under framework megatron only: DualPipe, the other
 * schedule the input stands for, has rules of its own. */
static void check_ep_overlap(const struct core_resolved *r, struct core_problems *p)
{
    if (!r->moe_comm_overlap || r->framework != CORE_FW_MEGATRON)
        return;
    if (r->pp > 1 && r->virtual_stages <= 1)
        core_problem_add(p, "moe_comm_overlap",
                         "Megatron's EP overlap needs virtual_stages > 1 when pp = %lld > 1",
                         (long long)r->pp);
    if (r->ep <= 1)
        core_problem_add(p, "moe_comm_overlap", "Megatron's EP overlap needs ep > 1");
    if (r->checkpointing == CORE_CKPT_FULL)
        core_problem_add(p, "moe_comm_overlap",
                         "Megatron's EP overlap does not run with full recompute");
    if (r->checkpointing == CORE_CKPT_SELECTIVE && (r->recompute_modules & CORE_RC_MOE))
        core_problem_add(p, "moe_comm_overlap",
                         "Megatron's EP overlap does not run with recompute_modules moe");
    if (r->precision == CORE_PREC_FP32)
        core_problem_add(p, "moe_comm_overlap", "Megatron's EP overlap needs a bf16 or fp16 model");
    if (r->mtp_layers > 1)
        core_problem_add(p, "moe_comm_overlap",
                         "Megatron's EP overlap supports at most one MTP layer (mtp_layers = %lld)",
                         (long long)r->mtp_layers);
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
                              rt->predicted_seconds,
                              rt->predicted_days,
                              rt->predicted_gpu_hours,
                              rt->predicted_cost_usd,
                              res->performance.step_seconds,
                              res->performance.mfu,
                              res->performance.hfu,
                              res->performance.tokens_per_second_per_gpu,
                              res->performance.model_tflops_per_gpu,
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
 * The peak (peak.c): in the statistic asked for, and as the device shows it when a framework
 * profile is judged by it. Peaks are doubles; they must fit the int64 bytes the API reports.
 * ------------------------------------------------------------------------------------------- */

enum core_status core_peak_in(const struct core_resolved *r, const struct core_memory *ledger,
                              enum core_memory_metric metric, int64_t *bytes, const char **at,
                              const char **stage, struct core_problems *p)
{
    struct core_peak_options o;
    struct core_peak pk;

    core_peak_options_resolved(r, &o);
    o.metric = metric;
    o.ledger = ledger;
    core_peak_compute(r, &o, &pk);
    if (!(pk.bytes >= 0 && pk.bytes < 9.0e18)) {
        core_problem_add(p, "params", "result out of range");
        return CORE_ERANGE;
    }
    *bytes = (int64_t)llround(pk.bytes);
    *at = core_peak_moment_names[pk.at];
    *stage = pk.stage_name;
    return CORE_OK;
}

/* The peak in the statistic asked for, and as the device shows it (what /fit judges under a
 * framework profile, and what nvidia-smi would read under any). */
static enum core_status memory_peak(const struct core_resolved *r, const struct core_memory *m,
                                    struct core_memory_peak *out, struct core_problems *p)
{
    enum core_status st =
        core_peak_in(r, m, r->memory_metric, &out->bytes, &out->at, &out->stage, p);

    out->metric = r->memory_metric;
    out->expected_error = core_peak_validation_of(r)->expected_error;
    if (st != CORE_OK || r->memory_metric == CORE_METRIC_DEVICE) {
        out->device = out->bytes;
        out->device_at = out->at;
        out->device_stage = out->stage;
        return st;
    }
    return core_peak_in(r, m, CORE_METRIC_DEVICE, &out->device, &out->device_at, &out->device_stage,
                        p);
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
    memset(&out->performance, 0, sizeof out->performance);
    out->warning_count = 0;
    out->advice_count = 0;
}

enum core_status core_evaluate(const struct core_input *in, struct core_result *out,
                               struct core_problems *problems)
{
    return core_evaluate_parts(in, CORE_PART_ALL, out, problems);
}

enum core_status core_evaluate_parts(const struct core_input *in, unsigned parts,
                                     struct core_result *out, struct core_problems *problems)
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
    if (parts & (CORE_PART_FIT | CORE_PART_RUNTIME))
        parts |= CORE_PART_MEMORY; /* the verdict judges the ledger; the runtime warns by it */
    clear_result(out);
    r = &out->resolved;
    if (!check_ranges(in, p))
        return CORE_EINVAL;
    st = resolve(in, r, p);
    check_cluster(r, p);
    check_schedule(in, r, p);
    core_check_layout_rules(r, st == CORE_OK, p);
    check_training(in, r, p);
    check_ep_overlap(r, p);
    check_moe(in, r, st == CORE_OK, p);
    core_adapters_resolve(in, r, p);
    if (st == CORE_OK) {
        core_flops_compute(r, &out->flops);
        check_measured(r, &out->flops, p);
    }
    if (p->count > 0)
        return st == CORE_ERANGE && p->count == 1 ? CORE_ERANGE : CORE_EINVAL;
    if (parts & CORE_PART_MEMORY) {
        st = core_memory_compute(r, &out->memory, &mp, p);
        if (st == CORE_OK)
            st = memory_peak(r, &out->memory, &out->memory.peak, p);
        if (st != CORE_OK)
            return st;
    }
    if (parts & CORE_PART_FIT)
        core_fit_compute(r, &out->memory, &mp, core_capacity_bytes(r), &out->fit);
    if (parts & CORE_PART_RUNTIME)
        core_runtime_compute(r, &out->flops, &out->runtime, &out->performance);
    st = check_finite(out, p);
    if (st != CORE_OK)
        return st;
    core_warnings(in, out, parts);
    if (parts & CORE_PART_FIT)
        core_advice(&out->memory, &mp, out);
    return CORE_OK;
}
