/*
 * serve_advice.c - core_serve()'s warnings and its advice in cost order (serve.h): each change is
 * re-sized whole (core_serve_size_replica) and listed only when it alone makes the replica serve:
 * a shorter max_model_len (free), an FP8 KV cache, quantized weights, more tensor parallelism,
 * a larger GPU. docs/serving.md, "Reply".
 */
#include <string.h>

#include "internal.h"
#include "serve.h"
#include "serve_internal.h"
#include "serve_timing.h"

#define GIB 1073741824.0

/* ---------------------------------------------------------------------------------------------
 * Warnings and advice
 * ------------------------------------------------------------------------------------------- */

#define WARN(res, ...)   core_note_add((res)->warnings, &(res)->warning_count, __VA_ARGS__)
#define ADVISE(res, ...) core_note_add((res)->advice, &(res)->advice_count, __VA_ARGS__)

void core_serve_warnings(const struct core_serve_result *r, bool explicit_seqs,
                         struct core_serve_result *res)
{
    const struct core_serve_memory *g = &r->per_gpu;
    const struct core_serve_resolved *s = &r->resolved;

    if (r->kv.available <= 0 && s->engine != CORE_ENGINE_LLAMACPP)
        WARN(res, "kv_cache_no_memory",
             "nothing is left for the KV cache: the weights and reserves take %.2f GiB of %.2f",
             (double)(g->weights + g->activations + g->non_torch) / GIB, (double)g->capacity / GIB);
    else if (!r->kv.max_model_len_fits)
        WARN(res, "max_model_len_too_long",
             "one %lld-token request needs %.2f GiB of KV cache; the pool has %.2f GiB (the "
             "longest that fits is %lld)",
             (long long)s->max_model_len,
             (double)r->kv.bytes_per_token * (double)s->max_model_len / GIB,
             (double)g->kv_cache / GIB, (long long)r->kv.max_model_len_supported);
    if (explicit_seqs && r->kv.max_model_len_fits &&
        r->kv.max_concurrency < (double)s->max_num_seqs && s->engine != CORE_ENGINE_LLAMACPP)
        WARN(res, "concurrency_below_max_num_seqs",
             "the pool holds %.2f requests of %lld tokens at once, fewer than max_num_seqs %lld",
             r->kv.max_concurrency, (long long)s->max_model_len, (long long)s->max_num_seqs);
    if ((s->engine == CORE_ENGINE_VLLM || s->engine == CORE_ENGINE_VLLM_V0) && g->cuda_graphs > 0 &&
        g->total > g->capacity && r->kv.available > 0)
        WARN(res, "cuda_graphs_exceed_headroom",
             "CUDA graphs (%.2f GiB) and the CUDA context are captured after the KV cache, in the "
             "%.2f GiB left by gpu_memory_utilization: expect an out-of-memory at capture",
             (double)g->cuda_graphs / GIB,
             (double)g->capacity * (1 - s->gpu_memory_utilization) / GIB);
    if (s->kv_cache_memory > 0 && g->total > g->capacity)
        WARN(res, "kv_cache_memory_exceeds_gpu",
             "kv_cache_memory plus the weights and reserves exceed the GPU's %.2f GiB",
             (double)g->capacity / GIB);
}

/* Re-size the replica with one change; true when it then serves. */
static bool sized_with(const struct core_arch *a, const struct core_serve_input *in,
                       const struct core_serve_result *r, struct core_serve_resolved *s, int gpu,
                       struct core_serve_result *trial);

static bool serves_with(const struct core_arch *a, const struct core_serve_input *in,
                        const struct core_serve_result *r, struct core_serve_resolved *s, int gpu)
{
    struct core_serve_result trial;

    return sized_with(a, in, r, s, gpu, &trial);
}

/* serves_with, keeping the re-sized replica in *trial. */
static bool sized_with(const struct core_arch *a, const struct core_serve_input *in,
                       const struct core_serve_result *r, struct core_serve_resolved *s, int gpu,
                       struct core_serve_result *trial_out)
{
    struct core_serve_result *t = trial_out;
    struct core_problems refused = {0};

    t->model = r->model;
    t->model.gpu = gpu;
    core_serve_engine_defaults(in, gpu, a->kv_lora_rank > 0, s);
    /* A change the engine would refuse (serve_checks.c) is no advice. */
    core_serve_check_rules(in, &t->model, s, &refused);
    if (refused.count > 0 || !core_serve_gpu_runs(gpu, r->model.precision, in->base.peak_tflops > 0,
                                                  s->engine, s->quantization))
        return false;
    return core_serve_size_replica(a, gpu, &in->base, s, t) && t->fits;
}

