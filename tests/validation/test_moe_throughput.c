/*
 * test_moe_throughput.c - the step-time model (core/perf.c, perf_moe.c) against measured MoE
 * training throughput.
 *
 * Reads moe-measured.csv (PROVENANCE-moe.md: Megatron-Bridge's published performance tables,
 * Megatron-LM's CI golden values, the DeepSeek-V3 GB200 optimisation write-up, DeepSeek-V2's
 * report), maps each row to a core_perf_input and compares the predicted tokens per second per
 * GPU with the measured one. The suite fails when the MAPE over the scored rows exceeds 15 % or
 * over the hold-out rows 16 % (issue 17 asks for 12 %: not reached), and when the hold-out's
 * step-time error is not the figure core/validation.c reports for MoE runs. Rows it cannot use
 * are named with the reason (`--table` prints them all).
 *
 * Two constants were fitted: perf.c's MOE_SYNC_S and MOE_EXPERT_HOST_S (the MoE host time, a
 * fixed part and a part per local expert), on the six Megatron-Bridge 26.04.01 rows (the tuning
 * set); the 25.11 rows and the Kimi-K2 GB300 row (scored only after the constants were set) are
 * the hold-out. The host share CUDA graphs remove (perf.c CG_*), DeepEP's and HybridEP's rates over
 * a 72-GPU NVLink domain and NCCL's floor there come from the write-up's measurements and text (one
 * of its steps is the deepep row), so the write-up's three rows are tuning rows as well;
 * --steps prints its whole sequence of steps against the model. Everything else is the dense
 * model's per-generation constants, and each row's framework settings (dispatcher, all-to-all
 * overlap, CUDA graphs, expert tensor parallelism) come from the recipe of the release that ran it,
 * in the settings table below, not from the measured value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "csv.h"
#include "internal.h" /* core_layout_parse, core_layout_heaviest: the pipeline split */
#include "perf.h"
#include "validation.h"

#ifndef MEMWALL_MOE_CSV
#error "MEMWALL_MOE_CSV must name the MoE measurements"
#endif

/* The suite fails above this MAPE over the scored tokens/s rows. Issue 17 asks for 12 %; the
 * model is at 13.7 % (docs/model.md, "Mixture of experts", names the rows that miss and why), so
 * this guards what it reaches. */
#define MAPE_LIMIT 0.15
/* ... and above this over the hold-out rows (no constant was chosen on them; 13.5 %). */
#define HOLDOUT_LIMIT 0.16

#define ROWS_MAX  48
#define FIELDS    34
#define FIELD_MAX 192

enum use {
    USE_FULL,    /* every setting stated (or read from the recipe): counts in the MAPE */
    USE_DERIVED, /* tokens/s derived from a TFLOP/s figure (see row_measured): counts too */
    USE_SWEEP,   /* step time of a job whose GPU count is not stated: swept, not scored */
    USE_NONE,    /* cannot be used: `why` says why */
};

struct row {
    char id[32];
    char kind[32];
    enum use use;
    const char *why;
    double measured; /* tokens/s/GPU (USE_FULL, USE_DERIVED) or seconds per step (USE_SWEEP) */
    bool seen;       /* a row the issue quoted before the model changed (see PROVENANCE-moe.md) */
    bool tuning; /* a Megatron-Bridge 26.04.01 row: the MoE host constants were fitted on them */
    struct core_perf_input in;
};

