/*
 * test_serve_mem.c - core_serve() (core/serve.h) against the kv_capacity rows of
 * serving-measured.csv (PROVENANCE-serving-memory.md): the engines' start-up logs.
 *
 * Every kv_capacity row of the file is either checked here or named in `unused` with the reason.
 * The measured value is read from the CSV by row id; the settings each row states only as text
 * (its architecture from the model's config.json, the engine's knobs) are in `rows` below.
 * Four kinds of check:
 *  - exact: the log states the memory the engine had for the KV cache (kv_cache_memory); the
 *    blocks and tokens follow from the engine's arithmetic alone and must equal the log's, within
 *    the two decimals the log prints the GiB figure with (the interval [A - 0.005, A + 0.005)).
 *  - formula: one request's KV bytes, the longest model length, the concurrency, SGLang's default
 *    fraction: each an engine formula over logged figures.
 *  - weights / activations: memwall's model of what the engine measures, against the log.
 *  - end to end: from the GPU, the utilization and the model only (the engine's own budget), the
 *    KV pool against the log: the mean absolute percentage error over the fully specified rows.
 * Run with MEMWALL_VALIDATION_TABLE=1 for the table docs/serving.md and the note quote.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "csv.h"
#include "serve.h"
#include "serve_validation.h"

#define GIB       1073741824.0
#define ROWS_MAX  128
#define FIELDS    30
#define FIELD_MAX 1200
/* The end-to-end MAPE guard, the 5 % (measured 3.9 %, docs/serving.md): of the two rows
 * of 2024 vLLM, each under its release's sizing code (engine_version), 0.2.7 with AWQ reserves
 * more than memwall replays (+16.9 %: static memory), V0 of mid 2024 on T4 is +0.0 %; the two
 * vLLM V1 rows and the TensorRT-LLM row (its engine sized from build.py's own defaults, no
 * constant tuned on it; +0.6 %) are guarded at 5 % each. */
#define END_TO_END_MAPE_GUARD 0.05

/* An architecture from a config.json (the CSV's columns where it gives them). */
struct shape {
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
    bool tied;
    int64_t experts, top_k, moe_ffn;
};

enum check { EXACT, NEEDED, SUPPORTED, CONCURRENCY, WEIGHTS, ACTIVATIONS, END_TO_END, FRACTION };
static const char *const check_names[] = {"exact",   "needed",      "supported",  "concurrency",
                                          "weights", "activations", "end_to_end", "fraction"};

struct row {
    const char *id;
    enum check check;
    const char *preset; /* or NULL: the shape */
    struct shape shape;
    enum core_engine engine;
    enum core_engine_version version; /* the release the row's log comes from (0: current) */
    const char *gpu;
    enum core_precision dtype;
    enum core_quant quant;
    int kv_fp8;
    int64_t tp, gpus, ep, max_model_len, block, seqs;
    int64_t tokens; /* max_num_batched_tokens (TensorRT-LLM: the engine's max_num_tokens); 0 = the
                       engine's default */
    double util;    /* gpu_memory_utilization or TensorRT-LLM's fraction; 0 = default */
    double logged;  /* the logged figure the check starts from (available GiB, blocks) */
    double expect;  /* the logged result when it is not the CSV's measured_value (0: it is) */
    bool eager;
    const char *note;
};

/* Shapes (config.json of each model; the CSV's columns agree where it has them). */
#define QWEN3_14B                                                                                  \
    {                                                                                              \
        40, 5120, 40, 8, 128, 17408, 151936, false, 0, 0, 0                                        \
    }
#define LLAMA31_8B                                                                                 \
    {                                                                                              \
        32, 4096, 32, 8, 128, 14336, 128256, false, 0, 0, 0                                        \
    }
#define LLAMA31_8B_EAGLE                                                                           \
    {                                                                                              \
        33, 4096, 32, 8, 128, 14336, 128256, false, 0, 0, 0                                        \
    }
#define MISTRAL_7B                                                                                 \
    {                                                                                              \
        32, 4096, 32, 8, 128, 14336, 32000, false, 0, 0, 0                                         \
    }