/* Requests of need tokens the replica re-sized with s holds at once: its pool's tokens / need,
 * at most max_num_seqs (core_serve_max_concurrency's rule); 0 when it does not serve. */
static int64_t concurrency_with(const struct core_arch *a, const struct core_serve_input *in,
                                const struct core_serve_result *r, struct core_serve_resolved *s,
                                int64_t need)
{
    struct core_serve_result trial;
    int64_t n;

    if (need <= 0 || !sized_with(a, in, r, s, r->model.gpu, &trial) || trial.kv.tokens <= 0)
        return 0;
    n = trial.kv.tokens / need;
    return s->max_num_seqs > 0 && n > s->max_num_seqs ? s->max_num_seqs : n;
}

static void advise_model_len(const struct core_serve_result *r, struct core_serve_result *res)
{
    int64_t n = r->kv.max_model_len_supported;
    struct core_note *note;

    if (r->fits || r->kv.max_model_len_fits || n < r->resolved.block_size ||
        r->per_gpu.total > r->per_gpu.capacity)
        return;
    note = ADVISE(res, "lower_max_model_len",
                  "lower max_model_len to %lld: the longest request "
                  "the KV pool holds",
                  (long long)n);
    core_note_change_int(note, "max_model_len", n);
}

/* The smallest tensor-parallel degree above tp, up to one node (8), that serves; vLLM needs tp
 * to divide the heads, and the KV heads and tp to divide one another. A MoE replica keeps its
 * attention groups (dp = moe_width / tp) and, under vLLM's expert parallelism, its EP group
 * stays the whole tp x dp (FusedMoEParallelConfig): ep follows; the engines' expert rules
 * (serve_checks.c) are asked again through serves_with. */
/* The replica r at tensor-parallel degree tp, into *s: false when vLLM's head rule refuses tp (tp
 * divides the heads; the KV heads and tp divide one another). A MoE replica keeps its attention
 * groups (dp = moe_width / tp) and under vLLM's expert parallelism ep follows the EP group. */
static bool tp_layout(const struct core_arch *a, const struct core_serve_resolved *r, int64_t tp,
                      struct core_serve_resolved *s)
{
    int64_t dp = r->moe_width > r->tp && r->moe_width % r->tp == 0 ? r->moe_width / r->tp : 1;
    bool vllm_ep = r->ep > 1 && (r->engine == CORE_ENGINE_VLLM || r->engine == CORE_ENGINE_VLLM_V0);
    bool kv_ok =
        a->kv_lora_rank > 0 || (tp > a->kv_heads ? tp % a->kv_heads : a->kv_heads % tp) == 0;

    if (a->heads % tp != 0 || !kv_ok)
        return false;
    *s = *r;
    s->tp = tp;
    s->gpus = tp * s->pp * dp;
    s->moe_width = core_serve_moe_width(a, s);
    if (vllm_ep)
        s->ep = s->moe_width;
    return true;
}

static void advise_tp(const struct core_arch *a, const struct core_serve_input *in,
                      const struct core_serve_result *r, struct core_serve_result *res)
{
    struct core_serve_resolved s = r->resolved;
    struct core_note *note;

    for (int64_t tp = 2 * r->resolved.tp; tp <= 8; tp *= 2) {
        if (!tp_layout(a, &r->resolved, tp, &s))
            break;
        if (serves_with(a, in, r, &s, r->model.gpu)) {
            note = ADVISE(res, "more_tensor_parallel", "tensor parallelism over %lld GPUs fits",
                          (long long)tp);
            core_note_change_int(note, "tp", tp);
            core_note_change_int(note, "gpus", s.gpus);
            if (s.ep != r->resolved.ep)
                core_note_change_int(note, "ep", s.ep);
            return;
        }
    }
}

/* vLLM captures its CUDA graphs after the pool, in the 1 - gpu_memory_utilization headroom
 * (cuda_graphs_exceed_headroom). When that alone fails, two changes keep the model and the GPU,
 * cheapest first: the highest utilization (in steps of 0.01, down to 0.5) that leaves the graphs
 * room, which costs only pool tokens; then enforce_eager, which costs the graphs' per-step saving
 * on every decode step (the re-size takes the eager profile). */
