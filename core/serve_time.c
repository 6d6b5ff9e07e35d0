/*
 * serve_time.c - the serving time model (serve_time.h; docs/serving.md, "Time").
 *
 * A step is one forward pass of the replica over every token it carries: the decoding
 * sequences (one token each) and, under continuous batching, the prompt tokens prefilled in the
 * same pass. One GPU of the replica holds 1/tp of each of its stage's L/pp layers; its step is
 *
 *   max(weights read, GEMM FLOPs)  +  max(KV read, attention FLOPs)  +  TP all-reduces
 *   + launch gaps per layer + the host's per-step work
 *
 * each kernel family on its own roofline. Nothing depends on the row a measurement came from;
 * the constants are per GPU generation, each with its source in docs/serving.md.
 */
#include <math.h>

#include "serve_time.h"

const char *const core_serve_bottleneck_names[CORE_SERVE_BOTTLENECKS] = {"hbm", "compute",
                                                                         "tp_comm", "overhead"};

/*
 * Constants per generation. Sources (docs/serving.md, "Time constants"):
 *  - hbm: what a streaming kernel reaches of the datasheet bandwidth (GEMV / small-M GEMM and
 *    paged attention read each byte once): 0.80 for HBM2e/HBM3 parts, 0.85 for GDDR6 (Ada).
 *  - gemm, gemm8, half_tokens: the large-GEMM fractions the training model measured (core/perf.c
 *    gens[]: the same cuBLAS / CUTLASS kernels), and the size at which a GEMM's M dimension
 *    reaches half of that rate.
 *  - flash: FlashAttention-2's forward pass, ~70 % of peak on A100 (Dao 2023, section 4.1) and
 *    ~35 % on H100 with FA2 (FlashAttention-3 paper, Shah et al. 2024, figure 5, fp16 headdim
 *    128 forward), i.e. below the FA3 ~60 % the engines do not all use.
 *  - link, ar_latency: the all-reduce bus bandwidth over the link rate as the training model
 *    (perf.c gens[].up), and the latency of a small intra-node all-reduce (nccl-tests on DGX
 *    A100 / H100: 15-25 microseconds at 8 bytes; PCIe parts twice that).
 *  - layer_graph: GPU-side gaps and the fixed cost of the ~8 small kernels of a decoder layer
 *    (norms, rotary, cache write, activation) when a CUDA graph replays them back to back;
 *    layer_eager: the host's cost to launch one layer's kernels (~8 launches x ~5 microseconds,
 *    the training model's 30-40 microseconds per layer per pass), exposed only when the GPU
 *    finishes a layer faster than the host launches it.
 *  - step_host: the engine's host work per step (scheduling, sampling, detokenising), 0.5 ms.
 */
const struct core_serve_gen core_serve_gens[CORE_GEN_COUNT] = {
    [CORE_GEN_VOLTA] = {.hbm = 0.80,
                        .gemm = 0.70,
                        .gemm8 = 0.70,
                        .half_tokens = 96,
                        .flash = 0.40,
                        .link = 0.75,
                        .ar_latency = 25e-6,
                        .layer_graph = 15e-6,
                        .layer_eager = 40e-6,
                        .step_host = 0.5e-3},
    [CORE_GEN_AMPERE] = {.hbm = 0.80,
                         .gemm = 0.80,
                         .gemm8 = 0.80,
                         .half_tokens = 64,
                         .flash = 0.60,
                         .link = 0.78,
                         .ar_latency = 20e-6,
                         .layer_graph = 10e-6,
                         .layer_eager = 40e-6,
                         .step_host = 0.5e-3},
    [CORE_GEN_ADA] = {.hbm = 0.85,
                      .gemm = 0.65,
                      .gemm8 = 0.50,
                      .half_tokens = 64,
                      .flash = 0.45,
                      .link = 0.70,
                      .ar_latency = 40e-6,
                      .layer_graph = 10e-6,
                      .layer_eager = 40e-6,
                      .step_host = 0.5e-3},
    [CORE_GEN_HOPPER] = {.hbm = 0.80,
                         .gemm = 0.65,
                         .gemm8 = 0.55,
                         .half_tokens = 96,
                         .flash = 0.35,
                         .link = 0.80,
                         .ar_latency = 20e-6,
                         .layer_graph = 10e-6,
                         .layer_eager = 30e-6,
                         .step_host = 0.5e-3},
    [CORE_GEN_BLACKWELL] = {.hbm = 0.80,
                            .gemm = 0.65,
                            .gemm8 = 0.55,
                            .half_tokens = 128,
                            .flash = 0.35,
                            .link = 0.80,
                            .ar_latency = 20e-6,
                            .layer_graph = 10e-6,
                            .layer_eager = 30e-6,
                            .step_host = 0.5e-3},
    [CORE_GEN_CDNA3] = {.hbm = 0.70,
                        .gemm = 0.45,
                        .gemm8 = 0.35,
                        .half_tokens = 128,
                        .flash = 0.25,
                        .link = 0.60,
                        .ar_latency = 30e-6,
                        .layer_graph = 15e-6,
                        .layer_eager = 40e-6,
                        .step_host = 0.5e-3},
    [CORE_GEN_TPU] = {.hbm = 0.80,
                      .gemm = 0.70,
                      .gemm8 = 0.70,
                      .half_tokens = 128,
                      .flash = 0.45,
                      .link = 0.80,
                      .ar_latency = 20e-6,
                      .layer_graph = 10e-6,
                      .layer_eager = 30e-6,
                      .step_host = 0.5e-3},
};

