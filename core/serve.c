/*
 * serve.c - core_serve() (serve.h): one replica's memory as the serving engine sizes it, the KV
 * pool and the concurrency it holds, the verdict, and advice in cost order.
 *
 * Each engine's reservation rule, with the file it is read from (docs/serving.md has the
 * derivations):
 *  - vLLM V1, vllm/v1/worker/gpu_worker.py (determine_available_memory): the pool is
 *    total * gpu_memory_utilization - weights - the profiling peak - the non-torch increase;
 *    --kv-cache-memory replaces that figure and skips the profile. CUDA graphs are captured after
 *    the pool is allocated, inside the 1 - utilization headroom (with the CUDA context).
 *    Blocks: vllm/v1/core/kv_cache_utils.py, floor(available / page_size / layers).
 *  - vLLM V0, vllm/worker/worker.py (determine_num_available_blocks): the same budget; its
 *    profile runs max(max_model_len, 2048) tokens without chunked prefill, so it grows with
 *    max_model_len; concurrency = blocks * block_size / max_model_len.
 *  - SGLang, python/sglang/srt/model_executor/model_runner.py (profile_max_num_token): the pool is
 *    what is free after the weights less (1 - mem_fraction_static) of what was free before them;
 *    the default fraction is server_args.py's reserved-memory rule.
 *  - TensorRT-LLM, docs/source/reference/memory.md: kv_cache_free_gpu_mem_fraction of the memory
 *    free after the engine, its execution context and its runtime and decoder buffers.
 *  - llama.cpp, src/llama-kv-cache.cpp: the whole n_ctx (max_model_len) cache up front.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "serve.h"
#include "serve_internal.h"
#include "serve_trace.h"

#define GIB 1073741824.0
#define MIB 1048576
#define KIB 1024
/* Memory in use before the engine's first snapshot: the CUDA context and the torch runtime.
 * K22's log: "Free memory on device (43.93/44.42 GiB) on startup" -> 0.49 GiB; taken as 512 MiB. */
#define CUDA_CONTEXT_BYTES (512 * (int64_t)MIB)
/* The non-torch increase during the profile (NCCL, kernel modules, cuBLAS handles, custom
 * all-reduce buffers; torch's cuBLAS workspace is a caching-allocator block, counted in the
 * profile instead). Tuned on the logged rows (docs/serving.md): tp 1 logs 0.03-0.08 GiB (K18,
 * K29), parallel runs 0.20-0.43 GiB (K07, K08, K19, K23, K39). NCCL's channel buffers (12 MiB
 * per channel of a 2-rank communicator over P2P, none over SHM) are not what these rows hold
 * most of (K07, no P2P: 0.25 GiB), so they do not replace the figure (docs/serving.md). */
#define NON_TORCH_SINGLE   (50 * (int64_t)MIB)
#define NON_TORCH_PARALLEL (256 * (int64_t)MIB)
/* A captured CUDA graph's private memory per layer (an estimate: one logged row, K22, gives
 * 3.45 GiB / (51 sizes x 94 layers) = 755 KiB for a MoE layer). */
#define GRAPH_BYTES_PER_LAYER (512 * (int64_t)KIB)

int64_t core_serve_usable_bytes(int gpu)
{
    return core_gpu_usable_bytes(gpu);
}

void core_serve_input_init(struct core_serve_input *in)
{
    memset(in, 0, sizeof *in);
    core_input_init(&in->base);
    for (size_t i = 0; i < core_serve_input_count; i++)
        core_input_store_default(&core_serve_inputs[i], in);
}

static int dtype_bytes(enum core_precision p)
{
    return p == CORE_PREC_FP32 ? 4 : 2;
}

