/*
 * test_serve_time.c - the serving time model (core/serve_time.c) against measured timing rows.
 *
 * Reads the decode_throughput and prefill rows of serving-measured.csv (PROVENANCE-serving-time.md
 * says where each comes from and how each row becomes a model input), predicts the measured figure
 * and fails when the mean absolute percentage error over the rows whose batch or load is stated
 * exceeds 12 %. The rows' settings the CSV states as text (GPU, preset, weight format, engine,
 * how the concurrency follows from the stated load) are in the table `specs` below, one
 * designated-initializer row per measurement.
 *
 * Honesty: the constants in core/serve_time.c were set from the sources they cite before this
 * suite existed; the leave-one-source-out test re-tunes two global factors (HBM and GEMM
 * efficiency) on all sources but one and reports the error on the one left out, i.e. what
 * tuning on these rows would buy on a source it never saw.
 *
 * Run with --table to print the comparison and exit; --cv prints the expected error per engine and
 * GPU generation over the rows that informed no term (core/serve_validation.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "csv.h"
#include "serve_time.h"
#include "serve_validation.h"
#include "serve_timing.h"

#ifndef MEMWALL_SERVING_CSV
#error "MEMWALL_SERVING_CSV must name the serving measurements"
#endif
#ifndef MEMWALL_SERVING_HOLDOUT_CSV
#error "MEMWALL_SERVING_HOLDOUT_CSV must name the hold-out measurements"
#endif

#define MAPE_LIMIT 0.12
#define FIELDS     30
#define FIELD_MAX  800
#define ROWS_MAX   40
#define HOLD_MAX   300
/* The hold-out (serving-holdout.csv: TensorRT-LLM 0.14's and 0.20's max-throughput tables, two
 * other releases of the engine the in-sample table comes from): no constant or term was chosen
 * looking at it. At first contact the model gave 12.3 % on 0.20 and 27.3 % on 0.14 (an older
 * release that ran the same tensor-parallel configurations 13-30 % slower than 0.17); the
 * suite guards those levels. */
#define HOLDOUT_LIMIT_NEW 0.15
#define HOLDOUT_LIMIT_OLD 0.30

/* The weight formats of the rows: 16-bit, FP8 W8A8 (TensorRT-LLM / ModelOpt: the linear layers
 * in FP8, embeddings and lm_head kept in 16 bits), GPTQ 4-bit group 128 (4 bits + an fp16 scale
 * and a 4-bit zero per 128 weights = 4 + 20/128 bits; embeddings and lm_head in fp16). */
enum fmt { FMT_16, FMT_FP8, FMT_GPTQ };

/* How a row's concurrency follows from what it states. */
enum load {
    LOAD_BATCH,  /* the `batch` column: a static batch */
    LOAD_TRTMAX, /* trtllm-bench at infinite rate: its own estimate of requests in the KV cache */
    LOAD_LITTLE, /* online: Little's law, rps x (output_len - 1) x ITL of the same table row */
};

/* Sources, for the leave-one-source-out test and the per-source table. */
enum src { SRC_TRT17, SRC_TRT14, SRC_FT, SRC_VLLM, SRC_COUNT };
static const char *const src_names[SRC_COUNT] = {"trtllm-0.17-max", "trtllm-0.14-online",
                                                 "fastertransformer", "vllm-v1"};

struct spec {
    const char *id, *preset, *gpu;
    enum fmt fmt;
    bool fp8_kv, graphs;
    enum load load;
    enum src src;
    double rps;            /* LOAD_LITTLE: the table's Tput (req/s) */
    const char *itl_row;   /* LOAD_LITTLE: the row holding the same run's mean ITL */
    double device_gib;     /* LOAD_TRTMAX: the driver's total memory (torch), GiB */
    int64_t input, output; /* overrides where the CSV does not state them */
    const char *excluded;  /* non-NULL: the reason the row is not scored */
};

#define TRT17(i, p, g, f, gib)                                                                     \
    {                                                                                              \
        .id = (i), .preset = (p), .gpu = (g), .fmt = (f), .fp8_kv = (f) == FMT_FP8,                \
        .load = LOAD_TRTMAX, .src = SRC_TRT17, .device_gib = (gib)                                 \
    }
#define TRT14(i, p, g, rate, itl)                                                                  \
    {                                                                                              \
        .id = (i), .preset = (p), .gpu = (g), .fmt = FMT_16, .load = LOAD_LITTLE,                  \
        .src = SRC_TRT14, .rps = (rate), .itl_row = (itl)                                          \
    }