static double at_least(double x, double lo)
{
    return x >= lo ? x : lo; /* also maps NaN to lo */
}

static double larger(double a, double b)
{
    return a > b ? a : b;
}

double core_serve_experts_touched(double experts, double k, double tokens)
{
    if (experts <= 0 || k <= 0 || tokens <= 0)
        return 0.0;
    if (k >= experts)
        return experts;
    return experts * (1.0 - pow(1.0 - k / experts, tokens));
}

/* Per-GPU figures of the architecture the step needs: FLOPs per token in the weight GEMMs
 * (2 x the active weights this GPU multiplies, the input embedding excluded: it is a gather),
 * the layers on this GPU and the attention width (heads x head size) on this GPU. */
struct per_gpu {
    double gemm_flops;   /* per token, all weight GEMMs */
    double expert_flops; /* of those, the routed experts' (k of E per token) */
    double layers, heads_hd, hidden, experts, topk;
    /* Attention layer types on this GPU (core/layers.c): full and sliding-window layers keep a
     * KV cache, linear-attention layers none; window of the sliding ones. */
    double full, sliding, window;
};

static void per_gpu_shape(const struct core_serve_time_input *in, struct per_gpu *g)
{
    const struct core_arch *a = &in->arch;
    struct core_arch_counts c = {0};
    struct core_layer_types types = {{0}, 0};
    double tp = at_least((double)in->tp, 1), pp = at_least((double)in->pp, 1), kv_layers;

    if (!core_arch_count(a, &c))
        c.active = c.embedding = 0;
    g->gemm_flops = 2.0 * at_least((double)(c.active - c.embedding), 0) / (tp * pp);
    g->experts = a->experts > 0 ? (double)a->experts : 0.0;
    g->topk = at_least((double)a->experts_per_token, 1);
    g->expert_flops = g->experts > 0
                          ? 2.0 * (double)c.experts *
                                (g->topk < g->experts ? g->topk / g->experts : 1.0) / (tp * pp)
                          : 0.0;
    if (g->expert_flops > g->gemm_flops)
        g->expert_flops = g->gemm_flops;
    g->layers = at_least((double)a->layers, 1) / pp;
    g->heads_hd = at_least(core_arch_attention_width(a), 0) / tp;
    g->hidden = at_least((double)a->hidden, 1);
    core_arch_layer_types(a, &types);
    kv_layers = (double)(types.layers[CORE_LAYER_FULL] + types.layers[CORE_LAYER_SLIDING]);
    if (!(kv_layers > 0)) { /* an invalid architecture: every layer full */
        types.layers[CORE_LAYER_FULL] = a->layers > 0 ? a->layers : 1;
        types.layers[CORE_LAYER_SLIDING] = 0;
        types.window = 0;
    }
    g->full = (double)types.layers[CORE_LAYER_FULL] / pp;
    g->sliding = (double)types.layers[CORE_LAYER_SLIDING] / pp;
    g->window = (double)types.window;
}

