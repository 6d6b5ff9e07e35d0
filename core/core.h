/*
 * core.h - memwall's calculation model: FLOPs, the per-GPU memory ledger, fit and runtime.
 *
 * Pure functions over plain structs. No allocation, no I/O, no JSON, no globals that change:
 * every function here is reentrant. The formulas and their sources are in docs/model.md; the
 * defaults reproduce the lesson in docs/lesson.md (7B, one 80 GB H100, bf16 AdamW, T 512, B 1).
 *
 * Usage: fill a struct core_input with core_input_init() (every field at its documented
 * default or "not given"), set what the caller knows, then call core_evaluate(). It resolves
 * the inputs (preset, architecture, inferred shape, catalog), validates combinations and fills
 * a struct core_result with every figure the API can report. Byte counts are exact int64_t;
 * FLOPs and times are finite doubles. An impossible combination returns CORE_EINVAL with the
 * offending fields in struct core_problems; a result too large for 64-bit bytes returns
 * CORE_ERANGE. Nothing in a result is ever NaN or inf.
 */
#ifndef MEMWALL_CORE_H
#define MEMWALL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters.h" /* fine-tuning with adapters: LoRA, QLoRA, DoRA */
#include "inputs.h"   /* the input table: bounds, defaults, units */

/* ---------------------------------------------------------------------------------------------
 * Status, problems, enumerations
 * ------------------------------------------------------------------------------------------- */

enum core_status {
    CORE_OK = 0,
    CORE_EINVAL, /* inputs valid one by one but impossible together (HTTP 422) */
    CORE_ERANGE, /* a result would not fit in 64-bit bytes or a finite double (HTTP 422) */
};

#define CORE_MAX_PROBLEMS 8
#define CORE_MESSAGE_MAX  200

/* A problem names the input field at fault (API name, e.g. "gpus") and says why. */
struct core_problem {
    const char *field; /* static string: the API input name */
    char message[CORE_MESSAGE_MAX];
};

struct core_problems {
    int count;
    struct core_problem items[CORE_MAX_PROBLEMS];
};

enum core_precision { CORE_PREC_BF16, CORE_PREC_FP16, CORE_PREC_FP32, CORE_PREC_FP8 };
enum core_optimizer {
    CORE_OPT_ADAMW,
    CORE_OPT_ADAM,
    CORE_OPT_ADAMW_8BIT,
    CORE_OPT_SGD,
    CORE_OPT_SGD_MOMENTUM,
    CORE_OPT_LION,
    CORE_OPT_ADAFACTOR,
};
enum core_checkpointing { CORE_CKPT_NONE, CORE_CKPT_SELECTIVE, CORE_CKPT_FULL };
enum core_attention_flops { CORE_ATTN_FULL, CORE_ATTN_CAUSAL };
enum core_count { CORE_COUNT_SIX_ND, CORE_COUNT_MODEL, CORE_COUNT_HARDWARE };

/* Where the architecture used for activations and attention FLOPs came from. */
enum core_shape_source {
    CORE_SHAPE_PRESET,       /* `model` given: the preset's architecture (plus any overrides) */
    CORE_SHAPE_ARCHITECTURE, /* `layers` and `hidden` given without a preset */
    CORE_SHAPE_NEAREST,      /* only N: the nearest preset by parameter count (within 1.5x) */
    CORE_SHAPE_ASPECT,       /* only N: L = round((N/(12*128^2))^(1/3)), d = 128 L, a = d/128 */
    CORE_SHAPE_CONFIG,       /* `config`: a Hugging Face config.json (api/hfconfig.c) */
};

/* Where ZeRO-Offload / ZeRO-Infinity keep a piece of the training state. */
enum core_offload { CORE_OFFLOAD_NONE, CORE_OFFLOAD_CPU };

/* How a MoE layer's tokens travel to their experts (Megatron-Core --moe-token-dispatcher-type
 * and --moe-flex-dispatcher-backend; docs/model.md, "Mixture of experts"): NCCL all-to-all sends
 * one copy per chosen expert; DeepEP and HybridEP send a token once per remote node that holds
 * any of its experts and forward it over NVLink there. */
enum core_moe_dispatcher { CORE_MOE_ALLTOALL, CORE_MOE_DEEPEP, CORE_MOE_HYBRIDEP };
#define CORE_MOE_DISPATCHER_COUNT 3

enum core_bottleneck { CORE_BOTTLENECK_NONE, CORE_BOTTLENECK_STATE, CORE_BOTTLENECK_ACTIVATIONS };

/* How the layers fall on the pipeline's pp x virtual_stages stages (core/layout.c). */
enum core_split {
    CORE_SPLIT_EVEN,       /* L / (pp v) each */
    CORE_SPLIT_FIRST_LAST, /* Megatron's decoder_first/last_pipeline_num_layers */
    CORE_SPLIT_ACCOUNTED,  /* Megatron's account_for_embedding/loss_in_pipeline_split */
    CORE_SPLIT_BALANCED,   /* torchtitan's split: L + 2 units, the remainder on the first stages */
    CORE_SPLIT_LAYOUT,     /* Megatron's pipeline_model_parallel_layout, stage by stage */
};

/* A parsed pipeline_model_parallel_layout (core/layout.c): per virtual stage in Megatron's order,
 * its decoder layers; where the embedding, the loss and the MTP layers sit. */
#define CORE_LAYOUT_STAGES_MAX 512
struct core_layout {
    int stages;                            /* 0 = none */
    int embedding, loss;                   /* their (first) stage; -1 = absent */
    int embeddings, losses, decoders, mtp; /* totals over the stages */
    int mtp_stage;                         /* the (last) stage holding MTP layers; -1 = none */
    bool mtp_split;                        /* MTP layers in more than one stage */
    bool mtp_before_decoder;               /* a decoder layer after an MTP layer */
    unsigned char layers[CORE_LAYOUT_STAGES_MAX]; /* decoder layers per stage (<= 255) */
};

/* Megatron-Core's --recompute-modules (transformer_config.py), a bit each; what selective
 * recompute recomputes (default core_attn). */
enum core_recompute_module {
    CORE_RC_CORE_ATTN = 1 << 0,
    CORE_RC_MOE_ACT = 1 << 1,
    CORE_RC_LAYERNORM = 1 << 2,
    CORE_RC_MLA_UP_PROJ = 1 << 3,
    CORE_RC_MLP = 1 << 4,
    CORE_RC_MOE = 1 << 5,
    CORE_RC_SHARED_EXPERTS = 1 << 6,
};
#define CORE_RC_COUNT 7
extern const char *const core_recompute_module_names[CORE_RC_COUNT]; /* bit i's name */

