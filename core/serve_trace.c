/*
 * serve_trace.c - engine releases as data, and the eager profiling pass of a release whose
 * profile peak is a drop in free memory, replayed through the caching-allocator model
 * (caching_alloc.h). The pass's allocations and frees follow the models' forward code of the
 * release (docs/serving.md, "Engine releases"):
 *  - the decoder (vllm/model_executor/models/llama.py, mixtral.py): the embedding's output is the
 *    first residual; the first layer's input norm writes a new tensor, later norms work in place
 *    (fused_add_rms_norm); a tensor dies when its last Python name lets go of it: a sublayer's
 *    input when the decoder layer rebinds hidden_states to the sublayer's output, except that
 *    the model's loop (`hidden_states, residual = layer(positions, hidden_states, ...)`) holds
 *    a layer's input, the previous layer's output, until the layer returns;
 *  - attention: qkv = qkv_proj(x); rotary in place; xformers' output [T, a/tp, h_d] (copied
 *    into a preallocated output where the release's backend does so); o_proj; qkv and the
 *    attention outputs die when the attention returns;
 *  - the gated MLP (LlamaMLP.forward): gate_up, the activation and down_proj's output are live
 *    together (gate_up is a local until return);
 *  - MoE, fused (fused_moe.py): three caches [T, k, 2 f/tp], [T k, f/tp], [T, k, d], the result
 *    written into the input in place; looped (mixtral.py of v0.2.x, mixtral_quant.py later):
 *    each of the E / max(tp, ep) local experts' MixtralMLP over all T tokens (w1, silu, w3,
 *    w1 * w3, w2), the first expert's output kept as the sum, the others added; each added
 *    output stays bound to current_hidden_states while the next expert runs (freed at the
 *    rebinding, the last at return);
 *  - a linear layer writes [T, n]; AWQ where the release runs awq_gemm at every token count
 *    first takes an [8, T, n] fp16 split-K buffer and sums it (and PyTorch's sum of a half tensor
 *    of 2^31 or more elements takes an fp32 accumulation buffer of the output's size,
 *    aten/src/ATen/native/cuda/Reduce.cuh: AccumulationBuffer when the iterator cannot use
 *    32-bit indexing); from 256 tokens later releases dequantize the weight to fp16 [in, n]
 *    first (awq.py apply, FP16_MATMUL_HEURISTIC_CONDITION);
 *  - the sampler over S sequences (vllm/model_executor/layers/sampler.py): fp16 logits [S, V],
 *    their fp32 copy, probabilities, log-probabilities, and the top-p/top-k sort's fp32 values and
 *    int64 indices, all live together.
 */
#include <string.h>

#include "internal.h"
#include "caching_alloc.h"
#include "serve_internal.h"
#include "serve_trace.h"

const char *const core_engine_version_names[CORE_VERSION_COUNT] = {"current", "vllm_0.4",
                                                                   "vllm_0.2"};