static void advise_headroom(const struct core_arch *a, const struct core_serve_input *in,
                            const struct core_serve_result *r, struct core_serve_result *res)
{
    struct core_serve_resolved s = r->resolved;
    struct core_note *note;

    if ((s.engine != CORE_ENGINE_VLLM && s.engine != CORE_ENGINE_VLLM_V0) ||
        r->per_gpu.cuda_graphs <= 0 || !r->kv.max_model_len_fits || r->kv.available <= 0 ||
        r->per_gpu.total <= r->per_gpu.capacity)
        return;
    for (int pct = (int)(s.gpu_memory_utilization * 100 + 0.5) - 1;
         pct >= 50 && s.kv_cache_memory <= 0; pct--) {
        s.gpu_memory_utilization = pct / 100.0;
        if (serves_with(a, in, r, &s, r->model.gpu)) {
            note = ADVISE(res, "lower_gpu_memory_utilization",
                          "gpu_memory_utilization %.2f leaves the CUDA graphs room (a smaller KV "
                          "pool)",
                          pct / 100.0);
            core_note_change_real(note, "gpu_memory_utilization", pct / 100.0);
            break;
        }
    }
    s = r->resolved;
    s.enforce_eager = true;
    if (serves_with(a, in, r, &s, r->model.gpu)) {
        note = ADVISE(res, "enforce_eager",
                      "without CUDA graphs (enforce_eager) it fits; each decode step is slower");
        core_note_change_bool(note, "enforce_eager", true);
    }
}

void core_serve_advise(const struct core_arch *a, const struct core_serve_input *in,
                       const struct core_serve_result *r, struct core_serve_result *res)
{
    static const enum core_quant tries[] = {CORE_QUANT_FP8, CORE_QUANT_AWQ};
    struct core_serve_resolved s = r->resolved;
    struct core_note *note;

    advise_model_len(r, res);
    advise_headroom(a, in, r, res);
    if (s.kv_bytes > 1 && s.engine != CORE_ENGINE_LLAMACPP) {
        s.kv_bytes = 1;
        if (serves_with(a, in, r, &s, r->model.gpu)) {
            note = ADVISE(res, "fp8_kv_cache", "an FP8 KV cache halves the bytes per token");
            core_note_change_string(note, "kv_cache_dtype", "fp8");
        }
        s = r->resolved;
    }
    for (size_t i = 0; i < sizeof tries / sizeof tries[0] && s.quantization == CORE_QUANT_NONE;
         i++) {
        struct core_serve_resolved q = r->resolved;

        q.quantization = tries[i];
        q.quant_group_size = core_quant_linear(tries[i], 0).block;
        if ((core_quant_formats[tries[i]].engines & (1u << s.engine)) &&
            serves_with(a, in, r, &q, r->model.gpu)) {
            note = ADVISE(res, "quantize_weights", "%s weights fit", core_quant_names[tries[i]]);
            core_note_change_string(note, "quantization", core_quant_names[tries[i]]);
            break;
        }
    }
    advise_tp(a, in, r, res);
    if (in->base.memory_gb > 0)
        return;
    int best = -1;
    for (size_t g = 0; g < core_gpu_count; g++) { /* the smallest larger part that serves */
        int64_t u = core_serve_usable_bytes((int)g);
        if (!core_serve_engine_models(s.engine, (int)g)) /* the engines modelled run on GPUs */
            continue;
        /* serves_with: only a part that runs the dtype and the format (else a 422 there) */
        if (u > r->per_gpu.capacity && (best < 0 || u < core_serve_usable_bytes(best)) &&
            serves_with(a, in, r, &s, (int)g))
            best = (int)g;
    }
    if (best >= 0) {
        note = ADVISE(res, "larger_gpu", "%s (%.1f GiB usable) fits", core_gpus[best].name,
                      (double)core_serve_usable_bytes(best) / GIB);
        core_note_change_string(note, "gpu", core_gpus[best].id);
    }
}

/* A concurrency above what one replica holds (concurrency_capped), cheapest first, each re-sized
 * with its change and listed only when the re-sized replica holds the whole concurrency: an FP8
 * KV cache (half the bytes per token; not llama.cpp), then the smallest power-of-two tp up to 8
 * above tp that holds it (more GPUs), then ceil(asked / fit) replicas of this one, each at
 * ceil(asked / replicas) requests (its change: that per-replica concurrency). */