static struct row rows[ROWS_MAX];
static int row_count;

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "moe-measured: " __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                                   \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * Framework settings per row, from the recipe of the release that ran it (Megatron-Bridge,
 * scripts/performance/configs/<model>/<model>_workload_base_configs.py and _llm_pretrain.py, with
 * utils/overrides.py set_workload_base_configs and the model recipes under
 * src/megatron/bridge/recipes/):
 *
 * 26.04.01 = tag v0.4.2 (its docs/performance-summary.md is the 26.04.01 table; --config_variant
 * defaults to v2). Each row's layout matches its preset exactly:
 *   DeepSeek-V3 B200 FP8_MX_V2: deepep, moe_a2a_overlap, cuda_graph_scope attn moe_router
 *     moe_preprocess (transformer_engine); GPT-OSS-120B H100/B200 BF16_V2: no backend (the
 *     alltoall dispatcher), no overlap, no graphs (the recipe's cuda_graph_impl "none");
 *   Qwen3-30B-A3B H100 FP8_CS_V1: hybridep, no overlap, no graphs (only the BF16 preset has
 *     them); Qwen3-235B-A22B H100 FP8_CS_V2: no backend, moe_token_dispatcher_type "alltoall",
 *     moe_a2a_overlap; B200 FP8_CS_V2 (= FP8_MX): alltoall, no overlap; no graphs;
 *   Kimi-K2 GB300: hybridep, no overlap, cuda_graph_scope [] with the recipe's impl "none".
 * 25.11 = branch r0.2.0 (= tag v0.2.2 for these files; the 25.11 table is first printed there).
 * Some 25.11 layouts are not any preset of that release (DeepSeek-V3 GB200 FP8 pp 8 ep 32,
 * Qwen3-30B H100 mbs 2 v 24): the rest of the row's settings are taken from the release's preset
 * of the same model, GPU and precision:
 *   DeepSeek-V3 GB200: hybridep, moe_a2a_overlap False, cuda_graph_scope moe_router
 *     moe_preprocess; B200: no backend (alltoall), no graphs; Qwen3-235B and Qwen3-30B H100
 *     FP8_CS: no backend (the Qwen3 provider's alltoall), moe_a2a_overlap True, no graphs;
 *   GPT-OSS H100: alltoall, no graphs. At that release apply_flex_dispatcher_backend turns
 *     HybridEP on only for GB200/GB300 (training/flex_dispatcher_backend.py).
 * Every preset there sets expert_tensor_parallel_size=1. Fine-grained recompute (the presets'
 * recompute_modules, which overrides.py turns into recompute_granularity "selective"):
 * DeepSeek-V3 B200 FP8_MX_V2 mla_up_proj mlp; GPT-OSS (both releases) layernorm moe_act;
 * Kimi-K2 GB300 and every 25.11 DeepSeek-V3 preset mla_up_proj; Qwen3 none (its
 * _llm_pretrain.py sets recompute_granularity None). The write-up rows name their dispatcher,
 * graphs and recompute (baseline: none, --recompute-modules mlp up_proj; the DeepEP step after
 * "CUDA Graphs capture shared expert" and the final: attn moe_router moe_preprocess, and
 * mlp moe_act since "Remove up_proj recompute"). Megatron-LM CI rows state theirs in
 * model_config.yaml (alltoall; the DeepSeek-V3 proxy's flex/hybridep) and etp where given (else
 * tp).
 * ------------------------------------------------------------------------------------------- */

#define CG_ALL (CORE_CG_ATTN | CORE_CG_MOE_ROUTER | CORE_CG_MOE_PREPROCESS)
#define CG_MOE (CORE_CG_MOE_ROUTER | CORE_CG_MOE_PREPROCESS)
#define RC_OSS (CORE_RC_LAYERNORM | CORE_RC_MOE_ACT)
#define RC_UP  CORE_RC_MLA_UP_PROJ

struct setting {
    const char *prefix; /* row ids starting with this */
    enum core_moe_dispatcher dispatcher;
    bool overlap;
    int64_t etp;     /* 0 = the CSV's, else Megatron's default (tp) */
    unsigned graphs; /* cuda_graph_modules: enum core_cuda_graph_module bits */
    unsigned rc;     /* recompute_modules (enum core_recompute_module bits); 0 = no recompute */
};

/* clang-format off */
static const struct setting settings[] = {
    {.prefix = "MB-26041-DSV3-B200", .dispatcher = CORE_MOE_DEEPEP, .overlap = true, .etp = 1,
     .graphs = CG_ALL, .rc = RC_UP | CORE_RC_MLP},
    {.prefix = "MB-26041-OSS", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1, .rc = RC_OSS},
    {.prefix = "MB-26041-Q30-H100", .dispatcher = CORE_MOE_HYBRIDEP, .etp = 1},
    {.prefix = "MB-26041-Q235-H100", .dispatcher = CORE_MOE_ALLTOALL, .overlap = true, .etp = 1},
    {.prefix = "MB-26041-Q235-B200", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1},
    {.prefix = "MB-26041-KIMI", .dispatcher = CORE_MOE_HYBRIDEP, .etp = 1, .rc = RC_UP},
    {.prefix = "MB-2511-DSV3-GB200", .dispatcher = CORE_MOE_HYBRIDEP, .etp = 1, .graphs = CG_MOE,
     .rc = RC_UP},
    {.prefix = "MB-2511-DSV3-B200", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1, .rc = RC_UP},
    {.prefix = "MB-2511-Q235-H100", .dispatcher = CORE_MOE_ALLTOALL, .overlap = true, .etp = 1},
    {.prefix = "MB-2511-Q30-H100", .dispatcher = CORE_MOE_ALLTOALL, .overlap = true, .etp = 1},
    {.prefix = "MB-2511-OSS", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1, .rc = RC_OSS},
    {.prefix = "MB-2509-Q235-H100", .dispatcher = CORE_MOE_ALLTOALL, .overlap = true, .etp = 1},
    {.prefix = "MB-", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1},
    {.prefix = "MLM-BLOG-DSV3-GB200-base", .dispatcher = CORE_MOE_ALLTOALL, .etp = 1,
     .rc = CORE_RC_MLP | RC_UP},
    {.prefix = "MLM-BLOG-DSV3-GB200-deepep", .dispatcher = CORE_MOE_DEEPEP, .etp = 1,
     .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.prefix = "MLM-BLOG-DSV3-GB200-final", .dispatcher = CORE_MOE_HYBRIDEP, .etp = 1,
     .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.prefix = "CI-DSV3proxy", .dispatcher = CORE_MOE_HYBRIDEP},
    {.prefix = "", .dispatcher = CORE_MOE_ALLTOALL},
};
/* clang-format on */

/* The pipeline split each row ran with, as the recipes state it: moe-layout's settings table in
 * test_moe.c, which cites each (Megatron-Bridge's DeepSeek-V3 / Kimi-K2 recipe layouts and MTP
 * layer, its Qwen3 recipes' account_for_embedding/loss_in_pipeline_split; the write-up's
 * --pipeline-model-parallel-layout). The slowest rank's decoder layers (plus MTP) set the
 * pipeline's pace (core_layout_heaviest), the last rank's (core_layout_last) how much of the
 * output layer it hides. Rows not named split evenly. */
struct split {
    const char *id;
    const char *layout; /* pipeline_model_parallel_layout, or NULL */
    bool accounted;     /* account_for_embedding/loss_in_pipeline_split */
    int mtp;            /* mtp_layers */
};

static const struct split splits[] = {
    {.id = "MB-26041-DSV3-B200", .layout = "Et*4|(t*4|)*14tmL", .mtp = 1},
    {.id = "MB-26041-Q235-H100", .accounted = true},
    {.id = "MB-26041-Q235-B200", .accounted = true},
    {.id = "MB-26041-KIMI-GB300", .layout = "Et*4|(t*4|)*14tL"},
    {.id = "MB-2511-DSV3-GB200-BF16", .layout = "Et*4|(t*4|)*14tL"},
    {.id = "MB-2511-DSV3-GB200-FP8", .layout = "Et|(tt|)*30L"},
    {.id = "MB-2511-DSV3-B200-MTP", .layout = "Et*4|(t*4|)*14tmL", .mtp = 1},
    {.id = "MB-2511-Q235-H100", .accounted = true},
    {.id = "MLM-BLOG-DSV3-GB200-base", .layout = "Et|(tt|)*30L"},
    {.id = "MLM-BLOG-DSV3-GB200-final", .layout = "Et|(tt|)*30L"},
    {.id = "MLM-BLOG-DSV3-GB200-deepep", .layout = "Et|(tt|)*30L"},
};

/* Rows the table quoted with memwall's old answers (issue 17): looked at while the
 * faults were found, so reported apart from the rest. */
static const char *const seen_rows[] = {"MB-2511-Q235-H100", "MB-2511-DSV3-GB200-FP8",
                                        "MB-2511-OSS-H100", "MB-26041-OSS-B200",
                                        "MB-26041-Q30-H100"};

/* The row being read (set_split's key). */
static const char *in_id = "";

static const struct setting *setting_of(const char *id)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (strncmp(id, settings[i].prefix, strlen(settings[i].prefix)) == 0)
            return &settings[i];
    return &settings[sizeof settings / sizeof settings[0] - 1];
}

/* ---------------------------------------------------------------------------------------------
 * Rows into model inputs. Columns (0-based): 0 id, 4 gpu, 5 gpus, 6 layers, 7 hidden, 8 heads,
 * 9 kv_heads, 10 head_dim, 11 ffn_hidden, 12 vocab, 13 experts, 14 experts_per_token,
 * 15 shared_experts, 16 moe_ffn_hidden, 17 dense_layers, 18 mla, 19 seq_len, 20 micro_batch,
 * 21 global_batch, 22 tp, 23 pp, 24 ep, 25 cp, 26 etp, 27 virtual_stages, 28 zero_stage,
 * 29 recompute, 30 precision, 31 measured_kind, 32 measured_value, 33 quote.
 * ------------------------------------------------------------------------------------------- */

static int gpu_of(const char *name)
{
    static const struct {
        const char *csv, *catalog;
    } names[] = {{"H100", "h100-sxm"},
                 {"B200", "b200"},
                 {"GB200", "gb200"},
                 {"GB300", "gb300"},
                 {"A100", "a100-sxm-80gb"}};

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].csv) == 0)
            return core_gpu_find(names[i].catalog);
    return -1;
}

