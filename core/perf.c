/*
 * perf.c - the step-time model (docs/model.md, "Step time").
 *
 * One optimizer step on the slowest GPU, built up from one micro-batch on one pipeline stage:
 * the stage's L/pp layers each run four GEMMs, an attention core, element-wise kernels and
 * tensor-parallel collectives forward and (twice the work) backward, plus the re-run forward
 * under checkpointing; the last stage adds the output layer and the loss. m micro-batches of
 * that, plus the pipeline bubble and stage sends, plus the data-parallel traffic that compute
 * does not hide, plus the optimizer step. Every term is a closed form over the architecture,
 * so a call costs a few hundred flops whatever the depth of the model.
 *
 * The efficiencies and latencies are per GPU generation (struct gen below), each with its
 * source; nothing depends on the model, the run or the paper a measurement came from.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "perf.h"
#include "validation.h"

const char *const core_perf_term_names[CORE_PERF_TERMS] = {
    "compute", "memory_bound", "recompute", "tp_comm", "cp_comm", "pp_bubble",
    "pp_comm", "dp_comm",      "optimizer", "ep_comm", "offload", "moe_host"};

/* ---------------------------------------------------------------------------------------------
 * Constants per generation. Sources in docs/model.md, "Step time" / "Constants".
 * ------------------------------------------------------------------------------------------- */

struct gen {
    double gemm;     /* large 16-bit GEMM throughput / dense peak */
    double gemm_fp8; /* large FP8 GEMM throughput / FP8 dense peak */
    double half_dim; /* a GEMM dimension x runs at x / (x + half_dim) of the large-GEMM rate */
    double flash;    /* fused attention (FlashAttention-2) throughput / 16-bit peak */
    double hbm;      /* element-wise kernels' achieved fraction of HBM bandwidth */
    double up;       /* NCCL bus bandwidth / scale-up link rate (per direction) */
    double net;      /* NCCL bus bandwidth / network line rate */
    double lat_base; /* seconds per collective: launch and synchronisation */
    double hop_up;   /* seconds per ring step inside a node */
    double hop_net;  /* seconds per ring step across nodes */
    double overlap;  /* fraction of overlappable communication actually hidden */
    double tp_hide;  /* fraction of TP collectives hidden by comm-GEMM overlap (TE userbuffers) */
    double launch;   /* seconds of fixed cost per layer per pass (kernel launches, syncs) */
};

/* One row per generation, its fields grouped: kernels (GEMM, attention, element-wise), links
 * (NCCL bus bandwidth over the line rates), latencies, overlap, and the per-layer fixed cost. */
/* clang-format off */
static const struct gen gens[CORE_GEN_COUNT] = {
    [CORE_GEN_VOLTA] = {
        .gemm = 0.70, .gemm_fp8 = 0.70, .half_dim = 96, .flash = 0.35, .hbm = 0.80,
        .up = 0.75, .net = 0.85,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.5, .launch = 40e-6,
    },
    [CORE_GEN_AMPERE] = {
        .gemm = 0.80, .gemm_fp8 = 0.80, .half_dim = 64, .flash = 0.45, .hbm = 0.80,
        .up = 0.78, .net = 0.90,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.5, .launch = 40e-6,
    },
    [CORE_GEN_ADA] = {
        .gemm = 0.65, .gemm_fp8 = 0.50, .half_dim = 64, .flash = 0.35, .hbm = 0.80,
        .up = 0.70, .net = 0.85,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.5, .launch = 40e-6,
    },
    [CORE_GEN_HOPPER] = {
        .gemm = 0.65, .gemm_fp8 = 0.55, .half_dim = 96, .flash = 0.30, .hbm = 0.80,
        .up = 0.80, .net = 0.90,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.9, .launch = 30e-6,
    },
    [CORE_GEN_BLACKWELL] = {
        .gemm = 0.65, .gemm_fp8 = 0.55, .half_dim = 128, .flash = 0.30, .hbm = 0.80,
        .up = 0.80, .net = 0.90,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.9, .launch = 30e-6,
    },
    [CORE_GEN_CDNA3] = {
        .gemm = 0.45, .gemm_fp8 = 0.35, .half_dim = 128, .flash = 0.25, .hbm = 0.75,
        .up = 0.60, .net = 0.85,
        .lat_base = 15e-6, .hop_up = 2e-6, .hop_net = 4e-6,
        .overlap = 0.5, .tp_hide = 0.5, .launch = 40e-6,
    },
    [CORE_GEN_TPU] = {
        .gemm = 0.70, .gemm_fp8 = 0.70, .half_dim = 128, .flash = 0.45, .hbm = 0.80,
        .up = 0.80, .net = 0.85,
        .lat_base = 10e-6, .hop_up = 1e-6, .hop_net = 2e-6,
        .overlap = 0.5, .tp_hide = 0.5, .launch = 30e-6,
    },
};
/* clang-format on */

/* ZeRO-3 / FSDP gathers and reduces the weights in pieces of at most this many parameters
 * (DeepSpeed's stage3_prefetch_bucket_size default, 5e7; FSDP wraps one block per unit). */
#define ZERO3_BUCKET 5e7

/* Host time exposed per MoE layer per pass (forward; backward counted twice, as every per-layer
 * term). The dropless grouped GEMM takes its per-expert token counts as a host list
 * (Megatron-Core experts.py, TEGroupedMLP: tokens_per_expert.tolist() for Transformer Engine's
 * GroupedLinear m_splits): a device-to-host sync every MoE layer, after which the GPU's queue is
 * empty and it waits while the host issues the rest of the layer (moe/README.md, "CPU Overhead
 * Bottleneck"). Two parts: MOE_SYNC_S, the sync and the layer's fixed kernels (attention,
 * router, preprocess, permute, activation, unpermute, combine), the same whatever the expert
 * count; and MOE_EXPERT_HOST_S per local expert (E / ep), the host work TE's GroupedLinear does
 * expert by expert (split, per-expert quantizer and cuBLAS GEMM launches forward, dgrad and
 * wgrad backward). Both are FITTED (host launch costs are not published for these recipes):
 * together they minimise the throughput MAPE over the six Megatron-Bridge 26.04.01 rows of
 * tests/validation/moe-measured.csv other than Kimi-K2 (tuning set), each priced with its
 * release's recipe (dispatcher, all-to-all overlap, CUDA graphs); the 25.11 rows, the write-up
 * rows and Kimi-K2 are the hold-out (docs/model.md, "Mixture of experts"). The fit puts all of
 * it on the per-expert part: the tuning MAPE was 14.9 % at a fixed part of 0, 15.5 % at 0.2 ms,
 * 16.6 % at 0.5 ms (with the per-expert part refitted each time), so the rows do not pin the
 * fixed part down; 0 is the optimum. With the expert data-parallel reduction, the per-module
 * recompute, the last rank's output layer (zero_reduce, selective_recompute, last_stage) and
 * the routing groups (perf_moe.c) the optimum stayed (0 + 0.140 ms and 0 + 0.147 ms: 7.6 %,
 * 0.1 + 0.13 ms: 7.6 %, 0.1 + 0.147 ms: 8.6 %): not refitted. With the experts' FP8 padding
 * (expert_pad_bytes) the six rows' optimum is 0 + 0.131 ms (8.15 % against 8.57 % at 0.147), the
 * nine tuning rows' (the write-up's three added) 0.150 ms (13.80 % against 13.88 %): flat either
 * way, not refitted, as after the experts' bias (docs/model.md).
 * Per-layer CUDA graphs take the captured modules' share out (CG_* below, measured), never below
 * zero. */
#define MOE_SYNC_S        0.0
#define MOE_EXPERT_HOST_S 0.147e-3

/* What per-layer CUDA graphs (cuda_graph_modules; Megatron-Core's --cuda-graph-impl
 * transformer_engine --cuda-graph-modules) take out of that host time, per MoE layer per pass:
 * the captured modules are replayed as one graph launch instead of kernel by kernel. Measured,
 * not fitted: Megatron-LM's DeepSeek-V3 GB200 write-up (docs/discussions/
 * deepseek-v3-gb200-optimization, MXFP8, TP1 PP8 VPP4 EP32, GBS 2048: 64 micro-batches through
 * the 8 layers of a rank = 512 layer passes forward + backward per step) prints TFLOP/s after
 * each optimisation; at 2.496e11 FLOP per token (the 25.11 table's 1003 TFLOP/s at 4018
 * tokens/s of the same job) and 32768 tokens per GPU per step, step = 8.180e3 / TFLOP/s s.
 *   CUDA graphs of attn, moe_router, moe_preprocess: 610.71 -> 663.27, 13.394 -> 12.332 s,
 *     2.073 ms per layer forward + backward = 0.691 ms per pass (backward counted twice);
 *   router fusion, 72 -> 31 router kernels: 529.55 -> 540.00, 0.584 ms per layer / 41 = 14.24 us
 *     a kernel forward + backward, 4.75 us a pass; the router and EP preprocess are 17 kernels
 *     under DeepEP/HybridEP (the write-up), 17 x 4.75 us = CG_ROUTER_S, and attn the rest,
 *     0.691 - 0.081 = CG_ATTN_S;
 *   shared experts in the moe_router graph: 797.67 -> 829.93, 0.779 ms per layer = CG_SHARED_S.
 * The sync, the dispatch and combine and the routed experts' launches stay outside any graph
 * (dropless shapes are known only after the sync; moe_utils.py, token_dispatcher.py). Measured
 * on DeepSeek-V3 (MLA, MXFP8); used as they are for every model (no other measurement). */