#define QWEN3_235B                                                                                 \
    {                                                                                              \
        94, 4096, 64, 4, 128, 12288, 151936, false, 128, 8, 1536                                   \
    }
#define QWEN3_CODER_30B                                                                            \
    {                                                                                              \
        48, 2048, 32, 4, 128, 6144, 151936, false, 128, 8, 768                                     \
    }
#define QWEN25_7B                                                                                  \
    {                                                                                              \
        28, 3584, 28, 4, 128, 18944, 152064, false, 0, 0, 0                                        \
    }
#define QWEN25_05B                                                                                 \
    {                                                                                              \
        24, 896, 14, 2, 64, 4864, 151936, true, 0, 0, 0                                            \
    }
#define R1_QWEN_14B                                                                                \
    {                                                                                              \
        48, 5120, 40, 8, 128, 13824, 152064, false, 0, 0, 0                                        \
    }
#define DS_CODER_67B                                                                               \
    {                                                                                              \
        32, 4096, 32, 32, 128, 11008, 32256, false, 0, 0, 0                                        \
    }
#define QWEN3_32B                                                                                  \
    {                                                                                              \
        64, 5120, 64, 8, 128, 25600, 151936, false, 0, 0, 0                                        \
    }
#define NO_SHAPE                                                                                   \
    {                                                                                              \
        0, 0, 0, 0, 0, 0, 0, false, 0, 0, 0                                                        \
    }

#define V1   CORE_ENGINE_VLLM
#define V0   CORE_ENGINE_VLLM_V0
#define TRT  CORE_ENGINE_TRTLLM
#define BF16 CORE_PREC_BF16
#define FP16 CORE_PREC_FP16

/* A row names what differs from vLLM V1 on one H100 in bf16 without quantization, 16-token
 * blocks (zero members: setup() applies those). */
#define ROW(...)                                                                                   \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define QWEN3_235B_ON_8_L40S                                                                       \
    .shape = QWEN3_235B, .gpu = "l40s", .quant = CORE_QUANT_FP8, .tp = 8, .gpus = 8, .ep = 8,      \
    .max_model_len = 32768

