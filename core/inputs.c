/*
 * inputs.c - the input table (see inputs.h): every input's kind, bounds, default, unit and doc.
 *
 * Rows are in the order the API documents them. The bounds keep every product the model forms
 * inside int64 and finite doubles (docs/model.md, "Inputs"); defaults reproduce the lesson's
 * calculator (7B, bf16 AdamW, T 512, B 1, one 80 GB H100, 50 % MFU).
 */
#include <math.h>
#include <string.h>

#include "core.h"
#include "inputs.h"
#include "serve.h"
#include "serve_timing.h"

/* Enums are stored through an int; C only promises "some integer type", so check it here. */
_Static_assert(sizeof(enum core_precision) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_optimizer) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_checkpointing) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_attention_flops) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_count) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_flag) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_framework) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_memory_metric) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_offload) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_moe_dispatcher) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_finetune) == sizeof(int), "enum size");
_Static_assert(CORE_MOE_EXPERTS_MAX == CORE_EXPERTS_MAX, "one bound on experts");
_Static_assert(offsetof(struct core_plan_input, base) == 0, "plan rows share offsets");
_Static_assert(offsetof(struct core_serve_input, base) == 0, "serve rows share offsets");
_Static_assert(sizeof(enum core_engine) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_engine_version) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_quant) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_kv_dtype) == sizeof(int), "enum size");

/* Gradients are kept in bf16, fp16 or fp32 (an fp8 run keeps bf16 gradients): the first three
 * precisions, in enum order. */
static const char *const grad_precision_names[] = {"bf16", "fp16", "fp32"};

/* Words a number row also takes (stored as -index: "predicted" is 0). */
static const char *const mfu_words[] = {"predicted"};

#define AT(member)  offsetof(struct core_input, member)
#define PAT(member) offsetof(struct core_plan_input, member)
#define CHOICES(a)  a, (int)(sizeof(a) / sizeof((a)[0]))
#define NO_CHOICES  NULL, 0
/* The echo column (enum core_input_echo): where the resolved value is, or that it is in shape. */
#define ECHO(member) CORE_ECHO_RESOLVED, offsetof(struct core_resolved, member)
#define IN_SHAPE     CORE_ECHO_SHAPE, 0
#define NO_ECHO      CORE_ECHO_NONE, 0

/* Row builders: one per kind of value, so each row reads as name, bounds, default, unit, doc. */
#define INT_ROW(name, member, lo, hi, def, unset, unit, ddoc, doc, echo)                           \
    {                                                                                              \
        name, CORE_KIND_INT, CORE_STORE_I64, AT(member), lo, hi, false, def, unset, false, false,  \
            false, NO_CHOICES, unit, ddoc, doc, echo                                               \
    }
#define SIZE_ROW(name, store, member, lo, hi, def, unset, unit, ddoc, doc, echo)                   \
    {                                                                                              \
        name, CORE_KIND_SIZE, store, AT(member), lo, hi, false, def, unset, false, false, false,   \
            NO_CHOICES, unit, ddoc, doc, echo                                                      \
    }
#define REAL_ROW(name, member, lo, hi, excl, def, unset, nullable, unit, ddoc, doc, echo)          \
    {                                                                                              \
        name, CORE_KIND_REAL, CORE_STORE_DOUBLE, AT(member), lo, hi, excl, def, unset, nullable,   \
            false, false, NO_CHOICES, unit, ddoc, doc, echo                                        \
    }
#define FLAG_ROW(name, member, ddoc, doc, echo)                                                    \
    {                                                                                              \
        name, CORE_KIND_FLAG, CORE_STORE_INT, AT(member), 0, 0, false, CORE_FLAG_AUTO, true,       \
            false, false, false, NO_CHOICES, "", ddoc, doc, echo                                   \
    }
#define CHOICE_ROW(name, member, names, def, unset, ddoc, doc, echo)                               \
    {                                                                                              \
        name, CORE_KIND_CHOICE, CORE_STORE_INT, AT(member), 0, 0, false, def, unset, false, false, \
            false, CHOICES(names), "", ddoc, doc, echo                                             \
    }