static void advise_concurrency(const struct core_arch *a, const struct core_serve_input *in,
                               struct core_serve_result *res, int64_t fit)
{
    const struct core_serve_resolved *w = &res->resolved;
    int64_t need = w->input_len + w->output_len, asked = w->concurrency, n, replicas, each;
    struct core_serve_resolved s = *w;
    struct core_note *note;

    if (w->kv_bytes > 1 && w->engine != CORE_ENGINE_LLAMACPP) {
        s.kv_bytes = 1;
        n = concurrency_with(a, in, res, &s, need);
        if (n >= asked) {
            note = ADVISE(res, "fp8_kv_cache",
                          "an FP8 KV cache halves the bytes per token: %lld requests of %lld "
                          "tokens fit",
                          (long long)n, (long long)need);
            core_note_change_string(note, "kv_cache_dtype", "fp8");
        }
    }
    for (int64_t tp = 2 * w->tp; tp <= 8 && tp_layout(a, w, tp, &s); tp *= 2) {
        n = concurrency_with(a, in, res, &s, need);
        if (n >= asked) {
            note = ADVISE(res, "more_tensor_parallel",
                          "tensor parallelism over %lld GPUs holds %lld requests of %lld tokens",
                          (long long)tp, (long long)n, (long long)need);
            core_note_change_int(note, "tp", tp);
            core_note_change_int(note, "gpus", s.gpus);
            if (s.ep != w->ep)
                core_note_change_int(note, "ep", s.ep);
            break;
        }
    }
    replicas = (asked + fit - 1) / fit;
    each = (asked + replicas - 1) / replicas;
    note = ADVISE(res, "more_replicas",
                  "%lld replicas of this one (%lld GPUs) hold the %lld requests, %lld each",
                  (long long)replicas, (long long)(replicas * w->gpus), (long long)asked,
                  (long long)each);
    core_note_change_int(note, "concurrency", each);
}

/* The workload's own notes on a replica that serves (docs/serving.md, "Warnings"): a request
 * longer than max_model_len, which the engine rejects (so time is null), with the changes that
 * time it; a concurrency above what the pool and max_num_seqs hold, which runs at that many while
 * the rest queue (the schedulers admit no more). */
void core_serve_time_notes(const struct core_arch *a, const struct core_serve_input *in,
                           struct core_serve_result *res)
{
    const struct core_serve_resolved *w = &res->resolved;
    int64_t need = w->input_len + w->output_len, cmax;
    struct core_note *note;

    if (!res->fits)
        return;
    if (need > w->max_model_len) {
        struct core_serve_resolved s = *w;

        WARN(res, "time_request_exceeds_max_model_len",
             "one request of input_len %lld + output_len %lld = %lld tokens is longer than "
             "max_model_len %lld: the engine rejects it, so time is null; raise max_model_len to "
             "%lld or shorten the request",
             (long long)w->input_len, (long long)w->output_len, (long long)need,
             (long long)w->max_model_len, (long long)need);
        s.max_model_len = need;
        if ((w->context <= 0 || need <= w->context) &&
            serves_with(a, in, res, &s, res->model.gpu)) {
            note = ADVISE(res, "raise_max_model_len",
                          "raise max_model_len to %lld: the pool holds one such request",
                          (long long)need);
            core_note_change_int(note, "max_model_len", need);
        }
        if (w->max_model_len > w->output_len) {
            note =
                ADVISE(res, "shorten_input_len", "input_len %lld fits max_model_len %lld",
                       (long long)(w->max_model_len - w->output_len), (long long)w->max_model_len);
            core_note_change_int(note, "input_len", w->max_model_len - w->output_len);
        }
        return;
    }
    cmax = core_serve_max_concurrency(res, w->input_len, w->output_len);
    if (w->concurrency != CORE_SERVE_CONCURRENCY_MAX && cmax > 0 && w->concurrency > cmax) {
        WARN(
            res, "concurrency_capped",
            "%lld requests asked, %lld in flight: the KV pool holds %lld tokens = %lld requests of "
            "%lld and max_num_seqs is %lld; the rest queue (concurrency %lld > %lld that fit)",
            (long long)w->concurrency, (long long)cmax, (long long)res->kv.tokens,
            (long long)(res->kv.tokens / need), (long long)need, (long long)w->max_num_seqs,
            (long long)w->concurrency, (long long)cmax);
        advise_concurrency(a, in, res, cmax);
    }
}