/* Megatron-Core's per-layer CUDA graphs (--cuda-graph-impl transformer_engine
 * --cuda-graph-modules, transformer_config.py), a bit each; what a training step replays from a
 * graph instead of launching kernel by kernel (cuda_graph.c; none by default). */
enum core_cuda_graph_module {
    CORE_CG_ATTN = 1 << 0,
    CORE_CG_MOE_ROUTER = 1 << 1,
    CORE_CG_MOE_PREPROCESS = 1 << 2,
};
#define CORE_CG_COUNT 3
extern const char *const core_cuda_graph_module_names[CORE_CG_COUNT]; /* bit i's name */

/* Tri-state for booleans that have a derived default. */
enum core_flag { CORE_FLAG_AUTO = 0, CORE_FLAG_NO, CORE_FLAG_YES };

/* Peak memory (peak.h, docs/frameworks.md): the framework whose profile prices the peak, how
 * its loss holds the logits, and the statistic the peak is reported in. */
/* Frameworks with a profile; generic is today's ledger, unchanged. */
enum core_framework {
    CORE_FW_GENERIC,
    CORE_FW_MEGATRON,
    CORE_FW_TORCHTITAN,
    CORE_FW_TORCHTUNE,
    CORE_FW_DEEPSPEED,
    CORE_FW_HF_TRAINER,
};
#define CORE_FW_COUNT 6

/* How the loss holds the logits (bytes per logit: docs/frameworks.md, "Loss"). */
enum core_loss {
    CORE_LOSS_FP32_LOGITS,     /* one fp32 copy (the generic ledger) */
    CORE_LOSS_VOCAB_PARALLEL,  /* Megatron's fused vocab-parallel cross-entropy */
    CORE_LOSS_UNFUSED_FP32,    /* eager cross_entropy(logits.float()) */
    CORE_LOSS_COMPILED,        /* torch.compile'd cross-entropy: bf16 in, bf16 gradient out */
    CORE_LOSS_CHUNKED,         /* output projection and loss in chunks (torchtune) */
    CORE_LOSS_UNFUSED_SHIFTED, /* transformers 4.46-4.48: bf16 kept, fp32 and shifted copies */
};
#define CORE_LOSS_COUNT 6

/* What the peak is measured as. */
enum core_memory_metric {
    CORE_METRIC_ALLOCATED, /* torch.cuda allocated_bytes.all.peak */
    CORE_METRIC_RESERVED,  /* reserved_bytes.all.peak: allocated plus the allocator's slack */
    CORE_METRIC_ACTIVE,    /* active_bytes.all.peak (equals allocated in this model) */
    CORE_METRIC_DEVICE,    /* nvidia-smi: reserved + CUDA context + communicator buffers */
};
#define CORE_METRIC_COUNT 4

/* Names as the API spells them (defined in peak.c). */
extern const char *const core_framework_names[CORE_FW_COUNT];
extern const char *const core_loss_names[CORE_LOSS_COUNT];
extern const char *const core_memory_metric_names[CORE_METRIC_COUNT];
/* The loss a framework's profile computes unless `loss` is given (peak.c). */
enum core_loss core_peak_default_loss(enum core_framework framework);
/* Whether a framework's default attention keeps no score matrix (fused / flash), the default of
 * flash_attention (peak.c). */
bool core_peak_default_flash(enum core_framework framework);

/* Names as the API spells them; index with the enum value. */
extern const char *const core_precision_names[4];
extern const char *const core_optimizer_names[7];
extern const char *const core_checkpointing_names[3];
extern const char *const core_attention_flops_names[2];
extern const char *const core_count_names[3];
extern const char *const core_bottleneck_names[3]; /* "none", "state", "activations" */
/* "preset", "architecture", "nearest_preset", "aspect_ratio", "config" */
extern const char *const core_shape_source_names[5];
extern const char *const core_offload_names[2]; /* "none", "cpu" */
/* "alltoall", "deepep", "hybridep" */
extern const char *const core_moe_dispatcher_names[CORE_MOE_DISPATCHER_COUNT];

/* ---------------------------------------------------------------------------------------------
 * Tables: GPU catalog and model presets (model.md)
 * ------------------------------------------------------------------------------------------- */

/* Architecture family: the time model (perf.c) keeps one set of efficiency constants each. */
enum core_gpu_generation {
    CORE_GEN_VOLTA,
    CORE_GEN_AMPERE,
    CORE_GEN_ADA,
    CORE_GEN_HOPPER,
    CORE_GEN_BLACKWELL,
    CORE_GEN_CDNA3,
    CORE_GEN_TPU,
};
#define CORE_GEN_COUNT 7
extern const char *const core_generation_names[CORE_GEN_COUNT]; /* "Volta", "Ampere", ... */

struct core_gpu {
    const char *id;     /* "h100-sxm" */
    const char *name;   /* "NVIDIA H100 SXM" */
    double bf16_tflops; /* dense; 0 = bf16 not supported */
    double fp16_tflops; /* dense; 0 = not supported */
    double fp8_tflops;  /* 0 = not supported */
    double tf32_tflops; /* used for fp32 training; 0 = not supported */
    double memory_gb;   /* nominal HBM, decimal GB */
    double hbm_tbps;    /* memory bandwidth, TB/s */
    double watts;       /* board power; 0 = not published */
    /* Interconnect (docs/model.md, "GPU catalog"): the scale-up domain (NVLink, Infinity
     * Fabric, ICI) and the scale-out network, each in GB/s per GPU per direction, and how many
     * GPUs one scale-up domain holds. The time model (perf.c) reads these; the rest ignores them.
     */
    double scale_up_gbs;   /* NVLink-class bandwidth inside a node / domain */
    double network_gbs;    /* default scale-out network bandwidth (NICs per GPU x line rate) */
    int64_t gpus_per_node; /* GPUs sharing one scale-up domain */
    enum core_gpu_generation generation; /* selects the time model's efficiency constants */
    double pcie_gbs; /* host link per GPU per direction, GB/s (offload traffic) */
    /* Serving (core/serve.h, docs/serving.md "GPU catalog"): dense INT8 tensor TOPS (0 = no
     * INT8 tensor path), and the memory the driver reports as total (cudaMemGetInfo, what vLLM
     * logs as total_gpu_memory), in GiB, with where the figure comes from. */
    double int8_tops;
    double usable_gib;
    const char *usable_source;
};

extern const struct core_gpu core_gpus[];
extern const size_t core_gpu_count;
#define CORE_GPU_DEFAULT 0 /* h100-sxm is the first row */
/* The rows before this index are the training parts /plan searches when no gpu is named; the
 * inference parts after them (L4 ... RTX PRO 6000) are searched only when named. */
#define CORE_GPU_TRAINING_COUNT 13