/* Cached positions a decoding sequence at context c reads per GPU, in layer-positions: every full
 * layer the whole context, every sliding layer at most its window. */
static double decode_positions(const struct per_gpu *g, double c)
{
    double w = g->window > 0 && g->window < c ? g->window : c;

    return g->full * c + g->sliding * w;
}

/* Query-key pairs of one causal prompt of s tokens per GPU, in layer-pairs: s^2 / 2 in a full
 * layer; in a sliding one each query sees at most w keys, s w - w^2 / 2 when s > w. */
static double prefill_pairs(const struct per_gpu *g, double s)
{
    double w = g->window, sl = w > 0 && s > w ? s * w - w * w / 2.0 : s * s / 2.0;

    return g->full * s * s / 2.0 + g->sliding * sl;
}

/* Seconds of `flops` of GEMMs over m rows: at m / (m + half) of the large-GEMM rate (an M
 * dimension below the kernel's tiles fills them partly). */
static double gemm_seconds(double m, double flops, double rate, double half)
{
    return m > 0 ? flops / (rate * m / (m + half)) : 0.0;
}

/* The M dimension at which a weight GEMM reaches half its large-GEMM rate. half_tokens is
 * measured on 16-bit GEMMs, where a small-M GEMM's time F (M + half) / R is set by streaming its
 * 2-byte weight tiles: its fixed part F half / R is a per-weight cost. A weight-only format
 * multiplied in 16 bits (AWQ / GPTQ through Marlin, FP8 Marlin on Ampere) streams b-byte tiles
 * through the same 16-bit math, so that part shrinks by b / 2 (at b = 0.53, AWQ g128: half x
 * 0.27). W8A8 runs at the 8-bit rate with 1-byte tiles: its half stays. */
static double half_tokens(const struct core_serve_time_input *in, const struct core_serve_gen *k)
{
    double b = in->linear_bytes_per_weight;

    return in->math == CORE_SERVE_MATH_16 && b > 0 && b < 2 ? k->half_tokens * b / 2.0
                                                            : k->half_tokens;
}

/* Seconds of one all-reduce of `bytes` per rank over tp ranks: ring bandwidth term plus the
 * small-message latency. */
static double all_reduce(const struct core_serve_time_input *in, const struct core_serve_gen *k,
                         double bytes)
{
    double n = (double)in->tp, bw = at_least(in->link_gbs, 1e-3) * 1e9 * k->link;

    return n <= 1 ? 0.0 : k->ar_latency + 2.0 * (n - 1.0) / n * bytes / bw;
}

/* The attention groups whose tokens one GPU's experts serve: ep / tp when the EP group (tp x dp
 * ranks) is wider than tp, else 1. Each group runs the step's tokens (the steady state is the same
 * on every dp rank: vLLM's DP engines step in lockstep for the MoE layers). */
static double ep_groups(const struct core_serve_time_input *in)
{
    double tp = at_least((double)in->tp, 1), ep = (double)in->ep;

    return ep > tp ? ep / tp : 1.0;
}

/* The weight bytes a step over `tokens` tokens reads: everything but the input embedding, the
 * routed experts only as far as the tokens touch them. Under ep > tp the GPU holds E / ep whole
 * experts and the tokens of all ep / tp attention groups are dispatched to them: the fraction
 * touched is that of E experts under tokens x ep / tp picks (the same for every GPU's share). */
static double weight_read(const struct core_serve_time_input *in, double tokens, double *touched)
{
    const struct core_arch *a = &in->arch;
    double rest = at_least(in->weight_bytes - in->embedding_bytes - in->expert_bytes, 0);
    double ex = at_least(in->expert_bytes, 0), frac = 1.0;

    *touched = 0.0;
    if (a->experts > 0) {
        double e = (double)a->experts, topk = at_least((double)a->experts_per_token, 1);
        *touched = core_serve_experts_touched(e, topk, tokens * ep_groups(in));
        frac = *touched / e;
    }
    return rest + ex * frac;
}