/* clang-format off */
static const struct row rows[] = {
    /* Exact: the pool from the logged available memory. */
    ROW(.id = "K04", .check = EXACT, .shape = QWEN3_14B, .max_model_len = 32768, .logged = 6.51,
        .note = "Qwen3-14B"),
    ROW(.id = "K17", .check = EXACT, .shape = LLAMA31_8B_EAGLE, .max_model_len = 131072,
        .logged = 51.63, .note = "Llama 3.1 8B + 1 EAGLE draft layer (33 KV layers)"),
    ROW(.id = "K22", .check = EXACT, QWEN3_235B_ON_8_L40S, .logged = 10.65,
        .note = "Qwen3-235B-A22B FP8 on the title's 8 L40S: tp 8, ep 8"),
    ROW(.id = "K26", .check = EXACT, .shape = MISTRAL_7B, .gpu = "h200-sxm", .dtype = FP16,
        .quant = CORE_QUANT_GPTQ, .max_model_len = 32768, .logged = 102.56,
        .note = "Mistral 7B GPTQ"),
    ROW(.id = "K15", .check = EXACT, .shape = QWEN25_05B, .dtype = FP16, .quant = CORE_QUANT_INT8,
        .max_model_len = 2048, .block = 64, .logged = 4.53,
        .note = "TensorRT-LLM Qwen2.5-0.5B: 64-token blocks of fp16 K/V"),
    /* Formulas over logged figures. */
    ROW(.id = "K13", .check = NEEDED, .preset = "deepseek-v2-lite", .max_model_len = 32768,
        .note = "MLA latent 512 + 64, 27 layers"),
    ROW(.id = "K30", .check = NEEDED, .shape = QWEN3_CODER_30B, .gpu = "rtx-5090",
        .quant = CORE_QUANT_FP8, .max_model_len = 262144,
        .note = "the whole model's 48 layers (the check the issue reports)"),
    ROW(.id = "K30", .check = SUPPORTED, .shape = QWEN3_CODER_30B, .gpu = "rtx-5090",
        .quant = CORE_QUANT_FP8, .max_model_len = 262144, .logged = 3.18, .expect = 34736,
        .note = "estimated maximum model length from 3.18 GiB"),
    ROW(.id = "K41", .check = CONCURRENCY, .shape = LLAMA31_8B_EAGLE, .max_model_len = 131072,
        .logged = 25633, .note = "V1: blocks / ceil(len / 16), K17's 410,128 tokens"),
    ROW(.id = "K20", .check = CONCURRENCY, .shape = LLAMA31_8B, .engine = V0, .gpu = "h200-sxm",
        .tp = 8, .gpus = 8, .max_model_len = 131072, .logged = 464716,
        .expect = 56.73, .note = "V0: blocks x 16 / len"),
    ROW(.id = "K29", .check = CONCURRENCY, .shape = LLAMA31_8B, .engine = V0,
        .max_model_len = 32768, .logged = 190100,
        .expect = 92.82, .note = "V0 formula over the logged 190,100 blocks"),
    ROW(.id = "K31", .check = CONCURRENCY, .preset = "deepseek-v3", .gpu = "mi300x",
        .quant = CORE_QUANT_FP8, .tp = 8, .gpus = 8, .max_model_len = 32768,
        .logged = 107824.0 / 16, .expect = 3.29, .note = "V1 formula over the logged 107,824 tokens"),
    ROW(.id = "K38", .check = FRACTION, .shape = QWEN3_32B, .engine = CORE_ENGINE_SGLANG,
        .max_model_len = 32768,
        .note = "SGLang's default mem_fraction_static, Qwen3-32B on H100 (tp 1 assumed)"),
    /* What the engine measures. */
    ROW(.id = "K22", .check = WEIGHTS, QWEN3_235B_ON_8_L40S, .logged = 27.72,
        .note = "FP8: experts over ep 8, the rest over tp 8 (tp 4 x dp 2 would load 28.67)"),
    ROW(.id = "K26", .check = WEIGHTS, .shape = MISTRAL_7B, .gpu = "h200-sxm", .dtype = FP16,
        .quant = CORE_QUANT_GPTQ, .max_model_len = 32768, .logged = 3.8844,
        .note = "GPTQ 4-bit, group 128"),
    ROW(.id = "K20", .check = WEIGHTS, .shape = LLAMA31_8B, .engine = V0, .gpu = "h200-sxm",
        .tp = 8, .gpus = 8, .max_model_len = 131072, .logged = 1.9028, .note = "bf16 over tp 8"),
    ROW(.id = "K07", .check = WEIGHTS, .shape = R1_QWEN_14B, .engine = V0, .gpu = "rtx-4090",
        .tp = 2, .gpus = 2, .max_model_len = 131072, .logged = 13.9476,
        .note = "bf16 over tp 2 (the log's GB are GiB)"),
    ROW(.id = "K18", .check = ACTIVATIONS, .shape = QWEN25_7B, .engine = V0, .gpu = "rtx-4090",
        .max_model_len = 4096, .logged = 1.42,
        .note = "V0 profile at max(4096, 2048) tokens, 256 sequences"),
    ROW(.id = "K22", .check = ACTIVATIONS, QWEN3_235B_ON_8_L40S, .logged = 1.4,
        .note = "V1 profile at 2048 tokens, 256 sequences (< 70 GiB GPU)"),
    /* End to end: GPU, utilization and model only. */
    ROW(.id = "K17", .check = END_TO_END, .shape = LLAMA31_8B_EAGLE, .max_model_len = 131072,
        .util = 0.9, .note = "vLLM V1 0.9.1, H100, Llama 3.1 8B + EAGLE"),
    ROW(.id = "K22", .check = END_TO_END, QWEN3_235B_ON_8_L40S, .util = 0.9,
        .note = "vLLM V1, 8 L40S, Qwen3-235B FP8"),
    /* K05: vLLM 0.2.7 (engine_version vllm_0.2, core/serve_trace.c): peak = total - free after
     * the eager pass, AWQ's split-K buffers, Mixtral's per-expert loop over all 32,768 profiled
     * tokens (max(max_model_len, 2048)), each expert's output alive while the next runs (the
     * loop's current_hidden_states): 20,416 MiB reserved, within 0.6 % of the 20,287 MiB its log
     * and nvidia-smi line imply; the rest of its error is static memory (nvidia-smi's 13,751 MiB
     * besides the KV cache against memwall's 12,525 MiB of weights, context and communicators). */
    ROW(.id = "K05", .check = END_TO_END, .preset = "mixtral-8x7b", .engine = V0,
        .gpu = "a100-sxm-80gb", .dtype = FP16, .quant = CORE_QUANT_AWQ, .tp = 2, .gpus = 2,
        .version = CORE_VERSION_VLLM_0_2, .max_model_len = 32768, .util = 0.5, .eager = true,
        .expect = 6487.0 * 16, .note = "vLLM 0.2.7, 2 A100 80GB, Mixtral AWQ, eager"),
    /* K06 (June 2024: distributed_gpu_executor.py, vLLM 0.4.3-0.5.x): max_model_len left unset,
     * so vllm/config.py (_get_and_verify_max_len) derives it as max_position_embeddings x the
     * linear rope_scaling factor of the model's config.json: 16,384 x 4 = 65,536; chunked
     * prefill was not yet turned on by default above 32k in that release, so SchedulerConfig's
     * max_num_batched_tokens = max(max_model_len, 2048) = 65,536 tokens: the profile runs 256
     * dummy sequences of 256 tokens. (8,112 tokens hold no 65,536-token request, so that start
     * would stop at the worker's raise_if_cache_size_invalid; the block count is logged first.)
     * Its release (engine_version vllm_0.4) takes the peak as init_gpu_memory - free: the
     * caching allocator's reserved segments, replayed (4,724 MiB against 4,112 live: the model's
     * loop holds each layer's input until the layer returns; the cuBLAS workspace that the
     * profile's first GEMM takes opens a 20 MiB segment). */
    ROW(.id = "K06", .check = END_TO_END, .shape = DS_CODER_67B, .engine = V0,
        .version = CORE_VERSION_VLLM_0_4, .gpu = "t4",
        .dtype = FP16, .tp = 2, .gpus = 2, .max_model_len = 65536, .tokens = 65536, .util = 0.9,
        .expect = 507.0 * 16, .note = "vLLM V0 (mid 2024), 2 T4, deepseek-coder-6.7b at 65,536"),
    /* K14's engine, as its log's flags build it with examples/llama/build.py of that release
     * (TensorRT-LLM late 2023): --tokens_per_block 16 (the row's), --max_batch_size 25,
     * --max_input_len left at its default 2048, --max_num_tokens left at None, so the engine's
     * token profile (generation_mixin/prepare_inputs, remove_input_padding) reaches
     * max(max_input_len x max_batch_size, beam x batch) = 2048 x 25 = 51,200 tokens: the engine's
     * activation memory is sized for that pass, by TensorRT's liveness analysis of the layer's
     * graph (the residual and the MLP's act, gate and product: 3,625 MiB + the logits). */
    ROW(.id = "K14", .check = END_TO_END, .preset = "llama2-7b", .engine = TRT, .gpu = "a10",
        .dtype = FP16, .max_model_len = 4096, .block = 16, .seqs = 25, .tokens = 2048 * 25,
        .util = 0.95, .note = "TensorRT-LLM (Oct 2023), A10, Llama 2 7B: 51,200-token engine"),
};
/* clang-format on */
#define N_ROWS  (sizeof rows / sizeof rows[0])
#define K38_ROW 12