/* clang-format off */
const struct core_input_spec core_inputs[] = {
    {"model", CORE_KIND_PRESET, CORE_STORE_INT, AT(preset), 0, 0, false, -1, true, true, false,
     false, NO_CHOICES, "",
     "none: the shape comes from layers and hidden, or is inferred from params",
     "model preset id (GET /models); fills the architecture and N", ECHO(shape.preset)},
    SIZE_ROW("params", CORE_STORE_I64, params, 1, CORE_PARAMS_MAX, 0, true, "parameters",
             "the architecture's count, else 7e9", "N, total parameters", ECHO(params)),
    SIZE_ROW("active_params", CORE_STORE_I64, active_params, 1, CORE_PARAMS_MAX, 0, true,
             "parameters", "params", "parameters active per token (mixture-of-experts); FLOPs use it",
             ECHO(active_params)),
    INT_ROW("layers", layers, 1, CORE_LAYERS_MAX, 0, true, "layers",
            "the preset's, else inferred from params", "L, Transformer layers", IN_SHAPE),
    INT_ROW("hidden", hidden, 1, CORE_HIDDEN_MAX, 0, true, "elements",
            "the preset's, else inferred from params", "d, hidden size", IN_SHAPE),
    INT_ROW("heads", heads, 1, CORE_HEADS_MAX, 0, true, "heads",
            "the preset's, else hidden/128 when it divides, else hidden/64, else 1",
            "a, attention heads", IN_SHAPE),
    INT_ROW("kv_heads", kv_heads, 1, CORE_HEADS_MAX, 0, true, "heads", "heads",
            "k, key/value heads (GQA when k < a); must divide heads", IN_SHAPE),
    INT_ROW("head_dim", head_dim, 1, CORE_HIDDEN_MAX, 0, true, "elements", "hidden/heads",
            "h_d, size of one attention head", IN_SHAPE),
    INT_ROW("ffn_hidden", ffn_hidden, 1, CORE_FFN_HIDDEN_MAX, 0, true, "elements",
            "4*hidden, or 256*ceil((8*hidden/3)/256) when gated_mlp", "f, MLP inner size",
            IN_SHAPE),
    INT_ROW("vocab", vocab, 1, CORE_VOCAB_MAX, 0, true, "tokens", "the preset's, else 32000",
            "V, vocabulary size", IN_SHAPE),
    FLAG_ROW("gated_mlp", gated_mlp, "the preset's, else false",
             "SwiGLU-style gated MLP (3*d*f weights instead of 2*d*f)", IN_SHAPE),
    FLAG_ROW("tied_embeddings", tied_embeddings, "the preset's, else false",
             "input and output embeddings shared (V*d once instead of twice)", IN_SHAPE),
    /* A model the user brings: a Hugging Face config, mixture-of-experts and offload. */
    {"config", CORE_KIND_OBJECT, CORE_STORE_BOOL, AT(config_given), 0, 0, false, 0, true, false,
     false, false, NO_CHOICES, "", "none",
     "a Hugging Face config.json object (POST only); sets the architecture and N", IN_SHAPE},
    INT_ROW("experts", experts, 0, CORE_MOE_EXPERTS_MAX, -1, true, "experts",
            "the preset's or config's, else 0 (dense)",
            "E, routed experts per MoE layer; 0 = a dense model", IN_SHAPE),
    INT_ROW("experts_per_token", experts_per_token, 1, CORE_MOE_EXPERTS_MAX, 0, true, "experts",
            "the preset's or config's", "top-k, routed experts each token uses; <= experts",
            IN_SHAPE),
    INT_ROW("shared_experts", shared_experts, 0, CORE_MOE_EXPERTS_MAX, -1, true, "experts",
            "the preset's or config's, else 0", "experts every token uses (DeepSeek, Qwen2-MoE)",
            IN_SHAPE),
    INT_ROW("moe_ffn_hidden", moe_ffn_hidden, 1, CORE_FFN_HIDDEN_MAX, 0, true, "elements",
            "the preset's or config's, else ffn_hidden", "one routed expert's MLP inner size",
            IN_SHAPE),
    INT_ROW("moe_router_num_groups", moe_router_num_groups, 0, CORE_MOE_EXPERTS_MAX, -1, true,
            "groups", "the preset's or config's (n_group), else 0",
            "group-limited routing (Megatron-Core's --moe-router-num-groups, DeepSeek's "
            "node-limited routing): the experts form this many equal groups; 0 = none",
            IN_SHAPE),
    INT_ROW("moe_router_group_topk", moe_router_group_topk, 0, CORE_MOE_EXPERTS_MAX, -1, true,
            "groups", "the preset's or config's (topk_group), else 0",
            "groups each token's experts are chosen from (--moe-router-group-topk); "
            "<= moe_router_num_groups and experts_per_token",
            IN_SHAPE),
    INT_ROW("dense_layers", dense_layers, 0, CORE_LAYERS_MAX, -1, true, "layers",
            "the preset's or config's, else 0", "leading layers with a dense MLP; < layers",
            IN_SHAPE),
    INT_ROW("sliding_window", sliding_window, 0, CORE_SEQ_LEN_MAX, -1, true, "tokens",
            "the preset's or config's, else 0 (none)",
            "sliding-window attention: keys a sliding layer attends (itself included); 0 = full "
            "attention in every layer; a model without a layer pattern slides on every layer",
            IN_SHAPE),
    INT_ROW("sliding_window_pattern", sliding_window_pattern, 0, CORE_LAYER_PERIOD_MAX, -1, true,
            "layers", "the preset's or config's",
            "which layers slide: P >= 1 makes layer i full attention when (i + 1) mod P = 0 and "
            "the others sliding (2 alternates, Gemma 2 / GPT-OSS; 6 is Gemma 3); 0 = every layer",
            IN_SHAPE),
    {"ep", CORE_KIND_INT, CORE_STORE_I64, AT(ep), 1, CORE_PARALLEL_MAX, false, 1, false, false,
     false, true, NO_CHOICES, "GPUs", NULL,
     "expert-parallel size: routed experts split over ep ranks; divides experts, and etp*ep*pp "
     "divides gpus (MoE parallel folding: ep may exceed the dense dp)",
     ECHO(ep)},
    {"etp", CORE_KIND_INT, CORE_STORE_I64, AT(etp), 1, CORE_PARALLEL_MAX, false, 0, true, false,
     false, true, NO_CHOICES, "GPUs", "tp (Megatron-LM's default)",
     "expert tensor-parallel size: each routed expert split over etp ranks; the experts' grid "
     "etp*ep*edp = tp*cp*dp",
     ECHO(etp_used)},
    INT_ROW("mtp_layers", mtp_layers, 0, CORE_LAYERS_MAX, 0, false, "layers", NULL,
            "multi-token prediction layers (DeepSeek-V3: 1) on the last pipeline stage: their "
            "weights, FLOPs and activations",
            ECHO(mtp_layers)),
    CHOICE_ROW("moe_dispatcher", moe_dispatcher, core_moe_dispatcher_names, CORE_MOE_ALLTOALL,
               false, NULL,
               "how MoE tokens reach their experts: alltoall (NCCL, one copy per expert), deepep "
               "or hybridep (one copy per remote node, forwarded over NVLink)",
               ECHO(moe_dispatcher)),
    {"moe_comm_overlap", CORE_KIND_BOOL, CORE_STORE_BOOL, AT(moe_comm_overlap), 0, 0, false, 0,
     false, false, false, false, NO_CHOICES, "", NULL,
     "expert all-to-all overlapped with another micro-batch's compute "
     "(Megatron --overlap-moe-expert-parallel-comm, DeepSeek DualPipe)", ECHO(moe_comm_overlap)},
    REAL_ROW("moe_load_imbalance", moe_load_imbalance, 1, CORE_MOE_IMBALANCE_MAX, false, 1, false,
             false, "ratio", NULL,
             "tokens on the busiest expert rank over the mean; 1 = force-balanced routing",
             ECHO(moe_load_imbalance)),
    CHOICE_ROW("offload_optimizer", offload_optimizer, core_offload_names, CORE_OFFLOAD_NONE, false,
               NULL, "optimizer state (master weights, moments) in host memory (ZeRO-Offload)",
               ECHO(offload_optimizer)),
    CHOICE_ROW("offload_params", offload_params, core_offload_names, CORE_OFFLOAD_NONE, false, NULL,
               "16-bit weights in host memory (ZeRO-Infinity); needs zero_stage 3",
               ECHO(offload_params)),
    {"batch", CORE_KIND_INT, CORE_STORE_I64, AT(batch), 1, CORE_BATCH_MAX, false, 1, false,
     false, false, true, NO_CHOICES, "sequences", NULL, "b, micro-batch per GPU", ECHO(batch)},
    INT_ROW("seq_len", seq_len, 1, CORE_SEQ_LEN_MAX, 512, false, "tokens", NULL,
            "T (s), sequence length", ECHO(seq_len)),
    SIZE_ROW("tokens", CORE_STORE_DOUBLE, tokens, 1, CORE_TOKENS_MAX, 1.4e12, false, "tokens",
             NULL, "D, training tokens", ECHO(tokens)),
    CHOICE_ROW("precision", precision, core_precision_names, CORE_PREC_BF16, false, NULL,
               "training precision: bf16/fp16/fp8 mixed precision, fp32 on tf32 units",
               ECHO(precision)),
    CHOICE_ROW("grad_precision", grad_precision, grad_precision_names, -1, true,
               "as the weights (bf16 for fp8)", "gradient precision", ECHO(grad_precision)),
    FLAG_ROW("master_weights", master_weights, "true for bf16/fp16/fp8, false for fp32",
             "keep an fp32 master copy of the weights (4 bytes/parameter)", ECHO(master_weights)),
    CHOICE_ROW("optimizer", optimizer, core_optimizer_names, CORE_OPT_ADAMW, false, NULL,
               "optimizer; sets the moment bytes per parameter", ECHO(optimizer)),
    {"checkpointing", CORE_KIND_CHOICE, CORE_STORE_INT, AT(checkpointing), 0, 0, false,
     CORE_CKPT_NONE, false, false, true, true, CHOICES(core_checkpointing_names), "", NULL,
     "activation checkpointing (Korthikanti et al. 2022); true = full, false = none",
     ECHO(checkpointing)},
    {"recompute_modules", CORE_KIND_TEXT, CORE_STORE_TEXT, AT(recompute_modules), 0, 0, false, 0,
     true, true, false, false, NO_CHOICES, "", "core_attn (Megatron-LM's default)",
     "what checkpointing selective recomputes (Megatron-LM's --recompute-modules): core_attn, "
     "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, separated by commas",
     ECHO(recompute_text)},
    {"cuda_graph_modules", CORE_KIND_TEXT, CORE_STORE_TEXT, AT(cuda_graph_modules), 0, 0, false, 0,
     true, true, false, false, NO_CHOICES, "", "none (Megatron-Core's --cuda-graph-impl none)",
     "what each layer replays from a CUDA graph (Megatron-Core's --cuda-graph-impl "
     "transformer_engine --cuda-graph-modules): attn, moe_router, moe_preprocess, separated by "
     "commas; takes the captured modules' launch time out of moe_host",
     ECHO(cuda_graph_text)},
    FLAG_ROW("flash_attention", flash_attention,
             "true under megatron and torchtitan (their default attention), else false",
             "attention scores not materialized (drops the 5*a*s^2*b activation term)",
             ECHO(flash_attention)),
    CHOICE_ROW("attention_flops", attention_flops, core_attention_flops_names, CORE_ATTN_FULL,
               false, NULL, "attention FLOPs convention: full (PaLM, the lesson) or causal (halved)",
               ECHO(attention_flops)),
    {"gpus", CORE_KIND_INT, CORE_STORE_I64, AT(gpus), 1, CORE_GPUS_MAX, false, 1, false, false,
     false, true, NO_CHOICES, "GPUs", NULL, "G, number of GPUs; a multiple of tp*pp", ECHO(gpus)},
    {"gpu", CORE_KIND_GPU, CORE_STORE_INT, AT(gpu), 0, 0, false, CORE_GPU_DEFAULT, false, false,
     false, false, NO_CHOICES, "", NULL, "GPU catalog id (GET /gpus); sets memory and peak",
     ECHO(gpu)},
    {"zero_stage", CORE_KIND_INT, CORE_STORE_INT, AT(zero_stage), 0, 3, false, 3, false, false,
     false, true, NO_CHOICES, "", NULL,
     "ZeRO stage: 0 none, 1 optimizer, 2 +gradients, 3 +weights (FSDP)", ECHO(zero_stage)},
    {"tp", CORE_KIND_INT, CORE_STORE_I64, AT(tp), 1, CORE_PARALLEL_MAX, false, 1, false, false,
     false, true, NO_CHOICES, "GPUs", NULL, "t, tensor-parallel size", ECHO(tp)},
    {"pp", CORE_KIND_INT, CORE_STORE_I64, AT(pp), 1, CORE_PARALLEL_MAX, false, 1, false, false,
     false, true, NO_CHOICES, "GPUs", NULL, "p, pipeline-parallel size", ECHO(pp)},
    {"cp", CORE_KIND_INT, CORE_STORE_I64, AT(cp), 1, CORE_PARALLEL_MAX, false, 1, false, false,
     false, true, NO_CHOICES, "GPUs", NULL,
     "context-parallel size: the sequence split over cp ranks; must divide seq_len", ECHO(cp)},
    {"virtual_stages", CORE_KIND_INT, CORE_STORE_I64, AT(virtual_stages), 1, CORE_LAYERS_MAX, false,
     1, false, false, false, true, NO_CHOICES, "stages", NULL,
     "interleaved 1F1B stages per pipeline rank (1 = plain 1F1B); must divide the layers per stage",
     ECHO(virtual_stages)},
    /* The pipeline split: /plan chooses its own (even, or Megatron's first/last where pp does not
     * divide the layers: docs/planner.md), so these are planned rows. */
    {"decoder_first_pipeline_num_layers", CORE_KIND_INT, CORE_STORE_I64, AT(first_stage_layers), 1,
     CORE_LAYERS_MAX, false, 0, true, true, false, true, NO_CHOICES, "layers", "an even split",
     "layers on the first pipeline rank (Megatron-LM); the rest split evenly over the middle "
     "ranks; a multiple of virtual_stages",
     ECHO(first_stage_layers)},
    {"decoder_last_pipeline_num_layers", CORE_KIND_INT, CORE_STORE_I64, AT(last_stage_layers), 1,
     CORE_LAYERS_MAX, false, 0, true, true, false, true, NO_CHOICES, "layers", "an even split",
     "layers on the last pipeline rank (Megatron-LM); a multiple of virtual_stages",
     ECHO(last_stage_layers)},
    {"pipeline_model_parallel_layout", CORE_KIND_TEXT, CORE_STORE_TEXT, AT(pipeline_layout), 0, 0,
     false, 0, true, true, false, true, NO_CHOICES, "", "pp x virtual_stages stages, split as above",
     "Megatron-LM's flexible layout: stages split by |, E embedding, t decoder layer, m MTP "
     "layer, L loss, (...)*n and x*n repeat; e.g. Et|(tt|)*30mL",
     ECHO(layout_text)},
    {"account_for_embedding_in_pipeline_split", CORE_KIND_BOOL, CORE_STORE_BOOL,
     AT(embedding_in_split), 0, 0, false, 0, false, false, false, true, NO_CHOICES, "", NULL,
     "the embedding counts as one layer of the pipeline split (Megatron-LM)",
     ECHO(embedding_in_split)},
    {"account_for_loss_in_pipeline_split", CORE_KIND_BOOL, CORE_STORE_BOOL, AT(loss_in_split), 0,
     0, false, 0, false, false, false, true, NO_CHOICES, "", NULL,
     "the loss counts as one layer of the pipeline split (Megatron-LM)", ECHO(loss_in_split)},
    {"sequence_parallel", CORE_KIND_FLAG, CORE_STORE_INT, AT(sequence_parallel), 0, 0, false,
     CORE_FLAG_AUTO, true, false, false, true, NO_CHOICES, "", "true when tp > 1",
     "Megatron sequence parallelism (activations divided by t)", ECHO(sequence_parallel)},
    {"tp_comm_overlap", CORE_KIND_FLAG, CORE_STORE_INT, AT(tp_comm_overlap), 0, 0, false,
     CORE_FLAG_AUTO, true, false, false, false, NO_CHOICES, "",
     "true with sequence parallelism on a GPU with a scale-up link",
     "tensor-parallel communication overlapped with the GEMMs (Megatron --tp-comm-overlap)",
     ECHO(tp_comm_overlap)},
    {"dp_comm_overlap", CORE_KIND_FLAG, CORE_STORE_INT, AT(dp_comm_overlap), 0, 0, false,
     CORE_FLAG_AUTO, true, false, false, false, NO_CHOICES, "", "true",
     "data-parallel gradient and parameter communication overlapped with compute",
     ECHO(dp_comm_overlap)},
    {"gpus_per_node", CORE_KIND_INT, CORE_STORE_I64, AT(gpus_per_node), 1, CORE_NODE_GPUS_MAX,
     false, 0, true, false, false, false, NO_CHOICES, "GPUs", "the catalog value of gpu",
     "GPUs joined by the scale-up link (NVLink domain)", ECHO(gpus_per_node)},
    REAL_ROW("intra_node_gbs", intra_node_gbs, 0, CORE_GBS_MAX, true, 0, true, false, "GB/s",
             "the catalog value of gpu", "scale-up bandwidth per GPU per direction",
             ECHO(intra_node_gbs)),
    REAL_ROW("inter_node_gbs", inter_node_gbs, 0, CORE_GBS_MAX, true, 0, true, false, "GB/s",
             "the catalog value of gpu", "network bandwidth per GPU per direction",
             ECHO(inter_node_gbs)),
    REAL_ROW("memory_gb", memory_gb, CORE_MEMORY_GB_MIN, CORE_MEMORY_GB_MAX, false, 0, true,
             true, "GB", "the catalog value of gpu", "per-GPU memory (decimal GB, 1e9 bytes)",
             ECHO(memory_gb)),
    REAL_ROW("peak_tflops", peak_tflops, CORE_PEAK_TFLOPS_MIN, CORE_PEAK_TFLOPS_MAX, false, 0,
             true, false, "TFLOP/s", "the catalog value of gpu for precision",
             "peak dense throughput per GPU", ECHO(peak_tflops)),
    REAL_ROW("reserve_gb", reserve_gb, 0, CORE_MEMORY_GB_MAX, false, 0, false, false, "GB", NULL,
             "per-GPU memory held back from capacity", ECHO(reserve_gb)),
    {"mfu", CORE_KIND_REAL, CORE_STORE_DOUBLE, AT(mfu), CORE_MFU_MIN, 1, false, 0.5, false,
     false, false, false, CHOICES(mfu_words), "fraction of peak", NULL,
     "model FLOPs utilization assumed for the runtime, or \"predicted\" for the time model's",
     CORE_ECHO_PREDICTED, offsetof(struct core_resolved, mfu)},
    CHOICE_ROW("count", count, core_count_names, CORE_COUNT_SIX_ND, false, NULL,
               "which FLOPs the runtime divides: six_nd, model (+attention), hardware (+recompute)",
               ECHO(count)),
    REAL_ROW("usd_per_gpu_hour", usd_per_gpu_hour, 0, CORE_USD_MAX, false, -1, true, true,
             "USD per GPU-hour", "none (no cost)", "price per GPU-hour; adds runtime.cost_usd",
             ECHO(usd_per_gpu_hour)),
    {"tokens_per_second", CORE_KIND_REAL, CORE_STORE_DOUBLE, AT(tokens_per_second), 0,
     CORE_TPS_MAX, true, 0, true, true, false, true, NO_CHOICES, "tokens/s", "none",
     "measured cluster throughput; the runtime uses it and reports the achieved MFU",
     ECHO(tokens_per_second)},
    SIZE_ROW("global_batch", CORE_STORE_DOUBLE, global_batch, 1, CORE_GLOBAL_BATCH_MAX, 0, true,
             "sequences", "global_batch_tokens/seq_len when given, else batch*dp",
             "sequences per optimizer step; a multiple of batch*dp", ECHO(global_batch)),
    SIZE_ROW("global_batch_tokens", CORE_STORE_DOUBLE, global_batch_tokens, 1, CORE_TOKENS_MAX, 0,
             true, "tokens", "batch*seq_len*dp", "tokens per optimizer step across the cluster",
             ECHO(global_batch_tokens)),
    CHOICE_ROW("framework", framework, core_framework_names, CORE_FW_GENERIC, false, NULL,
               "training framework whose profile prices memory.peak (docs/frameworks.md); "
               "generic = the ledger", ECHO(framework)),
    CHOICE_ROW("loss", loss, core_loss_names, -1, true, "the framework profile's",
               "how the loss holds the logits: fp32_logits, vocab_parallel_fused, unfused_fp32, "
               "compiled, chunked, unfused_fp32_shifted", ECHO(loss)),
    {"compile", CORE_KIND_BOOL, CORE_STORE_BOOL, AT(compile), 0, 0, false, 0, false, false, false,
     false, NO_CHOICES, "", NULL,
     "Transformer blocks compiled (torch.compile): no eager fp32 norm and RoPE copies saved",
     ECHO(compile)},
    {"optimizer_in_backward", CORE_KIND_BOOL, CORE_STORE_BOOL, AT(optimizer_in_backward), 0, 0,
     false, 0, false, false, false, false, NO_CHOICES, "", NULL,
     "optimizer step fused into the backward: each gradient freed as soon as it is applied",
     ECHO(optimizer_in_backward)},
    {"activation_offload", CORE_KIND_BOOL, CORE_STORE_BOOL, AT(activation_offload), 0, 0, false,
     0, false, false, false, false, NO_CHOICES, "", NULL,
     "saved activations offloaded to CPU memory during the forward", ECHO(activation_offload)},
    CHOICE_ROW("memory_metric", memory_metric, core_memory_metric_names, CORE_METRIC_ALLOCATED,
               false, NULL,
               "statistic memory.peak reports: allocated, reserved, active (PyTorch allocator "
               "peaks) or device (nvidia-smi)", ECHO(memory_metric)),
    /* Fine-tuning with adapters (core/adapters.c). */
    CHOICE_ROW("finetune", finetune, core_finetune_names, CORE_FT_FULL, false, NULL,
               "full training, or a frozen base with LoRA, QLoRA (LoRA on an nf4 base) or DoRA "
               "adapters", ECHO(adapters.finetune)),
    INT_ROW("lora_rank", lora_rank, 1, CORE_LORA_RANK_MAX, 8, false, "rank", NULL,
            "r, the adapters' rank (ignored under finetune full)", ECHO(adapters.rank)),
    REAL_ROW("lora_alpha", lora_alpha, 0, CORE_LORA_ALPHA_MAX, false, 16, false, false, "", NULL,
             "LoRA's alpha (scale alpha/r); echoed, costs nothing", ECHO(adapters.alpha)),
    {"lora_targets", CORE_KIND_MODULES, CORE_STORE_INT, AT(lora_targets), 1, CORE_MOD_MASK_MAX,
     false, -1, true, true, false, false, NO_CHOICES, "",
     "q_proj,v_proj (PEFT's default for Llama-family models)",
     "linears the adapters wrap: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
     "down_proj, lm_head, all-linear, or torchtune's output_proj, output, w1, w2, w3, mlp",
     ECHO(adapters.targets)},
    CHOICE_ROW("base_quant", base_quant, core_base_quant_names, -1, true,
               "none, nf4 under finetune qlora",
               "frozen base's storage: none, nf4 (torchao under torchtune, bitsandbytes "
               "double-quantized elsewhere), nf4_torchao, nf4_bnb, nf4_bnb_dq, int8",
               ECHO(adapters.base_quant)),
    /* nullable: its echo is null while unset, and that posts back */
    {"optimizer_state_dtype", CORE_KIND_CHOICE, CORE_STORE_INT, AT(optimizer_state_dtype), 0, 0,
     false, -1, true, true, false, false, CHOICES(core_state_dtype_names), "",
     "the framework's: fp32 in the ledger, like the parameters under torchtune, torchtitan and "
     "hf_trainer",
     "dtype of the optimizer's moments: fp32 or bf16 (PyTorch AdamW on bf16 weights)",
     ECHO(adapters.optimizer_state_dtype)},
};