/* Query/key normalisation inside attention (weights only). */
enum core_qk_norm {
    CORE_QK_NORM_NONE = 0,
    CORE_QK_NORM_HEAD,  /* one norm of h_d for Q and one for K, shared by heads (Qwen3): 2 h_d */
    CORE_QK_NORM_WIDTH, /* over the full Q and K widths (OLMoE): a h_d + k h_d */
};

struct core_arch {
    int64_t layers;            /* L */
    int64_t hidden;            /* d */
    int64_t heads;             /* a */
    int64_t kv_heads;          /* k (GQA when k < a) */
    int64_t head_dim;          /* h_d (d/a unless the model says otherwise) */
    int64_t ffn_hidden;        /* f */
    int64_t vocab;             /* V */
    bool gated_mlp;            /* SwiGLU: 3 d f MLP weights instead of 2 d f */
    bool tied_embeddings;      /* input and output embeddings shared */
    int64_t learned_positions; /* T_max of learned position embeddings (GPT-2/3), 0 if none */
    bool relative_position_projection; /* Transformer-XL style W_r (Gopher/Chinchilla): +d*(a*h_d)
                                          per layer */
    /* Everything below is zero/false for the original presets, which keeps their counts: two
     * weight-only norms per layer plus a final one, no biases, dense MLP, standard attention.
     * Counting rules: docs/architectures.md. */
    int64_t norms_per_layer;   /* 0 = 2 (pre-attention and pre-MLP); Gemma 2 has 4, Falcon-7B 1 */
    bool norm_bias;            /* LayerNorm with a bias: 2 d per norm (final norm included) */
    bool qkv_bias;             /* biases on Q, K, V (a h_d + 2 k h_d); MLA: on q_a and kv_a */
    bool o_bias;               /* bias on the output projection (d) */
    bool mlp_bias;             /* biases on every MLP, expert and shared expert projection */
    enum core_qk_norm qk_norm; /* QK-norm weights; 0 = none */
    bool parallel_residual;    /* attention and MLP read the same input (GPT-NeoX, Falcon); no count
                                  effect beyond norms_per_layer, kept for the record */
    /* Mixture of experts: 0 experts = dense. Layer i (from 0) has a routed MLP when
     * i >= dense_layers and i % moe_layer_freq == moe_layer_phase (freq 0 or 1: every layer). */
    int64_t experts;           /* routed experts per MoE layer (E) */
    int64_t experts_per_token; /* routed experts each token uses (top-k) */
    int64_t moe_ffn_hidden;    /* one routed expert's MLP width; 0 = ffn_hidden */
    int64_t shared_experts;    /* experts every token uses (DeepSeek, Qwen2-MoE) */
    int64_t shared_ffn_hidden; /* one shared expert's width; 0 = the routed width */
    bool shared_expert_gate;   /* Qwen2-MoE: a d -> 1 gate on the shared expert (+d) */
    bool router_bias;          /* a per-expert router bias (+E): DeepSeek-V3's score correction */
    /* Group-limited routing (DeepSeek's node-limited routing; Megatron-Core's
     * --moe-router-num-groups / --moe-router-group-topk, config.json n_group / topk_group): the
     * E experts form router_groups equal groups of consecutive experts and each token picks its
     * top-k inside router_group_topk of them. 0 = no groups. */
    int64_t router_groups, router_group_topk;
    int64_t dense_layers;    /* leading layers with the dense MLP (first_k_dense_replace) */
    int64_t moe_layer_freq;  /* see above; 0 = 1 */
    int64_t moe_layer_phase; /* see above; < moe_layer_freq (Qwen2-MoE step s: s - 1) */
    /* Multi-latent attention (DeepSeek-V2/V3): kv_lora_rank > 0 replaces Q, K, V, O. */
    int64_t q_lora_rank;  /* 0 = a full d -> a (n + r) query projection */
    int64_t kv_lora_rank; /* 0 = not MLA */
    int64_t qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    /* Attention layer types (core/layers.c; docs/architectures.md, "Attention layer types").
     * All zero: every layer is full causal attention (every original preset). With a window
     * w > 0 the types repeat every layer_period layers (0 = 1): layer i is full attention when
     * bit (i mod P) of full_layers is set, else sliding-window attention over its own and the
     * w - 1 previous positions. Mistral 7B v0.1: w 4096, P 1, no full bit (every layer
     * sliding); Gemma 2 and GPT-OSS: P 2, full_layers 0x2 (sliding, full, sliding, ...);
     * Gemma 3: P 6, full_layers 0x20 (five sliding, then one full). */
    int64_t sliding_window; /* w, tokens; 0 = no sliding layers */
    int64_t layer_period;   /* P in 0..CORE_LAYER_PERIOD_MAX; 0 = 1 */
    uint64_t full_layers;   /* bit j: layers i with i mod P = j are full attention */
    bool attention_sinks;   /* a learned logit per head per layer (GPT-OSS): + a per layer */
    /* Hybrid models (Qwen3-Next): bit j of linear_layers makes the layers i with i mod P = j
     * linear-attention layers (a Gated DeltaNet token mixer in place of attention: no KV cache,
     * no quadratic term), whatever sliding_window says; a bit may not be in full_layers too.
     * Their weights follow the linear_* sizes: H_k key heads of d_k and H_v value heads of d_v,
     * a causal depthwise convolution of linear_conv_kernel taps (docs/architectures.md). */
    uint64_t linear_layers;
    int64_t linear_key_heads, linear_key_dim, linear_value_heads, linear_value_dim;
    int64_t linear_conv_kernel;
    bool attention_output_gate; /* the attention layers' q projection carries a sigmoid output
                                   gate as wide as Q (Qwen3-Next): + d a h_d per layer */
};

/* The longest pattern of layer types an architecture can state (bits of full_layers). */
#define CORE_LAYER_PERIOD_MAX 64

struct core_preset {
    const char *id;          /* "llama2-7b" */
    const char *name;        /* "Llama 2 7B" */
    const char *source;      /* citation of the architecture and published count */
    double published_params; /* the count the source publishes */
    int64_t context;         /* trained context length (tokens) */
    struct core_arch arch;
};

extern const struct core_preset core_presets[];
extern const size_t core_preset_count;
/* The longest request a serving engine admits for preset i: the config's max_position_embeddings
 * (a yarn config's original positions times its factor), as vLLM derives max_model_len
 * (vllm/config/model.py, _get_and_verify_max_len), where it differs from the trained context:
 * Qwen3's configs state 40960 for a native 32768, Mistral 7B v0.1's 32768 for its trained 8192,
 * DeepSeek V2/V3's 163840 (yarn 40 x 4096) for 128k. Else the preset's context. */