const struct core_serve_release core_serve_releases[CORE_VERSION_COUNT] = {
    [CORE_VERSION_CURRENT] = {.name = "current",
                              .engine = CORE_ENGINE_COUNT,
                              .span = "each engine's current code",
                              .moe = CORE_RELEASE_MOE_FUSED},
    /* vllm/worker/worker.py determine_num_available_blocks of mid 2024: peak_memory =
     * init_gpu_memory - free after profile_run (init_gpu_memory taken in init_device before the
     * distributed init); 0.6.4 moved to torch's allocated peak. AWQ dequantizes from 256 tokens
     * (since v0.3.0); quantized Mixtral-type models load as QuantMixtralForCausalLM
     * (model_loader: quantization not None and not fp8), the per-expert loop. */
    [CORE_VERSION_VLLM_0_4] = {.name = "vllm_0.4",
                               .engine = CORE_ENGINE_VLLM_V0,
                               .span = "vLLM V0 of mid 2024 (0.4.x-0.5.x) through 0.6.3",
                               .peak_reserved = true,
                               .attention_output_buffer = true,
                               .moe = CORE_RELEASE_MOE_QUANT_LOOP,
                               .prefill_whole = true},
    /* vllm/worker/worker.py profile_num_available_blocks of v0.2.7: peak_memory =
     * total_gpu_memory - free_gpu_memory after profile_run; awq.py apply_weights calls
     * ops.awq_gemm(x, qweight, scales, qzeros, pack_factor = 8 split-K iterations) at every token
     * count; mixtral.py runs MixtralMoE's expert loop (experts split over the TP ranks). */
    [CORE_VERSION_VLLM_0_2] = {.name = "vllm_0.2",
                               .engine = CORE_ENGINE_VLLM_V0,
                               .span = "vLLM v0.2.x (read at v0.2.7; v0.3.0 changed the AWQ path)",
                               .peak_counts_context = true,
                               .peak_reserved = true,
                               .awq_split_k = true,
                               .moe = CORE_RELEASE_MOE_LOOP,
                               .prefill_whole = true},
};

#define AWQ_SPLIT_K      8                  /* awq.py: pack_factor, passed as split_k_iters */
#define AWQ_FP16_MATMUL  256                /* awq.py: FP16_MATMUL_HEURISTIC_CONDITION, tokens */
#define REDUCE_32BIT_MAX ((int64_t)1 << 31) /* TensorIterator's 32-bit indexing limit */
#define SAMPLER_TENSORS  6
/* getChosenWorkspaceSize (CublasHandlePool.cpp, CUBLAS_WORKSPACE_CONFIG unset): ":4096:2:16:8",
 * 4,096 KiB x 2 + 16 KiB x 8 = 8,519,680 B; 4,096 KiB x 8 = 32 MiB on sm 9.0; ROCm's default
 * 128 MiB on gfx94x (the current file; torch 2.1-2.3 builds for CUDA 12.1, which vLLM 0.2.7 and
 * 0.4.3 pinned, allocate it the same way). */
#define CUBLAS_WORKSPACE_DEFAULT (4096 * 1024 * 2 + 16 * 1024 * 8)
#define CUBLAS_WORKSPACE_SM90    ((int64_t)4096 * 8 * 1024)
#define HIPBLAS_WORKSPACE_GFX94  ((int64_t)1024 * 128 * 1024)

struct pass {
    struct core_alloc al;
    const struct core_serve_release *r;
    enum core_quant q;
    int64_t T;
    int64_t workspace; /* the cuBLAS workspace's bytes, allocated at the first cuBLAS GEMM */
    int b;
};

/* rows x cols x bytes; an overflow marks the pass (refused by the allocator model). */
static int tensor(struct pass *p, int64_t rows, int64_t cols, int64_t bytes)
{
    int64_t n;

    if (!ck_mul(rows, cols, &n) || !ck_mul(n, bytes, &n)) {
        p->al.overflow = true;
        return -1;
    }
    return core_alloc_malloc(&p->al, n);
}

/* A cuBLAS GEMM: the first one of the process creates the handle's workspace through the caching
 * allocator (aten/src/ATen/cuda/CublasHandlePool.cpp, getCurrentCUDABlasHandle ->
 * getNewWorkspace), after the GEMM's output is allocated; it is held in the handle/stream map and
 * never freed. No GEMM runs before the profile: rotary's cos/sin cache is an einsum outer product,
 * which sumproduct_pair computes as a mul. */
static void cublas(struct pass *p)
{
    if (p->workspace > 0) {
        core_alloc_malloc(&p->al, p->workspace);
        p->workspace = 0;
    }
}

/* A linear layer of `in` -> `n` per rank over the pass's tokens: its output's handle. awq_gemm
 * and the other formats' kernels are the engine's own; an unquantized linear (F.linear) and AWQ's
 * dequantized torch.matmul run cuBLAS. */