const struct core_input_spec core_plan_inputs[] = {
    {"gpu", CORE_KIND_GPUS, CORE_STORE_GPUS, PAT(gpu_count), 0, 0, false, 0, true, false, false,
     false, NO_CHOICES, "", "every catalog GPU that supports the precision",
     "GPU catalog id, or a list of them, to search", NO_ECHO},
    {"usd_per_gpu_hour", CORE_KIND_PRICES, CORE_STORE_PRICES, PAT(usd_per_gpu_hour), 0,
     CORE_USD_MAX, false, -1, true, true, false, false, NO_CHOICES, "USD per GPU-hour",
     "none (rank by GPU-hours)", "price for every GPU, or prices by GPU id; ranks by cost",
     NO_ECHO},
    {"deadline_days", CORE_KIND_REAL, CORE_STORE_DOUBLE, PAT(deadline_days), 0,
     CORE_PLAN_DEADLINE_MAX, true, 0, true, true, false, false, NO_CHOICES, "days", "none",
     "longest acceptable run", NO_ECHO},
    {"budget_usd", CORE_KIND_REAL, CORE_STORE_DOUBLE, PAT(budget_usd), 0, CORE_PLAN_BUDGET_MAX,
     false, -1, true, true, false, false, NO_CHOICES, "USD", "none",
     "largest acceptable cost (needs a price)", NO_ECHO},
    {"mfu", CORE_KIND_REAL, CORE_STORE_DOUBLE, PAT(base.mfu), CORE_MFU_MIN, 1, false,
     CORE_MFU_PREDICTED, false, false, false, false, CHOICES(mfu_words), "fraction of peak",
     "predicted",
     "\"predicted\": rank by the step-time model; a number: the assumed-MFU model", NO_ECHO},
    {"gpus_max", CORE_KIND_INT, CORE_STORE_I64, PAT(gpus_max), 1, CORE_PLAN_GPUS_MAX, false,
     CORE_PLAN_GPUS_DEFAULT, false, false, false, false, NO_CHOICES, "GPUs", NULL,
     "largest cluster searched", NO_ECHO},
};
/* clang-format on */