#define CG_ATTN_S   0.610e-3
#define CG_ROUTER_S 0.081e-3
#define CG_SHARED_S 0.260e-3

/* DeepEP's intranode kernels are built for an 8-GPU NVLink domain; over a larger one (GB200
 * NVL72, EP32, via deepseek-ai/DeepEP PR 218) the write-up measured about 400 GB/s dispatch and
 * 190 GB/s combine of algorithm bandwidth with 24 SMs, far below the link. */
#define DEEPEP_DOMAIN         8
#define DEEPEP_MNNVL_DISPATCH 400e9
#define DEEPEP_MNNVL_COMBINE  190e9

/* HybridEP over such a domain: the write-up's figure "Performance test on GB200 NVL36, TOPK = 8"
 * (images/image6.png) measures 694.1 GB/s dispatch and 617.62 GB/s combine of algorithm
 * bandwidth (uni-directional, what a rank takes in) with 16 CUDA blocks, Megatron-Core's
 * moe_hybridep_num_sms default (transformer_config.py @79e8592: "In pure NVL scenarios, 16 SMs can
 * generally achieve good bandwidth"); 32 blocks reach 714.66 / 657.72. */
#define HYBRIDEP_MNNVL_DISPATCH 694.1e9
#define HYBRIDEP_MNNVL_COMBINE  617.62e9

/* NCCL's all-to-all (the alltoall dispatcher) over such a domain: the write-up's baseline ran it
 * on GB200 NVL72 (EP32) and, switching to DeepEP, "did not get the communication benefits" (its
 * gain came from fewer router/preprocess kernels). No NCCL figure is published for it, so NCCL's
 * exchange there is priced no faster than DeepEP's measured one for the same tokens (mnnvl_s):
 * what the write-up says, a statement, not a fitted number; it makes the write-up rows the
 * tuning rows of this rule (tests/validation/test_moe_throughput.c). */

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static double at_least(double x, double lo)
{
    return x >= lo ? x : lo; /* also maps NaN to lo */
}

static double sat(double x, double half)
{
    return x / (x + half);
}

/* Seconds for one GEMM (M x K) . (K x N) at `rate` FLOP/s for a large GEMM. */
static double gemm(double m, double n, double k, double rate, double half)
{
    return 2.0 * m * n * k / (rate * sat(m, half) * sat(n, half) * sat(k, half));
}

/* A link: bus bandwidth (bytes/s) and a latency per collective. */
struct link {
    double bw, hop, base;
};

/*
 * The link a group of n ranks uses, its members `stride` ranks apart. Inside one scale-up
 * domain: the NVLink bus bandwidth. Across domains NCCL's rings leave each node once per
 * channel, one channel per NIC, so the group's traffic spreads over the NICs of its members
 * in a node: q = min(n, gpus_per_node / stride) of them (at least 1), capped by NVLink.
 */
static struct link group_link(const struct core_perf_input *in, const struct gen *k, double n,
                              double stride)
{
    double gpn = (double)in->gpus_per_node, up = at_least(in->intra_node_gbs, 1e-3) * 1e9 * k->up;
    double net = at_least(in->inter_node_gbs, 1e-3) * 1e9 * k->net;
    struct link l;

    if (n * stride <= gpn) {
        l.bw = up;
        l.hop = k->hop_up;
        l.base = k->lat_base;
        return l;
    }
    double q = floor(gpn / stride);
    q = q < 1 ? 1 : (q > n ? n : q);
    l.bw = q * net < up ? q * net : up;
    l.hop = k->hop_net;
    l.base = k->lat_base;
    return l;
}

/* All-reduce of `bytes` per rank over n ranks: ring bandwidth 2(n-1)/n; latency of a ring's
 * 2(n-1) steps, or of a double binary tree's 2 log2(n) when NCCL picks it for large n. */
static double all_reduce(double bytes, double n, struct link l)
{
    double steps = n - 1.0 < 2.0 * log2(n) ? n - 1.0 : 2.0 * log2(n);

    return n <= 1 ? 0.0 : l.base + 2.0 * steps * l.hop + 2.0 * (n - 1.0) / n * bytes / l.bw;
}

/* Reduce-scatter or all-gather: half the bytes, and only rings (n - 1 steps). */
static double half_ring(double bytes, double n, struct link l)
{
    return n <= 1 ? 0.0 : l.base + (n - 1.0) * l.hop + (n - 1.0) / n * bytes / l.bw;
}

/* Exposed part of `comm` seconds that may run under `window` seconds of compute. */
static double exposed(double comm, double window, double overlap)
{
    return comm - overlap * (comm < window ? comm : window);
}

/* Optimizer-step HBM bytes per parameter: read the gradient, read+write master weights and
 * moments, write the working weights. Moment bytes from the memory ledger's table. */
static double optimizer_bytes(const struct core_perf_input *in, double e)
{
    double master = in->master_weights ? 4.0 : 0.0;

    double m = (double)core_moment_bytes(in->optimizer);

    if (in->bf16_states && in->optimizer != CORE_OPT_ADAMW_8BIT)
        m /= 2.0;
    return e + e + 2.0 * (master + m);
}

void core_perf_input_hardware(struct core_perf_input *in, int gpu, enum core_precision precision)
{
    const struct core_gpu *g = &core_gpus[gpu];

    in->gpu = gpu;
    in->peak_tflops = core_catalog_peak_tflops(gpu, precision);
    in->gpus_per_node = g->gpus_per_node;
    in->intra_node_gbs = g->scale_up_gbs;
    in->inter_node_gbs = g->network_gbs;
    in->tp_comm_overlap = false;
    in->dp_comm_overlap = false;
    in->pcie_gbs = g->pcie_gbs;
}

/* The mixture-of-experts part of core_perf_input_resolved: the architecture's routing and the
 * expert layout, dispatcher, overlap, imbalance and graphs as resolved. */
static void moe_inputs(struct core_perf_input *in, const struct core_resolved *r)
{
    const struct core_arch *a = &r->shape.arch;

    if (a->experts > 0) {
        in->experts = a->experts;
        in->experts_per_token = a->experts_per_token;
        in->moe_ffn_hidden = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
        in->shared_experts = a->shared_experts;
        in->shared_ffn_hidden =
            a->shared_ffn_hidden > 0 ? a->shared_ffn_hidden : in->moe_ffn_hidden;
        in->moe_layers = core_arch_moe_layers(a);
        in->router_groups = a->router_groups;
        in->router_group_topk = a->router_group_topk;
    }
    in->ep = r->ep;
    in->expert_params = (double)r->expert_params;
    in->tp_whole_params = (double)core_tp_whole_params(r);
    in->etp = core_etp(r); /* as given, else tp (Megatron-Core's default) */
    in->mtp_layers = r->mtp_layers;
    in->moe_dispatcher = r->moe_dispatcher;
    in->moe_comm_overlap = r->moe_comm_overlap;
    in->moe_load_imbalance = r->moe_load_imbalance;
    in->cuda_graph_modules = r->cuda_graph_modules;
    in->moe_expert_bias = a->experts > 0 && a->mlp_bias && r->framework == CORE_FW_MEGATRON;
}

void core_perf_input_resolved(struct core_perf_input *in, const struct core_resolved *r)
{
    const struct core_arch *a = &r->shape.arch;

    memset(in, 0, sizeof *in);
    in->layers = a->layers;
    in->hidden = a->hidden;
    in->heads = a->heads;
    in->kv_heads = a->kv_heads;
    in->head_dim = a->head_dim;
    in->ffn_hidden = a->ffn_hidden;
    in->vocab = a->vocab;
    in->gated_mlp = a->gated_mlp;
    in->params = (double)r->params;
    in->active_params = (double)r->active_params;
    in->seq_len = r->seq_len;
    in->micro_batch = r->batch;
    in->global_batch = r->global_batch;
    in->precision = r->precision;
    in->checkpointing = r->checkpointing;
    in->flash_attention = r->flash_attention;
    in->full_mask = false; /* decoders are causal, whatever `attention_flops` counts */
    {
        struct core_layer_types lt;
        core_arch_layer_types(a, &lt);
        in->sliding_layers = lt.layers[CORE_LAYER_SLIDING];
        in->sliding_window = lt.window;
        in->linear_layers = lt.layers[CORE_LAYER_LINEAR];
    }
    in->optimizer = r->optimizer;
    in->master_weights = r->master_weights;
    in->bf16_states = r->adapters.optimizer_state_dtype == CORE_STATE_BF16;
    in->zero_stage = r->zero_stage;
    in->gpus = r->gpus;
    in->tp = r->tp;
    in->pp = r->pp;
    in->dp = r->dp;
    in->cp = r->cp;
    in->virtual_stages = r->virtual_stages;
    in->sequence_parallel = r->sequence_parallel;
    in->gpu = r->gpu;
    in->peak_tflops = r->peak_tflops;
    in->gpus_per_node = r->gpus_per_node;
    in->intra_node_gbs = r->intra_node_gbs;
    in->inter_node_gbs = r->inter_node_gbs;
    in->tp_comm_overlap = r->tp_comm_overlap;
    in->dp_comm_overlap = r->dp_comm_overlap;
    moe_inputs(in, r);
    in->recompute_modules = r->recompute_modules;
    in->q_lora_rank = a->q_lora_rank;
    in->kv_lora_rank = a->kv_lora_rank;
    in->qk_nope_head_dim = a->qk_nope_head_dim;
    in->qk_rope_head_dim = a->qk_rope_head_dim;
    in->v_head_dim = a->v_head_dim;
    in->offload_optimizer = r->offload_optimizer == CORE_OFFLOAD_CPU;
    in->offload_params = r->offload_params == CORE_OFFLOAD_CPU;
    in->pcie_gbs = core_gpus[r->gpu].pcie_gbs;
    /* The pipeline split (layout.c): an uneven one, or MTP layers on the last rank. */
    bool uneven = r->split != CORE_SPLIT_EVEN || r->mtp_layers != 0;
    in->stage_layers = uneven ? (double)core_layout_heaviest(r) : 0.0;
    in->last_stage_layers = uneven ? (double)core_layout_last(r) : 0.0;
    in->eager_kernels =
        !r->compile && (r->framework == CORE_FW_HF_TRAINER || r->framework == CORE_FW_TORCHTUNE);
    if (r->adapters.finetune != CORE_FT_FULL)
        core_adapters_perf(r, in);
}

