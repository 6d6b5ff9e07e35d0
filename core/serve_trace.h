/*
 * serve_trace.h - engine releases whose sizing differs from the engine's current code, as data
 * (one row each: core_serve_releases, serve_trace.c), and the profiling pass those releases run,
 * replayed through the caching-allocator model (caching_alloc.h). docs/serving.md, "Engine
 * releases", has each row's derivation and the files it is read from.
 */
#ifndef MEMWALL_CORE_SERVE_TRACE_H
#define MEMWALL_CORE_SERVE_TRACE_H

#include "serve.h"

/* How a release runs a mixture-of-experts layer in its profiling pass. */
enum core_release_moe {
    CORE_RELEASE_MOE_FUSED,      /* fused_moe's three caches (the current code) */
    CORE_RELEASE_MOE_QUANT_LOOP, /* quantized (but fp8) models: each local expert over all tokens */
    CORE_RELEASE_MOE_LOOP        /* every model: each local expert over all tokens */
};

struct core_serve_release {
    const char *name;
    enum core_engine engine; /* the engine it is a release of; CORE_ENGINE_COUNT: any */
    const char *span;        /* the releases the row covers, as read */
    /* The profile's peak is total - free after the pass (mem_get_info): the CUDA context and
     * everything in use before the engine count against the budget. */
    bool peak_counts_context;
    /* The peak is a drop in free memory (mem_get_info before and after, no empty_cache between):
     * the caching allocator's reserved segments count, not the live tensors. */
    bool peak_reserved;
    /* AWQ's awq_gemm at every token count, which writes split_k_iters (8) partial sums
     * [8, M, N] in fp16 and sums them (csrc/quantization/awq/gemm_kernels.cu); later releases
     * dequantize the weight and call torch.matmul from 256 tokens. */
    bool awq_split_k;
    /* The attention backend preallocates its output (torch.empty_like(query)) and copies
     * xformers' result into it (vllm/attention/backends/xformers.py); earlier PagedAttention
     * returned xformers' output as a view. */
    bool attention_output_buffer;
    enum core_release_moe moe;
    /* max_num_batched_tokens defaults to max(max_model_len, 2048) at every length (chunked
     * prefill not on by default above 32k: vllm/config.py SchedulerConfig of the release). */
    bool prefill_whole;
};

extern const struct core_serve_release core_serve_releases[CORE_VERSION_COUNT];

/* The bytes of PyTorch's cuBLAS workspace on catalog row gpu (CublasHandlePool.cpp,
 * getChosenWorkspaceSize's default): 8,519,680; 32 MiB on Hopper (sm 9.0); 128 MiB on CDNA3
 * (hipBLAS on gfx94x); 0 on TPU (no cuBLAS). It is allocated through the caching allocator by
 * the process's first cuBLAS GEMM, which in vLLM is in the profiling pass, and held. */
int64_t core_serve_cublas_workspace_bytes(int gpu);

/* The reserved peak of the release's eager profiling pass on one rank (bytes): `tokens` through
 * the first ceil(L / pp) layers, then the sampler over `seqs` sequences, with a `workspace`-byte
 * cuBLAS workspace allocated at the pass's first cuBLAS GEMM (0: none); -1 when the pass is not
 * replayed (MLA attention, or the allocator model's arrays overflow): the caller keeps
 * core_serve_profile_bytes. */
int64_t core_serve_profile_reserved(const struct core_arch *a, const struct core_serve_release *r,
                                    enum core_quant q, int64_t tp, int64_t pp, int64_t ep,
                                    int64_t tokens, int64_t seqs, int act_bytes, int64_t workspace);

#endif
