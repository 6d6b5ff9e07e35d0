/*
 * serve_time.h - how fast a deployment serves: prefill, decode and throughput from the roofline.
 *
 * One forward pass ("step") of an inference engine on one GPU of a replica is priced kernel by
 * kernel against the hardware's own numbers: the weight GEMMs at max(weights read once at the
 * achieved HBM bandwidth, their FLOPs at the precision's peak), attention at max(each
 * sequence's KV cache read once, its FLOPs at the fused-attention rate), the tensor-parallel
 * all-reduces (two per layer, latency-bound at small batches), and a fixed cost per layer and
 * per step (kernel launches, with or without CUDA graphs; the scheduler and the sampler). From
 * steps: time to first token, time per output token, the replica's throughput for a static
 * batch or for the steady state of continuous batching with prefills interleaved. Formulas,
 * constants and sources: docs/serving.md, "Time".
 *
 * Pure like the rest of core: no I/O, no allocation, no state; a few hundred flops per call. The
 * caller passes resolved inputs (the memory side, core/serve.c, gives the bytes); out-of-range
 * values are clamped so every figure is finite and non-negative.
 */
#ifndef MEMWALL_CORE_SERVE_TIME_H
#define MEMWALL_CORE_SERVE_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* What bounds the decode step: the largest of its exposed terms. */
enum core_serve_bottleneck {
    CORE_SERVE_HBM,      /* weights and KV cache read at the achieved bandwidth */
    CORE_SERVE_COMPUTE,  /* GEMM and attention FLOPs at the achieved peak */
    CORE_SERVE_TP_COMM,  /* tensor-parallel all-reduces */
    CORE_SERVE_OVERHEAD, /* kernel launches, scheduler, sampler */
};
#define CORE_SERVE_BOTTLENECKS 4
extern const char *const core_serve_bottleneck_names[CORE_SERVE_BOTTLENECKS];

/* The arithmetic the weight GEMMs run in: 16-bit (also 4-bit weights, dequantised to 16 bits
 * in the kernel: AWQ, GPTQ, NF4, GGUF), FP8 W8A8, INT8 W8A8. Selects the constant gemm / gemm8. */
enum core_serve_math { CORE_SERVE_MATH_16, CORE_SERVE_MATH_FP8, CORE_SERVE_MATH_INT8 };

struct core_serve_time_input {
    struct core_arch arch; /* the resolved architecture (layers, widths, experts) */
    /* Bytes per GPU of the replica (one tp rank of one pipeline stage), from the memory side. */
    double weight_bytes; /* every weight this GPU holds */
    /* Bytes per weight of the quantized linear layers (0: the 16-bit default, no scaling). */
    double linear_bytes_per_weight;
    double embedding_bytes;    /* of those, the input embedding: a step gathers B rows, no more */
    double expert_bytes;       /* of those, the routed experts: a step reads the ones it touches */
    double kv_bytes_per_token; /* K and V of one token over this GPU's layers */
    /* Hardware: dense peaks (TFLOP/s) of the GEMM arithmetic and of 16-bit (attention runs in
     * 16 bits), HBM TB/s, the tensor-parallel link GB/s per direction, the generation. */
    double gemm_tflops, attention_tflops, hbm_tbps, link_gbs;
    enum core_serve_math math;
    enum core_gpu_generation generation;
    int64_t tp, pp;
    /* The MoE group: the tp x dp ranks of a stage the MoE layers span (core_serve_resolved's
     * moe_width: vLLM's FusedMoEParallelConfig, SGLang's and TensorRT-LLM's attention DP), so
     * ep > tp means ep / tp attention groups - each carrying this step's tokens - whose tokens
     * meet in one set of E experts, E / ep experts' worth per GPU. 0 or 1: none, or ep <= tp
     * (the experts' tokens are this group's). */
    int64_t ep;
    bool cuda_graphs; /* false: eager launches (vLLM --enforce-eager) */
    /* Workload: prompt and output tokens per request, sequences in flight. continuous: the
     * steady state of a continuously batched engine (new prompts prefilled inside decode
     * steps); otherwise one static batch of `concurrency` requests, prefilled together. */
    int64_t input_len, output_len, concurrency;
    bool continuous;
    double usd_per_gpu_hour; /* < 0: no price */
};

/* One step's seconds per term (the exposed part of each roofline pair goes to its side). */
struct core_serve_step {
    double seconds;
    double weights_hbm, kv_hbm; /* reads that bound their kernels */
    double compute;             /* GEMM and attention FLOPs that bound their kernels */
    double tp_comm, overhead;
    double bytes, flops; /* HBM bytes read and FLOPs done by this GPU */
};

struct core_serve_time {
    double ttft_seconds, tpot_seconds, e2e_seconds;
    double output_tokens_per_second; /* the replica */
    double requests_per_second;
    int64_t concurrency;
    enum core_serve_bottleneck bottleneck;
    double mbu, mfu;                      /* of the decode step */
    double usd_per_million_output_tokens; /* < 0: no price */
    double knee_batch;      /* decode batch where the weight GEMMs turn compute-bound */
    double experts_touched; /* per MoE layer per decode step; 0 dense */
    struct core_serve_step decode, prefill;
};

/* Per-generation constants (serve_time.c, docs/serving.md "Time constants"). */
struct core_serve_gen {
    double hbm;   /* achieved / peak HBM bandwidth of weight-streaming GEMMs and paged attention */
    double gemm;  /* large 16-bit GEMM throughput / dense 16-bit peak */
    double gemm8; /* large FP8 / INT8 GEMM throughput / its dense peak */
    double half_tokens; /* a GEMM over M tokens runs at M / (M + half_tokens) of the large rate */
    double flash;       /* fused attention throughput / 16-bit peak (prefill) */
    double link;        /* all-reduce bus bandwidth / link rate */
    double ar_latency;  /* seconds per small all-reduce (the engines' custom one-shot kernel) */
    double layer_graph; /* seconds per layer per step, CUDA graphs captured */
    double layer_eager; /* seconds per layer per step, eager launches */
    double step_host;   /* seconds per step on the host: scheduling, sampling, output */
};
extern const struct core_serve_gen core_serve_gens[CORE_GEN_COUNT];

/* Expected distinct experts of E touched when b tokens each pick k (uniform routing):
 * E (1 - (1 - k/E)^b). */
double core_serve_experts_touched(double experts, double k, double tokens);

/* One step: `decode` sequences decoding at mean context `context`, plus `prompts` prompts
 * (fractional in a steady state) of `prompt_len` tokens prefilled in the same pass. */
void core_serve_step_time(const struct core_serve_time_input *in, const struct core_serve_gen *k,
                          double decode, double context, double prompts, double prompt_len,
                          struct core_serve_step *out);

/* Everything, with the generation's constants (gens NULL) or the caller's (a test's sweep). */
void core_serve_time_compute(const struct core_serve_time_input *in,
                             const struct core_serve_gen *gens, struct core_serve_time *out);

#endif
