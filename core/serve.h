/*
 * serve.h - "will it serve?": the memory of an inference deployment as vLLM, SGLang,
 * TensorRT-LLM and llama.cpp size it at start-up (weights, the profiling peak, non-torch
 * memory, CUDA graphs, the paged KV cache, and the concurrency it buys).
 *
 * Interface (stable; serve-time and launch build on it):
 *
 *     struct core_serve_input in;
 *     struct core_serve_result out;
 *     struct core_problems problems = {0};
 *     core_serve_input_init(&in);            // every row of core_serve_inputs at its default
 *     in.base.preset = core_preset_find("llama3-8b");  // the model as for core_evaluate()
 *     in.engine = CORE_ENGINE_VLLM; in.max_model_len = 32768; ...
 *     if (core_serve(&in, &out, &problems) == CORE_OK) ... out.kv.tokens, out.fits ...
 *
 * struct core_serve_input embeds a struct core_input first (base: model, shape, config, MoE,
 * precision = the model's dtype, gpu, gpus, tp, pp, ep, memory_gb), so the api decodes the
 * training rows and the serving rows (core_serve_inputs in inputs.c, offsets into this struct)
 * with one mechanism, as /plan does. The training-only rows of base are accepted and ignored.
 * core_serve() resolves the model through core_evaluate_parts(CORE_PART_FLOPS) (its problems
 * and 422s are core_evaluate()'s), then sizes one replica (gpus = tp * pp GPUs unless given).
 * Pure: no allocation, no I/O; every figure is per GPU, in bytes, exact int64.
 * The formulas and the engine file each one is read from: docs/serving.md.
 */
#ifndef MEMWALL_CORE_SERVE_H
#define MEMWALL_CORE_SERVE_H

#include "core.h"
#include "quant.h"

enum core_engine {
    CORE_ENGINE_VLLM,     /* vLLM V1 (vllm/v1/worker/gpu_worker.py) */
    CORE_ENGINE_VLLM_V0,  /* vLLM V0 (vllm/worker/worker.py) */
    CORE_ENGINE_SGLANG,   /* SGLang (python/sglang/srt/model_executor/model_runner.py) */
    CORE_ENGINE_TRTLLM,   /* TensorRT-LLM (docs/source/reference/memory.md) */
    CORE_ENGINE_LLAMACPP, /* llama.cpp (src/llama-kv-cache.cpp): the whole n_ctx up front */
    CORE_ENGINE_COUNT
};

/* kv_cache_dtype: auto = the model's dtype; the fp8 spellings all store one byte. */
enum core_kv_dtype {
    CORE_KV_AUTO,
    CORE_KV_FP8,
    CORE_KV_FP8_E4M3,
    CORE_KV_FP8_E5M2,
    CORE_KV_DTYPE_COUNT
};

/* engine_version: which release's sizing code (serve_trace.h, core_serve_releases; docs/serving.md,
 * "Engine releases"). current = each engine as its current code sizes, the default. */
enum core_engine_version {
    CORE_VERSION_CURRENT,
    CORE_VERSION_VLLM_0_4, /* vLLM V0 of mid 2024 to 0.6.3: init_gpu_memory - free */
    CORE_VERSION_VLLM_0_2, /* vLLM v0.2.x: total - free, AWQ split-K, per-expert MoE loop */
    CORE_VERSION_COUNT
};

extern const char *const core_engine_names[CORE_ENGINE_COUNT];
extern const char *const core_engine_version_names[CORE_VERSION_COUNT];
extern const char *const core_kv_dtype_names[CORE_KV_DTYPE_COUNT];

/* Bounds of the serving rows (inputs.c). */
#define CORE_SERVE_LEN_MAX    100000000 /* max_model_len, tokens */
#define CORE_SERVE_SEQS_MAX   1000000   /* max_num_seqs */
#define CORE_SERVE_BLOCK_MAX  1024      /* block_size, tokens */
#define CORE_SERVE_GROUP_MAX  1048576   /* quant_group_size, weights */
#define CORE_SERVE_KV_MEM_MAX 1e15      /* kv_cache_memory, bytes */
#define CORE_SERVE_TBPS_MIN   0.01      /* hbm_tbps, TB/s: 10 GB/s, below any catalog part */
#define CORE_SERVE_TBPS_MAX   1000      /* hbm_tbps, TB/s */