/* ---------------------------------------------------------------------------------------------
 * The model
 * ------------------------------------------------------------------------------------------- */

/* Per micro-batch, per pipeline stage: the pieces one micro-batch costs one GPU. */
struct micro {
    double compute, memory, recompute, tp, cp;
    double host;        /* MoE host time (moe_host_forward per pass) */
    double fwd_compute; /* forward GEMM + attention time: the window backward comm can hide in */
};

struct shape {
    double L, d, a, kv, hd, f, V, s, b, t, p, c, v, dp, m, ls, rows, e;
    double peak, peak16, rate, rate16;
};

/* The busiest expert rank's tokens over the mean (moe_load_imbalance), at most ep. */
static double imbalance(const struct core_perf_input *in)
{
    double lam = at_least(in->moe_load_imbalance, 1), ep = at_least((double)in->ep, 1);

    return lam < ep ? lam : ep;
}

static double etp_of(const struct core_perf_input *in)
{
    return at_least((double)(in->etp > 0 ? in->etp : in->tp), 1);
}

/* Forward GEMMs of one attention block. Standard: QKV (r, (a + 2k) h_d / t, d) and the output
 * (r, d, a h_d / t). MLA (Megatron-Core's MLASelfAttention): the down projections q_a
 * (r, q_lora, d) and kv_a (r, kv_lora + rope, d) are replicated over tp, the up projections
 * q_b (r, a (nope + rope) / t, q_lora) and kv_b (r, a (nope + v) / t, kv_lora) and the output
 * (r, d, a v / t) split by tp. */
static double attention_gemms(const struct core_perf_input *in, const struct gen *k,
                              const struct shape *x)
{
    double t = x->t, rows = x->rows, h = k->half_dim, d = x->d, rate = x->rate;

    if (in->kv_lora_rank <= 0)
        return gemm(rows, (x->a + 2.0 * x->kv) * x->hd / t, d, rate, h) +
               gemm(rows, d, x->a * x->hd / t, rate, h);
    double nope = (double)in->qk_nope_head_dim, rope = (double)in->qk_rope_head_dim;
    double v = in->v_head_dim > 0 ? (double)in->v_head_dim : x->hd;
    double ql = (double)in->q_lora_rank, kvl = (double)in->kv_lora_rank;
    double q = ql > 0
                   ? gemm(rows, ql, d, rate, h) + gemm(rows, x->a * (nope + rope) / t, ql, rate, h)
                   : gemm(rows, x->a * (nope + rope) / t, d, rate, h);
    return q + gemm(rows, kvl + rope, d, rate, h) +
           gemm(rows, x->a * (nope + v) / t, kvl, rate, h) + gemm(rows, d, x->a * v / t, rate, h);
}

/* A MoE layer's forward MLP GEMMs on one rank: the router (r / t, E, d) on this rank's
 * sequence-parallel tokens; each of the E/ep local experts, gated fc1 (n, 2 f_e / etp, d) and
 * fc2 (n, d, f_e / etp) on its n = core_perf_expert_tokens() copies - Megatron-Core's grouped
 * GEMM (experts.py, TEGroupedMLP) runs them one after another, each a smaller GEMM at its own
 * efficiency - times the load imbalance (the step waits for the busiest rank); the shared
 * experts on every token, split by tp. */
static double moe_mlp_gemms(const struct core_perf_input *in, const struct gen *k,
                            const struct shape *x)
{
    double t = x->t, rows = x->rows, h = k->half_dim, d = x->d, rate = x->rate;
    double E = at_least((double)in->experts, 1), ep = at_least((double)in->ep, 1);
    double fe = (double)in->moe_ffn_hidden / etp_of(in), fs = (double)in->shared_ffn_hidden;
    double gated = in->gated_mlp ? 2.0 : 1.0, n = core_perf_expert_tokens(in);
    double mlp =
        gemm(rows / t, E, d, rate, h) +
        imbalance(in) * E / ep * (gemm(n, gated * fe, d, rate, h) + gemm(n, d, fe, rate, h));

    if (in->shared_experts > 0 && fs > 0)
        mlp += (double)in->shared_experts *
               (gemm(rows, gated * fs / t, d, rate, h) + gemm(rows, d, fs / t, rate, h));
    return mlp;
}

/* Forward GEMMs per layer, averaged over the layers (dense and MoE MLPs). */
static double layer_gemms(const struct core_perf_input *in, const struct gen *k,
                          const struct shape *x, double f_in)
{
    double t = x->t, rows = x->rows, h = k->half_dim, d = x->d, rate = x->rate;
    double moe = in->moe_layers > 0 ? (double)in->moe_layers : 0.0;

    if (moe <= 0 && in->kv_lora_rank <= 0)
        return gemm(rows, (x->a + 2.0 * x->kv) * x->hd / t, d, rate, h) +
               gemm(rows, d, x->a * x->hd / t, rate, h) + gemm(rows, f_in / t, d, rate, h) +
               gemm(rows, d, x->f / t, rate, h);
    double dense_mlp = gemm(rows, f_in / t, d, rate, h) + gemm(rows, d, x->f / t, rate, h);
    /* a dense MLA model has no expert GEMMs to price (0 x NaN would poison the sum) */
    double moe_mlp = moe > 0 ? moe * moe_mlp_gemms(in, k, x) : 0.0;
    return attention_gemms(in, k, x) + ((x->L - moe) * dense_mlp + moe_mlp) / x->L;
}

/* Element-wise bytes per token (of r) of one MoE layer's MLP, forward, in place of the dense
 * activation term: the expert activation (read 2 f_e, write f_e when gated) over the k copies,
 * times the imbalance; the shared experts' activation; the router's fp32 scores, softmax and
 * top-k (~8 E + 12 k bytes on r / t tokens); the permutation: the all-to-all dispatcher
 * (moe_utils.py permute / unpermute, sort_chunks_by_idxs) reads and writes each of the k copies
 * three times each way (6 k d + 2 d elements on r / t tokens), the flex dispatchers fuse
 * permute into dispatch and unpermute into combine (2 k d + 2 d). FP8 casts each expert GEMM
 * input (read 2, write 1 byte). */
static double moe_mlp_bytes(const struct core_perf_input *in, const struct shape *x, bool fp8)
{
    double t = x->t, d = x->d, e = x->e, kk = at_least((double)in->experts_per_token, 1);
    double fe = (double)in->moe_ffn_hidden, fs = (double)in->shared_ffn_hidden;
    double gated = in->gated_mlp ? 2.0 : 1.0, lam = imbalance(in), etp = etp_of(in);
    double perm = in->moe_dispatcher == CORE_MOE_ALLTOALL ? 6.0 : 2.0;
    double shared =
        in->shared_experts > 0 ? (double)in->shared_experts * (gated + 1.0) * fs / t : 0;
    double bytes = e * (lam * kk * (gated + 1.0) * fe / t + shared + (perm * kk + 2.0) * d / t) +
                   (8.0 * (double)in->experts + 12.0 * kk) / t;

    if (fp8)
        bytes += 3.0 * lam * kk * (etp * d + fe) / t;
    return bytes;
}

/* The routed experts' fc2 bias as Megatron-Core's TEGroupedMLP adds it (moe_expert_bias;
 * experts.py _apply_bias, both at the 26.04.01 and 25.11 releases' Megatron-LM): fc2 is built
 * with skip_bias_add, so after the grouped GEMM each local expert's rows t get t + b * p (b its
 * bias, p the rows' routing probabilities, in the router's dtype - bf16 unless
 * moe_router_dtype fp32, which GPT-OSS's bridge does not set; TE's fused router allocates probs
 * in the logits' dtype) and the experts' outputs are concatenated. Per element of the rank's
 * expert output (lambda k etp / t copies of d per token of r), in elements of e bytes: forward
 * b * p writes 1, the add reads 2 and writes 1, torch.cat reads 1 and writes 1 (6); backward
 * (autograd) MulBackward's grad * p (read 1, write 1) and its sum to b's shape (read 1), the same
 * for p (3 more), the split's backward concatenating t's gradients (read 1, write 1) (8); the
 * add's gradients pass through and the cast is a no-op. fc1's bias is added in the GEMM
 * (skip_bias_add False). Returns bytes per token of r averaged over the layers, forward in *fwd
 * and backward in *bwd. */