/* /inference's own inputs (offsets into struct core_serve_input, serve.h): the engines' knobs by
 * their own names (vLLM's, SGLang's, TensorRT-LLM's), docs/serving.md. */
#define SAT(member) offsetof(struct core_serve_input, member)
#define S_CHOICE(name, member, names, ddoc, doc)                                                   \
    {                                                                                              \
        name, CORE_KIND_CHOICE, CORE_STORE_INT, SAT(member), 0, 0, false, 0, false, false, false,  \
            false, CHOICES(names), "", ddoc, doc, NO_ECHO                                          \
    }
#define S_INT(name, member, hi, unit, ddoc, doc)                                                   \
    {                                                                                              \
        name, CORE_KIND_INT, CORE_STORE_I64, SAT(member), 1, hi, false, 0, true, true, false,      \
            false, NO_CHOICES, unit, ddoc, doc, NO_ECHO                                            \
    }
#define S_FRACTION(name, member, def, unset, ddoc, doc)                                            \
    {                                                                                              \
        name, CORE_KIND_REAL, CORE_STORE_DOUBLE, SAT(member), 0, 1, true, def, unset, unset,       \
            false, false, NO_CHOICES, "fraction", ddoc, doc, NO_ECHO                               \
    }

static const char *const concurrency_words[] = {"max"};