static int linear(struct pass *p, int64_t in, int64_t n)
{
    int out, tmp;

    if (p->q == CORE_QUANT_AWQ && (p->r->awq_split_k || p->T < AWQ_FP16_MATMUL)) {
        tmp = tensor(p, AWQ_SPLIT_K * p->T, n, p->b);
        out = tensor(p, p->T, n, p->b);
        if ((double)AWQ_SPLIT_K * (double)p->T * (double)n >= (double)REDUCE_32BIT_MAX)
            core_alloc_free(&p->al, tensor(p, p->T, n, 4));
        core_alloc_free(&p->al, tmp);
        return out;
    }
    if (p->q == CORE_QUANT_AWQ) { /* dequantize [in, n], then torch.matmul */
        tmp = tensor(p, in, n, p->b);
        out = tensor(p, p->T, n, p->b);
        cublas(p);
        core_alloc_free(&p->al, tmp);
        return out;
    }
    out = tensor(p, p->T, n, p->b);
    if (p->q == CORE_QUANT_NONE)
        cublas(p);
    return out;
}

/* Attention of one layer on input x: the output's handle (x is the caller's). */
static int attention(struct pass *p, const struct core_arch *a, int64_t tp)
{
    int64_t heads = a->heads / tp, kr = core_serve_kv_heads_per_rank(a->kv_heads, tp);
    int qkv = linear(p, a->hidden, (heads + 2 * kr) * a->head_dim), buf = -1, out, o;

    if (p->r->attention_output_buffer)
        buf = tensor(p, p->T, heads * a->head_dim, p->b);
    out = tensor(p, p->T, heads * a->head_dim, p->b);
    if (buf >= 0) { /* output[:n] = out: xformers' result dies after the copy */
        core_alloc_free(&p->al, out);
        out = buf;
    }
    o = linear(p, heads * a->head_dim, a->hidden);
    core_alloc_free(&p->al, qkv);
    core_alloc_free(&p->al, out);
    return o;
}

/* One MLP over all tokens, `in` -> f -> d: gated (w1, act, w3, w1 * w3, w2, as MixtralMLP, or
 * gate_up, act, down as LlamaMLP) or not; the output's handle. */
static int mlp(struct pass *p, const struct core_arch *a, int64_t f, bool fused_gate_up)
{
    int up, act, gate = -1, prod = -1, down;

    if (!a->gated_mlp) {
        up = linear(p, a->hidden, f);
        act = tensor(p, p->T, f, p->b);
        core_alloc_free(&p->al, up);
        down = linear(p, f, a->hidden);
        core_alloc_free(&p->al, act);
        return down;
    }
    if (fused_gate_up) { /* LlamaMLP: gate_up [T, 2f] lives until return */
        up = linear(p, a->hidden, 2 * f);
        act = tensor(p, p->T, f, p->b);
        down = linear(p, f, a->hidden);
        core_alloc_free(&p->al, act);
        core_alloc_free(&p->al, up);
        return down;
    }
    up = linear(p, a->hidden, f); /* MixtralMLP: w1_out = act(w1(x)) rebinds w1_out */
    act = tensor(p, p->T, f, p->b);
    core_alloc_free(&p->al, up);
    gate = linear(p, a->hidden, f);
    prod = tensor(p, p->T, f, p->b);
    down = linear(p, f, a->hidden);
    core_alloc_free(&p->al, prod);
    core_alloc_free(&p->al, act);
    core_alloc_free(&p->al, gate);
    return down;
}

/* Field by field (no memcmp: the blocks' padding bytes are unspecified), the peaks included. */
static bool same_state(const struct core_alloc *x, const struct core_alloc *y)
{
    if (x->segments != y->segments || x->reserved != y->reserved || x->live != y->live)
        return false;
    if (x->peak_reserved != y->peak_reserved || x->peak_live != y->peak_live)
        return false;
    for (int i = 0; i < CORE_ALLOC_BLOCKS; i++) {
        const struct core_alloc_block *b = &x->blocks[i], *c = &y->blocks[i];

        if (b->alive != c->alive || (b->alive && (b->offset != c->offset || b->size != c->size ||
                                                  b->segment != c->segment || b->used != c->used)))
            return false;
    }
    return true;
}