static void expert_bias_bytes(const struct core_perf_input *in, const struct shape *x, double *fwd,
                              double *bwd)
{
    double moe = in->moe_layers > 0 ? (double)in->moe_layers / x->L : 0.0;
    double copies = imbalance(in) * at_least((double)in->experts_per_token, 1) * etp_of(in);
    double per = in->moe_expert_bias ? moe * copies * x->d / x->t * x->e : 0.0;

    *fwd = 6.0 * per;
    *bwd = 8.0 * per;
}

/* FP8 padding of the experts' rows (Megatron-Core experts.py TEGroupedMLP: under fp8 its forward
 * runs Transformer Engine's Fp8Padding on the permuted tokens and Fp8Unpadding on the experts'
 * output, at the Megatron-LM commits of both releases, 2edffad and cba6b0e). TE's Fp8Padding
 * (module/fp8_padding.py, the same at TE 2.9 and 2.14.1) returns its input untouched only when
 * every local expert's row count is already a multiple of the alignment (16, 32 under MXFP8);
 * otherwise tex.fused_multi_row_padding copies the rows into a new padded tensor (read 1, write
 * 1 element), and Fp8Unpadding copies fc2's output back (read 1, write 1); their backwards run
 * the inverse copies on the gradients (fused_multi_row_unpadding, fused_multi_row_padding: read
 * 1, write 1 each). Dropless counts (force-balanced routing draws random logits, router.py
 * apply_random_logits) are not multiples of the alignment, so the copies run - except where the
 * dispatcher already pads: HybridEP's dispatch takes pad_multiple, and at 26.04.01 DeepEP's
 * fused permute pads (moe_utils.py permute, fused_permute_and_pad_with_probs with align_size;
 * not at 25.11's cba6b0e, where no row uses DeepEP: deepep is priced as 26.04.01 runs it);
 * NCCL's all-to-all dispatcher permutes without alignment (token_dispatcher.py), so the copies
 * run under alltoall only. moe_router_padding_for_quantization (off by default, not set by the
 * Megatron-Bridge recipes of these models) would make them no-ops; not an input. Per copy of d
 * (lambda k etp / t copies per token of r, as the bias): 4 elements forward, 4 backward. The
 * padded probabilities (one fp32 per copy) are not counted. Bytes per token of r averaged over
 * the layers. */
static void expert_pad_bytes(const struct core_perf_input *in, const struct shape *x, double *fwd,
                             double *bwd)
{
    double moe = in->moe_layers > 0 ? (double)in->moe_layers / x->L : 0.0;
    double copies = imbalance(in) * at_least((double)in->experts_per_token, 1) * etp_of(in);
    bool pads = in->precision == CORE_PREC_FP8 && in->moe_dispatcher == CORE_MOE_ALLTOALL;
    double per = pads ? moe * copies * x->d / x->t * x->e : 0.0;

    *fwd = 4.0 * per;
    *bwd = 4.0 * per;
}

/* The experts' element-wise passes whose backward is not twice their forward: the fc2 bias and
 * the FP8 padding, summed. */
static void expert_pass_bytes(const struct core_perf_input *in, const struct shape *x, double *fwd,
                              double *bwd)
{
    double bf, bb, pf, pb;

    expert_bias_bytes(in, x, &bf, &bb);
    expert_pad_bytes(in, x, &pf, &pb);
    *fwd = bf + pf;
    *bwd = bb + pb;
}

/* Element-wise forward bytes per token per layer: two norms (read+write d each), two residual
 * adds with dropout (read 2d, write d, mask d/2 each) = 11 d elements, split by tp only under
 * sequence parallelism; the MLP activation reads f_in and writes f (split by tp). FP8 casts each
 * GEMM input once (read 2, write 1 bytes). A MoE layer's MLP takes moe_mlp_bytes(), averaged
 * over the layers. */
static double elementwise_bytes(const struct core_perf_input *in, const struct shape *x,
                                double f_in, bool fp8)
{
    double t = x->t, aw = x->a * x->hd;
    double rep = 11.0 * x->d / (in->sequence_parallel ? t : 1.0);
    double moe = in->moe_layers > 0 ? (double)in->moe_layers : 0.0;

    if (moe <= 0) {
        double elt = x->e * (rep + (f_in + x->f) / t);
        if (fp8)
            elt += 3.0 * (2.0 * x->d + aw / t + x->f / t);
        return elt;
    }
    double dense = x->e * (f_in + x->f) / t + (fp8 ? 3.0 * (x->d + x->f / t) : 0.0);
    double elt = x->e * rep + ((x->L - moe) * dense + moe * moe_mlp_bytes(in, x, fp8)) / x->L;
    if (fp8)
        elt += 3.0 * (x->d + aw / t);
    return elt;
}

/* The modules selective recompute re-runs (0 = Megatron's default, core_attn). */
static unsigned recompute_bits(const struct core_perf_input *in)
{
    return in->recompute_modules != 0 ? in->recompute_modules : (unsigned)CORE_RC_CORE_ATTN;
}

/* recompute_modules moe: the whole MoE block re-runs, its exchange and host work included. */
static bool recomputes_moe(const struct core_perf_input *in)
{
    return in->checkpointing == CORE_CKPT_SELECTIVE && in->moe_layers > 0 &&
           (recompute_bits(in) & CORE_RC_MOE) != 0;
}

/* Forward element-wise bytes per token (of r) of the recomputed element-wise modules, averaged
 * over the layers. layernorm: the norms that are modules of their own - with Transformer
 * Engine's layer spec (gpt_layer_specs.py) an MLA layer's input_layernorm and a MoE layer's
 * pre_mlp_layernorm; the others are fused into the next linear (TELayerNormColumnParallelLinear,
 * an IdentityOp that transformer_layer.py does not recompute) - each reading and writing d
 * (split by tp under sequence parallelism), and under FP8 the next linear re-quantizing the kept
 * input (set_for_recompute_input_layernorm / _pre_mlp_layernorm: read 2, write 1 byte a value).
 * moe_act: the routed experts' activation (experts.py, CheckpointWithoutOutput around
 * bias_act_func) reads the 2 f_e gate/up and writes f_e per copy, as moe_mlp_bytes() counts it
 * forward, and under FP8 fc2 re-quantizes its input (set_save_original_input: 3 bytes a value).
 * mla_up_proj (multi_latent_attention.py, qkv_up_proj_and_rope_apply): the fused RoPE reads the
 * up projections' q (a (n + r)) and kv (a (n + v)) and writes query and key (a (n + r) each) and
 * value (a v), split by tp; under FP8 the two latent inputs are quantized again. */
static double recompute_elt_bytes(const struct core_perf_input *in, const struct shape *x,
                                  unsigned bits, double moe, bool fp8)
{
    double t = x->t, e = x->e, d = x->d, b = 0.0;
    double sp = in->sequence_parallel ? t : 1.0, fe = (double)in->moe_ffn_hidden;
    double kk = at_least((double)in->experts_per_token, 1), gated = in->gated_mlp ? 2.0 : 1.0;
    bool mla = in->kv_lora_rank > 0;

    if (bits & CORE_RC_LAYERNORM)
        b += ((mla ? 1.0 : 0.0) + moe) * (2.0 * e + (fp8 ? 3.0 : 0.0)) * d / sp;
    if ((bits & CORE_RC_MOE_ACT) && !(bits & CORE_RC_MOE))
        b += moe * imbalance(in) * kk * ((gated + 1.0) * e + (fp8 ? 3.0 : 0.0)) * fe / t;
    if ((bits & CORE_RC_MLA_UP_PROJ) && mla) {
        double n = (double)in->qk_nope_head_dim, r = (double)in->qk_rope_head_dim;
        double v = in->v_head_dim > 0 ? (double)in->v_head_dim : x->hd;
        b += e * x->a * (3.0 * (n + r) + (n + v) + v) / t;
        b += fp8 ? 3.0 * (double)(in->q_lora_rank + in->kv_lora_rank) : 0.0;
    }
    return b;
}

/* Selective recompute (checkpointing selective; Megatron-Core's --recompute-granularity
 * selective --recompute-modules, transformer_config.py): each recomputed module runs its
 * forward once more in the backward, per layer pass, averaged over the layers (moe = the MoE
 * layers' share). core_attn: the attention core (`core_attn`, the fused kernel or the
 * materialized scores; the default); the element-wise modules at HBM bandwidth
 * (recompute_elt_bytes); mla_up_proj: the q_b and kv_b GEMMs; mlp: a dense layer's MLP
 * (transformer_layer.py recompute_mlp, not MoE layers: its GEMMs, activation and its one TP
 * all-reduce, half of tp_f); shared_experts: the shared experts' GEMMs and activation
 * (shared_experts.py); moe: the whole MoE block (moe_layer.py moe_layer_recompute: router,
 * experts, element-wise - and its dispatch, combine and host work, added in ep_exchange and
 * micro_batch). */