/* clang-format off */
const struct core_input_spec core_serve_inputs[] = {
    S_CHOICE("engine", engine, core_engine_names, NULL,
             "serving engine whose start-up sizing is modelled: vllm (V1), vllm_v0, sglang, "
             "trtllm, llama.cpp"),
    S_CHOICE("engine_version", engine_version, core_engine_version_names, NULL,
             "release of the engine's sizing code: current (its current code); vllm_0.4 (vLLM V0 "
             "of mid 2024 to 0.6.3: the profile counts the allocator's reserved memory); "
             "vllm_0.2 (vLLM v0.2.x: also the CUDA context, AWQ split-K buffers, per-expert MoE)"),
    S_CHOICE("quantization", quantization, core_quant_names, NULL,
             "weight format: none (precision), fp8, int8 (W8A8), awq, gptq (4-bit), bnb_nf4, "
             "bnb_nf4_dq, torchao_nf4, gguf_q8_0, gguf_q4_0, gguf_q4_k_m, gguf_q5_k_m, mxfp4 (experts)"),
    S_INT("quant_group_size", quant_group_size, CORE_SERVE_GROUP_MAX, "weights",
          "the format's (128 for awq and gptq)", "weights sharing one scale (awq, gptq)"),
    S_CHOICE("kv_cache_dtype", kv_cache_dtype, core_kv_dtype_names, NULL,
             "KV cache element type: auto (the model's dtype) or fp8 (fp8_e4m3, fp8_e5m2)"),
    S_FRACTION("gpu_memory_utilization", gpu_memory_utilization, 0.9, false, NULL,
               "vLLM: fraction of the GPU's memory the instance may use"),
    S_FRACTION("mem_fraction_static", mem_fraction_static, 0, true,
               "SGLang's: (memory - reserved) / memory by server_args.py's rule",
               "SGLang: fraction of memory for the weights and the KV pool"),
    S_FRACTION("kv_cache_free_gpu_mem_fraction", kv_cache_free_gpu_mem_fraction, 0.9, false,
               NULL, "TensorRT-LLM: fraction of the memory free after the engine given to the KV "
               "cache"),
    {"kv_cache_memory", CORE_KIND_SIZE, CORE_STORE_I64, SAT(kv_cache_memory), 1,
     CORE_SERVE_KV_MEM_MAX, false, 0, true, true, false, false, NO_CHOICES, "bytes",
     "profiled: the engine's own budget",
     "vLLM --kv-cache-memory: KV cache bytes per GPU, skipping the profile", NO_ECHO},
    S_INT("max_model_len", max_model_len, CORE_SERVE_LEN_MAX, "tokens",
          "the model's context (preset or config max_position_embeddings)",
          "longest request (prompt + output) the engine admits"),
    S_INT("max_num_seqs", max_num_seqs, CORE_SERVE_SEQS_MAX, "sequences",
          "the engine's (vLLM 256, or 1024 on >= 70 GiB GPUs; TensorRT-LLM 2048)",
          "most requests scheduled at once"),
    S_INT("max_num_batched_tokens", max_num_batched_tokens, CORE_SERVE_LEN_MAX, "tokens",
          "the engine's (vLLM 2048, or 8192 on >= 70 GiB; SGLang chunked_prefill_size)",
          "tokens per forward pass; the profiling pass runs this many"),
    S_INT("block_size", block_size, CORE_SERVE_BLOCK_MAX, "tokens",
          "16 (vLLM); 1 (SGLang page_size, llama.cpp); 64 (TensorRT-LLM tokens_per_block)",
          "tokens per KV cache block (page)"),
    {"enforce_eager", CORE_KIND_BOOL, CORE_STORE_BOOL, SAT(enforce_eager), 0, 0, false, 0, false,
     false, false, false, NO_CHOICES, "", NULL, "no CUDA graphs (vLLM --enforce-eager)", NO_ECHO},
    {"hbm_tbps", CORE_KIND_REAL, CORE_STORE_DOUBLE, SAT(hbm_tbps), CORE_SERVE_TBPS_MIN,
     CORE_SERVE_TBPS_MAX, false,
     0, true, true, false, false, NO_CHOICES, "TB/s", "the catalog value of gpu",
     "memory bandwidth per GPU, for parts not in the catalog", NO_ECHO},
    /* The workload of the time model (serve_timing.h; docs/serving.md, "Time"). */
    {"input_len", CORE_KIND_INT, CORE_STORE_I64, SAT(input_len), 1, CORE_SERVE_LEN_MAX, false,
     CORE_SERVE_INPUT_LEN_DEFAULT, false, false, false, false, NO_CHOICES, "tokens", NULL,
     "prompt tokens per request", NO_ECHO},
    {"output_len", CORE_KIND_INT, CORE_STORE_I64, SAT(output_len), 1, CORE_SERVE_LEN_MAX, false,
     CORE_SERVE_OUTPUT_LEN_DEFAULT, false, false, false, false, NO_CHOICES, "tokens", NULL,
     "output tokens per request", NO_ECHO},
    {"concurrency", CORE_KIND_INT, CORE_STORE_I64, SAT(concurrency), 1, CORE_SERVE_SEQS_MAX,
     false, 1, false, false, false, false, CHOICES(concurrency_words), "sequences", NULL,
     "sequences in flight on the replica; max: as many as the KV pool and max_num_seqs hold", NO_ECHO},
    S_CHOICE("batching", batching, core_batching_names, NULL,
             "auto (static for a number of sequences, continuous for max), static (one batch "
             "prefilled together), continuous (the steady state of continuous batching)"),
};
/* clang-format on */