void core_serve_step_time(const struct core_serve_time_input *in, const struct core_serve_gen *k,
                          double decode, double context, double prompts, double prompt_len,
                          struct core_serve_step *out)
{
    struct per_gpu g;
    double touched, hbm = at_least(in->hbm_tbps, 1e-6) * 1e12 * k->hbm;
    double gemm_eff = in->math == CORE_SERVE_MATH_16 ? k->gemm : k->gemm8;
    double rate = at_least(in->gemm_tflops, 1e-6) * 1e12 * gemm_eff;
    double attn_rate = at_least(in->attention_tflops, 1e-6) * 1e12 * k->flash;
    double tokens, w_bytes, w_flops, kv_layer, kv_bytes, a_flops, t_w, t_wc, t_kv, t_ac, ar, gpu;
    double host, half = half_tokens(in, k);

    decode = at_least(decode, 0);
    prompts = at_least(prompts, 0);
    prompt_len = at_least(prompt_len, 0);
    context = at_least(context, 0);
    per_gpu_shape(in, &g);
    tokens = decode + prompts * prompt_len;
    /* Weight GEMMs: read once per step; M = tokens rows at M / (M + half) of the large rate. */
    w_bytes = weight_read(in, tokens, &touched);
    w_flops = tokens * g.gemm_flops;
    t_w = w_bytes / hbm;
    t_wc = gemm_seconds(tokens, tokens * (g.gemm_flops - g.expert_flops), rate, half);
    /* Each touched expert's GEMM sees its share of the routed rows: tokens x k / touched, the
     * tokens of every attention group the experts serve (ep_groups). The GPU's expert FLOPs stay
     * tokens x expert_flops: E / ep experts get tokens x groups x k / ep = tokens x k / tp rows. */
    if (g.experts > 0 && touched > 0)
        t_wc += gemm_seconds(tokens * ep_groups(in) * g.topk / touched, tokens * g.expert_flops,
                             rate, half);
    /* Attention: decode reads each sequence's cache (context tokens, at most the window in a
     * sliding layer) and does 4 FLOPs per cached token per head dimension (QK^T and PV); a
     * causal prompt does 4 h_d per query-key pair per head (the masked half skipped) and writes
     * its s tokens of cache. kv_bytes_per_token covers every KV layer of the GPU. */
    kv_layer = at_least(in->kv_bytes_per_token, 0) / at_least(g.full + g.sliding, 1e-9);
    kv_bytes = kv_layer * (decode * decode_positions(&g, context) +
                           prompts * prompt_len * (g.full + g.sliding));
    a_flops = g.heads_hd * (4.0 * decode * decode_positions(&g, context) +
                            4.0 * prompts * prefill_pairs(&g, prompt_len));
    t_kv = kv_bytes / hbm;
    t_ac = a_flops / attn_rate;
    /* Two all-reduces per layer (after attention and after the MLP) of tokens x d activations
     * in 16 bits (Megatron's row-parallel layers; vLLM's RowParallelLinear). */
    ar = 2.0 * g.layers * all_reduce(in, k, tokens * g.hidden * 2.0);
    gpu = larger(t_w, t_wc) + larger(t_kv, t_ac) + ar;
    /* Launch cost: graphs replay with small gaps; eager launches cost the host layer_eager per
     * layer, exposed only beyond the GPU's own time. */
    host = k->step_host;
    out->overhead = g.layers * k->layer_graph + host;
    if (!in->cuda_graphs)
        out->overhead += at_least(g.layers * k->layer_eager - gpu, 0);
    out->weights_hbm = t_w >= t_wc ? t_w : 0.0;
    out->kv_hbm = t_kv >= t_ac ? t_kv : 0.0;
    out->compute = (t_w >= t_wc ? 0.0 : t_wc) + (t_kv >= t_ac ? 0.0 : t_ac);
    out->tp_comm = ar;
    out->seconds = gpu + out->overhead;
    out->bytes = w_bytes + kv_bytes;
    out->flops = w_flops + a_flops;
}

/* Which term binds a step. */
static enum core_serve_bottleneck bottleneck_of(const struct core_serve_step *s)
{
    double hbm = s->weights_hbm + s->kv_hbm;
    enum core_serve_bottleneck b = CORE_SERVE_HBM;
    double best = hbm;