static double selective_recompute(const struct core_perf_input *in, const struct gen *k,
                                  const struct shape *x, double core_attn, double tp_f, double hbm)
{
    unsigned bits = recompute_bits(in);
    double moe = in->moe_layers > 0 ? (double)in->moe_layers / x->L : 0.0, dense = 1.0 - moe;
    double t = x->t, rows = x->rows, h = k->half_dim, d = x->d, rate = x->rate;
    double f_in = in->gated_mlp ? 2.0 * x->f : x->f, gated = in->gated_mlp ? 2.0 : 1.0;
    bool fp8 = in->precision == CORE_PREC_FP8;
    double s = (bits & CORE_RC_CORE_ATTN) ? core_attn : 0.0;
    double bytes = recompute_elt_bytes(in, x, bits, moe, fp8);

    if ((bits & CORE_RC_MLA_UP_PROJ) && in->kv_lora_rank > 0) {
        double n = (double)in->qk_nope_head_dim, r = (double)in->qk_rope_head_dim;
        double v = in->v_head_dim > 0 ? (double)in->v_head_dim : x->hd;
        s += gemm(rows, x->a * (n + v) / t, (double)in->kv_lora_rank, rate, h);
        s += in->q_lora_rank > 0
                 ? gemm(rows, x->a * (n + r) / t, (double)in->q_lora_rank, rate, h)
                 : 0.0; /* no q latent: q is one projection from d, not an up projection */
    }
    if (bits & CORE_RC_MLP) {
        s += dense *
             (gemm(rows, f_in / t, d, rate, h) + gemm(rows, d, x->f / t, rate, h) + 0.5 * tp_f);
        bytes += dense * (x->e * (f_in + x->f) / t + (fp8 ? 3.0 * (d + x->f / t) : 0.0));
    }
    if (moe > 0 && (bits & CORE_RC_MOE)) {
        double bias_f, bias_b;
        expert_pass_bytes(in, x, &bias_f, &bias_b);
        s += moe * moe_mlp_gemms(in, k, x);
        bytes += moe * moe_mlp_bytes(in, x, fp8) + bias_f;
    } else if (moe > 0 && (bits & CORE_RC_SHARED_EXPERTS) && in->shared_experts > 0) {
        double fs = (double)in->shared_ffn_hidden, ns = (double)in->shared_experts;
        s += moe * ns * (gemm(rows, gated * fs / t, d, rate, h) + gemm(rows, d, fs / t, rate, h));
        bytes += moe * ns * (gated + 1.0) * fs / t * x->e;
    }
    return x->ls * (s + rows * bytes / hbm);
}

/* One all-to-all of one micro-batch (core_perf_ep_traffic): the NVLink and network parts run
 * at once, so the slower sets its time; the busiest rank receives `imbalance` times the mean.
 * NCCL's all-to-all posts a send and a receive per peer (ep - 1 steps of latency). With etp > 1
 * the received tokens are also all-gathered over the etp group (reduce-scattered on the way
 * back; token_dispatcher.py, gather_from_sequence_parallel_region). */
/* DeepEP's exchange time over an NVLink domain of more than DEEPEP_DOMAIN GPUs: what the rank
 * takes in, half the passes at the dispatch rate and half at the combine rate (each pass has one
 * dispatch and one combine). */
static double deepep_mnnvl_s(const struct core_ep_traffic *tr, double lam)
{
    double got = lam * (tr->local + tr->nvlink);

    return 0.5 * (got / DEEPEP_MNNVL_DISPATCH + got / DEEPEP_MNNVL_COMBINE);
}

/* HybridEP's, the same way at its measured rates. */
static double hybridep_mnnvl_s(const struct core_ep_traffic *tr, double lam)
{
    double got = lam * (tr->local + tr->nvlink);

    return 0.5 * (got / HYBRIDEP_MNNVL_DISPATCH + got / HYBRIDEP_MNNVL_COMBINE);
}

/* The NCCL all-to-all's floor over such a domain: DeepEP's time for the same tokens. */
static double nccl_mnnvl_floor(const struct core_perf_input *in, double lam)
{
    struct core_perf_input flex = *in;
    struct core_ep_traffic tr;

    flex.moe_dispatcher = CORE_MOE_DEEPEP;
    core_perf_ep_traffic(&flex, &tr);
    return deepep_mnnvl_s(&tr, lam);
}

static double ep_all_to_all(const struct core_perf_input *in, const struct gen *k)
{
    struct core_ep_traffic tr;
    double ep = at_least((double)in->ep, 1), lam = imbalance(in), etp = etp_of(in);
    double up = at_least(in->intra_node_gbs, 1e-3) * 1e9 * k->up;
    double net = at_least(in->inter_node_gbs, 1e-3) * 1e9 * k->net;

    core_perf_ep_traffic(in, &tr);
    double nvl_s = lam * tr.nvlink / up, net_s = lam * tr.network / net;
    if (in->moe_dispatcher == CORE_MOE_DEEPEP && tr.in_node > DEEPEP_DOMAIN)
        nvl_s = deepep_mnnvl_s(&tr, lam);
    if (in->moe_dispatcher == CORE_MOE_HYBRIDEP && tr.in_node > DEEPEP_DOMAIN)
        nvl_s = hybridep_mnnvl_s(&tr, lam);
    if (in->moe_dispatcher == CORE_MOE_ALLTOALL && tr.in_node > DEEPEP_DOMAIN) {
        double floor_s = nccl_mnnvl_floor(in, lam);
        nvl_s = nvl_s > floor_s ? nvl_s : floor_s;
    }
    double one = k->lat_base + (ep - 1.0) * (tr.network > 0 ? k->hop_net : k->hop_up) +
                 (nvl_s > net_s ? nvl_s : net_s);
    if (etp > 1) {
        struct link l = {.bw = up, .hop = k->hop_up, .base = k->lat_base};
        one += half_ring(lam * etp * (tr.local + tr.nvlink + tr.network), etp, l);
    }
    return one;
}

/* The MoE token exchange of one micro-batch on one stage: per MoE layer a dispatch and a
 * combine forward, the same backward (and once more each forward under full recompute). With
 * moe_comm_overlap (Megatron-Core's --overlap-moe-expert-parallel-comm, which merges one
 * micro-batch's forward with another's backward; DeepSeek-V3's DualPipe) the exchange runs on
 * its own stream while the other micro-batch runs (`window`: its GEMMs, element-wise kernels
 * and the host time its GPU stream waits through), `overlap` of the shorter hidden; off by
 * default, as in Megatron-Core. */
/* The share of a rank's micro-batch passes the combined 1F1B schedule pairs with another
 * micro-batch's (Megatron-Core schedules.py get_pp_rank_microbatches): the first rank runs
 * (pp - 1) * 2 + (v - 1) * pp warm-up forwards alone with interleaving (microbatch_group_size_
 * per_vp_stage = pp, the default), pp - 1 without, plus the one extra forward the overlap
 * schedules ("to ensure the forward and backward computations are independent"), and as many
 * backwards alone in the cool-down; with pp 1 (forward_backward_no_pipelining) the first forward
 * and the last backward. Of m * v passes each way, the rest are paired. */
static double paired_share(const struct shape *x)
{
    double total = x->m * x->v;
    double warm =
        x->p > 1 ? (x->p - 1.0) * (x->v > 1 ? 2.0 : 1.0) + (x->v - 1.0) * x->p + 1.0 : 1.0;

    return warm >= total ? 0.0 : (total - warm) / total;
}

static double ep_exchange(const struct core_perf_input *in, const struct gen *k,
                          const struct shape *x, double window)
{
    double ep = at_least((double)in->ep, 1);
    double passes = in->checkpointing == CORE_CKPT_FULL || recomputes_moe(in) ? 6.0 : 4.0;

    if (in->moe_layers <= 0 || ep <= 1)
        return 0.0;
    /* MoE layers on the pipeline's slowest stage: its x->ls layers in the model's MoE share. */
    double comm = passes * x->ls * (double)in->moe_layers / x->L * ep_all_to_all(in, k);
    if (!in->moe_comm_overlap)
        return comm;
    double f = paired_share(x);
    return (1.0 - f) * comm + f * exposed(comm, window, k->overlap);
}

/* Output layer and loss on the last stage: the logits GEMM three times, and ~12 bytes per logit
 * through HBM (write, fp32 softmax, gradient). Multi-token prediction (DeepSeek-V3;
 * Megatron-Core's --mtp-num-layers puts the modules on the last stage): each module's
 * transformer layer is one of the last rank's layers (layout.c); here each adds its pass through
 * the shared output layer and loss (its 2d -> d projection and norms left out). The pipeline
 * runs at the pace of its busiest rank (1F1B: every rank takes one micro-batch per slot), so
 * only what the last rank's work exceeds the heaviest rank's by counts: when a split gives the
 * last rank fewer layers (Megatron's pipeline_model_parallel_layout, the loss counted in the
 * split, a last-stage layer count), their time (`slack`, at the per-layer cost of the pieces
 * already in `u`) absorbs the output layer first. With an even split the last rank is the
 * heaviest and it all counts. */
static void last_stage(const struct core_perf_input *in, const struct gen *k, const struct shape *x,
                       struct micro *u)
{
    double hbm = core_gpus[in->gpu].hbm_tbps * 1e12 * k->hbm, vt = x->V / x->t;
    double logits = gemm(x->rows, vt, x->d, x->rate, k->half_dim);
    double n = 1.0 + (in->mtp_layers > 0 ? (double)in->mtp_layers : 0.0);
    double c = 3.0 * n * logits, m = n * x->rows * vt * 12.0 / hbm;
    double last = in->last_stage_layers > 0 ? in->last_stage_layers : x->ls;
    double per_layer = (u->compute + u->memory + u->recompute + u->tp + u->cp + u->host) / x->ls;
    double slack = at_least(x->ls - last, 0.0) * per_layer;
    double share = c + m > 0.0 ? at_least(c + m - slack, 0.0) / (c + m) : 0.0;