/* The architecture and N: SwiGLU experts, untied embeddings (all of these models), and the MLA
 * ranks DeepSeek-V2/V3 and Kimi-K2 share (q_lora 1536, kv_lora 512, nope 128, rope 64, v 128;
 * their config.json). */
static void set_arch(char f[FIELDS][FIELD_MAX], struct core_perf_input *in, struct core_arch *arch)
{
    bool mla = strcmp(f[18], "true") == 0;
    struct core_arch a = {.layers = csv_whole(f[6], 1),
                          .hidden = csv_whole(f[7], 1),
                          .heads = csv_whole(f[8], 1),
                          .kv_heads = csv_whole(f[9], 1),
                          .head_dim = csv_whole(f[10], 1),
                          .ffn_hidden = csv_whole(f[11], 1),
                          .vocab = csv_whole(f[12], 256000), /* CI's nemotron tokenizer */
                          .gated_mlp = true,
                          .experts = csv_whole(f[13], 0),
                          .experts_per_token = csv_whole(f[14], 1),
                          .shared_experts = csv_whole(f[15], 0),
                          .moe_ffn_hidden = csv_whole(f[16], 0),
                          .dense_layers = csv_whole(f[17], 0),
                          .q_lora_rank = mla ? 1536 : 0,
                          .kv_lora_rank = mla ? 512 : 0,
                          .qk_nope_head_dim = mla ? 128 : 0,
                          .qk_rope_head_dim = mla ? 64 : 0,
                          .v_head_dim = mla ? 128 : 0};
    struct core_arch_counts n;

    NEED(core_arch_count(&a, &n), "%s: invalid architecture", f[0]);
    in->layers = a.layers;
    in->hidden = a.hidden;
    in->heads = a.heads;
    in->kv_heads = a.kv_heads;
    in->head_dim = a.head_dim;
    in->ffn_hidden = a.ffn_hidden;
    in->vocab = a.vocab;
    in->gated_mlp = true;
    in->params = (double)n.total;
    in->active_params = (double)n.active;
    in->expert_params = (double)n.experts;
    /* the weights every tp rank keeps whole (MLA's down projections, the routers), as the API
     * path passes them (core_tp_whole_params; they matter only at tp > 1) */
    in->tp_whole_params = (double)n.tp_whole;
    in->experts = a.experts;
    in->experts_per_token = a.experts_per_token;
    in->moe_ffn_hidden = a.moe_ffn_hidden;
    in->shared_experts = a.shared_experts;
    in->shared_ffn_hidden = a.moe_ffn_hidden;
    in->moe_layers = n.moe_layers;
    in->q_lora_rank = a.q_lora_rank;
    in->kv_lora_rank = a.kv_lora_rank;
    in->qk_nope_head_dim = a.qk_nope_head_dim;
    in->qk_rope_head_dim = a.qk_rope_head_dim;
    in->v_head_dim = a.v_head_dim;
    /* DeepSeek-V3's node-limited routing (its config.json: n_group 8, topk_group 4, which
     * Megatron-Bridge maps to moe_router_num_groups / moe_router_group_topk); Kimi-K2's config
     * has n_group 1 (no groups). */
    if (strncmp(f[3], "DeepSeek-V3", 11) == 0 && a.experts == 256) {
        in->router_groups = 8;
        in->router_group_topk = 4;
    }
    /* GPT-OSS (its config.json, quoted in the row): a 128-token sliding window on every other
     * layer. */
    if (strncmp(f[3], "GPT-OSS", 7) == 0) {
        in->sliding_layers = a.layers / 2;
        in->sliding_window = 128;
        /* ... and biases on every linear (Megatron-Bridge gpt_oss_bridge.py add_bias_linear), the
         * experts' fc2 bias added by TEGroupedMLP._apply_bias (perf.c expert_bias_bytes) */
        in->moe_expert_bias = true;
    }
    *arch = a;
}