const size_t core_serve_input_count = sizeof core_serve_inputs / sizeof core_serve_inputs[0];

const size_t core_input_count = sizeof core_inputs / sizeof core_inputs[0];
const size_t core_plan_input_count = sizeof core_plan_inputs / sizeof core_plan_inputs[0];

/* The first byte decides most rows without a strlen: the lookup runs for every query pair. */
static bool name_is(const char *name, size_t len, const char *want)
{
    return len > 0 && want[0] == name[0] && strlen(want) == len && memcmp(name, want, len) == 0;
}

const struct core_input_spec *core_serve_input_find(const char *name, size_t len)
{
    for (size_t i = 0; i < core_serve_input_count; i++)
        if (name_is(name, len, core_serve_inputs[i].name))
            return &core_serve_inputs[i];
    return core_input_find(name, len, false);
}

const struct core_input_spec *core_input_find(const char *name, size_t len, bool plan)
{
    if (plan)
        for (size_t i = 0; i < core_plan_input_count; i++)
            if (name_is(name, len, core_plan_inputs[i].name))
                return &core_plan_inputs[i];
    for (size_t i = 0; i < core_input_count; i++)
        if (name_is(name, len, core_inputs[i].name))
            return &core_inputs[i];
    return NULL;
}

void core_input_store_default(const struct core_input_spec *spec, void *base)
{
    char *dst = (char *)base + spec->offset;

    /* Convert only to the row's own type: a double default (1.4e12 tokens) has no int value. */
    switch (spec->store) {
    case CORE_STORE_I64: {
        int64_t i64 = (int64_t)spec->dflt;
        memcpy(dst, &i64, sizeof i64);
        break;
    }
    case CORE_STORE_INT: {
        int i = (int)spec->dflt;
        memcpy(dst, &i, sizeof i);
        break;
    }
    case CORE_STORE_DOUBLE:
        memcpy(dst, &spec->dflt, sizeof spec->dflt);
        break;
    case CORE_STORE_BOOL: {
        bool b = spec->dflt != 0;
        memcpy(dst, &b, sizeof b);
        break;
    }
    case CORE_STORE_GPUS:
    case CORE_STORE_CHOICES: {
        int none = 0; /* an empty list: the count */
        memcpy(dst, &none, sizeof none);
        break;
    }
    case CORE_STORE_TEXT:
        memset(dst, 0, CORE_TEXT_MAX);
        break;
    case CORE_STORE_PRICES:
        for (int g = 0; g < CORE_PLAN_GPU_MAX; g++)
            memcpy(dst + (size_t)g * sizeof(double), &spec->dflt, sizeof spec->dflt);
        break;
    }
}