    u->compute += share * c;
    u->memory += share * m;
}

static double clamp_layers(double n, double max)
{
    return n < 0.0 ? 0.0 : n > max ? max : n;
}

/* Keys a fused attention kernel processes per query, averaged over the layers: s/2 causal (the
 * masked half skipped), s with a full mask; a sliding layer's kernel skips the blocks outside
 * its window too, min(t, w) keys for query t (core_attention_mean_keys); a linear-attention
 * layer has none (its chunked delta rule is linear in s and not priced). Materialized attention
 * computes the whole s x s matrix and masks it, window or not. */
static double flash_keys(const struct core_perf_input *in, const struct shape *x)
{
    bool causal = !in->full_mask;
    double linear = clamp_layers((double)in->linear_layers, x->L);
    double sliding = in->sliding_window > 0 ? (double)in->sliding_layers : 0.0;
    double full = x->s * (causal ? 0.5 : 1.0);

    if (sliding <= 0.0 && linear <= 0.0)
        return full;
    sliding = clamp_layers(sliding, x->L - linear);
    return ((x->L - linear - sliding) * full +
            sliding * core_attention_mean_keys((int64_t)x->s, in->sliding_window, causal)) /
           x->L;
}

/* Of the layers, the share that runs softmax attention at all (not linear attention). */
static double attention_share(const struct core_perf_input *in, const struct shape *x)
{
    return in->linear_layers > 0 ? (x->L - clamp_layers((double)in->linear_layers, x->L)) / x->L
                                 : 1.0;
}

/* A frozen base (fine-tuning with adapters): the layers' weight GEMMs run forward and once more
 * for the input gradients (no weight gradients: 2 passes instead of 3), attention still three
 * times; the adapters' thin GEMMs (rank r: their efficiency falls with r through sat()) forward
 * and twice backward; their element-wise traffic forward and backward (adapters.c); the output
 * layer's GEMM twice unless it is wrapped. A quantized base is dequantized per layer per pass:
 * read its stored bytes, write the compute dtype (plus the forward's fp32 casts under PEFT's
 * fp32 stream). Returns what a recompute re-runs beyond the forward GEMMs: one forward's
 * dequantization and adapter element-wise bytes, and DoRA's weight norm. */
static double frozen_micro(const struct core_perf_input *in, const struct shape *x, double gemm_f,
                           double att_f, double mem_f, double hbm, double h, struct micro *u)
{
    double ls = x->ls, t = x->t, rows = x->rows, r = at_least(in->lora_rank, 1);
    double ad_f = 0.0, vt = x->V / t, dq_b, dq_f, elt_f, elt_b;
    /* DoRA, once per forward: B A (a rank-r GEMM), W + s B A and its norm (4 e bytes). */
    double dora_gemm = ls * 2.0 * (in->dora_weights / t) * r / (x->rate * sat(r, h));
    double dora_mem = ls * 4.0 * x->e * (in->dora_weights / t) / hbm;

    if (in->lora_in > 0)
        ad_f = gemm(rows, r, in->lora_in / t, x->rate, h) +
               gemm(rows, in->lora_out / t, r, x->rate, h);
    dq_b = in->dequant_weights / (x->L * t) * (in->dequant_bpp + x->e) / hbm * ls;
    dq_f = dq_b + in->dequant_weights / (x->L * t) * in->dequant_cast_bpw / hbm * ls;
    elt_f = ls * rows * in->lora_fwd_bytes / (t * hbm);
    elt_b = ls * rows * in->lora_bwd_bytes / (t * hbm);
    u->fwd_compute = ls * (gemm_f + att_f + ad_f);
    u->compute = ls * (2.0 * gemm_f + 3.0 * att_f + 3.0 * ad_f) +
                 (in->lora_head > 0 ? 3.0 : 2.0) * gemm(rows, vt, x->d, x->rate, h) + dora_gemm;
    u->memory = 3.0 * ls * mem_f + elt_f + elt_b + rows * vt * 12.0 / hbm + dq_f + dq_b + dora_mem;
    return dq_f + elt_f + dora_gemm + dora_mem;
}

/* Attention core forward: QK^T and AV over this rank's s/cp queries against all s keys.
 * Fused kernels skip the causally masked half; materialized attention computes the whole
 * s x s score matrix with two batched GEMMs (K = h_d is thin) and streams it through HBM:
 * write 2, softmax read+write 4, dropout read+write+mask 5, read by AV 2 = 13 bytes per
 * score forward. */
static void attention_forward(const struct core_perf_input *in, const struct gen *k,
                              const struct shape *x, double hbm, double *att_f, double *score_mem_f)
{
    double t = x->t, h = k->half_dim;
    double heads = x->b * x->a / t, sq = x->s / x->c;
    double hq = x->hd, hv = x->hd; /* MLA: QK^T over nope + rope dims, AV over the v dims */

    if (in->kv_lora_rank > 0) {
        hq = (double)(in->qk_nope_head_dim + in->qk_rope_head_dim);
        hv = in->v_head_dim > 0 ? (double)in->v_head_dim : x->hd;
    }
    *score_mem_f = 0.0;
    if (in->flash_attention) {
        double keys = flash_keys(in, x);
        *att_f = in->kv_lora_rank > 0 ? 2.0 * heads * sq * keys * (hq + hv) / (x->peak16 * k->flash)
                                      : 4.0 * heads * sq * keys * x->hd / (x->peak16 * k->flash);
        return;
    }
    *att_f = heads * (gemm(sq, x->s, hq, x->rate16, h) + gemm(sq, hv, x->s, x->rate16, h));
    *score_mem_f = heads * sq * x->s * 13.0 / hbm;
    if (in->linear_layers > 0) { /* linear-attention layers build no score matrix */
        *att_f *= attention_share(in, x);
        *score_mem_f *= attention_share(in, x);
    }
}

/* MoE host time of one forward pass of one layer, averaged over the layers: per MoE layer the
 * sync and fixed part plus the per-local-expert part (MOE_SYNC_S, MOE_EXPERT_HOST_S). */
/* The host time per MoE layer per pass that the layer's CUDA graphs replay (CG_*): attn; the
 * moe_router graph takes the shared experts (transformer_config.py: "including the shared experts
 * if they are not overlapped with EP comm"; the flex dispatcher turns that overlap off), and with
 * moe_preprocess the router and preprocess kernels. */
static double graphed_host(const struct core_perf_input *in)
{
    unsigned g = in->cuda_graph_modules;
    double s = (g & CORE_CG_ATTN) ? CG_ATTN_S : 0.0;

    if (g & CORE_CG_MOE_ROUTER) {
        s += in->shared_experts > 0 ? CG_SHARED_S : 0.0;
        s += (g & CORE_CG_MOE_PREPROCESS) ? CG_ROUTER_S : 0.0;
    }
    return s;
}

static double moe_host_forward(const struct core_perf_input *in, const struct shape *x)
{
    if (in->moe_layers <= 0)
        return 0.0;
    double local = at_least((double)in->experts, 1) / at_least((double)in->ep, 1);
    double host = MOE_SYNC_S + MOE_EXPERT_HOST_S * local - graphed_host(in);

    return at_least(host, 0.0) * (double)in->moe_layers / x->L;
}

/* What eager modules add to the fused element-wise bytes of one layer's forward per token
 * (micro_batch counts a norm as read + write d): transformers' LlamaRMSNorm / MistralRMSNorm
 * (models/llama/modeling_llama.py) and torchtune's RMSNorm (modules/rms_norm.py) run
 * x.to(fp32) (r e w 4), pow (r 4 w 4), mean (r 4), x * rsqrt (r 4 w 4), .to(e) (r 4 w e) and
 * the weight's mul (r e w e): 28 + 4 e bytes a norm, two per layer, instead of 2 e; their
 * residual adds have no dropout (3 d elements, not 3.5). apply_rotary_pos_emb
 * (q * cos + rotate_half(q) * sin, the same on k; rotate_half negates a half and concatenates):
 * 10 elements per element of q and k (torchtune's RotaryPositionalEmbeddings upcasts to fp32 and
 * moves more; priced as transformers'). act_fn(gate) * up: 5 f elements, not 3. */
static double eager_elt(const struct core_perf_input *in, const struct shape *x)
{
    double norms = 2.0 * ((28.0 + 4.0 * x->e) - 2.0 * x->e) - 2.0 * 0.5 * x->e;
    double rotary = 10.0 * x->e * (x->a + x->kv) * x->hd / x->t;
    double act = in->gated_mlp ? 2.0 * x->e * x->f / x->t : 0.0;

    if (!in->eager_kernels)
        return 0.0;
    return norms * x->d / (in->sequence_parallel ? x->t : 1.0) + rotary + act;
}