/* Device memory as torch reports it (docs/serving.md, usable memory): H100 80GB 79.19 GiB,
 * H200 139.81 GiB, A100 80GB 79.15 GiB, L40S 44.42 GiB. */
static const struct spec specs[] = {
    TRT17("D01", "llama3-8b", "h200-sxm", FMT_FP8, 139.81),
    TRT17("D02", "llama3-8b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D03", "llama3-8b", "l40s", FMT_FP8, 44.42),
    TRT17("D04", "llama3-8b", "a100-sxm-80gb", FMT_16, 79.15),
    TRT17("D05", "llama3-8b", "h200-sxm", FMT_FP8, 139.81),
    TRT17("D06", "llama3-8b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D07", "llama3-8b", "a100-sxm-80gb", FMT_16, 79.15),
    TRT17("D08", "llama3-8b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D09", "llama3-8b", "a100-sxm-80gb", FMT_16, 79.15),
    TRT17("D10", "llama3-8b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D11", "llama3-70b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D12", "llama3-70b", "a100-sxm-80gb", FMT_16, 79.15),
    TRT17("D13", "llama3-70b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D14", "llama3-70b", "h200-sxm", FMT_FP8, 139.81),
    TRT17("D15", "llama3-70b", "h100-sxm", FMT_FP8, 79.19),
    TRT17("D16", "llama3.1-405b", "h200-sxm", FMT_FP8, 139.81),
    TRT17("D17", "mixtral-8x7b", "h100-sxm", FMT_FP8, 79.19),
    TRT14("D18", "llama3-8b", "h100-sxm", 2, "D18"),
    TRT14("D19", "llama3-8b", "h100-sxm", 2, "D18"),
    TRT14("D20", "llama3-8b", "h100-sxm", 37, "D20"),
    {.id = "D21", .excluded = "TTFT at an infinite request rate is queueing (3.3 s of it)"},
    TRT14("D22", "llama3-8b", "h200-sxm", 2, "D22"),
    TRT14("D23", "llama3-8b", "h200-sxm", 2, "D22"),
    TRT14("D24", "llama3-70b", "h100-sxm", 2, "D24"),
    TRT14("D25", "llama3-70b", "h100-sxm", 2, "D24"),
    TRT14("D26", "llama3-70b", "h100-sxm", 16, "D26"),
    {.id = "D27", .excluded = "TTFT at an infinite request rate is queueing (9.1 s of it)"},
    TRT14("D28", "llama3-70b", "h200-sxm", 2, "D28"),
    TRT14("D29", "llama3-70b", "h200-sxm", 2, "D28"),
    TRT14("D30", "llama3-70b", "h200-sxm", 16, "D30"),
    {.id = "D31", .excluded = "TTFT at an infinite request rate is queueing (9.2 s of it)"},
    {.id = "D51", .preset = "opt-13b", .gpu = "a100-sxm-40gb", .load = LOAD_BATCH, .src = SRC_FT},
    {.id = "D52", .preset = "opt-13b", .gpu = "a100-sxm-40gb", .load = LOAD_BATCH, .src = SRC_FT},
    {.id = "D53", .preset = "opt-13b", .gpu = "a100-sxm-40gb", .load = LOAD_BATCH, .src = SRC_FT},
    {.id = "D54", .preset = "opt-13b", .gpu = "a100-sxm-40gb", .load = LOAD_BATCH, .src = SRC_FT},
    /* MT-Bench first-turn prompts and answers: ~100 and ~200 tokens (assumed; not stated). */
    {.id = "D60",
     .preset = "llama3-8b",
     .gpu = "h100-sxm",
     .graphs = true,
     .load = LOAD_BATCH,
     .src = SRC_VLLM,
     .input = 100,
     .output = 200},
    {.id = "D63",
     .excluded = "ExLlama (not an engine memwall models) and an approximate forum figure ('around "
                 "9 t/s'); the roofline gives ~35 tokens/s for 36 GB of 4-bit weights at 1.2 TB/s"},
};
#define SPEC_COUNT (sizeof specs / sizeof specs[0])

/* What a row measures. */
enum what { W_TPS, W_TPOT, W_TTFT };

struct row {
    const struct spec *spec;
    enum what what;
    double measured; /* tokens/s or seconds */
    double predicted;
    int64_t concurrency;
    struct core_serve_time_input in;
};