static int64_t model_context(const struct core_input *b, const struct core_resolved *m)
{
    if (b->config_given && b->config_context > 0)
        return b->config_context;
    /* The engine's limit, not the trained context (core_preset_positions). */
    if (m->shape.preset >= 0)
        return core_preset_positions(m->shape.preset);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Defaults: the engines' own
 * ------------------------------------------------------------------------------------------- */

/* SGLang's default mem_fraction_static (server_args.py, _handle_gpu_memory_settings), in MiB of
 * the GPU's memory: reserved = 512 + 1.5 max(chunked_prefill_size, 2048) + 2 cuda_graph_max_bs
 * + 1024 tp pp / 8, at least 10 GiB above 60 GiB; fraction = round((mem - reserved) / mem, 3). */
static double sglang_fraction(int64_t usable, int64_t chunk, int64_t tp, int64_t pp)
{
    double mem = (double)usable / MIB + 512; /* nvidia-smi's total: usable + the driver's */
    double bs = mem < 20 * 1024    ? 8
                : mem < 35 * 1024  ? (tp < 4 ? 24 : 80)
                : mem < 60 * 1024  ? (tp < 4 ? 32 : 160)
                : mem < 160 * 1024 ? (tp < 4 ? 256 : 512)
                                   : 512;
    double reserved =
        512 + 1.5 * (double)(chunk > 2048 ? chunk : 2048) + 2 * bs + (double)(tp * pp) / 8 * 1024;

    if (mem > 60 * 1024 && reserved < 10 * 1024)
        reserved = 10 * 1024;
    return round((mem - reserved) / mem * 1000) / 1000;
}

/* vLLM's `vllm serve` defaults (vllm/engine/arg_utils.py): 8192 batched tokens and 1024
 * sequences on a GPU with >= 70 GiB that is not an A100, else 2048 and 256. V0: 256 sequences
 * and max(max_model_len, 2048) tokens (chunked prefill off up to 32k, 2048 above). SGLang's
 * chunked_prefill_size by GPU memory (server_args.py). TensorRT-LLM: max_num_tokens 8192,
 * max_batch_size 2048 (trtllm-build). llama.cpp: n_ubatch 512, one sequence. */
void core_serve_engine_defaults(const struct core_serve_input *in, int gpu, bool mla,
                                struct core_serve_resolved *s)
{
    int64_t usable = in->base.memory_gb > 0 ? (int64_t)llround(in->base.memory_gb * 1e9)
                                            : core_serve_usable_bytes(gpu);
    bool big = usable >= (int64_t)(70 * GIB) && strncmp(core_gpus[gpu].id, "a100", 4) != 0;
    double mib = (double)usable / MIB + 512;
    int64_t tokens = 2048, seqs = 256, block = 16;
    /* SGLang's chunked_prefill_size by memory bucket (server_args.py). */
    int64_t sglang_chunk = mib < 35 * 1024    ? 2048
                           : mib < 60 * 1024  ? 4096
                           : mib < 160 * 1024 ? 8192
                                              : 16384;

    switch (s->engine) {
    case CORE_ENGINE_VLLM:
        tokens = big ? 8192 : 2048;
        seqs = big ? 1024 : 256;
        break;
    case CORE_ENGINE_VLLM_V0:
        tokens = s->max_model_len <= 32768 && s->max_model_len > 2048 ? s->max_model_len : 2048;
        if (core_serve_releases[s->engine_version].prefill_whole && s->max_model_len > 2048)
            tokens = s->max_model_len; /* max(max_model_len, 2048): no chunked prefill */
        break;
    case CORE_ENGINE_SGLANG:
        tokens = sglang_chunk;
        block = 1;
        break;
    case CORE_ENGINE_TRTLLM:
        tokens = 8192;
        seqs = 2048;
        block = 64;
        break;
    case CORE_ENGINE_LLAMACPP:
        tokens = 512;
        seqs = 1;
        block = 1;
        break;
    case CORE_ENGINE_COUNT:
        break;
    }
    s->max_num_batched_tokens =
        in->max_num_batched_tokens > 0 ? in->max_num_batched_tokens : tokens;
    s->max_num_seqs = in->max_num_seqs > 0 ? in->max_num_seqs : seqs;
    s->block_size = in->block_size > 0 ? in->block_size : block;
    /* vLLM on Hopper runs MLA with FlashMLA, whose pages are 64 tokens: the platform forces
     * block_size to 64 when it is not a multiple of 64, given or not (vllm/platforms/cuda.py,
     * check_and_update_config: "Forcing kv cache block size to 64 for FlashMLA backend";
     * vllm/attention/ops/flashmla.py, is_flashmla_dense_supported: Hopper only). Releases
     * before FlashMLA (vllm_0.2, vllm_0.4) keep 16. */
    if (mla && (s->engine == CORE_ENGINE_VLLM || s->engine == CORE_ENGINE_VLLM_V0) &&
        s->engine_version == CORE_VERSION_CURRENT && core_gpus[gpu].generation == CORE_GEN_HOPPER &&
        s->block_size % 64 != 0)
        s->block_size = 64;
    /* The echo under another engine is SGLang's default with SGLang's own chunk, not the
     * other engine's batch (vLLM V0's 32768 read as a chunk gave 0.373 for 0.824). */
    s->mem_fraction_static =
        in->mem_fraction_static > 0
            ? in->mem_fraction_static
            : sglang_fraction(usable,
                              s->engine == CORE_ENGINE_SGLANG ? s->max_num_batched_tokens
                                                              : sglang_chunk,
                              s->tp, s->pp);
}

/* CUDA graphs vLLM captures: V1 [1, 2, 4] + 8..248 step 8 + 256..max step 16 with max =
 * min(2 max_num_seqs, 512) (vllm/config/compilation.py); V0 [1, 2, 4] + 8..256 step 8 up to
 * max_num_seqs (vllm/worker/model_runner.py); SGLang [1, 2, 4, 8, 12] + 16..256 step 8 + ...
 * up to cuda_graph_max_bs (server_args.py). */
static int64_t graph_count(enum core_engine e, int64_t seqs)
{
    int64_t max = e == CORE_ENGINE_VLLM ? (2 * seqs < 512 ? 2 * seqs : 512) : seqs, n = 0;

    if (e == CORE_ENGINE_TRTLLM || e == CORE_ENGINE_LLAMACPP)
        return 0;
    for (int64_t s = 1; s <= 4 && s <= max; s *= 2)
        n++;
    for (int64_t s = 8; s <= max && s < 256; s += 8)
        n++;
    for (int64_t s = 256; s <= max; s += 16)
        n++;
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Resolution and checks
 * ------------------------------------------------------------------------------------------- */

/* The MoE group's width (core_serve_resolved.moe_width): the ranks of a pipeline stage the
 * engine's MoE layers span. vLLM parallelises the MoE layers over all tp x dp ranks, with or
 * without EP (fused_moe/config.py FusedMoEParallelConfig.make, flatten_tp_across_dp; vllm PR
 * #14305: "We parallelize across all DP*TP ranks for the MoE layers regardless of if we are using
 * EP"); SGLang's and TensorRT-LLM's tp_size holds their attention-DP groups (SGLang
 * distributed/parallel_state.py: world = tp_size x pp_size; tensorrt_llm/mapping.py: world =
 * tp x pp x cp): gpus / pp in each. vLLM releases before 0.8 had no data parallelism and
 * llama.cpp has none: tp. */
int64_t core_serve_moe_width(const struct core_arch *a, const struct core_serve_resolved *s)
{
    if (a->experts == 0 || s->engine == CORE_ENGINE_LLAMACPP ||
        ((s->engine == CORE_ENGINE_VLLM || s->engine == CORE_ENGINE_VLLM_V0) &&
         s->engine_version != CORE_VERSION_CURRENT))
        return s->tp;
    return s->pp > 0 && s->gpus % s->pp == 0 ? s->gpus / s->pp : s->tp;
}

static void check_heads(const struct core_arch *a, const struct core_serve_resolved *s,
                        struct core_problems *p)
{
    if (a->heads % s->tp != 0)
        core_problem_add(p, "tp", "tp = %lld does not divide the %lld attention heads",
                         (long long)s->tp, (long long)a->heads);
    else if (a->kv_lora_rank == 0 &&
             (s->tp > a->kv_heads ? s->tp % a->kv_heads : a->kv_heads % s->tp) != 0)
        core_problem_add(p, "tp", "tp = %lld and the %lld KV heads do not divide one another",
                         (long long)s->tp, (long long)a->kv_heads);
    if (s->pp > a->layers)
        core_problem_add(p, "pp", "pp = %lld exceeds the %lld layers", (long long)s->pp,
                         (long long)a->layers);
}

static void check_parallel(const struct core_arch *a, const struct core_serve_resolved *s,
                           struct core_problems *p)
{
    check_heads(a, s, p);
    if (s->ep > 1 && a->experts == 0)
        core_problem_add(p, "ep",
                         "ep = %lld: the model is dense (no routed experts to split); expert "
                         "parallelism needs a mixture-of-experts model",
                         (long long)s->ep);
    /* The engines' expert-parallel rules: serve_checks.c (core_serve_check_rules). */
}

static void check_formats(const struct core_serve_input *in, const struct core_resolved *m,
                          struct core_problems *p)
{
    const struct core_quant_format *f = &core_quant_formats[in->quantization];

    if (m->precision == CORE_PREC_FP8)
        core_problem_add(p, "precision",
                         "precision is the model's 16-bit dtype when serving; FP8 weights are "
                         "quantization=fp8");
    else if (m->precision == CORE_PREC_FP32 && !f->fp32_ok)
        core_problem_add(p, "quantization", "%s kernels take fp16/bf16 activations, not fp32",
                         f->name);
    if ((f->engines & (1u << in->engine)) == 0)
        core_problem_add(p, "quantization", "%s does not load %s weights",
                         core_engine_names[in->engine], f->name);
    if (in->engine == CORE_ENGINE_LLAMACPP && in->kv_cache_dtype != CORE_KV_AUTO)
        core_problem_add(p, "kv_cache_dtype",
                         "llama.cpp caches K and V in f16, q8_0 or q4_0, not fp8");
    /* A fixed layout takes its own block (bnb 64, GGUF 32, ...) and nothing else. */
    if (in->quant_group_size > 0 && !f->group_settable &&
        in->quant_group_size != core_quant_linear(in->quantization, 0).block)
        core_problem_add(p, "quant_group_size", "%s has a fixed block layout", f->name);
}

static void resolve_serve(const struct core_serve_input *in, const struct core_resolved *m,
                          int64_t context, struct core_serve_resolved *s, struct core_problems *p)
{
    memset(s, 0, sizeof *s);
    s->engine = in->engine;
    s->engine_version = in->engine_version;
    s->quantization = in->quantization;
    s->quant_group_size = core_quant_linear(in->quantization, in->quant_group_size).block;
    s->kv_cache_dtype = in->kv_cache_dtype;
    s->kv_bytes = in->kv_cache_dtype == CORE_KV_AUTO ? dtype_bytes(m->precision) : 1;
    s->gpu_memory_utilization = in->gpu_memory_utilization;
    s->kv_cache_free_gpu_mem_fraction = in->kv_cache_free_gpu_mem_fraction;
    s->kv_cache_memory = in->kv_cache_memory;
    s->max_model_len = in->max_model_len > 0 ? in->max_model_len : context;
    s->context = context;
    s->enforce_eager = in->enforce_eager || in->engine == CORE_ENGINE_LLAMACPP;
    s->hbm_tbps = in->hbm_tbps > 0 ? in->hbm_tbps : core_gpus[m->gpu].hbm_tbps;
    s->memory_gb = in->base.memory_gb;
    s->tp = m->tp;
    s->pp = m->pp;
    s->ep = in->base.ep;
    s->gpus = m->gpus;
    s->moe_width = core_serve_moe_width(&m->shape.arch, s);
    s->input_len = in->input_len;
    s->output_len = in->output_len;
    s->concurrency = in->concurrency;
    s->batching = in->batching;
    s->usd_per_gpu_hour = in->base.usd_per_gpu_hour;
    if (s->max_model_len <= 0) {
        core_problem_add(p, "max_model_len", "the model has no known context: give max_model_len");
        s->max_model_len = 1;
    } else if (context > 0 && s->max_model_len > context)
        core_problem_add(p, "max_model_len",
                         "%lld exceeds the model's %lld positions (max_position_embeddings)",
                         (long long)s->max_model_len, (long long)context);
}

/* ---------------------------------------------------------------------------------------------
 * Sizing
 * ------------------------------------------------------------------------------------------- */

/* The pool the engine has (bytes, may be negative) from the other figures of the rank. */
static int64_t engine_available(const struct core_serve_resolved *s,
                                const struct core_serve_memory *g, int64_t comm)
{
    double total = (double)g->capacity;

    switch (s->engine) {
    case CORE_ENGINE_VLLM:
    case CORE_ENGINE_VLLM_V0:
        if (s->kv_cache_memory > 0)
            return s->kv_cache_memory;
        if (core_serve_releases[s->engine_version].peak_counts_context)
            comm += CUDA_CONTEXT_BYTES; /* total - free: the context is in the peak */
        return (int64_t)(total * s->gpu_memory_utilization) - g->weights - g->activations - comm;
    case CORE_ENGINE_SGLANG: {
        double before = total - (double)CUDA_CONTEXT_BYTES; /* free before the weights load */
        return (int64_t)(before * s->mem_fraction_static) - g->weights;
    }
    case CORE_ENGINE_TRTLLM: {
        double free = total - (double)(g->non_torch + g->weights + g->activations);
        return (int64_t)(free * s->kv_cache_free_gpu_mem_fraction);
    }
    case CORE_ENGINE_LLAMACPP:
    case CORE_ENGINE_COUNT:
        break;
    }
    return 0;
}

/* Tokens a sliding-window layer keeps per request in vLLM V1 (SlidingWindowSpec,
 * max_memory_usage_bytes): the window less one plus a scheduled chunk, at most max_model_len,
 * in blocks with one spare. */
static int64_t sliding_blocks(const struct core_layer_types *lt,
                              const struct core_serve_resolved *s)
{
    int64_t keep = lt->window - 1 + s->max_num_batched_tokens;

    keep = keep < s->max_model_len ? keep : s->max_model_len;
    return ceil_div(keep, s->block_size) + 1;
}

/* vLLM V1's hybrid allocator (vllm/v1/core/kv_cache_utils.py, uniform page size): layers in
 * groups of g = min(full, sliding) layers, one pool of g page tensors shared by the groups;
 * blocks = available / (page g); the logged size is blocks / groups x block_size; a request needs
 * ceil(len / bs) blocks in each full group and the window's in each sliding group. */
static void size_kv_hybrid(const struct core_layer_types *lt, const struct core_serve_resolved *s,
                           int64_t available, struct core_serve_kv *kv)
{
    int64_t full = lt->layers[CORE_LAYER_FULL], slide = lt->layers[CORE_LAYER_SLIDING];
    int64_t g = full > 0 && full < slide ? full : slide;
    int64_t full_groups = ceil_div(full, g), slide_groups = ceil_div(slide, g);
    int64_t per_request = full_groups * ceil_div(s->max_model_len, s->block_size) +
                          slide_groups * sliding_blocks(lt, s);
    int64_t spare;

    kv->blocks = available > 0 ? available / (kv->page_bytes * g) : 0;
    kv->pool_bytes = kv->blocks * kv->page_bytes * g;
    kv->tokens = kv->blocks / (full_groups + slide_groups) * s->block_size;
    kv->max_concurrency = (double)kv->blocks / (double)per_request;
    kv->max_model_len_fits = kv->blocks >= per_request;
    spare = kv->blocks - slide_groups * sliding_blocks(lt, s);
    kv->max_model_len_supported = full == 0   ? (kv->max_model_len_fits ? s->max_model_len : 0)
                                  : spare > 0 ? spare / full_groups * s->block_size
                                              : 0;
}

/* SGLang's swa_full_tokens_ratio default (python/sglang/srt/server_args.py). */
#define SGLANG_SWA_FULL_TOKENS_RATIO 0.8

/* SGLang's hybrid SWA pool (model_runner_kv_cache_mixin.py, set_num_tokens_hybrid_swa): the
 * profile's tokens over every layer's cell, T = floor(available / (P (n_f + n_s))), are
 * re-shared as full = int(T P (n_f + n_s) / (P n_f + r P n_s)) tokens in the full layers and
 * int(r full) in the sliding ones, each floored to page_size; the logged pool is `full`. SGLang
 * does this for the architectures of is_hybrid_swa_model (configs/model_config.py): memwall
 * applies it to the sliding-plus-full models with attention sinks (gpt-oss), the listed one it
 * can tell from its layer pattern (docs/serving.md). */
static void size_kv_sglang_swa(const struct core_layer_types *lt, int64_t per_layer,
                               const struct core_serve_resolved *s, int64_t available,
                               struct core_serve_kv *kv)
{
    int64_t nf = lt->layers[CORE_LAYER_FULL], ns = lt->layers[CORE_LAYER_SLIDING];
    int64_t cell = per_layer * (nf + ns), total = available > 0 ? available / cell : 0;
    double denom =
        (double)(per_layer * nf) + SGLANG_SWA_FULL_TOKENS_RATIO * (double)per_layer * (double)ns;
    int64_t full = (int64_t)((double)(total * cell) / denom);
    int64_t swa = (int64_t)((double)full * SGLANG_SWA_FULL_TOKENS_RATIO);

    full = full / s->block_size * s->block_size;
    swa = swa / s->block_size * s->block_size;
    kv->blocks = full / s->block_size;
    kv->tokens = full;
    kv->pool_bytes = per_layer * (full * nf + swa * ns);
    kv->max_concurrency = (double)full / (double)s->max_model_len;
    kv->max_model_len_fits = full >= s->max_model_len;
    kv->max_model_len_supported = full;
}

/* false when a page, a row of pages or a cache of n_ctx cells overflows int64. */
static bool size_kv(const struct core_arch *a, const struct core_serve_resolved *s,
                    int64_t available, struct core_serve_kv *kv)
{
    int64_t per_layer = core_serve_kv_bytes_per_token(a, s->tp, 1, s->kv_bytes);
    struct core_layer_types lt;
    int64_t need, row, ctx;

    core_arch_layer_types_range(a, 0, ceil_div(a->layers, s->pp), &lt);
    kv->layers = lt.layers[CORE_LAYER_FULL] + lt.layers[CORE_LAYER_SLIDING]; /* linear: no KV */
    kv->block_size = s->block_size;
    kv->available = available;
    if (per_layer < 0 || !ck_mul(per_layer, kv->layers, &kv->bytes_per_token) ||
        !ck_mul(per_layer, s->block_size, &kv->page_bytes) ||
        !ck_mul(kv->page_bytes, kv->layers, &row) ||
        !ck_mul(kv->bytes_per_token, s->max_model_len, &ctx))
        return false;
    if (s->engine == CORE_ENGINE_VLLM && lt.layers[CORE_LAYER_SLIDING] > 0 && kv->layers > 0) {
        size_kv_hybrid(&lt, s, available, kv);
        return true;
    }
    if (s->engine == CORE_ENGINE_SGLANG && a->attention_sinks && lt.layers[CORE_LAYER_FULL] > 0 &&
        lt.layers[CORE_LAYER_SLIDING] > 0) {
        size_kv_sglang_swa(&lt, per_layer, s, available, kv);
        return true;
    }
    if (s->engine == CORE_ENGINE_LLAMACPP) { /* n_ctx cells; sliding layers keep w + n_ubatch */
        int64_t w = lt.window + s->max_num_batched_tokens;

        kv->blocks = s->max_model_len;
        kv->pool_bytes = per_layer * (lt.layers[CORE_LAYER_FULL] * s->max_model_len +
                                      lt.layers[CORE_LAYER_SLIDING] *
                                          (w < s->max_model_len ? w : s->max_model_len));
    } else {
        kv->blocks =
            available > 0 && kv->layers > 0 ? available / (kv->page_bytes * kv->layers) : 0;
        kv->pool_bytes = kv->blocks * kv->page_bytes * kv->layers;
    }
    kv->tokens = kv->blocks * s->block_size;
    need = ceil_div(s->max_model_len, s->block_size);
    if (s->engine == CORE_ENGINE_VLLM)
        kv->max_concurrency = (double)kv->blocks / (double)need;
    else
        kv->max_concurrency = (double)kv->tokens / (double)s->max_model_len;
    kv->max_model_len_fits = kv->blocks >= need;
    kv->max_model_len_supported = kv->tokens;
    return true;
}

/* vLLM's profile runs the model eagerly in V0 (its prefill is never compiled or graphed) and in
 * V1 under enforce_eager (compilation off, vllm/config.py); V1 otherwise runs it compiled. */
static bool profile_eager(const struct core_serve_resolved *s)
{
    return s->engine == CORE_ENGINE_VLLM_V0 || (s->engine == CORE_ENGINE_VLLM && s->enforce_eager);
}

/* llama.cpp keeps the input layer in host memory (src/llama-model.cpp, load_tensors: "there is
 * very little benefit to offloading the input layer, so always keep it on the CPU"): an untied
 * model's token_embd is no GPU byte. A tied one is the output head too, which the GPU holds:
 * counted once, as it is. False when the figure does not come out. */
static bool llamacpp_input_on_host(const struct core_arch *a, const struct core_serve_resolved *s,
                                   int db, struct core_serve_memory *g)
{
    int64_t emb;

    if (s->engine != CORE_ENGINE_LLAMACPP || a->tied_embeddings)
        return true;
    emb = core_serve_input_embedding_bytes(a, s->quantization, db, s->tp);
    if (emb < 0 || emb > g->weights)
        return false;
    g->weights -= emb;
    return true;
}

/* Everything about one replica but the advice; false when a figure overflows. */
bool core_serve_size_replica(const struct core_arch *a, int gpu, const struct core_input *b,
                             const struct core_serve_resolved *s, struct core_serve_result *out)
{
    struct core_serve_memory *g = &out->per_gpu;
    int db = dtype_bytes(out->model.precision);
    int64_t comm = s->tp * s->pp > 1 ? NON_TORCH_PARALLEL : NON_TORCH_SINGLE, sum;
    /* vLLM's and SGLang's profile runs their sampler over max_num_seqs rows; TensorRT-LLM's
     * logits live in its runtime and decoder buffers (added below), llama.cpp's in the ubatch. */
    bool sampler = s->engine != CORE_ENGINE_LLAMACPP && s->engine != CORE_ENGINE_TRTLLM;
    int64_t seqs = sampler ? s->max_num_seqs : 0;
    bool vllm = s->engine == CORE_ENGINE_VLLM || s->engine == CORE_ENGINE_VLLM_V0;
    int64_t workspace = vllm ? core_serve_cublas_workspace_bytes(gpu) : 0;
    /* The MoE group (checked to be a multiple of ep); a caller's resolution without one: the
     * replica's tp x pp GPUs, max(tp, ep) ranks. */
    int64_t width = s->moe_width >= s->ep && s->ep > 0 && s->moe_width % s->ep == 0 ? s->moe_width
                    : s->ep > s->tp                                                 ? s->ep
                                                                                    : s->tp;

    memset(g, 0, sizeof *g);
    g->capacity =
        b->memory_gb > 0 ? (int64_t)llround(b->memory_gb * 1e9) : core_serve_usable_bytes(gpu);
    g->weights = core_serve_weight_bytes_moe(a, s->quantization, s->quant_group_size, db, s->tp,
                                             s->pp, s->ep, width);
    if (g->weights < 0 || !llamacpp_input_on_host(a, s, db, g))
        return false;
    g->activations = core_serve_profile_bytes(a, s->tp, width / s->ep, s->max_num_batched_tokens,
                                              seqs, db, profile_eager(s));
    if (g->activations < 0)
        return false;
    /* vLLM's profile runs the process's first cuBLAS GEMM, whose workspace the caching allocator
     * hands out and keeps: part of torch's allocated peak (current releases) and of the reserved
     * segments (older ones). */
    if (vllm)
        g->activations += workspace;
    if (core_serve_releases[s->engine_version].peak_reserved && s->kv_cache_memory == 0) {
        int64_t reserved = core_serve_profile_reserved(
            a, &core_serve_releases[s->engine_version], s->quantization, s->tp, s->pp, s->ep,
            s->max_num_batched_tokens, seqs, db, workspace);

        if (reserved > 0) /* else (MLA, overflow): the live-tensor formula above */
            g->activations = reserved;
    }
    if (s->engine == CORE_ENGINE_LLAMACPP) /* the compute buffer holds the ubatch's logits */
        g->activations += s->max_num_batched_tokens * a->vocab * 4;
    if (s->engine == CORE_ENGINE_TRTLLM) { /* runtime + decoder buffers: fp32 logits, twice */
        g->activations += s->max_num_seqs * a->vocab * 8;
        /* TensorRT plans the execution context by liveness over the engine's graph
         * (docs/source/reference/memory.md). In TensorRT-LLM's decoder layer the normed input
         * feeds only attention's qkv GEMM, and the dense MLP's fc and gate GEMMs (GatedMLP:
         * inter = act(fc(h)); gate = gate(h); proj(inter * gate)); it is dead at the layer's
         * peak (qkv + output beside the residual, or act, gate and their product), so of the
         * two [T, d] states only the residual counts. A MoE plugin holds its input: kept. */
        if (a->experts == 0)
            g->activations -= s->max_num_batched_tokens * a->hidden * db;
    }
    g->non_torch = CUDA_CONTEXT_BYTES + comm;
    if (!s->enforce_eager)
        g->cuda_graphs = graph_count(s->engine, s->max_num_seqs) * ceil_div(a->layers, s->pp) *
                         GRAPH_BYTES_PER_LAYER;
    if (!size_kv(a, s, engine_available(s, g, comm), &out->kv))
        return false;
    if (s->engine == CORE_ENGINE_LLAMACPP) { /* n_ctx is allocated whole: what is left holds */
        int64_t left = g->capacity - g->weights - g->activations - g->non_torch;

        out->kv.available = left > 0 ? left : 0;
        /* A model whose layers keep no per-token KV (all linear attention) is not bounded by
         * it: the model's context (or the asked length) is. */
        out->kv.max_model_len_supported = out->kv.bytes_per_token > 0
                                              ? out->kv.available / out->kv.bytes_per_token
                                          : s->context > 0 ? s->context
                                                           : s->max_model_len;
        out->kv.max_model_len_fits = s->max_model_len <= out->kv.max_model_len_supported;
    }
    g->kv_cache = out->kv.pool_bytes;
    if (s->context > 0 && out->kv.max_model_len_supported > s->context)
        out->kv.max_model_len_supported = s->context;
    if (!ck_add(g->weights, g->activations, &sum) || !ck_add(sum, g->non_torch, &sum) ||
        !ck_add(sum, g->cuda_graphs, &sum) || !ck_add(sum, g->kv_cache, &sum))
        return false;
    g->total = sum;
    out->fits = out->kv.max_model_len_fits && g->total <= g->capacity;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Resolution of the inputs (core_serve() itself is in serve_main.c)
 * ------------------------------------------------------------------------------------------- */

/* core_evaluate()'s resolution of the model on one replica (gpus = tp * pp when left at 1). */
static enum core_status resolve_model(const struct core_serve_input *in, struct core_resolved *m,
                                      struct core_problems *p)
{
    struct core_input base = in->base;
    struct core_result res;
    enum core_status st;

    if (base.gpus == 1 && base.tp * base.pp > 1)
        base.gpus = base.tp * base.pp;
    base.ep = 1; /* serving's ep lives inside the replica: checked by check_parallel */
    st = core_evaluate_parts(&base, CORE_PART_FLOPS, &res, p);
    *m = res.resolved;
    m->ep = in->base.ep;
    return st;
}

/* vLLM's block sizes on CUDA: vllm/config/cache.py, BlockSize = Literal[1, 8, 16, 32, 64, 128]
 * (V0 and V1 share the literal). SGLang's page_size and TensorRT-LLM's tokens_per_block are left
 * free: memwall has not read a rule for them. */
static void check_block_size(const struct core_serve_input *in, struct core_problems *p)
{
    static const int64_t vllm_sizes[] = {1, 8, 16, 32, 64, 128};

    if (in->block_size <= 0 ||
        (in->engine != CORE_ENGINE_VLLM && in->engine != CORE_ENGINE_VLLM_V0))
        return;
    for (size_t i = 0; i < sizeof vllm_sizes / sizeof vllm_sizes[0]; i++)
        if (in->block_size == vllm_sizes[i])
            return;
    core_problem_add(p, "block_size",
                     "vLLM takes a block_size of 1, 8, 16, 32, 64 or 128 (vllm/config/cache.py "
                     "BlockSize), not %lld",
                     (long long)in->block_size);
}

/* A release row belongs to one engine (serve_trace.c, core_serve_releases). */
void core_serve_check_engine_version(const struct core_serve_input *in, struct core_problems *p)
{
    const struct core_serve_release *r;

    if ((unsigned)in->engine_version >= CORE_VERSION_COUNT ||
        (unsigned)in->engine >= CORE_ENGINE_COUNT)
        return; /* out of range: the row checks name those fields */
    r = &core_serve_releases[in->engine_version];
    if (r->engine != CORE_ENGINE_COUNT && r->engine != in->engine)
        core_problem_add(p, "engine_version", "%s is a release of engine %s, not of %s", r->name,
                         core_engine_names[r->engine], core_engine_names[in->engine]);
}

void core_serve_check_candidate(const struct core_serve_input *in, struct core_problems *p)
{
    struct core_resolved m;
    struct core_serve_resolved s;
    int gpu = in->base.gpu;

    if ((unsigned)in->engine >= CORE_ENGINE_COUNT || gpu < 0 || (size_t)gpu >= core_gpu_count ||
        (unsigned)in->quantization >= CORE_QUANT_COUNT)
        return; /* out of range: the row checks name those fields */
    memset(&m, 0, sizeof m);
    m.precision = in->base.precision;
    m.gpu = gpu;
    core_serve_check_engine_version(in, p);
    check_block_size(in, p);
    check_formats(in, &m, p);
    if (in->base.peak_tflops <= 0 && core_catalog_peak_tflops(gpu, m.precision) <= 0)
        core_problem_add(p, "precision", "%s does not support %s", core_gpus[gpu].id,
                         core_precision_names[m.precision]); /* evaluate.c's rule */
    if (p->count > 0)
        return;
    core_serve_check_capability(in->engine, in->quantization, gpu, p);
    if (in->max_model_len <= 0 || (unsigned)in->engine_version >= CORE_VERSION_COUNT)
        return;
    memset(&s, 0, sizeof s);
    s.engine = in->engine;
    s.engine_version = in->engine_version;
    s.max_model_len = in->max_model_len;
    s.tp = in->base.tp;
    s.pp = in->base.pp;
    core_serve_engine_defaults(in, gpu, false, &s); /* the scheduler reads no block size */
    core_serve_check_scheduler(in, &s, p);
}

enum core_status core_serve_resolve(const struct core_serve_input *in,
                                    struct core_serve_result *out, struct core_problems *p)
{
    const struct core_arch *a;
    enum core_status st;

    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < core_serve_input_count; i++)
        if (!core_input_valid(&core_serve_inputs[i], in))
            core_problem_add(p, core_serve_inputs[i].name, "out of range");
    if (p->count > 0)
        return CORE_EINVAL;
    st = resolve_model(in, &out->model, p);
    if (st != CORE_OK)
        return st;
    a = &out->model.shape.arch;
    resolve_serve(in, &out->model, model_context(&in->base, &out->model), &out->resolved, p);
    core_serve_engine_defaults(in, out->model.gpu, a->kv_lora_rank > 0, &out->resolved);
    check_parallel(a, &out->resolved, p);
    check_formats(in, &out->model, p);
    check_block_size(in, p);
    core_serve_check_engine_version(in, p);
    if (p->count == 0)
        core_serve_check_rules(in, &out->model, &out->resolved, p);
    return p->count > 0 ? CORE_EINVAL : CORE_OK;
}