static void micro_batch(const struct core_perf_input *in, const struct gen *k,
                        const struct shape *x, struct micro *u)
{
    double f_in = in->gated_mlp ? 2.0 * x->f : x->f;
    double hbm = core_gpus[in->gpu].hbm_tbps * 1e12 * k->hbm;
    double t = x->t, rows = x->rows, h = k->half_dim;
    bool fp8 = in->precision == CORE_PREC_FP8;

    /* Forward GEMMs of one layer: QKV, attention output, MLP in (2f wide when gated), out. */
    double gemm_f = layer_gemms(in, k, x, f_in);

    double sq = x->s / x->c;
    double att_f, score_mem_f;
    attention_forward(in, k, x, hbm, &att_f, &score_mem_f);

    double bias_f, bias_b;
    expert_pass_bytes(in, x, &bias_f, &bias_b);
    double mem_f = rows * (elementwise_bytes(in, x, f_in, fp8) + eager_elt(in, x) + bias_f) / hbm +
                   score_mem_f + k->launch;

    /* Tensor parallelism: two all-reduces of the (b s/cp d) activations forward, two backward
     * (reduce-scatter + all-gather pairs under sequence parallelism move the same bytes). */
    struct link tl = group_link(in, k, t, 1.0);
    double ar = all_reduce(rows * x->d * x->e, t, tl);
    double tp_f = 2.0 * ar * (in->tp_comm_overlap ? 1.0 - k->tp_hide : 1.0);

    /* Context parallelism: K and V blocks travel the ring c-1 times forward, K, V, dK, dV
     * backward (twice the bytes), each step hidden behind one block's attention. */
    double cp_f = 0.0;
    if (x->c > 1) {
        struct link cl = group_link(in, k, x->c, t);
        double kv_bytes = 2.0 * x->b * sq * x->kv * x->hd / t * x->e;
        double ring = (x->c - 1.0) * (cl.base + cl.hop + kv_bytes / cl.bw);
        cp_f = exposed(ring, att_f, k->overlap);
    }

    double ls = x->ls;
    double host_f = moe_host_forward(in, x);
    u->host = (in->checkpointing == CORE_CKPT_FULL || recomputes_moe(in) ? 4.0 : 3.0) * ls * host_f;
    u->fwd_compute = ls * (gemm_f + att_f);
    u->compute = 3.0 * u->fwd_compute;
    /* backward moves twice the forward's bytes, except the experts' bias and FP8 padding: their own
     * counts */
    u->memory = 3.0 * ls * mem_f + ls * rows * (bias_b - 2.0 * bias_f) / hbm;
    u->tp = 3.0 * ls * tp_f;
    u->cp = 3.0 * ls * cp_f;

    double dq = 0.0;
    if (in->frozen_base)
        dq = frozen_micro(in, x, gemm_f, att_f, mem_f, hbm, h, u);

    switch (in->checkpointing) {
    case CORE_CKPT_FULL:
        u->recompute = u->fwd_compute + ls * (mem_f + tp_f + cp_f) + dq;
        break;
    case CORE_CKPT_SELECTIVE:
        u->recompute = selective_recompute(in, k, x, att_f + score_mem_f, tp_f, hbm);
        break;
    case CORE_CKPT_NONE:
    default:
        u->recompute = 0.0;
    }
    if (!in->frozen_base) /* frozen_micro counts its own output layer */
        last_stage(in, k, x, u);
}

static void shape_init(const struct core_perf_input *in, const struct gen *k, struct shape *x)
{
    const struct core_gpu *g = &core_gpus[in->gpu];

    x->L = at_least((double)in->layers, 1);
    x->d = at_least((double)in->hidden, 1);
    x->a = at_least((double)in->heads, 1);
    x->kv = at_least((double)(in->kv_heads > 0 ? in->kv_heads : in->heads), 1);
    x->hd = in->head_dim > 0 ? (double)in->head_dim : x->d / x->a;
    x->f = at_least((double)in->ffn_hidden, 1);
    x->V = at_least((double)in->vocab, 1);
    x->s = at_least((double)in->seq_len, 1);
    x->b = at_least((double)in->micro_batch, 1);
    x->t = at_least((double)in->tp, 1);
    x->p = at_least((double)in->pp, 1);
    x->c = at_least((double)in->cp, 1);
    x->v = x->p > 1 ? at_least((double)in->virtual_stages, 1) : 1.0;
    x->dp = at_least((double)in->dp, 1);
    x->m = at_least(in->global_batch / (x->b * x->dp), 1);
    /* Uneven split (layout.c): the heaviest rank's layers set every stage's pace. */
    x->ls = in->stage_layers > 0 ? in->stage_layers : x->L / x->p;
    x->rows = x->b * x->s / x->c;
    x->e = in->precision == CORE_PREC_FP32 ? 4.0 : 2.0;
    x->peak = at_least(in->peak_tflops, 1e-3) * 1e12;
    /* FP8 runs only the GEMMs in FP8; attention and the rest run at the 16-bit rate. */
    x->peak16 = x->peak;
    if (in->precision == CORE_PREC_FP8)
        x->peak16 = g->fp8_tflops > 0 && g->bf16_tflops > 0
                        ? x->peak * g->bf16_tflops / g->fp8_tflops
                        : x->peak / 2.0;
    x->rate = x->peak * (in->precision == CORE_PREC_FP8 ? k->gemm_fp8 : k->gemm);
    x->rate16 = x->peak16 * k->gemm;
}

/* Offload (ZeRO-Offload, ZeRO-Infinity) over the host link, pcie_gbs per direction: with the
 * optimizer offloaded, each step sends the local gradient shard down and the updated 16-bit
 * weights up (e bytes per parameter each way, one after the other), and the CPU runs the
 * optimizer step over the same bytes the GPU would have, at CORE_PERF_HOST_BPS, in place of the
 * GPU's step; with the weights offloaded, every micro-batch fetches the local weight shard for
 * the forward and again for the backward. None of it is overlapped (an upper bound). */
static void offload_terms(const struct core_perf_input *in, const struct shape *x, double local,
                          struct core_perf_breakdown *br)
{
    double pcie = at_least(in->pcie_gbs, 1e-3) * 1e9;

    br->offload = 0.0;
    if (in->offload_optimizer) {
        br->offload +=
            2.0 * local * x->e / pcie + local * optimizer_bytes(in, x->e) / CORE_PERF_HOST_BPS;
        br->optimizer = 0.0;
    }
    if (in->offload_params)
        br->offload += x->m * 2.0 * local * x->e / pcie;
}

/* Pipeline: fill and drain cost (pp - 1) / v micro-batch times (interleaved 1F1B); each
 * micro-batch crosses each stage boundary forward and backward, v times when interleaved.
 * Megatron splits the sent activation over the tp ranks (scatter/gather). Neighbouring stages
 * are tp*cp*dp ranks apart: another node once that reaches gpus_per_node. A stage's time in the
 * bubble includes its MoE host time. */
static void pipeline_terms(const struct core_perf_input *in, const struct gen *k,
                           const struct shape *x, const struct micro *u,
                           struct core_perf_breakdown *br)
{
    if (x->p > 1) {
        double one = u->compute + u->memory + u->recompute + u->tp + u->cp + u->host;
        br->pp_bubble = (x->p - 1.0) / x->v * one;
        bool cross = x->t * x->c * x->dp >= (double)in->gpus_per_node;
        double bw = cross ? at_least(in->inter_node_gbs, 1e-3) * 1e9 * k->net
                          : at_least(in->intra_node_gbs, 1e-3) * 1e9 * k->up;
        double lat = k->lat_base + (cross ? k->hop_net : k->hop_up);
        double send = lat + x->rows * x->d * x->e / x->t / bw;
        br->pp_comm = x->m * 2.0 * x->v * send;
    }
}

/* The non-expert weights one tp rank reduces, times tp (so / (tp pp) is one rank's share):
 * N - N_e split by tp, except the weights every tp rank keeps whole (tp_whole_params), which each
 * rank holds and reduces in full (memory.c counts them so too). */
static double dense_held(const struct core_perf_input *in, const struct shape *x)
{
    double whole = fmin(fmax(in->tp_whole_params, 0), in->params - in->expert_params);

    return in->params - in->expert_params + whole * (x->t - 1);
}

/* The gradient reduction of ZeRO 0-2 (ZeRO 1-2: reduce-scatter plus the parameter all-gather,
 * the same bytes as an all-reduce). The non-expert weights, N - N_e over tp pp, reduce over the
 * dp ranks (tp cp apart). The routed experts' weights, N_e over ep etp pp, reduce over the
 * expert data-parallel group instead (Megatron-Core's parallel_state.py: expert ranks ordered
 * etp-ep-dp-pp, so its edp = tp cp dp / (ep etp) members sit ep etp ranks apart; the
 * distributed optimizer keeps expert parameters in their own buffers, distributed/
 * param_and_grad_buffer.py, reduced over that group): with ep filling a node, each member is on
 * another node and the group has one NIC per rank. A dense model (N_e = 0) keeps one term. */
static double zero_reduce(const struct core_perf_input *in, const struct gen *k,
                          const struct shape *x, struct link dl)
{
    double ep = at_least((double)in->ep, 1), etp = etp_of(in);
    double edp = at_least(x->t * x->c * x->dp / (ep * etp), 1);
    double dense = dense_held(in, x) / (x->t * x->p) * x->e;
    double expert = in->expert_params / (ep * etp * x->p) * x->e;
    double comm = all_reduce(dense, x->dp, dl);

    if (expert > 0.0)
        comm += all_reduce(expert, edp, group_link(in, k, edp, ep * etp));
    return comm;
}