/* The stored value as a double (exact for every int and for int64 below 2^53; larger int64
 * values are out of every row's bounds anyway). */
static double stored_number(const struct core_input_spec *spec, const void *base)
{
    const char *src = (const char *)base + spec->offset;
    int64_t i64;
    int i;
    double d;
    bool b;

    switch (spec->store) {
    case CORE_STORE_I64:
        memcpy(&i64, src, sizeof i64);
        return (double)i64;
    case CORE_STORE_INT:
        memcpy(&i, src, sizeof i);
        return i;
    case CORE_STORE_DOUBLE:
        memcpy(&d, src, sizeof d);
        return d;
    case CORE_STORE_BOOL:
        memcpy(&b, src, sizeof b);
        return b;
    case CORE_STORE_GPUS:
    case CORE_STORE_PRICES:
    case CORE_STORE_CHOICES:
    case CORE_STORE_TEXT:
        break;
    }
    return 0;
}

const char *core_input_text_check(const struct core_input_spec *spec, const char *s, size_t len)
{
    if (strcmp(spec->name, "pipeline_model_parallel_layout") == 0)
        return core_layout_text_check(s, len);
    if (strcmp(spec->name, "recompute_modules") == 0)
        return core_recompute_text_check(s, len);
    if (strcmp(spec->name, "cuda_graph_modules") == 0)
        return core_cuda_graph_text_check(s, len);
    return NULL;
}

