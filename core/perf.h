/*
 * perf.h - the step-time model: seconds per optimizer step from the hardware and the layout.
 *
 * Where runtime.c divides FLOPs by an assumed MFU, this model predicts the MFU: it prices each
 * piece of one training step on one GPU (GEMMs, attention, element-wise kernels, recompute,
 * tensor/context/pipeline/data-parallel communication, the optimizer) from the catalog's
 * peaks, HBM bandwidth and interconnect, with a dozen efficiency constants per GPU generation.
 * The formulas, constants, their sources and the validation against 105 measured runs are in
 * docs/model.md, "Step time".
 *
 * Pure like the rest of core: no I/O, no allocation, no state; a few hundred flops per call,
 * no loop over layers, so the planner can call it per candidate. The caller passes inputs
 * already resolved and validated (core_evaluate's bounds); out-of-range values are clamped
 * (counts to >= 1, bandwidths to > 0) so the result is always finite.
 */
#ifndef MEMWALL_CORE_PERF_H
#define MEMWALL_CORE_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

struct core_perf_input {
    /* Model: the resolved architecture. params is N (total, sets the gradient and optimizer
     * bytes), active_params the per-token N (MoE; equals params for dense models). */
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab;
    bool gated_mlp;
    double params, active_params;
    int64_t seq_len;     /* tokens per sequence */
    int64_t micro_batch; /* sequences per micro-batch per model replica (per GPU of a tp group) */
    double global_batch; /* sequences per optimizer step; m = global_batch / (micro_batch * dp) */
    enum core_precision precision;
    enum core_checkpointing checkpointing;
    bool flash_attention;
    bool full_mask; /* bidirectional attention; false (default) = causal decoder, whose fused
                       kernels skip the masked half of the score matrix */
    /* Sliding-window attention (core/layers.c): of the layers, sliding_layers attend only the
     * last sliding_window keys, which fused kernels skip the rest of; 0 = every layer full. */
    int64_t sliding_layers, sliding_window;
    /* Linear-attention layers (Qwen3-Next's Gated DeltaNet): no quadratic attention term. */
    int64_t linear_layers;
    enum core_optimizer optimizer;
    bool master_weights;
    bool bf16_states; /* optimizer_state_dtype bf16: two-byte moments */
    /* Layout: gpus = tp * pp * dp * cp (not checked here). zero_stage 0..3; virtual_stages is
     * the interleaved 1F1B chunks per pipeline rank (1 = plain 1F1B). Rank order is Megatron's:
     * tp innermost, then cp, then dp, pp outermost. */
    int zero_stage;
    int64_t gpus, tp, pp, dp, cp, virtual_stages;
    bool sequence_parallel;
    /* Hardware: catalog index (HBM TB/s, generation, the bf16 peak FP8 runs non-GEMM work at);
     * peak_tflops is the dense peak for the precision (catalog or the user's override). */
    int gpu;
    double peak_tflops;
    int64_t gpus_per_node; /* scale-up domain size (catalog gpus_per_node by default) */
    double intra_node_gbs; /* scale-up GB/s per GPU per direction (catalog scale_up_gbs) */
    double inter_node_gbs; /* network GB/s per GPU per direction (catalog network_gbs) */
    bool tp_comm_overlap;  /* TP collectives overlapped with GEMMs (Transformer Engine) */
    bool dp_comm_overlap;  /* gradient reduction / FSDP gathers overlapped with compute */
    /* Mixture of experts (all 0 for a dense model, which keeps the dense arithmetic): of the
     * layers, moe_layers route each token to experts_per_token of `experts` experts of width
     * moe_ffn_hidden, split over ep ranks, plus shared_experts of width shared_ffn_hidden. */
    int64_t experts, experts_per_token, moe_ffn_hidden, shared_experts, shared_ffn_hidden;
    /* Group-limited routing: each token's experts come from router_group_topk of
     * router_groups equal groups of consecutive experts (0 = no groups; perf_moe.c). */
    int64_t router_groups, router_group_topk;
    int64_t moe_layers, ep;
    double expert_params; /* the routed experts' weights within params (ep divides them) */
    /* Of params, the weights every tp rank holds whole (core_tp_whole_params: MLA's q/kv down
     * projections and their norms, the router's E x d): tp does not divide them, so each tp
     * rank reduces (and under ZeRO-3 gathers) them whole; 0 at tp 1 or for none. */
    double tp_whole_params;
    /* Expert layout and time (docs/model.md, "Mixture of experts"): etp is the experts' own
     * tensor-parallel size (Megatron-Core's --expert-tensor-parallel-size, default tp; 0 is
     * taken as tp); the dispatcher, the all-to-all overlap and the load imbalance are the API
     * inputs of the same names. */
    int64_t etp;
    enum core_moe_dispatcher moe_dispatcher;
    bool moe_comm_overlap;
    double moe_load_imbalance; /* >= 1; capped at ep */
    /* Per-layer CUDA graphs (enum core_cuda_graph_module bits, the API's cuda_graph_modules):
     * the captured modules' host time is replayed from the graph, not launched (perf.c). */
    unsigned cuda_graph_modules;
    /* The routed experts carry an output (fc2) bias that Megatron-Core's TEGroupedMLP adds after
     * the grouped GEMM with PyTorch ops, expert by expert, weighted by the routing probability
     * (experts.py _apply_bias; GPT-OSS: add_bias_linear). Its element-wise bytes (perf.c
     * expert_bias_bytes). Set from the architecture's mlp_bias under framework megatron. */
    bool moe_expert_bias;
    /* Selective recompute's modules (enum core_recompute_module bits, the API's
     * recompute_modules; Megatron-Core's --recompute-modules): what checkpointing selective
     * re-runs in the backward (perf.c selective_recompute); 0 = core_attn, the default. */
    unsigned recompute_modules;
    /* Multi-latent attention (DeepSeek-V2/V3): kv_lora_rank > 0 prices the attention GEMMs as
     * the MLA projections (q down/up, kv down/up, output) instead of Q, K, V and O. */
    int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    /* Multi-token-prediction modules on the last stage (DeepSeek-V3: 1); 0 = none. Their layers
     * are counted in stage_layers; this adds their output-layer passes. */
    int64_t mtp_layers;
    /* Offload: the optimizer step on the CPU, the 16-bit weights fetched from host memory;
     * pcie_gbs the host link per GPU per direction (catalog). */
    bool offload_optimizer, offload_params;
    double pcie_gbs;
    /* Pipeline split (core/layout.c): the layers of the heaviest pipeline rank, which sets the
     * pipeline's pace; 0 = an even split, layers / pp. */
    double stage_layers;
    /* ... and the last rank's (its MTP layers included), which also runs the output layer and
     * the loss; 0 = stage_layers (the last rank is the heaviest, as with an even split). */
    double last_stage_layers;
    /* Fine-tuning with adapters (core/adapters.c; all 0 for full training): the frozen base's
     * backward computes only input gradients; the adapters on the wrapped linears of a layer
     * (their input widths summing to lora_in, output widths to lora_out, rank lora_rank) add
     * their GEMMs and lora_fwd_bytes (each forward, recompute included) and lora_bwd_bytes
     * (backward) of element-wise traffic per token per layer; a quantized base is dequantized
     * (dequant_weights weights of dequant_bpp stored bytes each) at every pass, and each forward
     * moves dequant_cast_bpw more bytes per weight (PEFT's fp32 stream: the dequantized weight
     * cast to fp32 and back); the optimizer steps and the data-parallel reduce moves only the
     * adapters. */
    bool frozen_base;
    /* The layers run the framework's eager PyTorch modules (Hugging Face's transformers models,
     * torchtune's modules without torch.compile): unfused RMSNorm, rotary and gated activation
     * kernels (perf.c eager_elt). */
    bool eager_kernels;
    double lora_rank, lora_in, lora_out, lora_head; /* lora_head: the output layer wrapped */
    double lora_fwd_bytes, lora_bwd_bytes;
    double adapter_params, adapter_bytes, adapter_moments;
    double dequant_weights, dequant_bpp, dequant_cast_bpw;
    double stored_bpp; /* the frozen base's stored bytes per parameter (ZeRO-3 gathers) */
    /* Model FLOPs per token of a fine-tune: 4 base_params + 6 adapter_flops_params + attention,
     * both as the GEMMs above execute them (the architecture's count, not a given N). */
    double base_params, adapter_flops_params;
    /* DoRA: the wrapped weights of one layer (sum of out x in), whose adapted weight W + s B A
     * and its row norms each forward computes (dora.py _get_weight_norm; detached: not again
     * backward). */
    double dora_weights;
};