/* The kv_capacity rows not checked, and why. */
static const struct {
    const char *id, *why;
} unused[] = {
    {"K07", "pool: AMBIGUOUS in the data (81,536 tokens imply 7.46 GiB, the log says 8.69 GiB: two "
            "ranks); its weights are checked"},
    {"K08", "Qwen2.5-VL (a vision tower memwall does not model); 0.13 GiB left of 37.41 is below "
            "any model's resolution"},
    {"K39", "the same run as K08 (driver rank)"},
    {"K23", "the same log as K22: its 10.65 GiB is K22's exact-check input"},
    {"K11", "the model is not named"},
    {"K12", "the model is not named"},
    {"K16", "the model is undisclosed"},
    {"K19", "the model is not named"},
    {"K32", "the checkpoint is not named"},
    {"K33", "hybrid Gated-DeltaNet model, config not read: the GDN layers' heads and dims (the "
            "state page) are not in the row, and no available memory is logged"},
    {"K34", "Gemma 4 sliding-window model, config not read, max_model_len not stated"},
    {"K35", "Gemma 4 E2B (shared KV across layers), config not read"},
    {"K42", "TensorRT-LLM's doc log: the model is not named (only its fraction arithmetic, 0.9 x "
            "70.48 = 63.43 GiB vs the logged 63.44, is checked)"},
};