    if (s->compute > best) {
        best = s->compute;
        b = CORE_SERVE_COMPUTE;
    }
    if (s->tp_comm > best) {
        best = s->tp_comm;
        b = CORE_SERVE_TP_COMM;
    }
    if (s->overhead > best)
        b = CORE_SERVE_OVERHEAD;
    return b;
}

/* The decode batch at which the weight GEMMs' FLOPs catch up with their read (dense part of the
 * roofline knee): B / (B + half) x rate x bytes / hbm = B x flops per token, solved for B. */
static double knee(const struct core_serve_time_input *in, const struct core_serve_gen *k)
{
    struct per_gpu g;
    double touched, hbm = at_least(in->hbm_tbps, 1e-6) * 1e12 * k->hbm;
    double gemm_eff = in->math == CORE_SERVE_MATH_16 ? k->gemm : k->gemm8;
    double rate = at_least(in->gemm_tflops, 1e-6) * 1e12 * gemm_eff;
    double w = weight_read(in, 1e9, &touched);

    per_gpu_shape(in, &g);
    if (g.gemm_flops <= 0)
        return 0.0;
    /* B flops / (rate B / (B + h)) = w / hbm  =>  B + h = w rate / (hbm flops). */
    return at_least(w * rate / (hbm * g.gemm_flops) - half_tokens(in, k), 1.0);
}

void core_serve_time_compute(const struct core_serve_time_input *in,
                             const struct core_serve_gen *gens, struct core_serve_time *out)
{
    const struct core_serve_gen *k = &(gens ? gens : core_serve_gens)[in->generation];
    double b = at_least((double)in->concurrency, 1), s = at_least((double)in->input_len, 1);
    double o = at_least((double)in->output_len, 1), pp = at_least((double)in->pp, 1);
    double mb = b / pp; /* sequences per pipeline micro-batch */
    double ctx = s + (o - 1.0) / 2.0, touched, gpus;

    out->concurrency = (int64_t)b;
    if (in->continuous) {
        /* Steady state: each step starts b / o new requests (a request lives o steps), whose
         * prompts ride in the same passes; a new request's first token comes out of the step
         * that carries its whole prompt. */
        core_serve_step_time(in, k, mb, ctx, mb / o, s, &out->decode);
        core_serve_step_time(in, k, mb, ctx, 1.0 + mb / o, s, &out->prefill);
    } else {
        /* Static batch: all b prompts in one pass, then o - 1 decode steps of b sequences. */
        core_serve_step_time(in, k, mb, ctx, 0.0, s, &out->decode);
        core_serve_step_time(in, k, 0.0, 0.0, mb, s, &out->prefill);
    }
    /* Pipeline: a token passes pp stages; the pp micro-batches keep every stage busy. */
    out->tpot_seconds = pp * out->decode.seconds;
    /* A request arriving under continuous batching first waits for the running step to end:
     * half a step on average (the mean residual of equal steps). */
    out->ttft_seconds = pp * out->prefill.seconds + (in->continuous ? out->decode.seconds / 2 : 0);
    out->e2e_seconds = out->ttft_seconds + (o - 1.0) * out->tpot_seconds;
    if (in->continuous)
        out->output_tokens_per_second = b / out->tpot_seconds;
    else
        out->output_tokens_per_second = b * o / out->e2e_seconds;
    out->requests_per_second = out->output_tokens_per_second / o;
    out->bottleneck = bottleneck_of(&out->decode);
    out->mbu = out->decode.bytes / (out->decode.seconds * at_least(in->hbm_tbps, 1e-6) * 1e12);
    out->mfu = out->decode.flops / (out->decode.seconds * at_least(in->gemm_tflops, 1e-6) * 1e12);
    (void)weight_read(in, mb, &touched);
    out->experts_touched = touched;
    out->knee_batch = knee(in, k);
    gpus = at_least((double)in->tp, 1) * pp;
    out->usd_per_million_output_tokens =
        in->usd_per_gpu_hour >= 0
            ? in->usd_per_gpu_hour * gpus / 3600.0 / out->output_tokens_per_second * 1e6
            : -1.0;
}