/* The experts run the same allocations one after another, so the allocator falls into a cycle:
 * once the state after expert e (blocks, slots, peaks) and its live output `prev` equal those
 * after expert e - k, the replay from there repeats every k experts with no new peak, and whole
 * cycles can be skipped (the remainder is still replayed). A model of 100,000 local experts then
 * costs a few experts' replay. */
#define EXPERT_PERIOD_MAX 4

struct expert_state {
    struct core_alloc al;
    int prev;
};

/* How many of the experts after e to skip: whole cycles, or 0 (the state remembered). */
static int64_t expert_skip(struct expert_state *seen, const struct core_alloc *now, int prev,
                           int64_t e, int64_t n)
{
    for (int64_t k = 1; k <= EXPERT_PERIOD_MAX && k <= e; k++) {
        const struct expert_state *s = &seen[(e - k) % EXPERT_PERIOD_MAX];

        if (s->prev == prev && same_state(&s->al, now))
            return (n - 1 - e) / k * k;
    }
    seen[e % EXPERT_PERIOD_MAX].al = *now;
    seen[e % EXPERT_PERIOD_MAX].prev = prev;
    return 0;
}

/* A routed MLP on input x: the output's handle, or x itself when fused_moe writes in place. */
static int moe(struct pass *p, const struct core_arch *a, int64_t tp, int64_t ep, int x)
{
    int64_t f = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    int64_t split = ep > tp ? ep : tp, local = a->experts / split;
    bool quantized = p->q != CORE_QUANT_NONE && p->q != CORE_QUANT_FP8;
    int sum = -1, prev = -1, c1, c2, c3;

    cublas(p); /* the router, an unquantized ReplicatedLinear: its logits are small-pool */
    if (p->r->moe == CORE_RELEASE_MOE_LOOP ||
        (p->r->moe == CORE_RELEASE_MOE_QUANT_LOOP && quantized)) {
        /* current_hidden_states = expert_layer(hidden_states).mul_(w): the name still holds the
         * previous expert's output while the next expert runs; it dies only at the rebinding
         * (final_hidden_states.add_ read it before), the last one at return. */
        struct expert_state seen[EXPERT_PERIOD_MAX]; /* after the last experts */
        int64_t n = local > 0 ? local : 1, skip = 0;

        for (int64_t e = 0; e < n; e++) {
            int out = mlp(p, a, f, false);

            if (prev >= 0 && prev != sum)
                core_alloc_free(&p->al, prev);
            if (sum < 0)
                sum = out; /* final_hidden_states = the first expert's output */
            prev = out;
            if (skip == 0) /* once: after it the ring's distances no longer hold */
                e += skip = expert_skip(seen, &p->al, prev, e, n);
        }
        if (prev != sum)
            core_alloc_free(&p->al, prev);
        return sum;
    }
    c1 = tensor(p, p->T * a->experts_per_token, (a->gated_mlp ? 2 : 1) * f / tp, p->b);
    c2 = tensor(p, p->T * a->experts_per_token, f / tp, p->b);
    c3 = tensor(p, p->T * a->experts_per_token, a->hidden, p->b);
    core_alloc_free(&p->al, c1);
    core_alloc_free(&p->al, c2);
    core_alloc_free(&p->al, c3);
    return x;
}

static bool moe_layer(const struct core_arch *a, int64_t i)
{
    int64_t freq = a->moe_layer_freq > 1 ? a->moe_layer_freq : 1;

    return a->experts > 0 && i >= a->dense_layers && (freq == 1 || i % freq == a->moe_layer_phase);
}