int64_t core_preset_positions(int i);
/* Nearest-preset inference (a bare N) borrows a shape only from the first rows, the original
 * dense presets (gpt3-125m .. mpt-7b); rows appended later (mixtures of experts, Gemma, GPT-OSS)
 * never stand in for a bare N, so what a bare N infers stays put as the table grows. */
#define CORE_PRESET_STAND_INS 17

/* Catalog row gpu's usable memory in bytes: usable_gib when the row has it, else memory_gb. */
int64_t core_gpu_usable_bytes(int gpu);

/* Index of the catalog row / preset with this id, or -1. */
int core_gpu_find(const char *id);
int core_preset_find(const char *id);

/* N derived from an architecture (model.md "Parameters from an architecture"). */
int64_t core_arch_params(const struct core_arch *arch);

/* ---- Parameter breakdown (arch.c; docs/architectures.md) ---------------------------------- */

#define CORE_EXPERTS_MAX 100000

struct core_arch_counts {
    int64_t total;   /* every weight: core_arch_params() */
    int64_t active;  /* used by one token: total less the routed experts it skips */
    int64_t experts; /* routed experts' weights, what expert parallelism divides */
    int64_t
        non_experts;   /* total - experts (attention, norms, routers, shared experts, embeddings) */
    int64_t embedding; /* input embedding + learned positions */
    int64_t output;    /* untied output head; 0 when tied */
    int64_t moe_layers; /* layers with a routed MLP */
    /* Of non_experts, the weights Megatron-Core keeps whole on every tensor-parallel rank:
     * MLA's down projections and their latent norms (TELinear, parallel_mode "duplicated";
     * multi_latent_attention.py) and the MoE routers (TopKRouter's E x d weight and its expert
     * bias; moe/router.py). The layer norms (d or 2d a layer) are left in the split share. */
    int64_t tp_whole;
};

/* Fill *out; false when the architecture is invalid or a count overflows int64. */
bool core_arch_count(const struct core_arch *arch, struct core_arch_counts *out);
/* Active parameters per token (= total for a dense model); -1 when invalid. */
int64_t core_arch_active_params(const struct core_arch *arch);
/* Layers with a routed MLP under the dense_layers / moe_layer_freq rule. */
int64_t core_arch_moe_layers(const struct core_arch *arch);
/* Of the first n layers, those with a routed MLP (the same rule; a pipeline stage's MoE layers are
 * the difference of two such prefixes). */
int64_t core_arch_moe_layers_below(const struct core_arch *arch, int64_t n);
/* Weight FLOPs of one token's forward pass: 2 x active. */
double core_arch_forward_flops(const struct core_arch *arch);
/* Width that the attention-core FLOP term multiplies: a h_d, or for MLA a (h_qk + h_v) / 2. */
double core_arch_attention_width(const struct core_arch *arch);

/* ---- Attention layer types (layers.c; docs/architectures.md) ------------------------------ */

/* What a layer's token mixer is. Linear-attention layers (Qwen3-Next's Gated DeltaNet) keep no
 * per-token KV cache and no quadratic term, only a fixed state per sequence
 * (core_arch_linear_state_elements). State-space layers (Jamba, Nemotron-H) are not stated. */
enum core_layer_kind { CORE_LAYER_FULL, CORE_LAYER_SLIDING, CORE_LAYER_LINEAR };
#define CORE_LAYER_KINDS 3
/* As Hugging Face's layer_types spells them: "full_attention", "sliding_attention",
 * "linear_attention". */
extern const char *const core_layer_kind_names[CORE_LAYER_KINDS];

struct core_layer_types {
    int64_t layers[CORE_LAYER_KINDS]; /* layers of each kind, indexed by enum core_layer_kind */
    int64_t window;                   /* w of the sliding layers; 0 when there are none */
};

/* The kind of layer i (from 0); CORE_LAYER_FULL for every layer of a model without windows. */
enum core_layer_kind core_arch_layer_kind(const struct core_arch *arch, int64_t layer);
/* Layers of each kind among layers [first, first + count) (a pipeline stage); closed form.
 * Out-of-range parts of the range are not counted. */
void core_arch_layer_types_range(const struct core_arch *arch, int64_t first, int64_t count,
                                 struct core_layer_types *out);
/* The same over all L layers. */
void core_arch_layer_types(const struct core_arch *arch, struct core_layer_types *out);
/* Positions one layer of this kind holds in its KV cache after seq_len tokens: seq_len for
 * full attention, min(seq_len, w) for a sliding layer, 0 for a linear layer. */
int64_t core_arch_kv_positions(const struct core_arch *arch, enum core_layer_kind kind,
                               int64_t seq_len);
/* The sum of that over all layers: what the KV cache of one sequence holds, in layer-positions
 * (L x seq_len without windows); -1 on overflow. */
int64_t core_arch_kv_positions_total(const struct core_arch *arch, int64_t seq_len);
/* Elements one linear-attention layer keeps per sequence, whatever its length: the
 * convolution's last K - 1 inputs over the 2 H_k d_k + H_v d_v channels and the H_v d_k x d_v
 * recurrent state (vLLM's conv and temporal state shapes, before tensor parallelism divides the
 * channels and heads); 0 for an architecture without linear layers. */
int64_t core_arch_linear_state_elements(const struct core_arch *arch);
/* Keys one query attends, averaged over the T = seq_len queries of a sequence, in a layer with
 * window w (0 = full attention). causal: T/2 for full attention or T <= w, else w - w^2/(2T)
 * (the mean of min(t, w) over t in (0, T], taken continuously as the T/2 of full attention is).
 * Not causal (the `full` FLOP convention: every query against every key it may see): min(T, w).
 */
double core_attention_mean_keys(int64_t seq_len, int64_t window, bool causal);
/* Sum over the layers of core_attention_mean_keys: L x T (L x T / 2 causal) without windows. The
 * attention-core FLOPs per token are 12 x core_arch_attention_width() x this. */
double core_arch_attended_keys(const struct core_arch *arch, int64_t seq_len, bool causal);
/* The layer-type fields are consistent: w >= 0, 0 <= P <= CORE_LAYER_PERIOD_MAX, no full bit at
 * or above P. */
bool core_arch_layer_types_valid(const struct core_arch *arch);

/* ---------------------------------------------------------------------------------------------
 * Input
 * ------------------------------------------------------------------------------------------- */

/*
 * Every field has a default set by core_input_init(). "0 = not given" fields are resolved by
 * core_evaluate() as documented; the resolved values are reported in core_result.resolved.
 */
struct core_input {
    int preset;            /* index into core_presets; -1 = none (default) */
    int64_t params;        /* N; 0 = not given: architecture's count, else 7e9 */
    int64_t active_params; /* MoE active N for FLOPs; 0 = params */