struct core_serve_input {
    struct core_input base; /* first: the rows of core_inputs decode into it */
    enum core_engine engine;
    enum core_engine_version engine_version; /* current (0) = the engine's current code */
    enum core_quant quantization;
    int64_t quant_group_size; /* 0 = the format's (128 for awq, gptq) */
    enum core_kv_dtype kv_cache_dtype;
    double gpu_memory_utilization;         /* vLLM, default 0.9 */
    double mem_fraction_static;            /* SGLang; 0 = SGLang's own default */
    double kv_cache_free_gpu_mem_fraction; /* TensorRT-LLM, default 0.9 */
    int64_t kv_cache_memory;               /* bytes; 0 = profile (vLLM --kv-cache-memory) */
    int64_t max_model_len;                 /* 0 = the model's context */
    int64_t max_num_seqs;                  /* 0 = the engine's default */
    int64_t max_num_batched_tokens;        /* 0 = the engine's default */
    int64_t block_size;                    /* 0 = the engine's (16; TensorRT-LLM 64) */
    bool enforce_eager;                    /* no CUDA graphs */
    double hbm_tbps;                       /* 0 = the catalog's */
    /* The workload the time model prices (serve_timing.h; docs/serving.md, "Time"). */
    int64_t input_len, output_len; /* tokens per request, default 1024 and 128 */
    int64_t concurrency;           /* sequences in flight, default 1; 0 = max */
    int batching;                  /* enum core_batching: auto, static, continuous */
};

void core_serve_input_init(struct core_serve_input *in);

/* Per GPU (the worst rank of the replica), bytes. total = everything but the headroom. */
struct core_serve_memory {
    int64_t weights;     /* the rank's weights in their stored formats */
    int64_t activations; /* the engine's profiling peak (a forward at max_num_batched_tokens) */
    int64_t non_torch;   /* CUDA context + communicator and library buffers */
    int64_t cuda_graphs; /* captured graphs' private pool (0 when eager) */
    int64_t kv_cache;    /* the KV pool the engine allocates: blocks * page bytes */
    int64_t total;       /* weights + activations + non_torch + cuda_graphs + kv_cache */
    int64_t capacity;    /* the device's usable memory (driver-reported; memory_gb overrides) */
};

struct core_serve_kv {
    int64_t bytes_per_token;         /* per GPU: every KV layer the rank holds */
    int64_t block_size;              /* tokens per block (page) */
    int64_t page_bytes;              /* one block of one layer */
    int64_t available;               /* what the engine had for the pool (may be < 0) */
    int64_t blocks;                  /* floor(available / (page_bytes * layers)); with sliding
                                        layers (vLLM V1) / (page_bytes * group size) */
    int64_t tokens;                  /* blocks * block_size; hybrid: blocks / groups * block_size */
    double max_concurrency;          /* blocks / ceil(max_model_len / block_size) */
    bool max_model_len_fits;         /* one max_model_len request fits in the pool */
    int64_t max_model_len_supported; /* the longest one request can be (vLLM's estimate), at most
                                        the model's positions */
    int64_t layers;                  /* KV layers on the rank (linear-attention layers keep none) */
    int64_t pool_bytes;              /* the pool allocated: memory.per_gpu.kv_cache */
};