/* Why a row cannot be scored, or NULL. */
static const char *unusable(char f[FIELDS][FIELD_MAX], int gpu)
{
    if (strcmp(f[31], "peak_memory_gib") == 0)
        return "a peak-memory reading (the fit/peak suite's)";
    if (strcmp(f[31], "gpu_hours_per_trillion_tokens") == 0)
        return "H800 cluster of unstated size, micro-batch unstated, token dropping";
    if (gpu < 0)
        return "GPU not in the catalog";
    if (strncmp(f[30], "AMBIGUOUS", 9) == 0)
        return "precision not stated (25.09 table)";
    return NULL;
}

static enum core_precision precision_of(const char *s)
{
    return strcmp(s, "BF16") == 0 ? CORE_PREC_BF16 : CORE_PREC_FP8; /* FP8, FP8-CS, MXFP8... */
}

/* The layout and the framework's fixed behaviour: the distributed optimizer (ZeRO 1), fused
 * attention, no full recompute (the recipes recompute at most small modules, the settings'
 * recompute_modules under checkpointing selective), sequence parallelism with tp > 1 (Megatron-Core
 * requires it for MoE), Transformer Engine's TP overlap and the overlapped gradient reduce-scatter
 * / parameter all-gather of the performance recipes. "VP n/a" (empty) = no interleaving. */
static void set_layout(char f[FIELDS][FIELD_MAX], struct core_perf_input *in)
{
    const struct setting *st = setting_of(f[0]);

    in->seq_len = csv_whole(f[19], 4096);
    in->micro_batch = csv_whole(f[20], 1);
    in->global_batch = csv_num(f[21], 1);
    in->tp = csv_whole(f[22], 1);
    in->pp = csv_whole(f[23], 1);
    in->ep = csv_whole(f[24], 1);
    in->cp = csv_whole(f[25], 1);
    in->virtual_stages = csv_whole(f[27], 1);
    in->gpus = csv_whole(f[5], 0);
    in->etp = csv_whole(f[26], st->etp > 0 ? st->etp : in->tp);
    in->moe_dispatcher = st->dispatcher;
    in->moe_comm_overlap = st->overlap;
    in->cuda_graph_modules = st->graphs;
    in->moe_load_imbalance = 1.0; /* the tables force-balance the routing */
    in->zero_stage = 1;
    in->flash_attention = true;
    in->checkpointing = st->rc != 0 ? CORE_CKPT_SELECTIVE : CORE_CKPT_NONE;
    in->recompute_modules = st->rc;
    in->sequence_parallel = in->tp > 1;
    in->optimizer = CORE_OPT_ADAMW;
    in->master_weights = true;
    in->tp_comm_overlap = in->tp > 1;
    in->dp_comm_overlap = true;
}