    /* Architecture overrides; 0 = not given (preset's, or inferred). */
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab;
    enum core_flag gated_mlp, tied_embeddings; /* AUTO: preset's, else no */

    int64_t batch;   /* micro-batch per GPU, default 1 */
    int64_t seq_len; /* T, default 512 */
    double tokens;   /* D, default 1.4e12 */

    enum core_precision precision; /* default bf16 */
    int grad_precision;            /* enum core_precision or -1 = as weights (fp8 -> bf16) */
    enum core_flag master_weights; /* AUTO: yes for 16/8-bit, no for fp32 */
    enum core_optimizer optimizer; /* default adamw */
    enum core_checkpointing checkpointing;     /* default none */
    enum core_flag flash_attention;            /* AUTO: the framework profile's (peak.c) */
    enum core_attention_flops attention_flops; /* default full */

    int64_t gpus;                     /* G, default 1 */
    int gpu;                          /* catalog index, default CORE_GPU_DEFAULT */
    int zero_stage;                   /* 0..3, default 3 */
    int64_t tp, pp;                   /* default 1 */
    int64_t cp;                       /* context parallelism, default 1 */
    int64_t virtual_stages;           /* interleaved 1F1B stages per rank, default 1 */
    enum core_flag sequence_parallel; /* AUTO: yes when tp > 1 */
    enum core_flag tp_comm_overlap;   /* AUTO: see core_resolved */
    enum core_flag dp_comm_overlap;   /* AUTO: see core_resolved */
    int64_t gpus_per_node;            /* 0 = catalog */
    double intra_node_gbs;            /* GB/s per GPU per direction; 0 = catalog */
    double inter_node_gbs;            /* GB/s per GPU per direction; 0 = catalog */
    double global_batch;              /* sequences per optimizer step; 0 = derived */

    double memory_gb;           /* 0 = catalog */
    double peak_tflops;         /* 0 = catalog value for the precision */
    double reserve_gb;          /* default 0 */
    double mfu;                 /* default 0.5; CORE_MFU_PREDICTED = predict it */
    enum core_count count;      /* default six_nd */
    double usd_per_gpu_hour;    /* < 0 = not given (default -1) */
    double tokens_per_second;   /* 0 = not given */
    double global_batch_tokens; /* 0 = batch * seq_len * dp */

    /* Peak memory (peak.h): the framework profile and its overrides. */
    enum core_framework framework;         /* default generic (the ledger, unchanged) */
    int loss;                              /* enum core_loss, or -1 = the profile's */
    bool compile;                          /* torch.compile of the blocks, default false */
    bool optimizer_in_backward;            /* step fused into the backward, default false */
    bool activation_offload;               /* saved activations offloaded to the CPU */
    enum core_memory_metric memory_metric; /* default allocated */
    /* A model the user brings (docs/model.md, "Mixture of experts", "Offload"). The api fills
     * config_arch from the `config` member (a Hugging Face config.json); the MoE rows override
     * the preset's, config's or explicit architecture's. Sentinels: -1 / 0 = not given. */
    bool config_given;              /* config_arch holds a decoded config */
    struct core_arch config_arch;   /* the config's architecture (CORE_SHAPE_CONFIG) */
    int64_t config_context;         /* the config's max positions; 0 = none */
    int64_t experts;                /* E; -1 = not given (0 makes the model dense) */
    int64_t experts_per_token;      /* top-k; 0 = not given */
    int64_t shared_experts;         /* -1 = not given */
    int64_t moe_ffn_hidden;         /* one routed expert's width; 0 = not given */
    int64_t dense_layers;           /* leading dense layers; -1 = not given */
    int64_t moe_router_num_groups;  /* router_groups; -1 = not given (0 = no groups) */
    int64_t moe_router_group_topk;  /* router_group_topk; -1 = not given */
    int64_t sliding_window;         /* -1 = not given (the architecture's); 0 = every layer full
                                       attention; w > 0: the window of the sliding layers (every
                                       layer when the architecture has no pattern) */
    int64_t sliding_window_pattern; /* -1 = not given; P >= 1: layer i full when (i + 1) mod P
                                       = 0, the rest sliding; 0 = every layer sliding */
    int64_t ep;                     /* expert-parallel degree, default 1 */
    enum core_offload offload_optimizer, offload_params; /* default none */
    /* Expert time (perf.c, docs/model.md "Mixture of experts"). */
    enum core_moe_dispatcher moe_dispatcher; /* default alltoall (Megatron-Core's default) */
    bool moe_comm_overlap;                   /* --overlap-moe-expert-parallel-comm; default false */
    double moe_load_imbalance; /* tokens on the busiest expert rank / the mean; default 1 */
    /* MoE parallel folding and uneven pipeline stages (core/layout.c; docs/model.md, "MoE
     * layout" and "Pipeline split"): Megatron-Core's names. 0 = not given. */
    int64_t etp;                /* expert tensor-parallel size; 0 = tp (Megatron's default) */
    int64_t first_stage_layers; /* decoder_first_pipeline_num_layers; 0 = not given */
    int64_t last_stage_layers;  /* decoder_last_pipeline_num_layers; 0 = not given */
    bool embedding_in_split;    /* account_for_embedding_in_pipeline_split */
    bool loss_in_split;         /* account_for_loss_in_pipeline_split */
    int64_t mtp_layers;         /* multi-token prediction layers (DeepSeek-V3), default 0 */
    char pipeline_layout[CORE_TEXT_MAX];    /* Megatron's --pipeline-model-parallel-layout; "" */
    char recompute_modules[CORE_TEXT_MAX];  /* Megatron's --recompute-modules; "" = core_attn */
    char cuda_graph_modules[CORE_TEXT_MAX]; /* Megatron's --cuda-graph-modules; "" = none */
    /* Fine-tuning with adapters (adapters.h, docs/model.md "Fine-tuning with adapters"). */
    enum core_finetune finetune; /* default full: every figure as without these rows */
    int64_t lora_rank;           /* r, default 8 */
    double lora_alpha;           /* accepted and echoed; costs nothing */
    int lora_targets;            /* mask of enum core_module; -1 = PEFT's default (q, v) */
    int base_quant;              /* enum core_base_quant; -1 = none, nf4 under qlora */
    int optimizer_state_dtype;   /* enum core_state_dtype; -1 = the framework's rule */
};

/* Set every field to its default (the input table's dflt column). */
void core_input_init(struct core_input *in);

/* ---------------------------------------------------------------------------------------------
 * Result
 * ------------------------------------------------------------------------------------------- */

struct core_shape {
    enum core_shape_source source;
    int preset;            /* preset used for the shape (PRESET or NEAREST), else -1 */
    struct core_arch arch; /* fully resolved */
    int64_t arch_params;   /* core_arch_params(&arch) */
};