/* ---- the CSV ------------------------------------------------------------------------------ */

struct measured {
    char id[8], kind[24], unit[64];
    double value;
};
static struct measured data[ROWS_MAX];
static int data_count;

static void load(void)
{
    static char fields[FIELDS][FIELD_MAX];
    char line[16384];
    FILE *fp = fopen(MEMWALL_SERVING_CSV, "r");

    if (fp == NULL || fgets(line, sizeof line, fp) == NULL) {
        fprintf(stderr, "cannot read %s\n", MEMWALL_SERVING_CSV);
        exit(EXIT_FAILURE);
    }
    while (fgets(line, sizeof line, fp) != NULL && data_count < ROWS_MAX) {
        struct measured *m = &data[data_count];

        if (csv_split(line, &fields[0][0], FIELDS, FIELD_MAX) < FIELDS)
            continue;
        snprintf(m->id, sizeof m->id, "%.7s", fields[0]);
        snprintf(m->kind, sizeof m->kind, "%.23s", fields[1]);
        snprintf(m->unit, sizeof m->unit, "%.63s", fields[28]);
        if (strcmp(m->kind, "kv_capacity") != 0)
            continue;
        m->value = csv_num(fields[27], 0);
        data_count++;
    }
    fclose(fp);
}

static const struct measured *find(const char *id)
{
    for (int i = 0; i < data_count; i++)
        if (strcmp(data[i].id, id) == 0)
            return &data[i];
    return NULL;
}

/* ---- one row ------------------------------------------------------------------------------ */

static void setup(const struct row *r, struct core_serve_input *in)
{
    const struct shape *s = &r->shape;

    core_serve_input_init(in);
    if (r->preset != NULL) {
        in->base.preset = core_preset_find(r->preset);
    } else {
        in->base.layers = s->layers;
        in->base.hidden = s->hidden;
        in->base.heads = s->heads;
        in->base.kv_heads = s->kv_heads;
        in->base.head_dim = s->head_dim;
        in->base.ffn_hidden = s->ffn;
        in->base.vocab = s->vocab;
        in->base.gated_mlp = CORE_FLAG_YES;
        in->base.tied_embeddings = s->tied ? CORE_FLAG_YES : CORE_FLAG_NO;
        if (s->experts > 0) {
            in->base.experts = s->experts;
            in->base.experts_per_token = s->top_k;
            in->base.moe_ffn_hidden = s->moe_ffn;
        }
    }
    in->engine = r->engine;
    in->engine_version = r->version;
    in->base.gpu = core_gpu_find(r->gpu != NULL ? r->gpu : "h100-sxm");
    in->base.precision = r->dtype;
    in->quantization = r->quant;
    in->kv_cache_dtype = r->kv_fp8 ? CORE_KV_FP8 : CORE_KV_AUTO;
    in->base.tp = r->tp > 0 ? r->tp : 1;
    in->base.gpus = r->gpus > 0 ? r->gpus : 1;
    in->base.ep = r->ep > 0 ? r->ep : 1;
    in->max_model_len = r->max_model_len;
    in->block_size = r->block; /* 0: the engine's (16 for vLLM) */
    in->max_num_seqs = r->seqs;
    in->max_num_batched_tokens = r->tokens;
    in->enforce_eager = r->eager;
    if (r->util > 0 && r->engine == CORE_ENGINE_TRTLLM)
        in->kv_cache_free_gpu_mem_fraction = r->util;
    else if (r->util > 0)
        in->gpu_memory_utilization = r->util;
}