/* The slowest pipeline rank's layers under the row's split (splits[] above), as the API path
 * computes them (layout.c); 0 = an even split. */
static void set_split(const struct core_arch *a, struct core_perf_input *in)
{
    static struct core_resolved r; /* large: kept off the stack */

    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        const struct split *sp = &splits[i];
        if (strcmp(sp->id, in_id) != 0)
            continue;
        memset(&r, 0, sizeof r);
        r.shape.arch = *a;
        r.pp = in->pp;
        r.virtual_stages = in->virtual_stages;
        r.mtp_layers = sp->mtp;
        if (sp->layout != NULL) {
            NEED(core_layout_parse(sp->layout, strlen(sp->layout), &r.layout) == NULL,
                 "%s: layout %s", in_id, sp->layout);
            r.split = CORE_SPLIT_LAYOUT;
            r.virtual_stages = r.layout.stages / (in->pp > 0 ? in->pp : 1);
        } else {
            r.split = CORE_SPLIT_ACCOUNTED;
            r.embedding_in_split = r.loss_in_split = sp->accounted;
        }
        in->virtual_stages = r.virtual_stages;
        in->mtp_layers = sp->mtp;
        in->stage_layers = (double)core_layout_heaviest(&r);
        in->last_stage_layers = (double)core_layout_last(&r);
    }
}

static void set_dp(struct core_perf_input *in)
{
    int64_t model = in->tp * in->pp * in->cp;

    in->dp = in->gpus > 0 && model > 0 ? in->gpus / model : 1;
}

/*
 * What the row measured, as tokens/s/GPU. The write-up's rows print model TFLOP/s of the same
 * job as MB-2511-DSV3-GB200-FP8 (same model, layout, sequence and FLOP formula, no MTP), whose
 * table prints both figures: 4018 tok/s/GPU at 1003 TFLOP/s, so tokens/s = TFLOP/s x 4018/1003.
 */
static double row_measured(char f[FIELDS][FIELD_MAX], enum use *use)
{
    double v = csv_num(f[32], 0);

    if (strcmp(f[31], "tflops_per_gpu") == 0) {
        *use = USE_DERIVED;
        return v * 4018.0 / 1003.0;
    }
    if (strcmp(f[31], "step_seconds") == 0 && f[5][0] == '\0')
        *use = USE_SWEEP;
    return v;
}

static void row_input(char f[FIELDS][FIELD_MAX], struct row *r)
{
    int gpu = gpu_of(f[4]);

    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%.31s", f[0]);
    snprintf(r->kind, sizeof r->kind, "%.31s", f[31]);
    for (size_t i = 0; i < sizeof seen_rows / sizeof seen_rows[0]; i++)
        r->seen = r->seen || strcmp(r->id, seen_rows[i]) == 0;
    /* The Kimi-K2 GB300 row is 26.04.01 too but was scored only after the constants were set.
     * The write-up's rows are tuning rows: its steps set perf.c's CG_* (the deepep row's own
     * 829.93 among them), the DeepEP rates over NVL72 and the NCCL floor over it. */
    r->tuning =
        (strncmp(r->id, "MB-26041-", 9) == 0 && strcmp(r->id, "MB-26041-KIMI-GB300") != 0) ||
        strncmp(r->id, "MLM-BLOG-", 9) == 0;
    r->why = unusable(f, gpu);
    r->use = r->why != NULL ? USE_NONE : USE_FULL;
    if (r->use == USE_NONE)
        return;
    r->measured = row_measured(f, &r->use);
    r->in.precision = precision_of(f[30]);
    core_perf_input_hardware(&r->in, gpu, r->in.precision);
    struct core_arch arch;
    set_arch(f, &r->in, &arch);
    set_layout(f, &r->in);
    in_id = r->id;
    set_split(&arch, &r->in);
    set_dp(&r->in);
}

static void load_rows(void)
{
    static char fields[FIELDS][FIELD_MAX];
    char line[8192];
    FILE *fp;

    if (row_count > 0)
        return;
    fp = fopen(MEMWALL_MOE_CSV, "r");
    NEED(fp != NULL, "cannot open %s", MEMWALL_MOE_CSV);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty file");
    while (fgets(line, sizeof line, fp) != NULL && row_count < ROWS_MAX) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        NEED(csv_split(line, &fields[0][0], FIELDS, FIELD_MAX) == FIELDS,
             "row %d: expected %d fields", row_count + 1, FIELDS);
        row_input(fields, &rows[row_count++]);
    }
    fclose(fp);
}