/* The inputs after the engine's defaults. */
struct core_serve_resolved {
    enum core_engine engine;
    enum core_engine_version engine_version;
    enum core_quant quantization;
    int64_t quant_group_size;
    enum core_kv_dtype kv_cache_dtype;
    int kv_bytes; /* bytes per KV element */
    double gpu_memory_utilization, mem_fraction_static, kv_cache_free_gpu_mem_fraction;
    int64_t kv_cache_memory;
    int64_t max_model_len, max_num_seqs, max_num_batched_tokens, block_size;
    int64_t context; /* the model's positions (preset or config); 0 = unknown */
    bool enforce_eager;
    double hbm_tbps;
    double memory_gb; /* the memory_gb override (decimal GB), 0 = the catalog's usable figure */
    int64_t gpus, tp, pp, ep;
    /* The ranks of one pipeline stage the MoE layers span (the engine's MoE group; tp for a
     * dense model): vLLM's tp x dp (FusedMoEParallelConfig.make), SGLang's and TensorRT-LLM's
     * tp_size, both of which hold the attention-DP groups, i.e. gpus / pp; tp where the engine
     * has no data parallelism (vLLM releases before 0.8, llama.cpp). Each GPU holds
     * ceil(E / ep) routed experts, each split moe_width / ep ways (docs/serving.md, "Checks"). */
    int64_t moe_width;
    /* The workload (as given; concurrency 0 = max) and the price the time model reads. */
    int64_t input_len, output_len, concurrency;
    int batching;
    double usd_per_gpu_hour; /* < 0 = not given */
};

struct core_serve_result {
    struct core_resolved model; /* core_evaluate()'s resolution of base (shape, N, GPU) */
    struct core_serve_resolved resolved;
    struct core_serve_memory per_gpu;
    struct core_serve_kv kv;
    bool fits; /* weights, reserves and one max_model_len request fit */
    int warning_count;
    struct core_note warnings[CORE_MAX_NOTES];
    int advice_count; /* in cost order: the cheapest change first */
    struct core_note advice[CORE_MAX_NOTES];
};

/* Size one replica. CORE_OK fills *out; CORE_EINVAL / CORE_ERANGE list the fields at fault. */
enum core_status core_serve(const struct core_serve_input *in, struct core_serve_result *out,
                            struct core_problems *problems);

/* engine_version names a release of one engine (core_serve_releases): a release of another
 * engine than in->engine is a problem naming engine_version. core_serve() checks it; the
 * planner (serve_plan.c) checks it before its search, so that one is a 422 there too. */
void core_serve_check_engine_version(const struct core_serve_input *in, struct core_problems *p);

/* The refusals of core_serve() that need neither the model nor the parallel layout - the engine's
 * release, vLLM's block sizes, the weight format against the engine, the model's dtype and the
 * KV dtype, the GPU's compute capability and dtype peak, vLLM's scheduler rule at the GPU's
 * defaults (in->max_model_len given) - for in's engine, gpu, quantization and kv_cache_dtype.
 * The planner asks it of every gpu x quantization x KV dtype it would search: when none passes,
 * no candidate can, and the request is a 422 naming the field before the search. */
void core_serve_check_candidate(const struct core_serve_input *in, struct core_problems *p);

/* The pieces, for tests and for callers that size a variant (serve.c). */
/* KV bytes per token per GPU of arch on a tp-way rank holding `layers` layers:
 * layers * 2 * max(1, kv_heads / tp) * head_dim * kv_bytes, or for MLA (kv_lora_rank > 0)
 * layers * (kv_lora_rank + qk_rope_head_dim) * kv_bytes on every rank. */
int64_t core_serve_kv_bytes_per_token(const struct core_arch *arch, int64_t tp, int64_t layers,
                                      int kv_bytes);
/* The rank's weights: the linear layers in format q (group), embeddings and head as the format
 * stores them, the rest at the 16-bit dtype (dtype_bytes); tp splits, K/V heads replicated
 * below one per rank, ep splits the routed experts, pp keeps ceil(L / pp) layers. -1 on overflow
 * or an invalid architecture. The MoE group is max(tp, ep) ranks (gpus = tp x pp). */
int64_t core_serve_weight_bytes(const struct core_arch *arch, enum core_quant q, int64_t group,
                                int dtype_bytes, int64_t tp, int64_t pp, int64_t ep);
/* The same with the MoE group of `width` ranks per stage (core_serve_resolved.moe_width, a
 * multiple of ep): each rank holds ceil(E / ep) routed experts, each split width / ep ways. */
int64_t core_serve_weight_bytes_moe(const struct core_arch *arch, enum core_quant q, int64_t group,
                                    int dtype_bytes, int64_t tp, int64_t pp, int64_t ep,
                                    int64_t width);

#endif