/* The sampler's tensors over S sequences and V logits, all live together, then freed. */
static void sampler(struct pass *p, int64_t seqs, int64_t vocab)
{
    static const int64_t bytes[SAMPLER_TENSORS] = {2, 4, 4, 4, 4, 8};
    int h[SAMPLER_TENSORS];

    if (seqs <= 0)
        return;
    for (int i = 0; i < SAMPLER_TENSORS; i++) {
        h[i] = tensor(p, seqs, vocab, bytes[i]);
        if (i == 0) /* the logits: torch.matmul(hidden, lm_head.t()) */
            cublas(p);
    }
    for (int i = 0; i < SAMPLER_TENSORS; i++)
        core_alloc_free(&p->al, h[i]);
}

/* One decoder layer on `input`: the new hidden state's handle. The first layer's input is its
 * input norm's output, a local of the decoder layer that dies when attention's output replaces
 * it (the model's loop holds the embedding, which is the residual). A later layer's input is the
 * previous layer's output, which the model's loop (`hidden_states, residual =
 * layer(positions, hidden_states, ...)`) still holds until the layer returns. */
static int layer(struct pass *p, const struct core_arch *a, int64_t tp, int64_t ep, int64_t i,
                 int input)
{
    int o = attention(p, a, tp), m;

    if (i == 0)
        core_alloc_free(&p->al, input);
    /* the post-attention norm works in place on o */
    if (moe_layer(a, i))
        m = moe(p, a, tp, ep, o);
    else
        m = mlp(p, a, a->ffn_hidden / tp, true);
    if (m != o)
        core_alloc_free(&p->al, o);
    if (i > 0)
        core_alloc_free(&p->al, input);
    return m;
}

int64_t core_serve_cublas_workspace_bytes(int gpu)
{
    switch (core_gpus[gpu].generation) {
    case CORE_GEN_HOPPER:
        return CUBLAS_WORKSPACE_SM90;
    case CORE_GEN_CDNA3:
        return HIPBLAS_WORKSPACE_GFX94;
    case CORE_GEN_TPU:
        return 0;
    default:
        return CUBLAS_WORKSPACE_DEFAULT;
    }
}

int64_t core_serve_profile_reserved(const struct core_arch *a, const struct core_serve_release *r,
                                    enum core_quant q, int64_t tp, int64_t pp, int64_t ep,
                                    int64_t tokens, int64_t seqs, int act_bytes, int64_t workspace)
{
    struct pass p;            /* about 8 KiB of blocks, on the stack (core allocates nothing) */
    struct core_alloc before; /* the state after the previous layer */
    int64_t layers = ceil_div(a->layers, pp > 0 ? pp : 1);
    int residual, hidden;

    if (a->kv_lora_rank > 0 || tp < 1 || tokens < 1 || a->heads % tp != 0)
        return -1;
    memset(&p, 0, sizeof p);
    core_alloc_init(&p.al);
    p.r = r;
    p.q = q;
    p.T = tokens;
    p.workspace = workspace;
    p.b = act_bytes;
    residual = tensor(&p, tokens, a->hidden, act_bytes); /* the embedding's output */
    hidden = tensor(&p, tokens, a->hidden, act_bytes);   /* the first input norm's */
    for (int64_t i = 0; i < layers && !p.al.overflow; i++) {
        before = p.al;
        hidden = layer(&p, a, tp, ep, i, hidden);
        /* A layer that leaves the allocator as it found it (the same blocks, the same peak)
         * does so again for every following layer of its kind: skip those. */
        if (i > 0 && same_state(&before, &p.al) && before.peak_reserved == p.al.peak_reserved)
            while (i + 1 < layers && moe_layer(a, i + 1) == moe_layer(a, i))
                i++;
    }
    sampler(&p, seqs, a->vocab);
    core_alloc_free(&p.al, hidden);
    core_alloc_free(&p.al, residual);
    return p.al.overflow ? -1 : p.al.peak_reserved;
}