static struct row rows[ROWS_MAX];
static int row_count;

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "serving validation: " __VA_ARGS__);                                   \
            fputc('\n', stderr);                                                                   \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

/* The FasterTransformer rows run kipply's 13B test model (llm-analysis test-13b.json): OPT-13B's
 * shape (40 layers, d 5120, 40 heads, f 4d, vocab 50272, tied, learned positions over 2048). */
static const struct core_arch opt13b = {.layers = 40,
                                        .hidden = 5120,
                                        .heads = 40,
                                        .kv_heads = 40,
                                        .head_dim = 128,
                                        .ffn_hidden = 20480,
                                        .vocab = 50272,
                                        .tied_embeddings = true,
                                        .learned_positions = 2048};

static const struct spec *spec_of(const char *id)
{
    for (size_t i = 0; i < SPEC_COUNT; i++)
        if (strcmp(specs[i].id, id) == 0)
            return &specs[i];
    return NULL;
}

/* Weight bytes per GPU of the format, and the embedding / expert shares (docs/serving.md). */
static void weight_bytes(const struct core_arch *a, enum fmt f, int64_t tp,
                         struct core_serve_time_input *in)
{
    struct core_arch_counts c;
    double bits = f == FMT_16 ? 16.0 : f == FMT_FP8 ? 8.0 : 4.0 + 20.0 / 128.0;
    double emb, out, linear;

    NEED(core_arch_count(a, &c), "invalid architecture");
    emb = (double)c.embedding * 2.0;
    out = (double)c.output * 2.0;
    linear = (double)(c.total - c.embedding - c.output) * bits / 8.0;
    in->weight_bytes = (emb + out + linear) / (double)tp;
    in->embedding_bytes = emb / (double)tp;
    in->expert_bytes = (double)c.experts * bits / 8.0 / (double)tp;
}

static void hardware(const char *gpu, enum fmt f, struct core_serve_time_input *in)
{
    int g = core_gpu_find(gpu);

    NEED(g >= 0, "unknown gpu %s", gpu);
    in->generation = core_gpus[g].generation;
    in->hbm_tbps = core_gpus[g].hbm_tbps;
    in->link_gbs = core_gpus[g].scale_up_gbs;
    in->attention_tflops =
        core_gpus[g].bf16_tflops > 0 ? core_gpus[g].bf16_tflops : core_gpus[g].fp16_tflops;
    in->gemm_tflops = f == FMT_FP8 ? core_gpus[g].fp8_tflops : in->attention_tflops;
    in->math = f == FMT_FP8 ? CORE_SERVE_MATH_FP8 : CORE_SERVE_MATH_16;
}

/* trtllm-bench's own estimate of the requests its KV cache holds (tensorrt_llm/bench/build/
 * build.py, calc_engine_setting / finetune_setting): 0.95 x (device GiB x GPUs - params in 1e9 x
 * bytes per weight) / (2 L max(tp, k) h_d bytes / 2^30 per token) / (input + output), capped at
 * 4096. */
static int64_t trt_max_requests(const struct core_arch *a, const struct spec *s, int64_t tp,
                                int64_t in_len, int64_t out_len)
{
    double params = (double)core_arch_params(a) / 1e9, bpe = s->fmt == FMT_FP8 ? 1.0 : 2.0;
    double kvb = s->fp8_kv ? 1.0 : 2.0;
    double heads = (double)(a->kv_heads > tp ? a->kv_heads : tp);
    double per_token = 2.0 * (double)a->layers * heads * (double)a->head_dim * kvb / 1073741824.0;
    double mem = 0.95 * (s->device_gib * (double)tp - params * bpe);
    double req = mem / per_token / (double)(in_len + out_len);

    return (int64_t)(req < 4096 ? req : 4096);
}

static enum what what_of(const char *kind, const char *unit)
{
    if (strcmp(kind, "prefill") == 0)
        return W_TTFT;
    if (strstr(unit, "ms") == unit)
        return W_TPOT;
    return W_TPS;
}

static double measured_of(enum what w, double v)
{
    return w == W_TPS ? v : v / 1000.0;
}

/* The same run's mean ITL (seconds) from the row that reports it. */
static double itl_of(char all[][FIELDS][FIELD_MAX], int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(all[i][0], id) == 0)
            return csv_num(all[i][27], 0) / 1000.0;
    NEED(0, "no row %s", id);
    return 0;
}