/* ---------------------------------------------------------------------------------------------
 * The table.
 * ------------------------------------------------------------------------------------------- */

struct score {
    double sum, sum_seen, sum_unseen, sum_tuning, sum_holdout;
    double step_holdout; /* the hold-out's step-time errors (what expected_error is) */
    int n, n_seen, n_unseen, n_tuning, n_holdout;
};

static void print_scored(FILE *out, const struct row *r, struct score *sc)
{
    struct core_perf p;

    core_perf_predict(&r->in, &p);
    double err = (p.tokens_per_second_per_gpu - r->measured) / r->measured;
    fprintf(out, "%-28s %-7s %-6s %5s %9.0f %9.0f %+6.1f%% %7.2f %7.2f %7.2f  %s\n", r->id,
            r->use == USE_DERIVED ? "derived" : "full", r->tuning ? "tuning" : "hold",
            r->seen ? "seen" : "", p.tokens_per_second_per_gpu, r->measured, 100 * err,
            p.breakdown.compute, p.breakdown.ep_comm, p.step_seconds, p.bottleneck);
    sc->sum += fabs(err);
    sc->n++;
    if (r->tuning) {
        sc->sum_tuning += fabs(err);
        sc->n_tuning++;
    } else {
        sc->sum_holdout += fabs(err);
        sc->step_holdout += fabs(r->measured / p.tokens_per_second_per_gpu - 1.0);
        sc->n_holdout++;
    }
    if (r->seen) {
        sc->sum_seen += fabs(err);
        sc->n_seen++;
    } else {
        sc->sum_unseen += fabs(err);
        sc->n_unseen++;
    }
}

/* A CI job whose GPU count the repository does not state: the predicted step time for each
 * count its layout allows (multiples of tp*pp with ep*etp dividing tp*cp*dp), 8 to 512 GPUs. */
static void print_sweep(FILE *out, const struct row *r)
{
    struct core_perf_input in = r->in;
    int64_t model = in.tp * in.pp * in.cp;

    fprintf(out, "%-28s sweep (measured %.3f s):", r->id, r->measured);
    for (int64_t g = model; g <= 512; g += model) {
        struct core_perf p;

        in.gpus = g;
        set_dp(&in);
        if (g < 8 || (in.tp * in.cp * in.dp) % (in.ep * (in.etp > 0 ? in.etp : in.tp)) != 0)
            continue;
        core_perf_predict(&in, &p);
        fprintf(out, " %lld:%.2f", (long long)g, p.step_seconds);
    }
    fputc('\n', out);
}

static double ratio(double sum, int n)
{
    return n > 0 ? sum / n : 0.0;
}

/* The hold-out's mean absolute step-time error of the last print_table (validation.c keeps it). */
static double holdout_step_error = -1;

/* Prints every row; returns the MAPE over the scored rows (*holdout: over the hold-out ones). */
static double print_table(FILE *out, double *holdout)
{
    struct score sc = {0};

    load_rows();
    fprintf(out, "%-28s %-7s %-6s %5s %9s %9s %7s %7s %7s %7s  %s\n", "id", "use", "set", "",
            "predicted", "measured", "error", "compute", "ep_comm", "step", "bottleneck");
    for (int i = 0; i < row_count; i++)
        if (rows[i].use == USE_FULL || rows[i].use == USE_DERIVED)
            print_scored(out, &rows[i], &sc);
    fprintf(out,
            "\nMAPE %.1f%% over %d rows: tuning (26.04.01, write-up) %.1f%% (%d), hold-out %.1f%% "
            "(%d); "
            "rows the issue quoted %.1f%% (%d), the others %.1f%% (%d)\n\n",
            100 * ratio(sc.sum, sc.n), sc.n, 100 * ratio(sc.sum_tuning, sc.n_tuning), sc.n_tuning,
            100 * ratio(sc.sum_holdout, sc.n_holdout), sc.n_holdout,
            100 * ratio(sc.sum_seen, sc.n_seen), sc.n_seen, 100 * ratio(sc.sum_unseen, sc.n_unseen),
            sc.n_unseen);
    *holdout = sc.n_holdout ? sc.sum_holdout / sc.n_holdout : 1.0;
    holdout_step_error = sc.n_holdout ? sc.step_holdout / sc.n_holdout : -1;
    fprintf(out,
            "hold-out mean absolute step-time error %.1f%% (%d rows; core_perf_moe_validation)\n\n",
            100 * holdout_step_error, sc.n_holdout);
    for (int i = 0; i < row_count; i++)
        if (rows[i].use == USE_SWEEP)
            print_sweep(out, &rows[i]);
    fputc('\n', out);
    for (int i = 0; i < row_count; i++)
        if (rows[i].use == USE_NONE)
            fprintf(out, "%-28s not used: %s\n", rows[i].id, rows[i].why);
    return sc.n ? sc.sum / sc.n : 1.0;
}