/* Every input after defaults, inference and the catalog. */
struct core_resolved {
    int64_t params, active_params;
    struct core_shape shape;
    int64_t batch, seq_len;
    double tokens;
    enum core_precision precision, grad_precision;
    bool master_weights;
    enum core_optimizer optimizer;
    enum core_checkpointing checkpointing;
    bool flash_attention;
    enum core_attention_flops attention_flops;
    int64_t gpus, dp; /* dp = G / (tp pp cp) */
    int gpu;
    int zero_stage;
    int64_t tp, pp, cp, virtual_stages;
    bool sequence_parallel;
    bool tp_comm_overlap, dp_comm_overlap;
    int64_t gpus_per_node;
    double intra_node_gbs, inter_node_gbs;
    double global_batch;     /* sequences per optimizer step */
    double micro_batches;    /* m = global_batch / (batch dp) per pipeline */
    bool global_batch_given; /* global_batch was an input: kept, so batch * dp must divide it */
    bool mfu_predicted;      /* mfu was "predicted": the runtime comes from the time model */
    double memory_gb, peak_tflops, reserve_gb, mfu;
    /* The device's memory as the driver reports it (core_gpu_usable_bytes; memory_gb when given):
     * what a device peak is judged against (a framework profile's /fit, /inference). */
    int64_t usable_bytes;
    enum core_count count;
    double usd_per_gpu_hour;  /* < 0 = not given */
    double tokens_per_second; /* 0 = not given */
    double global_batch_tokens;
    /* Peak memory: the framework profile, its loss (the profile's unless given) and overrides. */
    enum core_framework framework;
    enum core_loss loss;
    bool compile, optimizer_in_backward, activation_offload;
    enum core_memory_metric memory_metric;
    /* Mixture of experts and offload (the MoE architecture itself is in shape.arch). */
    int64_t expert_params; /* routed experts' weights within params (what ep divides) */
    int64_t ep;            /* expert-parallel degree */
    enum core_offload offload_optimizer, offload_params;
    enum core_moe_dispatcher moe_dispatcher;
    bool moe_comm_overlap;
    double moe_load_imbalance;
    /* MoE parallel folding (Megatron-Core parallel_state.py): the experts' own layout,
     * etp x ep x edp = tp x cp x dp; the experts' gradients and optimizer state are sharded over
     * the expert data-parallel group of edp ranks. */
    int64_t etp; /* as given; 0 = tp (core_etp() reads the effective one) */
    int64_t edp; /* gpus / (etp ep pp) */
    /* The pipeline split (core/layout.c): how the layers fall on the pp x virtual_stages stages. */
    enum core_split split;
    int64_t first_stage_layers, last_stage_layers; /* 0 = not given */
    bool embedding_in_split, loss_in_split;
    int64_t mtp_layers;          /* on the last pipeline rank */
    int64_t mtp_params;          /* within params: the MTP layers' weights (0 without) */
    int64_t tp_whole_params;     /* within params - expert_params: kept whole on every tp rank
                                  * (core_arch_counts.tp_whole, MTP included; applies at tp > 1) */
    int64_t stage_layers;        /* decoder layers (+ MTP) of the heaviest pipeline rank */
    struct core_layout layout;   /* CORE_SPLIT_LAYOUT: the parsed flexible layout */
    unsigned recompute_modules;  /* enum core_recompute_module bits (selective recompute) */
    unsigned cuda_graph_modules; /* enum core_cuda_graph_module bits; 0 = no CUDA graphs */
    /* What the reply echoes for these inputs: the experts' tensor-parallel size in use, the
     * modules as a comma-separated list, the layout as given ("" = none). */
    int64_t etp_used;
    char recompute_text[CORE_TEXT_MAX];
    char cuda_graph_text[CORE_TEXT_MAX];
    char layout_text[CORE_TEXT_MAX];
    struct core_adapters_cfg adapters; /* finetune full: the rest is unused */
};

struct core_flops {
    double six_nd;   /* 6 N_active D */
    double model;    /* D (6 N_active + attention) */
    double hardware; /* model + D recompute */
    struct {
        double forward;   /* 2 N_active + attention forward */
        double backward;  /* 4 N_active + attention backward */
        double recompute; /* full: 2 N_active + attention forward; selective: attention forward */
        double attention; /* 12 (a h_d) x keys attended summed over layers (L T, halved
                             when causal; a sliding layer's w keys: layers.c) */
    } per_token;
    double attention_fraction; /* attention / (6 N_active + attention) */
};

struct core_bytes_per_param {
    int weights, master, moments, grads, total;
};

/* The peak of a steady-state step as the framework holds it (peak.c, docs/frameworks.md). */
struct core_memory_peak {
    int64_t bytes;                  /* in the statistic memory_metric asks for */
    enum core_memory_metric metric; /* as asked */
    const char *at;                 /* moment: "forward_end", "backward", "optimizer_step" */
    const char *stage;              /* pipeline stage: "only", "first", "last" */
    int64_t device;                 /* as nvidia-smi shows it: what /fit judges with a profile */
    const char *device_at, *device_stage;
    /* Mean absolute relative error of the profile's peaks on measured runs that informed none
     * of its terms (core_peak_validation, validation.h); < 0 = none: null. */
    double expected_error;
};

struct core_memory {
    /* per GPU, bytes */
    int64_t params, grads, optimizer, activations, reserve;
    int64_t total; /* params + grads + optimizer + activations (reserve is held out of capacity) */
    int64_t state; /* params + grads + optimizer */
    int64_t activation_layers, activation_logits; /* activations = layers + logits */
    struct core_bytes_per_param bytes_per_param;
    struct core_memory_peak peak;
    /* Routed experts' share of params, grads and optimizer above (0 for a dense model). */
    int64_t expert_params, expert_grads, expert_optimizer;
    /* Offloaded state in host memory (ZeRO-Offload / ZeRO-Infinity), not in total: one GPU's
     * shard, and a node's (min(gpus_per_node, gpus) GPUs). */
    struct core_host_bytes {
        int64_t params, grads, optimizer, total;
    } host, host_node;
    /* Fine-tuning with adapters: the adapters' share of params, grads and optimizer above (all
     * 0 under finetune full), their parameter count and the frozen base's resident bytes. */
    struct core_adapter_bytes {
        int64_t params, grads, optimizer, trainable, frozen;
    } adapters;
};