static void row_input(char f[FIELDS][FIELD_MAX], const struct spec *s, double itl, struct row *r)
{
    struct core_serve_time_input *in = &r->in;
    int p = s->preset && strcmp(s->preset, "opt-13b") != 0 ? core_preset_find(s->preset) : -1;
    int64_t tp = csv_whole(f[16], 1), kv;

    NEED(p >= 0 || (s->preset && strcmp(s->preset, "opt-13b") == 0), "%s: preset", s->id);
    memset(in, 0, sizeof *in);
    in->arch = p >= 0 ? core_presets[p].arch : opt13b;
    in->tp = tp;
    in->pp = 1;
    in->input_len = s->input > 0 ? s->input : csv_whole(f[25], 0);
    in->output_len = s->output > 0 ? s->output : csv_whole(f[26], 0);
    NEED(in->input_len > 0 && in->output_len > 0, "%s: lengths", s->id);
    hardware(s->gpu, s->fmt, in);
    weight_bytes(&in->arch, s->fmt, tp, in);
    kv = in->arch.kv_heads / tp > 0 ? in->arch.kv_heads / tp : 1;
    in->kv_bytes_per_token = 2.0 * (double)in->arch.layers * (double)kv *
                             (double)in->arch.head_dim * (s->fp8_kv ? 1 : 2);
    in->cuda_graphs = s->graphs;
    in->usd_per_gpu_hour = -1;
    switch (s->load) {
    case LOAD_BATCH:
        /* "1" or "1 (--max_num_seqs 1)": the leading number. */
        in->concurrency = (int64_t)strtod(f[24], NULL);
        in->continuous = false;
        break;
    case LOAD_TRTMAX:
        in->concurrency = trt_max_requests(&in->arch, s, tp, in->input_len, in->output_len);
        in->continuous = true;
        break;
    case LOAD_LITTLE:
        in->concurrency = (int64_t)llround(s->rps * (double)(in->output_len - 1) * itl);
        in->continuous = true;
        break;
    }
    if (in->concurrency < 1)
        in->concurrency = 1;
    r->concurrency = in->concurrency;
}

static void load_rows(void)
{
    static char all[80][FIELDS][FIELD_MAX];
    char line[4096];
    int n = 0;
    FILE *fp;

    if (row_count > 0)
        return;
    fp = fopen(MEMWALL_SERVING_CSV, "r");
    NEED(fp != NULL, "cannot open %s", MEMWALL_SERVING_CSV);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty file");
    while (n < 80 && fgets(line, sizeof line, fp) != NULL)
        if (csv_split(line, &all[n][0][0], FIELDS, FIELD_MAX) >= 29)
            n++;
    fclose(fp);
    for (int i = 0; i < n; i++) {
        const struct spec *s;
        struct row *r;

        if (strcmp(all[i][1], "decode_throughput") != 0 && strcmp(all[i][1], "prefill") != 0)
            continue;
        s = spec_of(all[i][0]);
        NEED(s != NULL, "row %s has no spec (add one, or exclude it with a reason)", all[i][0]);
        if (s->excluded != NULL)
            continue;
        NEED(row_count < ROWS_MAX, "too many rows");
        r = &rows[row_count++];
        r->spec = s;
        r->what = what_of(all[i][1], all[i][28]);
        r->measured = measured_of(r->what, csv_num(all[i][27], 0));
        row_input(all[i], s, s->itl_row ? itl_of(all, n, s->itl_row) : 0.0, r);
    }
}

static double predict(const struct row *r, const struct core_serve_gen *gens)
{
    struct core_serve_time t;

    core_serve_time_compute(&r->in, gens, &t);
    switch (r->what) {
    case W_TPS:
        return t.output_tokens_per_second;
    case W_TPOT:
        return t.tpot_seconds;
    case W_TTFT:
        return t.ttft_seconds;
    }
    return 0;
}

/* MAPE over the rows of source `only` (SRC_COUNT: all), skipping `skip` (SRC_COUNT: none). */
static double mape(const struct core_serve_gen *gens, int only, int skip)
{
    double sum = 0;
    int n = 0;

    for (int i = 0; i < row_count; i++) {
        int s = (int)rows[i].spec->src;
        if ((only != SRC_COUNT && s != only) || s == skip)
            continue;
        sum += fabs(predict(&rows[i], gens) / rows[i].measured - 1.0);
        n++;
    }
    return n ? sum / n : 0.0;
}