START_TEST(test_moe_mape)
{
    double holdout, mape = print_table(stdout, &holdout);

    ck_assert_int_eq(row_count, 31);
    ck_assert_msg(mape <= MAPE_LIMIT, "MoE tokens/s MAPE %.1f%% exceeds %.0f%%", 100 * mape,
                  100 * MAPE_LIMIT);
    ck_assert_msg(holdout <= HOLDOUT_LIMIT, "MoE hold-out MAPE %.1f%% exceeds %.0f%%",
                  100 * holdout, 100 * HOLDOUT_LIMIT);
    /* The figure a MoE run's expected_error reports is this table's (core/validation.c). */
    ck_assert_msg(fabs(holdout_step_error - core_perf_moe_validation.expected_error) < 0.0005,
                  "hold-out step-time error %.4f, core_perf_moe_validation says %.3f",
                  holdout_step_error, core_perf_moe_validation.expected_error);
    ck_assert_int_eq(core_perf_moe_validation.unseen_runs, 7);
}
END_TEST

static Suite *moe_suite(void)
{
    Suite *s = suite_create("moe_throughput");
    TCase *tc = tcase_create("validation");

    tcase_add_test(tc, test_moe_mape);
    suite_add_tcase(s, tc);
    return s;
}

/* Every scored row's breakdown, seconds per step (--terms). */
static void print_terms(FILE *out)
{
    load_rows();
    fprintf(out, "%-28s %8s", "id", "measured");
    for (int k = 0; k < CORE_PERF_TERMS; k++)
        fprintf(out, " %8.8s", core_perf_term_names[k]);
    fputc('\n', out);
    for (int i = 0; i < row_count; i++) {
        const struct row *r = &rows[i];
        struct core_perf p;

        if (r->use != USE_FULL && r->use != USE_DERIVED)
            continue;
        core_perf_predict(&r->in, &p);
        fprintf(out, "%-28s %8.2f", r->id,
                r->in.global_batch * (double)r->in.seq_len / (r->measured * (double)r->in.gpus));
        for (int k = 0; k < CORE_PERF_TERMS; k++)
            fprintf(out, " %8.2f", (&p.breakdown.compute)[k]);
        fputc('\n', out);
    }
}

/* What the MoE host term would have to be for each scored row (--host): the factor on the
 * predicted `moe_host` that closes the row's step time, (measured - (predicted - moe_host)) /
 * moe_host, to first order (it leaves the host share of the pipeline bubble and of the EP
 * overlap window as predicted). A diagnostic of the host constants' spread, not a fit: the
 * constants are fitted on the tuning rows only (docs/model.md, "Host time"). */
static void print_host(FILE *out)
{
    static const char *const disp[] = {"alltoall", "deepep", "hybridep"};

    load_rows();
    fprintf(out, "%-28s %-6s %5s %-5s %-8s %3s %8s %8s %8s %7s\n", "id", "set", "local", "prec",
            "dispatch", "ovl", "measured", "step", "moe_host", "factor");
    for (int i = 0; i < row_count; i++) {
        const struct row *r = &rows[i];
        struct core_perf p;

        if (r->use != USE_FULL && r->use != USE_DERIVED)
            continue;
        core_perf_predict(&r->in, &p);
        double meas =
            r->in.global_batch * (double)r->in.seq_len / (r->measured * (double)r->in.gpus);
        double host = p.breakdown.moe_host;
        unsigned d = (unsigned)r->in.moe_dispatcher;
        fprintf(out, "%-28s %-6s %5.0f %-5s %-8s %3s %8.2f %8.2f %8.2f", r->id,
                r->tuning ? "tuning" : "hold", (double)r->in.experts / (double)r->in.ep,
                r->in.precision == CORE_PREC_BF16 ? "bf16" : "fp8",
                d < sizeof disp / sizeof disp[0] ? disp[d] : "?",
                r->in.moe_comm_overlap ? "yes" : "no", meas, p.step_seconds, host);
        if (host > 0.0)
            fprintf(out, " %7.2f\n", (meas - (p.step_seconds - host)) / host);
        else
            fprintf(out, " %7s\n", "-");
    }
}

/* ---------------------------------------------------------------------------------------------
 * The write-up's optimisation steps (--steps).
 *
 * Megatron-LM's DeepSeek-V3 GB200 write-up (docs/discussions/deepseek-v3-gb200-optimization/
 * deepseek-v3-gb200-optimization.md @79e8592, "3. Summary and Outlook") prints TFLOP/s after each
 * step of the same job (the MLM-BLOG-* rows' layout). Each step below carries the inputs memwall
 * has for it (dispatcher, CUDA graphs, recompute modules, read from the write-up's text); a step
 * whose change is the software itself (a Transformer Engine kernel, NUMA binding, PDL, DeepEP's
 * tuning) has no input and keeps the previous step's (`input` false). Measured seconds per step:
 * tokens/s = TFLOP/s x 4018/1003 (row_measured), 32768 tokens per GPU per step.
 * ------------------------------------------------------------------------------------------- */