static void serve(const struct core_serve_input *in, struct core_serve_result *out)
{
    struct core_problems p = {0};
    enum core_status st = core_serve(in, out, &p);

    ck_assert_msg(st == CORE_OK, "core_serve: %s: %s", p.count > 0 ? p.items[0].field : "?",
                  p.count > 0 ? p.items[0].message : "?");
}

/* The blocks an available figure printed with two decimals (GiB) allows: [lo, hi]. */
static void block_interval(double gib, int64_t row, int64_t *lo, int64_t *hi)
{
    *lo = (int64_t)floor((gib - 0.005) * GIB / (double)row);
    *hi = (int64_t)floor((gib + 0.005) * GIB / (double)row);
}

struct outcome {
    double predicted, measured, error; /* error: relative, or absolute for a formula */
    bool exact;
};

/* Pool sized from the logged available memory: floor(A x 2^30) bytes, and the interval. */
static struct outcome check_exact(const struct row *r, const struct measured *m)
{
    struct core_serve_input in;
    struct core_serve_result out;
    int64_t lo, hi, logged_blocks;
    struct outcome o = {0};

    setup(r, &in);
    in.kv_cache_memory = (int64_t)floor(r->logged * GIB);
    serve(&in, &out);
    logged_blocks = (int64_t)m->value / out.kv.block_size;
    block_interval(r->logged, out.kv.page_bytes * out.kv.layers, &lo, &hi);
    o.predicted = (double)out.kv.tokens;
    o.measured = m->value;
    o.exact =
        logged_blocks >= lo && logged_blocks <= hi && (int64_t)m->value % out.kv.block_size == 0;
    o.error = (o.predicted - o.measured) / o.measured;
    return o;
}

static struct outcome check_formula(const struct row *r, const struct measured *m)
{
    struct core_serve_input in;
    struct core_serve_result out;
    struct outcome o = {0};

    setup(r, &in);
    if (r->check == CONCURRENCY) { /* a pool of exactly the logged blocks */
        in.kv_cache_memory = 1;    /* resolve the page first */
        serve(&in, &out);
        in.kv_cache_memory = (int64_t)r->logged * out.kv.page_bytes * out.kv.layers;
    } else if (r->check == SUPPORTED) {
        in.kv_cache_memory = (int64_t)floor(r->logged * GIB);
        o.measured = r->expect;
    } else if (r->check == NEEDED) {
        in.kv_cache_memory = 1;
    }
    serve(&in, &out);
    if (r->check != SUPPORTED)
        o.measured = r->expect > 0 ? r->expect : m->value;
    if (r->check == NEEDED) /* one max_model_len request, GiB */
        o.predicted = (double)out.kv.bytes_per_token * (double)r->max_model_len / GIB;
    else if (r->check == SUPPORTED)
        o.predicted = (double)out.kv.max_model_len_supported;
    else if (r->check == CONCURRENCY)
        o.predicted = out.kv.max_concurrency;
    else /* FRACTION */
        o.predicted = out.resolved.mem_fraction_static;
    o.error = o.predicted - o.measured;
    /* The log prints 2 decimals (GiB, x); an estimated length, the blocks 2 decimals allow. */
    if (r->check == SUPPORTED) {
        int64_t lo, hi, blocks = (int64_t)o.measured / out.kv.block_size;

        block_interval(r->logged, out.kv.page_bytes * out.kv.layers, &lo, &hi);
        o.exact = blocks >= lo && blocks <= hi;
    } else {
        o.exact = fabs(o.error) <= 0.005 + 1e-9;
    }
    return o;
}

static struct outcome check_model(const struct row *r, const struct measured *m)
{
    struct core_serve_input in;
    struct core_serve_result out;
    struct outcome o = {0};

    setup(r, &in);
    serve(&in, &out);
    if (r->check == WEIGHTS) {
        o.predicted = (double)out.per_gpu.weights / GIB;
        o.measured = r->logged;
    } else if (r->check == ACTIVATIONS) {
        o.predicted = (double)out.per_gpu.activations / GIB;
        o.measured = r->logged;
    } else { /* END_TO_END: tokens in the pool (V0 logs blocks: expect holds their tokens) */
        o.predicted = (double)out.kv.tokens;
        o.measured = r->expect > 0 ? r->expect : m->value;
    }
    o.error = (o.predicted - o.measured) / o.measured;
    return o;
}