/* The table with the HBM and GEMM efficiencies of every generation scaled. */
static void scaled(double hbm, double gemm, struct core_serve_gen *out)
{
    for (int g = 0; g < CORE_GEN_COUNT; g++) {
        out[g] = core_serve_gens[g];
        out[g].hbm = fmin(out[g].hbm * hbm, 1.0);
        out[g].gemm = fmin(out[g].gemm * gemm, 1.0);
        out[g].gemm8 = fmin(out[g].gemm8 * gemm, 1.0);
    }
}

/* Leave-one-source-out: the two factors that minimise the MAPE of the other sources, scored on
 * the one left out. */
static double loso(int left_out, double *hbm_best, double *gemm_best)
{
    static struct core_serve_gen g[CORE_GEN_COUNT];
    double best = 1e9;

    for (double h = 0.80; h <= 1.2001; h += 0.02)
        for (double m = 0.80; m <= 1.2001; m += 0.02) {
            scaled(h, m, g);
            double e = mape(g, SRC_COUNT, left_out);
            if (e < best) {
                best = e;
                *hbm_best = h;
                *gemm_best = m;
            }
        }
    scaled(*hbm_best, *gemm_best, g);
    return mape(g, left_out, SRC_COUNT);
}

/* ---- Hold-out: TensorRT-LLM 0.14.0's max-throughput table (PROVENANCE-serving-time.md) ---- */

struct hold {
    char id[8];
    enum core_gpu_generation gen;
    bool newer; /* release 0.20 (PyTorch backend, CUDA graphs), else 0.14 (TensorRT engines) */
    double measured, predicted;
    struct core_serve_time_input in;
};
static struct hold holds[HOLD_MAX];
static int hold_count;