struct core_fit {
    bool fits;          /* judged <= capacity */
    bool judged_peak;   /* a framework profile: judged = the device peak; else the ledger total */
    int64_t capacity;   /* memory_gb - reserve_gb, bytes */
    int64_t headroom;   /* capacity - judged (negative when it does not fit) */
    double utilization; /* judged / capacity */
    enum core_bottleneck bottleneck;
    int64_t min_gpus; /* smallest G (multiple of tp*pp) that fits, judged as fits is; 0 = none */
    int64_t min_gpus_state_only; /* same, activations ignored; 0 = none does */
    int64_t max_batch; /* largest micro-batch that fits at this G, judged as fits is; 0 = none */
};

struct core_runtime {
    double flops; /* six_nd, model or hardware per `count` */
    double seconds, hours, days, gpu_hours;
    double tokens_per_second, tokens_per_second_per_gpu;
    double mfu;                /* the input, or achieved when tokens_per_second is given */
    bool mfu_measured;         /* mfu was derived from tokens_per_second */
    double peak_flops_per_gpu; /* FLOP/s */
    double global_batch_tokens;
    double steps;        /* ceil(D / global_batch_tokens) */
    double step_seconds; /* seconds / steps */
    double cost_usd;     /* < 0 when no price was given */
    /* What the step-time model predicts for the whole run, whatever mfu says: steps times the
     * predicted step (performance.step_seconds). */
    double predicted_seconds, predicted_days, predicted_gpu_hours;
    double predicted_cost_usd; /* < 0 when no price was given */
};

/* Exposed seconds per optimizer step, per term; they add up to step_seconds. */
struct core_perf_breakdown {
    double compute;      /* GEMMs (+ fused attention) forward and backward, at their efficiency */
    double memory_bound; /* element-wise kernels, materialized attention scores, the loss */
    double recompute;    /* the re-run forward under checkpointing (all its parts) */
    double tp_comm;      /* tensor-parallel all-reduces / reduce-scatters + all-gathers */
    double cp_comm;      /* context-parallel K/V ring exchange not hidden by attention */
    double pp_bubble;    /* pipeline fill and drain: (pp - 1) / v micro-batch times */
    double pp_comm;      /* stage-to-stage activation and gradient sends */
    double dp_comm;      /* data-parallel gradient / ZeRO traffic not hidden by compute */
    double optimizer;    /* the optimizer step over the local shard, memory-bound */
    double ep_comm;      /* MoE token all-to-alls (dispatch, combine) over the ep group */
    double offload;      /* PCIe traffic of offloaded state and the CPU optimizer step */
    double moe_host;     /* host time a MoE layer's device-to-host sync exposes (perf.c) */
};

struct core_perf {
    double step_seconds; /* sum of the breakdown */
    double mfu;          /* model FLOPs (6 N_active + 12 L s a h_d per token) / (G peak step) */
    double hfu;          /* as mfu, plus the recompute FLOPs */
    double tokens_per_second_per_gpu;
    double model_tflops_per_gpu; /* model FLOPs per second per GPU, TFLOP/s */
    struct core_perf_breakdown breakdown;
    const char *bottleneck; /* static: the largest term other than compute ("tp_comm", ...) */
    /* Mean absolute relative error of step_seconds on measured runs of this GPU generation that
     * informed no constant (core_perf_validation, validation.h); < 0 = none measured: null. */
    double expected_error;
};

/* Names of the breakdown terms in struct order ("compute", "memory_bound", ...). */
#define CORE_PERF_TERMS 12
extern const char *const core_perf_term_names[CORE_PERF_TERMS];

#define CORE_MAX_NOTES   12
#define CORE_MAX_CHANGES 3

enum core_value_kind { CORE_VALUE_INT, CORE_VALUE_STRING, CORE_VALUE_BOOL, CORE_VALUE_REAL };

/* One suggested input change: {"gpus": 2}, {"checkpointing": "full"}. */
struct core_change {
    const char *input; /* API input name, static */
    enum core_value_kind kind;
    int64_t int_value;
    const char *string_value; /* static */
    bool bool_value;
    double real_value;
};

struct core_note {
    const char *code; /* stable machine code, static: "attention_term_material" */
    char message[CORE_MESSAGE_MAX];
    int change_count;
    struct core_change changes[CORE_MAX_CHANGES]; /* advice only */
};

struct core_result {
    struct core_resolved resolved;
    struct core_flops flops;
    struct core_memory memory;
    struct core_fit fit;
    struct core_runtime runtime;
    struct core_perf performance; /* the step-time model (CORE_PART_RUNTIME) */
    int warning_count;
    struct core_note warnings[CORE_MAX_NOTES];
    int advice_count;
    struct core_note advice[CORE_MAX_NOTES];
};

/*
 * Evaluate everything for one input. Returns CORE_OK and fills *out, or CORE_EINVAL /
 * CORE_ERANGE with *problems listing each offending field (out is then unspecified).
 * Both pointers are borrowed; nothing is allocated. Cost: a few microseconds.
 */
enum core_status core_evaluate(const struct core_input *in, struct core_result *out,
                               struct core_problems *problems);

/* The parts of a result a caller needs: a route computes only what it returns (FLOPs, the
 * resolved inputs and the warnings are always there; FIT implies MEMORY and adds the advice).
 * Parts not asked for are left zeroed. core_evaluate() is core_evaluate_parts(CORE_PART_ALL). */
enum core_part {
    CORE_PART_FLOPS = 0, /* always computed: cheap, and the measured-throughput check needs it */
    CORE_PART_MEMORY = 1u << 0,
    CORE_PART_FIT = 1u << 1,
    CORE_PART_RUNTIME = 1u << 2, /* implies MEMORY: the runtime warns when the ledger overflows */
    CORE_PART_ALL = CORE_PART_MEMORY | CORE_PART_FIT | CORE_PART_RUNTIME,
};
enum core_status core_evaluate_parts(const struct core_input *in, unsigned parts,
                                     struct core_result *out, struct core_problems *problems);

/* ---------------------------------------------------------------------------------------------
 * The step-time model's output (core/perf.h computes it; docs/model.md, "Step time"). Declared
 * here because a plan carries one.
 * ------------------------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------------------------
 * Planner (core/plan.c; docs/planner.md): the inverse question. Given a model, tokens and
 * constraints, search GPU type x G x tp x pp (x cp x virtual stages under the step-time model)
 * x ZeRO stage x checkpointing x micro-batch for the layouts that fit, rank them by cost (GPU-hours
 * when no price is given) and keep the Pareto front of (days, cost). Pure like the rest of core:
 * the caller passes the arrays the plans go into, nothing is allocated, and each candidate is
 * priced with the ledger and activation functions core_evaluate() uses, so /fit of a plan's
 * configuration reproduces its memory.
 * ------------------------------------------------------------------------------------------- */