/* A text row: NUL-terminated within its buffer and well formed by its own check. */
static bool text_valid(const struct core_input_spec *spec, const void *base)
{
    const char *s = (const char *)base + spec->offset;
    size_t len = strnlen(s, CORE_TEXT_MAX);

    return len < CORE_TEXT_MAX && (len == 0 || core_input_text_check(spec, s, len) == NULL);
}

bool core_input_valid(const struct core_input_spec *spec, const void *base)
{
    double v = stored_number(spec, base);

    if (spec->kind == CORE_KIND_TEXT)
        return text_valid(spec, base);
    if (spec->unset && v == spec->dflt)
        return true;
    switch (spec->kind) {
    case CORE_KIND_INT:
        if (v != floor(v))
            return false;
        /* fall through */
    case CORE_KIND_SIZE:
    case CORE_KIND_REAL:
        if (spec->choice_count > 0 && v <= 0 && v > -spec->choice_count && v == floor(v))
            return true; /* one of the row's words */
        return (spec->min_exclusive ? v > spec->min : v >= spec->min) && v <= spec->max;
    case CORE_KIND_BOOL:
        return true;
    case CORE_KIND_FLAG:
        return v == CORE_FLAG_NO || v == CORE_FLAG_YES;
    case CORE_KIND_CHOICE:
        return v >= 0 && v < spec->choice_count;
    case CORE_KIND_GPU:
        return v >= 0 && v < (double)core_gpu_count;
    case CORE_KIND_PRESET:
        return v >= 0 && v < (double)core_preset_count;
    case CORE_KIND_MODULES: /* a non-empty mask of known modules */
        return v >= spec->min && v <= spec->max && v == floor(v);
    case CORE_KIND_GPUS:
    case CORE_KIND_PRICES:
    case CORE_KIND_CHOICES: /* lists: checked by their planner */
    case CORE_KIND_OBJECT:  /* decoded and checked by the api (api/hfconfig.c) */
    case CORE_KIND_TEXT:
    case CORE_KIND_COUNT:
        break;
    }
    return true;
}

size_t core_input_next_invalid(const struct core_input_spec *rows, size_t count, const void *base,
                               size_t from)
{
    size_t i = from;

    while (i < count && core_input_valid(&rows[i], base))
        i++;
    return i;
}