static double device_gib(const char *gpu)
{
    static const struct {
        const char *gpu;
        double gib;
    } mem[] = {
        {"h200-sxm", 139.81}, {"h100-sxm", 79.19}, {"a100-sxm-80gb", 79.15}, {"l40s", 44.42}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        if (strcmp(mem[i].gpu, gpu) == 0)
            return mem[i].gib;
    NEED(0, "no device memory for %s", gpu);
    return 0;
}

/* Columns: id, release, model (preset), gpu, precision (fp8 = FP8 weights and KV; fp16), tp,
 * input_len, output_len, output_tokens_per_second. Concurrency as for the D01-D17 rows; 0.20
 * runs the PyTorch backend with CUDA graphs captured up to batch 8192 (its llm_options.yml). */
static void load_holdout(void)
{
    static char f[9][FIELD_MAX];
    char line[512];
    FILE *fp;

    if (hold_count > 0)
        return;
    fp = fopen(MEMWALL_SERVING_HOLDOUT_CSV, "r");
    NEED(fp != NULL, "cannot open %s", MEMWALL_SERVING_HOLDOUT_CSV);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty hold-out");
    while (hold_count < HOLD_MAX && fgets(line, sizeof line, fp) != NULL) {
        struct hold *h = &holds[hold_count];
        struct spec sp = {.device_gib = 0};
        int p;

        if (csv_split(line, &f[0][0], 9, FIELD_MAX) < 9)
            continue;
        p = core_preset_find(f[2]);
        NEED(p >= 0, "%s: preset %s", f[0], f[2]);
        snprintf(h->id, sizeof h->id, "%.7s", f[0]);
        sp.fmt = strcmp(f[4], "fp8") == 0 ? FMT_FP8 : FMT_16;
        sp.fp8_kv = sp.fmt == FMT_FP8;
        sp.device_gib = device_gib(f[3]);
        h->gen = core_gpus[core_gpu_find(f[3])].generation;
        memset(&h->in, 0, sizeof h->in);
        h->in.arch = core_presets[p].arch;
        h->in.tp = csv_whole(f[5], 1);
        h->in.pp = 1;
        h->in.input_len = csv_whole(f[6], 1);
        h->in.output_len = csv_whole(f[7], 1);
        hardware(f[3], sp.fmt, &h->in);
        weight_bytes(&h->in.arch, sp.fmt, h->in.tp, &h->in);
        int64_t kv = h->in.arch.kv_heads / h->in.tp > 0 ? h->in.arch.kv_heads / h->in.tp : 1;
        h->in.kv_bytes_per_token = 2.0 * (double)h->in.arch.layers * (double)kv *
                                   (double)h->in.arch.head_dim * (sp.fp8_kv ? 1 : 2);
        h->in.concurrency =
            trt_max_requests(&h->in.arch, &sp, h->in.tp, h->in.input_len, h->in.output_len);
        if (h->in.concurrency < 1)
            h->in.concurrency = 1;
        h->in.continuous = true;
        h->in.usd_per_gpu_hour = -1;
        h->newer = strcmp(f[1], "0.20") == 0;
        h->in.cuda_graphs = h->newer;
        h->measured = csv_num(f[8], 0);
        hold_count++;
    }
    fclose(fp);
}

/* MAPE over the hold-out rows of one release (which: 0 = 0.14, 1 = 0.20, 2 = both). */
static double holdout_mape(int which)
{
    double sum = 0;
    int n = 0;

    load_holdout();
    for (int i = 0; i < hold_count; i++) {
        struct core_serve_time t;
        core_serve_time_compute(&holds[i].in, NULL, &t);
        holds[i].predicted = t.output_tokens_per_second;
        if (which == 2 || which == (int)holds[i].newer) {
            sum += fabs(holds[i].predicted / holds[i].measured - 1.0);
            n++;
        }
    }
    return n ? sum / n : 0;
}

/* ---- End to end: the max-load rows through /inference's functions ------------------------------
 * core_serve() sizes TensorRT-LLM's pool (engine trtllm: kv_cache_free_gpu_mem_fraction of what
 * the engine leaves, max_num_seqs 2048) with max_model_len = input + output, concurrency `max`,
 * and core_serve_timing() times it: what a client asking GET /inference gets for these runs. */
static double end_to_end(const struct row *r)
{
    struct core_serve_input in;
    struct core_serve_result res;
    struct core_serve_time t;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find(r->spec->preset);
    in.base.gpu = core_gpu_find(r->spec->gpu);
    in.base.tp = r->in.tp;
    in.base.gpus = r->in.tp;
    in.engine = CORE_ENGINE_TRTLLM;
    in.quantization = r->spec->fmt == FMT_FP8 ? CORE_QUANT_FP8 : CORE_QUANT_NONE;
    in.kv_cache_dtype = r->spec->fp8_kv ? CORE_KV_FP8 : CORE_KV_AUTO;
    in.input_len = r->in.input_len;
    in.output_len = r->in.output_len;
    in.max_model_len = r->in.input_len + r->in.output_len;
    in.concurrency = CORE_SERVE_CONCURRENCY_MAX;
    if (core_serve(&in, &res, &p) != CORE_OK || !res.fits)
        return 0;
    core_serve_timing(&res, &t);
    return t.output_tokens_per_second;
}

static double end_to_end_mape(bool print)
{
    double sum = 0;
    int n = 0;

    load_rows();
    for (int i = 0; i < row_count; i++) {
        /* D10 runs Llama 3.1 8B at 22,000 tokens; the preset is Llama 3 8B's 8,192 positions, so
         * /inference refuses that max_model_len (422) - not comparable end to end. */
        if (rows[i].spec->load != LOAD_TRTMAX || strcmp(rows[i].spec->id, "D10") == 0)
            continue;
        double e = end_to_end(&rows[i]);
        if (print)
            printf("  end to end %-4s %9.1f measured %9.1f %+6.1f%%\n", rows[i].spec->id, e,
                   rows[i].measured, 100 * (e / rows[i].measured - 1));
        sum += fabs(e / rows[i].measured - 1);
        n++;
    }
    return n ? sum / n : 0;
}

static void print_table(void)
{
    static const char *const what[] = {"tok/s", "tpot s", "ttft s"};

    load_rows();
    printf("%-4s %-20s %-14s %5s %6s %-6s %11s %11s %7s\n", "id", "source", "gpu", "tp", "conc",
           "what", "measured", "predicted", "error");
    for (int i = 0; i < row_count; i++) {
        struct row *r = &rows[i];
        double p = predict(r, NULL);
        printf("%-4s %-20s %-14s %5lld %6lld %-6s %11.4g %11.4g %+6.1f%%\n", r->spec->id,
               src_names[r->spec->src], r->spec->gpu, (long long)r->in.tp,
               (long long)r->concurrency, what[r->what], r->measured, p,
               100.0 * (p / r->measured - 1.0));
    }
    printf("MAPE all %.1f%%\n", 100 * mape(NULL, SRC_COUNT, SRC_COUNT));
    for (int s = 0; s < SRC_COUNT; s++) {
        double h = 1, m = 1, e = loso(s, &h, &m);
        printf("  %-20s in-sample %5.1f%%   left out (factors hbm %.2f gemm %.2f from the rest) "
               "%5.1f%%\n",
               src_names[s], 100 * mape(NULL, s, SRC_COUNT), h, m, 100 * e);
    }
    for (size_t i = 0; i < SPEC_COUNT; i++)
        if (specs[i].excluded)
            printf("excluded %s: %s\n", specs[i].id, specs[i].excluded);
    printf("end to end through core_serve (engine trtllm, concurrency max), D01-D17: MAPE %.1f%%\n",
           100 * end_to_end_mape(getenv("MEMWALL_HOLDOUT_ROWS") != NULL));
    double hm = holdout_mape(2), h14 = holdout_mape(0), h20 = holdout_mape(1);
    if (getenv("MEMWALL_HOLDOUT_ROWS") != NULL)
        for (int i = 0; i < hold_count; i++)
            printf("%-5s %-14s tp %lld %5lld/%-5lld conc %5lld measured %9.1f predicted %9.1f "
                   "%+6.1f%%\n",
                   holds[i].id, holds[i].newer ? "0.20" : "0.14", (long long)holds[i].in.tp,
                   (long long)holds[i].in.input_len, (long long)holds[i].in.output_len,
                   (long long)holds[i].in.concurrency, holds[i].measured, holds[i].predicted,
                   100 * (holds[i].predicted / holds[i].measured - 1));
    printf("hold-out (TensorRT-LLM max throughput, %d rows): MAPE %.1f%% (0.14: %.1f%%, 0.20: "
           "%.1f%%)\n",
           hold_count, 100 * hm, 100 * h14, 100 * h20);
}

START_TEST(every_timing_row_is_read)
{
    load_rows();
    /* 37 decode_throughput and prefill rows in the file, 4 excluded with their reasons. */
    ck_assert_int_eq(row_count, 33);
}
END_TEST

START_TEST(mape_within_limit)
{
    load_rows();
    double e = mape(NULL, SRC_COUNT, SRC_COUNT);
    ck_assert_msg(e <= MAPE_LIMIT, "serving time MAPE %.1f%% > %.0f%%", 100 * e, 100 * MAPE_LIMIT);
}
END_TEST

/* Re-tuning the two global efficiencies on three sources must not make the fourth worse than
 * the limit's 1.5x: the constants are not fitted to one table. */
START_TEST(leave_one_source_out)
{
    load_rows();
    for (int s = 0; s < SRC_COUNT; s++) {
        double h = 1, m = 1, e = loso(s, &h, &m);
        ck_assert_msg(e <= 1.5 * MAPE_LIMIT, "%s left out: %.1f%%", src_names[s], 100 * e);
    }
}
END_TEST

START_TEST(holdout_within_limit)
{
    double old = holdout_mape(0), young = holdout_mape(1);
    ck_assert_int_eq(hold_count, 258);
    ck_assert_msg(young <= HOLDOUT_LIMIT_NEW, "0.20 hold-out MAPE %.1f%%", 100 * young);
    ck_assert_msg(old <= HOLDOUT_LIMIT_OLD, "0.14 hold-out MAPE %.1f%%", 100 * old);
}
END_TEST

/* The same rows end to end (the memory side's pool instead of trtllm-bench's estimate): the
 * limit of the scored rows. */
START_TEST(end_to_end_within_limit)
{
    double e = end_to_end_mape(false);
    ck_assert_msg(e <= MAPE_LIMIT, "end-to-end MAPE %.1f%%", 100 * e);
}
END_TEST

/* ---- Expected error per engine and generation (core/serve_validation.c) -------------------------
 * The unseen rows: every scored row but the five that shaped a term (the half-step arrival wait
 * was added looking at the TTFT rows D19, D23, D25, D29; the per-expert GEMM size at D17), and
 * every hold-out row. FasterTransformer (D51-D54) is no engine memwall models: in no cell. */
static const char *const tuning_ids[] = {"D17", "D19", "D23", "D25", "D29"};

static bool tuning_row(const struct row *r)
{
    for (size_t i = 0; i < sizeof tuning_ids / sizeof tuning_ids[0]; i++)
        if (strcmp(r->spec->id, tuning_ids[i]) == 0)
            return true;
    return false;
}

static int engine_of(enum src s)
{
    return s == SRC_TRT17 || s == SRC_TRT14 ? CORE_ENGINE_TRTLLM
           : s == SRC_VLLM                  ? CORE_ENGINE_VLLM
                                            : -1;
}

struct cell_error {
    double mape;
    int unseen, tuning;
};

static struct cell_error cell_error(int engine, int gen)
{
    struct cell_error c = {0};
    double sum = 0;

    (void)holdout_mape(2); /* fills holds[].predicted */
    for (int i = 0; i < row_count; i++) {
        const struct row *r = &rows[i];
        if (engine_of(r->spec->src) != engine ||
            (int)core_gpus[core_gpu_find(r->spec->gpu)].generation != gen)
            continue;
        if (tuning_row(r)) {
            c.tuning++;
            continue;
        }
        sum += fabs(predict(r, NULL) / r->measured - 1.0);
        c.unseen++;
    }
    for (int i = 0; engine == CORE_ENGINE_TRTLLM && i < hold_count; i++)
        if ((int)holds[i].gen == gen) {
            sum += fabs(holds[i].predicted / holds[i].measured - 1.0);
            c.unseen++;
        }
    c.mape = c.unseen > 0 ? sum / c.unseen : -1;
    return c;
}

static void print_cv(void)
{
    printf("| engine | generation | unseen rows | tuning rows | expected_error |\n");
    for (int e = 0; e < CORE_ENGINE_COUNT; e++)
        for (int g = 0; g < CORE_GEN_COUNT; g++) {
            struct cell_error c = cell_error(e, g);
            if (c.unseen + c.tuning == 0)
                continue;
            printf("| %s | %s | %d | %d | %.3f |\n", core_engine_names[e], core_generation_names[g],
                   c.unseen, c.tuning, c.mape);
        }
    printf("TensorRT-LLM hold-out by generation and release (rows, MAPE):\n");
    for (int g = 0; g < CORE_GEN_COUNT; g++)
        for (int newer = 0; newer < 2; newer++) {
            double sum = 0;
            int n = 0;
            for (int i = 0; i < hold_count; i++)
                if ((int)holds[i].gen == g && (int)holds[i].newer == newer) {
                    sum += fabs(holds[i].predicted / holds[i].measured - 1.0);
                    n++;
                }
            if (n > 0)
                printf("  %s %s: %d, %.3f\n", core_generation_names[g], newer ? "0.20" : "0.14", n,
                       sum / n);
        }
}

/* core/serve_validation.c's cells are what the data give: a cell exactly where unseen rows
 * exist, its figure to the table's 3 decimals, its row counts. */
START_TEST(expected_error_table_matches_the_data)
{
    load_rows();
    for (int e = 0; e < CORE_ENGINE_COUNT; e++)
        for (int g = 0; g < CORE_GEN_COUNT; g++) {
            struct cell_error c = cell_error(e, g);
            const struct core_validation *v =
                core_serve_time_validation((enum core_engine)e, (enum core_gpu_generation)g);
            if (c.unseen == 0) {
                ck_assert_msg(v == NULL, "%s on %s: a figure but no unseen row",
                              core_engine_names[e], core_generation_names[g]);
                continue;
            }
            ck_assert_msg(v != NULL, "%s on %s: %d unseen rows (%.3f) but no cell",
                          core_engine_names[e], core_generation_names[g], c.unseen, c.mape);
            ck_assert_msg(fabs(v->expected_error - c.mape) < 0.0005 && v->unseen_runs == c.unseen &&
                              v->tuning_runs == c.tuning,
                          "%s on %s: table %.3f over %d (+%d tuning), data %.3f over %d (+%d)",
                          core_engine_names[e], core_generation_names[g], v->expected_error,
                          v->unseen_runs, v->tuning_runs, c.mape, c.unseen, c.tuning);
        }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("serve_time_validation");
    TCase *tc = tcase_create("rows");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_timing_row_is_read);
    tcase_add_test(tc, mape_within_limit);
    tcase_add_test(tc, leave_one_source_out);
    tcase_add_test(tc, holdout_within_limit);
    tcase_add_test(tc, end_to_end_within_limit);
    tcase_add_test(tc, expected_error_table_matches_the_data);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        print_table();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--cv") == 0) {
        load_rows();
        print_cv();
        return 0;
    }
    return check_main_run(suite());
}