/* Data parallelism over the dp ranks (tp*cp apart). Local parameters N/(tp pp); gradients and
 * gathered weights in the 16-bit type (4 bytes for fp32 training). */
static void dp_terms(const struct core_perf_input *in, const struct gen *k, const struct shape *x,
                     const struct micro *u, struct core_perf_breakdown *br)
{
    if (x->dp > 1) {
        struct link dl = group_link(in, k, x->dp, x->t * x->c);
        /* A MoE rank holds the non-expert weights split by tp (the tp-whole ones whole,
         * dense_held) and its experts' split by ep*etp (MoE parallel folding). Scaled to the tp
         * split below. */
        double etp = at_least((double)(in->etp > 0 ? in->etp : in->tp), 1);
        double held =
            dense_held(in, x) + in->expert_params * x->t / (at_least((double)in->ep, 1) * etp);
        double bytes = held / (x->t * x->p) * x->e;
        double comm, window;
        if (in->zero_stage >= 3) {
            /* FSDP / ZeRO-3: per micro-batch, all-gather the weights for forward and again for
             * backward, reduce-scatter the gradients; each pass in pieces of at most
             * ZERO3_BUCKET parameters and at least one per layer. */
            double pieces = at_least(held / (x->t * x->p) / ZERO3_BUCKET, x->ls);
            comm = x->m * 3.0 * pieces * half_ring(bytes / pieces, x->dp, dl);
            window = br->compute + br->recompute;
        } else {
            /* Gradients all-reduced once per step (ZeRO 0), or reduce-scattered and the new
             * weights all-gathered (ZeRO 1-2: the same bytes). Only the last micro-batch's
             * backward can hide it. */
            comm = zero_reduce(in, k, x, dl);
            window = 2.0 * u->fwd_compute;
        }
        br->dp_comm = in->dp_comm_overlap ? exposed(comm, window, k->overlap) : comm;
    }
}

/* A frozen base's data-parallel traffic and optimizer step (they replace full training's):
 * only the adapters' gradients are reduced, while ZeRO-3 still gathers the frozen base in its
 * stored layout forward and backward; the step reads each adapter gradient and reads and writes
 * the adapter and its moments. */
static void frozen_step(const struct core_perf_input *in, const struct gen *k,
                        const struct shape *x, const struct micro *u,
                        struct core_perf_breakdown *br)
{
    double hbm = core_gpus[in->gpu].hbm_tbps * 1e12 * k->hbm, mp = x->t * x->p;
    double local = in->adapter_params / mp / (in->zero_stage >= 1 ? x->dp : 1.0);

    if (x->dp > 1) {
        struct link dl = group_link(in, k, x->dp, x->t * x->c);
        double held =
            in->params - in->expert_params + in->expert_params / at_least((double)in->ep, 1);
        double grads = in->adapter_params / mp * in->adapter_bytes;
        double base = held / mp * in->stored_bpp;
        double pieces = at_least(held / mp / ZERO3_BUCKET, x->ls);
        double comm = in->zero_stage >= 3 ? x->m * pieces *
                                                (2.0 * half_ring(base / pieces, x->dp, dl) +
                                                 half_ring(grads / pieces, x->dp, dl))
                                          : all_reduce(grads, x->dp, dl);
        double window = in->zero_stage >= 3 ? br->compute + br->recompute : 2.0 * u->fwd_compute;
        br->dp_comm = in->dp_comm_overlap ? exposed(comm, window, k->overlap) : comm;
    }
    br->optimizer = local * (3.0 * in->adapter_bytes + 2.0 * in->adapter_moments) / hbm;
    offload_terms(in, x, local, br);
}

/* FLOPs per token selective recompute re-runs (HFU; the modules of selective_recompute): the
 * attention core's att / 3 with core_attn; the up projections of every MLA layer
 * (2 a (n + v) kv_lora + 2 a (n + r) q_lora); a dense layer's MLP (2 (f_in + f) d); the shared
 * experts (2 (gated + 1) f_s d each); the whole MoE block (2 k (gated + 1) f_e d + the router's
 * 2 d E + the shared experts). The element-wise modules add bytes, not FLOPs. */
static double selective_flops(const struct core_perf_input *in, const struct shape *x, double att)
{
    unsigned bits = recompute_bits(in);
    double moe = in->moe_layers > 0 ? (double)in->moe_layers : 0.0, d = x->d;
    double gated = in->gated_mlp ? 2.0 : 1.0, f = 0.0;
    double shared = in->shared_experts > 0 ? (double)in->shared_experts * 2.0 * (gated + 1.0) *
                                                 (double)in->shared_ffn_hidden * d
                                           : 0.0;

    if (bits & CORE_RC_CORE_ATTN)
        f += att / 3.0;
    if ((bits & CORE_RC_MLA_UP_PROJ) && in->kv_lora_rank > 0) {
        double a = x->a, n = (double)in->qk_nope_head_dim, r = (double)in->qk_rope_head_dim;
        double v = in->v_head_dim > 0 ? (double)in->v_head_dim : x->hd;
        f += x->L * 2.0 *
             (a * (n + v) * (double)in->kv_lora_rank + a * (n + r) * (double)in->q_lora_rank);
    }
    if (bits & CORE_RC_MLP)
        f += (x->L - moe) * 2.0 * (gated + 1.0) * x->f * d;
    if (moe > 0 && (bits & CORE_RC_MOE))
        f += moe * (2.0 * at_least((double)in->experts_per_token, 1) * (gated + 1.0) *
                        (double)in->moe_ffn_hidden * d +
                    2.0 * d * (double)in->experts + shared);
    else if (moe > 0 && (bits & CORE_RC_SHARED_EXPERTS))
        f += moe * shared;
    return f;
}

/* MFU, HFU and throughput of a step of `step` seconds; the expected error of the generation, or
 * of MoE layouts (core/validation.c). */
static void step_rates(const struct core_perf_input *in, const struct shape *x, double step,
                       struct core_perf *out)
{
    /* Model FLOPs as core's "model" count: 6 N_active + 12 L s a h_d per token (full
     * attention); hardware adds the recompute (full: a forward, selective: attention). */
    double tokens = in->global_batch * x->s, g = at_least((double)in->gpus, 1);
    double att = 12.0 * x->L * x->s * x->a * x->hd;
    double model = 6.0 * in->active_params + att;
    if (in->frozen_base) /* input gradients only, plus the adapters' 6 per parameter */
        model = 4.0 * in->base_params + 6.0 * in->adapter_flops_params + att;
    double rec = in->checkpointing == CORE_CKPT_FULL        ? 2.0 * in->active_params + att / 3.0
                 : in->checkpointing == CORE_CKPT_SELECTIVE ? selective_flops(in, x, att)
                                                            : 0.0;
    out->tokens_per_second_per_gpu = tokens / step / g;
    out->model_tflops_per_gpu = out->tokens_per_second_per_gpu * model / 1e12;
    out->mfu = out->tokens_per_second_per_gpu * model / x->peak;
    out->hfu = out->tokens_per_second_per_gpu * (model + rec) / x->peak;
    out->expected_error = core_perf_validation[core_gpus[in->gpu].generation].expected_error;
    if (in->moe_layers > 0 && in->experts > 0) /* MoE layouts have their own figure */
        out->expected_error = core_perf_moe_validation.expected_error;
}

void core_perf_predict(const struct core_perf_input *in, struct core_perf *out)
{
    const struct gen *k = &gens[core_gpus[in->gpu].generation];
    struct core_perf_breakdown *br = &out->breakdown;
    struct shape x;
    struct micro u;

    memset(out, 0, sizeof *out);
    shape_init(in, k, &x);
    micro_batch(in, k, &x, &u);

    br->compute = x.m * u.compute;
    br->memory_bound = x.m * u.memory;
    br->recompute = x.m * u.recompute;
    br->tp_comm = x.m * u.tp;
    br->cp_comm = x.m * u.cp;

    pipeline_terms(in, k, &x, &u, br);
    dp_terms(in, k, &x, &u, br);

    /* Optimizer: memory-bound over the local shard (divided by dp from ZeRO 1 on). */
    {
        double hbm = core_gpus[in->gpu].hbm_tbps * 1e12 * k->hbm;
        double local = in->params / (x.t * x.p) / (in->zero_stage >= 1 ? x.dp : 1.0);
        br->optimizer = local * optimizer_bytes(in, x.e) / hbm;
        offload_terms(in, &x, local, br);
    }
    if (in->frozen_base)
        frozen_step(in, k, &x, &u, br);
    /* The exchange overlaps the paired micro-batch's whole time on its own stream: its GEMMs,
     * its element-wise kernels and the host gaps the GPU waits through. */
    br->ep_comm = x.m * ep_exchange(in, k, &x, u.compute + u.memory + u.host);
    br->moe_host = x.m * u.host;

    const double *terms = &br->compute;
    double step = 0.0, worst = -1.0;
    out->bottleneck = core_perf_term_names[1];
    for (int i = 0; i < CORE_PERF_TERMS; i++) {
        step += terms[i];
        if (i > 0 && terms[i] > worst) {
            worst = terms[i];
            out->bottleneck = core_perf_term_names[i];
        }
    }
    out->step_seconds = step;

    step_rates(in, &x, step, out);
}