/* struct core_perf_breakdown and struct core_perf are in core.h (a result carries one). */

/* Host memory bandwidth one GPU's CPU optimizer step achieves, bytes/s (an assumption, not a
 * measurement: a two-socket host's ~600 GB/s of DDR5 at a third achieved, shared by 8 GPUs;
 * docs/model.md, "Offload"). */
#define CORE_PERF_HOST_BPS 25e9

void core_perf_predict(const struct core_perf_input *in, struct core_perf *out);

/* Bytes one rank sends in one MoE all-to-all (a dispatch; the combine mirrors it), with balanced
 * routing, split by where they go (perf_moe.c; docs/model.md, "Mixture of experts"). */
struct core_ep_traffic {
    double local;   /* to this rank's own experts: no link */
    double nvlink;  /* to EP peers in the same scale-up domain */
    double network; /* to EP peers on other nodes */
    double in_node; /* EP peers (this rank included) in one scale-up domain */
    double nodes;   /* scale-up domains the EP group spans */
    double tokens;  /* tokens this rank routes per micro-batch: b s / (cp tp) */
};

/* The traffic of one all-to-all of one micro-batch. Megatron-Core orders the expert ranks
 * tp(=etp)-ep-dp-pp (parallel_state.py, the expert RankGenerator), so an EP group is ep*etp
 * consecutive ranks, etp apart, and a node holds min(ep, gpus_per_node / etp) of them. */
void core_perf_ep_traffic(const struct core_perf_input *in, struct core_ep_traffic *out);

/* Token copies each local expert computes per micro-batch with balanced routing: the ep*etp
 * ranks' b s / (cp tp) tokens each, k copies, spread over the E experts. */
double core_perf_expert_tokens(const struct core_perf_input *in);

/* Fill every field from a resolved evaluation (core_evaluate's inputs after defaults): the
 * architecture, N, the batch, precision, layout, hardware and overlap flags. Attention is taken
 * as causal (every decoder the API prices). */
void core_perf_input_resolved(struct core_perf_input *in, const struct core_resolved *r);

/* Fill the hardware fields from the catalog row (bandwidths, GPUs per node, the precision's
 * peak) and set the overlap flags off; the caller sets the rest. */
void core_perf_input_hardware(struct core_perf_input *in, int gpu, enum core_precision precision);

#endif