static struct outcome evaluate(const struct row *r)
{
    const struct measured *m = find(r->id);

    ck_assert_msg(m != NULL, "%s is not a kv_capacity row of the file", r->id);
    switch (r->check) {
    case EXACT:
        return check_exact(r, m);
    case NEEDED:
    case SUPPORTED:
    case CONCURRENCY:
    case FRACTION:
        return check_formula(r, m);
    case WEIGHTS:
    case ACTIVATIONS:
    case END_TO_END:
        break;
    }
    return check_model(r, m);
}

/* ---- tests -------------------------------------------------------------------------------- */

static bool listed(const char *id)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (strcmp(rows[i].id, id) == 0)
            return true;
    for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++)
        if (strcmp(unused[i].id, id) == 0)
            return true;
    return false;
}

START_TEST(every_row_is_used_or_named)
{
    ck_assert_int_eq(data_count, 29);
    for (int i = 0; i < data_count; i++)
        ck_assert_msg(listed(data[i].id), "%s is neither checked nor named as unused", data[i].id);
}
END_TEST

/* Where the log states the available memory, the blocks and tokens are the engine's: exact for
 * every row but K22, whose two lines come from an 8-GPU log of two data-parallel engines (the
 * pool line 0.26 % above what the available line allows). */
START_TEST(exact_from_the_logged_available_memory)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        struct outcome o;

        if (rows[i].check != EXACT)
            continue;
        o = evaluate(&rows[i]);
        if (strcmp(rows[i].id, "K22") == 0)
            ck_assert_msg(fabs(o.error) < 0.003, "K22 %.0f vs %.0f", o.predicted, o.measured);
        else
            ck_assert_msg(o.exact, "%s: %.0f tokens predicted, %.0f logged", rows[i].id,
                          o.predicted, o.measured);
    }
}
END_TEST

/* K26 exactly, as the issue asks: floor(102.56 GiB) -> 52,510 blocks, 840,160 tokens, 25.64x. */
START_TEST(k26_exact)
{
    struct core_serve_input in;
    struct core_serve_result out;

    setup(&rows[3], &in);
    in.kv_cache_memory = (int64_t)floor(102.56 * GIB);
    serve(&in, &out);
    ck_assert_int_eq(out.kv.tokens, 840160);
    ck_assert(fabs(out.kv.max_concurrency - 25.64) < 0.005);
}
END_TEST

START_TEST(formulas_over_logged_figures)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        enum check c = rows[i].check;
        struct outcome o;

        if (c != NEEDED && c != SUPPORTED && c != CONCURRENCY)
            continue;
        o = evaluate(&rows[i]);
        ck_assert_msg(o.exact, "%s %s: %.4f vs %.4f", rows[i].id, check_names[c], o.predicted,
                      o.measured);
    }
}
END_TEST

/* SGLang's default fraction (server_args.py) for an H100 at tp 1 is 0.835; K38 reports 0.828
 * from a build whose rule we did not read (commit not in the excerpt): within 0.01. */
START_TEST(sglang_fraction_near_k38)
{
    struct outcome o = evaluate(&rows[K38_ROW]);

    ck_assert_str_eq(rows[K38_ROW].id, "K38");
    ck_assert_msg(fabs(o.error) < 0.01, "%.3f vs %.3f", o.predicted, o.measured);
}
END_TEST

/* Weights as loaded: within 3 % of every logged figure. */
START_TEST(weights_as_loaded)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        struct outcome o;

        if (rows[i].check != WEIGHTS)
            continue;
        o = evaluate(&rows[i]);
        ck_assert_msg(fabs(o.error) < 0.03, "%s: %.3f GiB vs %.3f", rows[i].id, o.predicted,
                      o.measured);
    }
}
END_TEST

/* End to end, the engines' own budget from the GPU, the utilization and the model: the table
 * (MEMWALL_VALIDATION_TABLE=1) gives each row's error; the suite guards the MAPE at its level. */