struct step {
    const char *what;
    double tflops; /* the write-up's table */
    enum core_moe_dispatcher dispatcher;
    unsigned graphs, rc;
    bool input; /* memwall has an input for this step's change */
};

/* clang-format off */
static const struct step steps[] = {
    {.what = "Baseline (NCCL AlltoAll, mlp up_proj)", .tflops = 494.46,
     .dispatcher = CORE_MOE_ALLTOALL, .rc = CORE_RC_MLP | RC_UP, .input = true},
    {.what = "TE: fused scale alloc + permute kernel", .tflops = 529.55,
     .dispatcher = CORE_MOE_ALLTOALL, .rc = CORE_RC_MLP | RC_UP},
    {.what = "Router fusion (72 -> 31 kernels)", .tflops = 540.00,
     .dispatcher = CORE_MOE_ALLTOALL, .rc = CORE_RC_MLP | RC_UP},
    {.what = "Enable DeepEP", .tflops = 566.07,
     .dispatcher = CORE_MOE_DEEPEP, .rc = CORE_RC_MLP | RC_UP, .input = true},
    {.what = "Remove up_proj recompute (mlp moe_act)", .tflops = 610.71,
     .dispatcher = CORE_MOE_DEEPEP, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT, .input = true},
    {.what = "CUDA graphs attn moe_router moe_prep*", .tflops = 663.27,
     .dispatcher = CORE_MOE_DEEPEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT,
     .input = true},
    {.what = "Tune DeepEP", .tflops = 691.49,
     .dispatcher = CORE_MOE_DEEPEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.what = "CPU side (bindpcie NUMA binding)", .tflops = 762.12,
     .dispatcher = CORE_MOE_DEEPEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.what = "PDL + fused MXFP8 swizzle", .tflops = 797.67,
     .dispatcher = CORE_MOE_DEEPEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.what = "Graphs capture shared expert (deepep)", .tflops = 829.93,
     .dispatcher = CORE_MOE_DEEPEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.what = "HybridEP", .tflops = 943.56,
     .dispatcher = CORE_MOE_HYBRIDEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT,
     .input = true},
    {.what = "CPU side (TE host code)", .tflops = 956.21,
     .dispatcher = CORE_MOE_HYBRIDEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
    {.what = "cuDNN quantize fused to norm (final)", .tflops = 970.01,
     .dispatcher = CORE_MOE_HYBRIDEP, .graphs = CG_ALL, .rc = CORE_RC_MLP | CORE_RC_MOE_ACT},
};
/* clang-format on */

/* (*) memwall's moe_router graph takes the shared experts' host time too (CG_SHARED_S), which the
 * write-up captured only at the "capture shared expert" step: from the graphs step to that one
 * memwall already prices the later state. */
static void print_steps(FILE *out)
{
    const struct row *base = NULL;
    double meas_prev = 0, pred_prev = 0, no_input = 0;

    load_rows();
    for (int i = 0; i < row_count; i++)
        if (strcmp(rows[i].id, "MLM-BLOG-DSV3-GB200-base") == 0)
            base = &rows[i];
    if (base == NULL)
        return;
    double tokens = base->in.global_batch * (double)base->in.seq_len / (double)base->in.gpus;
    fprintf(out, "%-40s %6s %8s %8s %7s %7s %7s  %s\n", "step (write-up)", "TFLOPS", "meas s",
            "pred s", "meas x", "pred x", "error", "input");
    for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
        const struct step *st = &steps[j];
        struct core_perf_input in = base->in;
        struct core_perf p;

        in.moe_dispatcher = st->dispatcher;
        in.cuda_graph_modules = st->graphs;
        in.recompute_modules = st->rc;
        core_perf_predict(&in, &p);
        double meas = tokens / (st->tflops * 4018.0 / 1003.0), pred = p.step_seconds;
        if (j > 0 && !st->input)
            no_input += meas_prev - meas;
        fprintf(out, "%-40s %6.1f %8.3f %8.3f %7.3f %7.3f %+6.1f%%  %s\n", st->what, st->tflops,
                meas, pred, j ? meas / meas_prev : 1.0, j ? pred / pred_prev : 1.0,
                100 * (meas / pred - 1.0), st->input ? "yes" : "none (software)");
        meas_prev = meas;
        pred_prev = pred;
    }
    fprintf(out, "\nmeasured seconds gained by steps memwall has no input for: %.2f s\n", no_input);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--terms") == 0) {
        print_terms(stdout);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--host") == 0) {
        print_host(stdout);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--steps") == 0) {
        print_steps(stdout);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        double holdout, mape = print_table(stdout, &holdout);
        return mape <= MAPE_LIMIT && holdout <= HOLDOUT_LIMIT ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    return check_main_run(moe_suite());
}