#define CORE_PLAN_GPU_MAX       32      /* catalog rows a request can name (the catalog has 22) */
#define CORE_PLAN_TOP           20      /* plans a reply lists */
#define CORE_PLAN_PARETO_MAX    64      /* Pareto points kept */
#define CORE_PLAN_GPUS_MAX      65536   /* bound on gpus_max */
#define CORE_PLAN_GPUS_DEFAULT  4096    /* gpus_max when not given */
#define CORE_PLAN_PP_MAX        64      /* pipeline stages searched: divisors of L up to this */
#define CORE_PLAN_EP_MAX        256     /* expert parallelism searched: powers of 2 dividing E */
#define CORE_PLAN_NODE_GPUS     8       /* G steps by whole 8-GPU nodes beyond one node */
#define CORE_PLAN_CROSS_NODE_TP 0.7     /* assumed-MFU model: factor when a tp group spans nodes */
#define CORE_PLAN_CP_MAX        32      /* predicted model: context parallelism searched up to */
#define CORE_PLAN_CP_MIN_TOKENS 1024    /* ... keeping at least this many tokens per cp rank */
#define CORE_PLAN_VIRTUAL_MAX   16      /* predicted model: interleaved stages searched up to */
#define CORE_PLAN_GLOBAL_BATCH  4194304 /* default global batch, tokens (2^22, ~4M: Llama 2) */
#define CORE_PLAN_DEADLINE_MAX  1e6     /* days */
#define CORE_PLAN_BUDGET_MAX    1e15    /* USD */
#define CORE_PLAN_REASONS       6

struct core_plan_input {
    /* Model, training and precision inputs as for core_evaluate(). The cluster fields the
     * planner chooses (gpus, gpu, tp, pp, cp, virtual_stages, zero_stage, checkpointing,
     * batch, sequence_parallel) are ignored; global_batch and global_batch_tokens 0 mean
     * max(CORE_PLAN_GLOBAL_BATCH, seq_len) tokens; memory_gb, peak_tflops, gpus_per_node and
     * the link bandwidths, when given, override every candidate GPU's catalog figure. mfu
     * defaults to CORE_MFU_PREDICTED (core_plan_input_init): the step-time model prices every
     * candidate; a number keeps the assumed-MFU model (docs/planner.md). */
    struct core_input base;
    double deadline_days; /* 0 = none */
    double budget_usd;    /* < 0 = none (default -1) */
    int64_t gpus_max;     /* 1..CORE_PLAN_GPUS_MAX, default CORE_PLAN_GPUS_DEFAULT */
    int gpu_count;        /* 0 = every catalog GPU that supports the precision */
    int gpus[CORE_PLAN_GPU_MAX];
    /* $/GPU-hour by catalog index; < 0 = no price (default). When any searched GPU has a
     * price, GPUs without one are left out (they cannot be ranked by cost). */
    double usd_per_gpu_hour[CORE_PLAN_GPU_MAX];
};

void core_plan_input_init(struct core_plan_input *in);

/* One plan: a layout and its best settings (the fastest for that layout). */
struct core_plan {
    int gpu; /* catalog index */
    int64_t gpus, tp, pp, cp, dp, batch;
    int64_t ep, etp; /* the experts' grid (MoE parallel folding); 1 and tp for a dense model */
    int64_t virtual_stages; /* interleaved 1F1B stages per rank (1 = plain 1F1B) */
    /* Megatron-LM's uneven split (decoder_first/last_pipeline_num_layers) where pp does not
     * divide the layers; 0 = not set (an even split, or the middle ranks' count). */
    int64_t first_stage_layers, last_stage_layers;
    int zero_stage;
    enum core_checkpointing checkpointing;
    bool sequence_parallel;
    bool predicted;             /* time from the step-time model (else the assumed MFU) */
    int64_t micro_batches;      /* m: micro-batches per pipeline per optimizer step */
    double global_batch;        /* m * batch * dp sequences per optimizer step */
    double global_batch_tokens; /* global_batch * seq_len (<= the requested global batch) */
    double steps;               /* ceil(tokens / global_batch_tokens) */
    /* Predicted: the model's MFU. Assumed: base x recompute x bubble x tensor, the factors
     * below (all 0 when predicted). */
    double mfu;
    double recompute_factor, bubble_factor, tensor_factor;
    /* The step-time model for this layout: its time when predicted, for reference otherwise. */
    struct core_perf performance;
    double seconds, days, gpu_hours;
    double usd_per_gpu_hour;                                        /* < 0 = no price */
    double cost_usd;                                                /* < 0 = no price */
    int64_t params, grads, optimizer, activations, total, capacity; /* bytes per GPU */
    /* What the verdict judged against capacity, as /fit judges the config: the ledger total
     * (generic) or the device peak (a framework profile; capacity is then the driver's usable
     * bytes less reserve_gb). */
    int64_t judged;
};

struct core_plan_reason {
    const char *field; /* the constraint: "memory", "deadline_days", "budget_usd", "gpu" */
    char message[CORE_MESSAGE_MAX];
};

struct core_plan_summary {
    struct core_resolved resolved; /* the base inputs, resolved (shape, N, precisions) */
    bool ranked_by_cost;           /* prices given: rank by cost_usd, else by gpu_hours */
    int plan_count, pareto_count;
    bool pareto_truncated;           /* the front had more points than the caller's array */
    int64_t evaluated;               /* configurations priced (memory and time) */
    int64_t fitting;                 /* of those, fitting in memory */
    int64_t feasible;                /* of those, meeting the deadline and the budget too */
    int gpus_searched;               /* GPU types searched */
    int searched[CORE_PLAN_GPU_MAX]; /* their catalog indexes */
    int reason_count;                /* why plans is empty (0 when it is not) */
    struct core_plan_reason reasons[CORE_PLAN_REASONS];
};

/*
 * Search. plans (plans_max, e.g. CORE_PLAN_TOP) receives the best plans sorted by cost (or
 * GPU-hours), pareto (pareto_max) the non-dominated (days, cost) points sorted by days. All
 * pointers borrowed. CORE_EINVAL / CORE_ERANGE with problems as core_evaluate() for inputs
 * that cannot be planned; an empty result is CORE_OK with reasons.
 */
enum core_status core_plan_search(const struct core_plan_input *in, struct core_plan *plans,
                                  int plans_max, struct core_plan *pareto, int pareto_max,
                                  struct core_plan_summary *out, struct core_problems *problems);

/* The time model's efficiency: mfu x recompute x bubble x tensor, where bubble =
 * 1 - (pp - 1)/(m + pp - 1) and tensor = CORE_PLAN_CROSS_NODE_TP when tp > CORE_PLAN_NODE_GPUS. */
double core_plan_effective_mfu(double mfu, double recompute_factor, int64_t pp, int64_t m,
                               int64_t tp);

#endif