static double end_to_end_mape(bool print)
{
    double sum = 0;
    int n = 0;

    for (size_t i = 0; i < N_ROWS; i++) {
        struct outcome o = evaluate(&rows[i]);

        if (print)
            printf("| %s | %s | %s | %.6g | %.6g | %+.1f %% |\n", rows[i].id,
                   check_names[rows[i].check], rows[i].note, o.predicted, o.measured,
                   rows[i].check == NEEDED || rows[i].check == SUPPORTED ||
                           rows[i].check == CONCURRENCY || rows[i].check == FRACTION
                       ? 100 * o.error / o.measured
                       : 100 * o.error);
        if (rows[i].check == END_TO_END) {
            sum += fabs(o.error);
            n++;
        }
    }
    return n > 0 ? sum / n : 0;
}

START_TEST(end_to_end_kv_pool)
{
    double mape = end_to_end_mape(getenv("MEMWALL_VALIDATION_TABLE") != NULL);

    printf("end-to-end KV pool MAPE: %.1f %% over the 5 fully specified rows\n", 100 * mape);
    fflush(stdout);
    ck_assert_msg(mape < END_TO_END_MAPE_GUARD, "MAPE %.3f", mape);
    /* The two rows of current engines (vLLM V1, 2025) and TensorRT-LLM's K14 (+0.6 %: the
     * execution context as TensorRT's liveness plan of a 51,200-token pass, the normed input
     * dead at the layer's peak; -6.5 % before): each within 5 %. */
    for (size_t i = 0; i < N_ROWS; i++) {
        struct outcome o;
        double tol = 0.05;

        if (rows[i].check != END_TO_END || rows[i].engine == CORE_ENGINE_VLLM_V0)
            continue;
        o = evaluate(&rows[i]);
        ck_assert_msg(fabs(o.error) < tol, "%s: %.0f vs %.0f tokens", rows[i].id, o.predicted,
                      o.measured);
    }
}
END_TEST

/* core/serve_validation.c's KV pool figures are what the end-to-end rows give, per engine: the
 * mean absolute error over the rows that set no constant (K22 set the CUDA context: tuning). */
START_TEST(kv_expected_error_table_matches_the_data)
{
    for (int e = 0; e < CORE_ENGINE_COUNT; e++) {
        const struct core_validation *v = &core_serve_kv_validation[e];
        double sum = 0;
        int unseen = 0, tuning = 0;

        for (size_t i = 0; i < N_ROWS; i++) {
            if (rows[i].check != END_TO_END || (int)rows[i].engine != e)
                continue;
            if (strcmp(rows[i].id, "K22") == 0) {
                tuning++;
                continue;
            }
            sum += fabs(evaluate(&rows[i]).error);
            unseen++;
        }
        if (getenv("MEMWALL_VALIDATION_TABLE") != NULL && unseen + tuning > 0)
            printf("kv_pool expected_error | %s | %d unseen | %d tuning | %.3f |\n",
                   core_engine_names[e], unseen, tuning, sum / unseen);
        if (unseen == 0) {
            ck_assert_msg(v->expected_error < 0, "%s: a figure but no unseen row",
                          core_engine_names[e]);
            continue;
        }
        ck_assert_msg(fabs(v->expected_error - sum / unseen) < 0.0005 && v->unseen_runs == unseen &&
                          v->tuning_runs == tuning,
                      "%s: table %.3f over %d (+%d tuning), data %.3f over %d (+%d)",
                      core_engine_names[e], v->expected_error, v->unseen_runs, v->tuning_runs,
                      sum / unseen, unseen, tuning);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("validation_serve_mem");
    TCase *t = tcase_create("kv_capacity");

    tcase_add_test(t, every_row_is_used_or_named);
    tcase_add_test(t, exact_from_the_logged_available_memory);
    tcase_add_test(t, k26_exact);
    tcase_add_test(t, formulas_over_logged_figures);
    tcase_add_test(t, sglang_fraction_near_k38);
    tcase_add_test(t, weights_as_loaded);
    tcase_add_test(t, end_to_end_kv_pool);
    tcase_add_test(t, kv_expected_error_table_matches_the_data);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    load();
    return check_main_run(suite());
}
