/*
 * test_peft.c - fine-tuning with adapters (core/adapters.c) against 126 published peaks and
 * throughputs of full, LoRA and QLoRA fine-tunes (peft-measured.csv, PROVENANCE-peft.md).
 *
 * Every row is mapped to a core_input with its framework profile (torchtune or hf_trainer) and
 * compared, in the statistic its source names, with memory.peak or with the step-time model's
 * tokens per second. Rows that cannot be priced are listed with the reason. No constant of the
 * model was fitted to this file (PROVENANCE-peft.md says which mapping choices the rows
 * informed): every row is held out.
 *
 * Groups and gates (mean absolute percentage error):
 *   adapter rows, allocated (or active) peak  <= ALLOC_LIMIT
 *   adapter rows, nvidia-smi peak             <= DEVICE_LIMIT
 *   adapter rows, throughput                  <= TPS_LIMIT
 * Full fine-tunes (the existing profiles under these rows' settings) and torchtune README rows
 * whose statistic is unstated are reported, not gated; so is the state at rest of 13 FMS rows
 * (peft-resident.csv: what the runs held allocated when train() returned).
 *
 * Run with --table to print the comparison and exit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "core_test_util.h"
#include "csv.h"
#include "peak.h"
#include "peak_replay.h"
#include "cv_check.h"

#ifndef MEMWALL_PEFT_CSV
#error "MEMWALL_PEFT_CSV must name the fine-tuning measurements file"
#endif
#ifndef MEMWALL_PEFT_RESIDENT_CSV
#error "MEMWALL_PEFT_RESIDENT_CSV must name the state-at-rest measurements file"
#endif

/* The targets are 8 % for peaks and 15 % for throughput. Throughput is gated at the
 * target (8.1 % over all rows, 10.1 % held out: docs/model.md, "Fine-tuning with adapters").
 * Allocated peaks are gated at the target (5.8 % over all rows since the FMS rows price
 * transformers 4.48's shifted loss, unfused_fp32_shifted, and a frozen output layer's top-layer
 * backward holds no logits' gradient; the FMS and TT32 rows are those terms' tuning rows: 6.3 %
 * over the tuning rows, 0.9 % over the one held-out row). nvidia-smi peaks are gated at the
 * target too: 7.8 % since the reserved bytes come from the replayed step (core/peak_replay.c,
 * the caching allocator's segments over the Hugging Face step), 8.5 % over the eight FMS 7B
 * rows, which were watched while the replayed op sequence was completed (tuning rows: no
 * constant, but the rows informed which of the code's tensors were added), 2.2 % on the held-out
 * 70B row; it was 8.5 % with the flat 1.08 factor. */
#define ALLOC_LIMIT  0.08
#define DEVICE_LIMIT 0.08
#define TPS_LIMIT    0.15

#define ROWS_MAX  140
#define FIELDS    33
#define FIELD_MAX 1400
#define GIB       1073741824.0

enum group { G_UNUSABLE, G_ALLOC, G_DEVICE, G_TPS, G_FULL_MEM, G_FULL_TPS, G_UNSTATED, G_COUNT };
static const char *const group_names[G_COUNT] = {"unusable",
                                                 "adapters, allocated",
                                                 "adapters, nvidia-smi",
                                                 "adapters, tokens/s",
                                                 "full, peaks (reported)",
                                                 "full, tokens/s (reported)",
                                                 "statistic unstated (reported)"};

struct prow {
    char id[48];
    enum group group;
    const char *why; /* G_UNUSABLE: the reason */
    bool tps;
    bool per_device; /* tokens/s of one GPU (Hugging Face's train_tokens_per_second) */
    bool held_out;   /* a source no term was chosen on (held_out_source) */
    double measured; /* GiB or tokens/s */
    double predicted;
    struct core_input in;
};

static struct prow rows[ROWS_MAX];
static int row_count;

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "peft-measured: " __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                                   \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

/* Column indexes of peft-measured.csv. */
enum {
    C_ID,
    C_SOURCE,
    C_FRAMEWORK,
    C_METHOD,
    C_MODEL,
    C_PARAMS,
    C_LAYERS,
    C_HIDDEN,
    C_HEADS,
    C_KV,
    C_FFN,
    C_VOCAB,
    C_GPU,
    C_GPU_GB,
    C_GPUS,
    C_DTYPE,
    C_QUANT,
    C_RANK,
    C_ALPHA,
    C_TARGETS,
    C_SEQ,
    C_BATCH,
    C_ACCUM,
    C_AC,
    C_AO,
    C_COMPILE,
    C_OPTIMIZER,
    C_OIB,
    C_PACKED,
    C_METRIC,
    C_KIND,
    C_VALUE,
    C_QUOTE
};

/* The model: a preset, or Llama 3.2 3B's architecture from the row (no preset; tied). */
static const char *model_shape(const char *model, struct core_input *in)
{
    static const struct {
        const char *name, *preset;
    } presets[] = {
        {"Llama-3.1-8B", "llama3-8b"},       {"Llama-3.1-70B", "llama3-70b"},
        {"Llama-3.1-405B", "llama3.1-405b"}, {"Llama-2-7B", "llama2-7b"},
        {"Llama-2-70B", "llama2-70b"},       {"Mistral-7B-v0.1", "mistral-7b"},
    };

    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(model, presets[i].name) == 0) {
            in->preset = core_preset_find(presets[i].preset);
            return NULL;
        }
    if (strcmp(model, "Llama-3.2-3B") == 0) {
        in->layers = 28, in->hidden = 3072, in->heads = 24, in->kv_heads = 8;
        in->ffn_hidden = 8192, in->vocab = 128256;
        in->gated_mlp = CORE_FLAG_YES, in->tied_embeddings = CORE_FLAG_YES;
        return NULL;
    }
    return "architecture not given (T0 and mT0 are encoder-decoders; BLOOM's and the 70B's "
           "versions are not stated)";
}

/* "q_proj;v_proj;k_proj;output_proj;mlp(w1,w2,w3)" -> mask; a parenthesis comment ends it. */
static int targets_mask(const char *s)
{
    unsigned mask = 0;
    char word[64];
    size_t n = 0;

    for (const char *p = s;; p++) {
        if (*p == ';' || *p == '\0' || *p == '(' || *p == ' ') {
            if (n > 0)
                mask |= core_module_mask(word, n);
            n = 0;
            if (*p != ';')
                break;
            continue;
        }
        if (n + 1 < sizeof word)
            word[n++] = *p, word[n] = '\0';
    }
    return mask > 0 ? (int)mask : -1;
}

static const char *row_gpu(char f[FIELDS][FIELD_MAX], struct core_input *in, bool tps)
{
    const char *g = f[C_GPU];
    double gb = csv_num(f[C_GPU_GB], 0);

    if (strcmp(g, "A100") == 0) { /* unstated size: the 80 GB card (TT32's 60 GiB peak) */
        in->gpu = core_gpu_find(gb == 40 ? "a100-sxm-40gb" : "a100-sxm-80gb");
        return NULL;
    }
    if ((strcmp(g, "RTX 4090") == 0 || strcmp(g, "RTX A6000") == 0) && !tps) {
        in->gpu = core_gpu_find("l40s"); /* only the capacity matters for a peak */
        in->memory_gb = gb;
        return NULL;
    }
    if (g[0] == '\0')
        return "GPU not stated";
    return "GPU not in the catalog (its bandwidth and generation constants would be guesses)";
}

/* The settings every usable row states. */
static void row_settings(char f[FIELDS][FIELD_MAX], struct core_input *in)
{
    const char *opt = f[C_OPTIMIZER];
    int64_t accum = csv_whole(f[C_ACCUM], 1);

    in->seq_len = csv_whole(f[C_SEQ], 0);
    in->batch = csv_whole(f[C_BATCH], 1);
    in->gpus = csv_whole(f[C_GPUS], 1);
    in->zero_stage = 3; /* torchtune's distributed recipes and fms' multi-GPU runs: FSDP */
    in->flash_attention = CORE_FLAG_YES; /* SDPA / FlashAttention in both frameworks */
    in->checkpointing = strcmp(f[C_AC], "True") == 0 ? CORE_CKPT_FULL : CORE_CKPT_NONE;
    in->compile = strcmp(f[C_COMPILE], "True") == 0;
    in->activation_offload = strcmp(f[C_AO], "True") == 0;
    in->optimizer_in_backward = strcmp(f[C_OIB], "True") == 0;
    if (strstr(opt, "8bit") != NULL)
        in->optimizer = CORE_OPT_ADAMW_8BIT;
    if (strstr(opt, "offload") != NULL)
        in->offload_optimizer = in->offload_params = CORE_OFFLOAD_CPU;
    if (accum > 1)
        in->global_batch = (double)(in->batch * in->gpus * accum);
    /* Every FMS row is fms-acceleration's benchmark at 24bdadb, which pins transformers 4.48.1
     * (PROVENANCE-peft.md): its models call loss_utils.py's ForCausalLMLoss with their bf16
     * logits still referenced, which upcasts them and makes the shifted .contiguous() copy
     * (removed in transformers PR #35646, after 4.48): the unfused_fp32_shifted loss. */
    if (strncmp(f[C_ID], "FMS-", 4) == 0)
        in->loss = CORE_LOSS_UNFUSED_SHIFTED;
    if (strcmp(f[C_METHOD], "full") == 0) {
        /* Both frameworks' bf16 full fine-tunes keep no fp32 master copy. */
        in->master_weights = CORE_FLAG_NO;
    } else {
        /* fms' LoRA runs load pure bf16 weights without autocast (mixed_precision 'no'; the
         * quote), its bitsandbytes runs train under bf16=True autocast: the adapters' dtype at
         * work follows (docs/model.md, "Activations with a frozen base"). */
        if (strncmp(f[C_ID], "FMS-", 4) == 0 && strcmp(f[C_METHOD], "lora") == 0)
            in->master_weights = CORE_FLAG_NO;
        in->finetune = strcmp(f[C_METHOD], "qlora") == 0  ? CORE_FT_QLORA
                       : strcmp(f[C_METHOD], "dora") == 0 ? CORE_FT_DORA
                                                          : CORE_FT_LORA;
        in->lora_rank = csv_whole(f[C_RANK], 8);
        in->lora_targets = targets_mask(f[C_TARGETS]);
    }
}

static const char *row_reason(char f[FIELDS][FIELD_MAX])
{
    const char *fw = f[C_FRAMEWORK];

    if (strstr(f[C_ID], "-ACC-") != NULL)
        return "fms-acceleration's accelerated-peft-bnb: its own k-bit preparation without the "
               "fp32 casts (framework_plugin_bnb.py); no memwall input prices it";
    if (strcmp(f[C_ID], "TT32-3B-BASE-MEM") == 0 || strcmp(f[C_ID], "TT32-3B-BASE-TPS") == 0)
        return "unpacked: the sequences are the dataset's, shorter than seq_len 4096";
    if (strcmp(fw, "torchtune") != 0 && strncmp(fw, "HF Trainer", 10) != 0)
        return "framework, seq_len, targets or statistic not stated (or kernels no profile "
               "models: Unsloth, LLaMA-Factory, DeepSpeed offload)";
    if (f[C_SEQ][0] == '\0' || f[C_BATCH][0] == '\0')
        return "seq_len or batch not stated";
    return NULL;
}

/* The split, frozen before any term of core/adapters.c or perf.c was changed while looking at
 * these rows (peft2): the tuning rows are fms-acceleration's Mistral 7B runs and torchtune's
 * Llama 3.2 3B ablation (TT32), the rows the element-wise and dtype terms were derived and
 * checked on; held out are torchtune's Llama 3.1 and Llama 2 tables (TT31, TT2) and
 * fms-acceleration's Llama 2 70B runs (another model, 2 GPUs), which informed nothing. */
static bool held_out_source(const char *id)
{
    return strncmp(id, "TT31-", 5) == 0 || strncmp(id, "TT2-", 4) == 0 ||
           strncmp(id, "FMS-L2-70B-", 11) == 0;
}

static void row_parse(char f[FIELDS][FIELD_MAX], struct prow *r)
{
    struct core_input *in = &r->in;
    bool full = strcmp(f[C_METHOD], "full") == 0;

    memset(r, 0, sizeof *r);
    core_input_init(in);
    snprintf(r->id, sizeof r->id, "%.47s", f[C_ID]);
    r->tps = strcmp(f[C_KIND], "tokens_per_second") == 0;
    r->measured = csv_num(f[C_VALUE], 0);
    r->per_device = strncmp(f[C_FRAMEWORK], "HF Trainer", 10) == 0;
    r->held_out = held_out_source(r->id);
    r->why = row_reason(f);
    if (r->why == NULL)
        r->why = model_shape(f[C_MODEL], in);
    if (r->why == NULL)
        r->why = row_gpu(f, in, r->tps);
    if (r->why != NULL) {
        r->group = G_UNUSABLE;
        return;
    }
    in->framework =
        strcmp(f[C_FRAMEWORK], "torchtune") == 0 ? CORE_FW_TORCHTUNE : CORE_FW_HF_TRAINER;
    row_settings(f, in);
    if (r->tps) {
        in->mfu = CORE_MFU_PREDICTED;
        r->group = full ? G_FULL_TPS : G_TPS;
    } else if (strcmp(f[C_METRIC], "unstated") == 0) {
        in->memory_metric = CORE_METRIC_RESERVED; /* torchtune's README: compared as reserved */
        r->group = G_UNSTATED;
    } else {
        in->memory_metric = strcmp(f[C_METRIC], "nvidia-smi") == 0 ? CORE_METRIC_DEVICE
                            : strcmp(f[C_METRIC], "reserved") == 0 ? CORE_METRIC_RESERVED
                                                                   : CORE_METRIC_ALLOCATED;
        r->group = full ? G_FULL_MEM : in->memory_metric == CORE_METRIC_DEVICE ? G_DEVICE : G_ALLOC;
    }
}

static void load_rows(void)
{
    static char fields[FIELDS][FIELD_MAX];
    static char line[8192];
    FILE *fp;

    if (row_count > 0)
        return;
    fp = fopen(MEMWALL_PEFT_CSV, "r");
    NEED(fp != NULL, "cannot open %s", MEMWALL_PEFT_CSV);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty file");
    while (fgets(line, sizeof line, fp) != NULL && row_count < ROWS_MAX) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        NEED(csv_split(line, &fields[0][0], FIELDS, FIELD_MAX) == FIELDS, "row %d: expected %d",
             row_count + 1, FIELDS);
        row_parse(fields, &rows[row_count++]);
    }
    fclose(fp);
}

/* The prediction in the row's unit; false when memwall refuses the input (a 422). */
static bool predict(struct prow *r)
{
    static struct core_result res;
    struct core_problems p;

    if (core_evaluate(&r->in, &res, &p) != CORE_OK) {
        r->why = p.count > 0 ? p.items[0].message : "refused";
        return false;
    }
    if (r->tps)
        r->predicted = res.performance.tokens_per_second_per_gpu *
                       (r->per_device ? 1.0 : (double)res.resolved.gpus);
    else
        r->predicted = (double)res.memory.peak.bytes / GIB;
    return true;
}

enum subset { ALL_ROWS, TUNING_ROWS, HELD_OUT_ROWS };

/* Mean absolute percentage error of a group's rows of one subset (rows that evaluate), and its
 * row count. */
static double subset_mape(enum group g, enum subset sub, int *n)
{
    double sum = 0;

    load_rows();
    *n = 0;
    for (int i = 0; i < row_count; i++) {
        if (rows[i].group != g || (sub == TUNING_ROWS && rows[i].held_out) ||
            (sub == HELD_OUT_ROWS && !rows[i].held_out) || !predict(&rows[i]))
            continue;
        sum += fabs(rows[i].predicted - rows[i].measured) / rows[i].measured;
        (*n)++;
    }
    return *n > 0 ? sum / *n : 0;
}

static double group_mape(enum group g, int *n)
{
    return subset_mape(g, ALL_ROWS, n);
}

/* ---------------------------------------------------------------------------------------------
 * State at rest (peft-resident.csv, PROVENANCE-peft.md): what fms-acceleration's runs held
 * allocated when train() returned (the Trainer's memory tracker, mem_torch_mem_alloc_in_bytes:
 * the model, the adapters and the optimizer state; the gradients are freed by zero_grad's
 * set_to_none), against memwall's weights + optimizer state per GPU (the optimizer-step moment
 * without its gradients and temporaries). It checks the frozen base's layout and the adapters'
 * state apart from the activations. Reported, not gated.
 * ------------------------------------------------------------------------------------------- */

#define RESIDENT_MAX 16

struct resident {
    char id[48];
    double resident, peak; /* bytes */
    const struct prow *row;
    double predicted; /* bytes */
};

static struct resident residents[RESIDENT_MAX];
static int resident_count;

static void load_residents(void)
{
    static char fields[3][FIELD_MAX];
    static char line[512];
    FILE *fp;

    if (resident_count > 0)
        return;
    load_rows();
    fp = fopen(MEMWALL_PEFT_RESIDENT_CSV, "r");
    NEED(fp != NULL, "cannot open %s", MEMWALL_PEFT_RESIDENT_CSV);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty file");
    while (fgets(line, sizeof line, fp) != NULL && resident_count < RESIDENT_MAX) {
        struct resident *x = &residents[resident_count];

        if (line[0] == '\n' || line[0] == '\0')
            continue;
        NEED(csv_split(line, &fields[0][0], 3, FIELD_MAX) == 3, "resident row %d: expected 3",
             resident_count + 1);
        snprintf(x->id, sizeof x->id, "%.47s", fields[0]);
        x->resident = csv_num(fields[1], 0);
        x->peak = csv_num(fields[2], 0);
        for (int i = 0; i < row_count; i++)
            if (strcmp(rows[i].id, x->id) == 0)
                x->row = &rows[i];
        NEED(x->row != NULL, "resident row %s names no row of the measurements", x->id);
        resident_count++;
    }
    fclose(fp);
}

/* memwall's state at rest of a resident row: false when the row is refused. */
static bool predict_resident(struct resident *x)
{
    static struct core_result res;
    struct core_problems p;
    struct core_peak pk;
    struct core_peak_options o;

    if (core_evaluate(&x->row->in, &res, &p) != CORE_OK)
        return false;
    core_peak_options_resolved(&res.resolved, &o);
    core_peak_compute(&res.resolved, &o, &pk);
    x->predicted =
        pk.stages[0][CORE_MOMENT_OPTIMIZER].weights + pk.stages[0][CORE_MOMENT_OPTIMIZER].optimizer;
    return true;
}

static void print_residents(void)
{
    double sum[2] = {0, 0};
    int n[2] = {0, 0};

    load_residents();
    printf("\nstate at rest (reported; peft-resident.csv), GiB measured, predicted:\n");
    for (int i = 0; i < resident_count; i++) {
        struct resident *x = &residents[i];
        int full = x->row->in.finetune == CORE_FT_FULL;
        double err;

        if (!predict_resident(x))
            continue;
        err = (x->predicted - x->resident) / x->resident;
        sum[full] += fabs(err);
        n[full]++;
        printf("  %-34s %10.2f %10.2f %+6.1f %%%s\n", x->id, x->resident / GIB, x->predicted / GIB,
               100 * err, x->row->held_out ? "  (held out)" : "");
    }
    printf("  adapters: %d rows, MAPE %.1f %%; full: %d rows, MAPE %.1f %%\n", n[0],
           n[0] > 0 ? 100 * sum[0] / n[0] : 0, n[1], n[1] > 0 ? 100 * sum[1] / n[1] : 0);
}

/* The replayed step (core_peak_replay, peak_replay.h) on the adapter runs with both statistics:
 * its live high-water mark against the measured transient (allocated peak less the state at
 * rest) and its slack (segments' high-water mark less live) against the measured nvidia-smi less
 * allocated less memwall's fixed device costs (0.75 GiB context, + 0.75 GiB communicators above
 * one GPU: core/peak.c). The reserved and device peaks of these rows add this slack to the
 * allocated peak (docs/frameworks.md, "The statistic"). */
static void print_replay(void)
{
    load_residents();
    printf("\nreplayed step (reported), GiB: transient measured, replay live; slack "
           "measured, replay\n");
    for (int i = 0; i < resident_count; i++) {
        const struct resident *x = &residents[i];
        static struct core_result res;
        struct core_problems p;
        struct core_peak_options o;
        struct core_step_replay rp;
        char nv[48];
        const struct prow *dev = NULL;
        size_t len = strlen(x->id);

        if (x->row->in.finetune == CORE_FT_FULL || len < 6 ||
            strcmp(x->id + len - 6, "-ALLOC") != 0)
            continue;
        snprintf(nv, sizeof nv, "%.*s-NV", (int)(len - 6), x->id);
        for (int k = 0; k < row_count; k++)
            if (strcmp(rows[k].id, nv) == 0)
                dev = &rows[k];
        if (dev == NULL || core_evaluate(&x->row->in, &res, &p) != CORE_OK)
            continue;
        core_peak_options_resolved(&res.resolved, &o);
        if (!core_peak_replay(&res.resolved, &o, &rp))
            continue;
        double fixed = 0.75 + (res.resolved.gpus > 1 ? 0.75 : 0);
        printf("  %-34s %8.2f %8.2f %+6.1f %%   %8.2f %8.2f\n", x->id,
               x->row->measured - x->resident / GIB, (double)rp.peak_live / GIB,
               100 * ((double)rp.peak_live / GIB - (x->row->measured - x->resident / GIB)) /
                   (x->row->measured - x->resident / GIB),
               dev->measured - x->row->measured - fixed,
               (double)(rp.peak_reserved - rp.peak_live) / GIB);
    }
}

/* The step-time breakdown of every usable throughput row, in ms per step (diagnosis). */
static void print_breakdown(void)
{
    static struct core_result res;
    struct core_problems p;

    load_rows();
    for (int i = 0; i < row_count; i++) {
        const double *t = &res.performance.breakdown.compute;

        if (rows[i].group == G_UNUSABLE || !rows[i].tps ||
            core_evaluate(&rows[i].in, &res, &p) != CORE_OK)
            continue;
        printf("%-32s step %8.1f ms:", rows[i].id, 1e3 * res.performance.step_seconds);
        for (int k = 0; k < CORE_PERF_TERMS; k++)
            if (t[k] > 0)
                printf(" %s %.1f", core_perf_term_names[k], 1e3 * t[k]);
        printf("\n");
    }
}

/* The peak moments (GiB) of every usable adapter peak row (diagnosis). */
static void print_moments(void)
{
    static struct core_result res;
    struct core_problems p;
    static const char *const names[] = {"weights", "grads", "opt", "act", "logits", "buf"};

    load_rows();
    for (int i = 0; i < row_count; i++) {
        struct core_peak pk;
        struct core_peak_options o;

        if ((rows[i].group != G_ALLOC && rows[i].group != G_DEVICE) ||
            core_evaluate(&rows[i].in, &res, &p) != CORE_OK)
            continue;
        core_peak_options_resolved(&res.resolved, &o);
        core_peak_compute(&res.resolved, &o, &pk);
        printf("%-32s measured %6.2f peak %6.2f at %d\n", rows[i].id, rows[i].measured,
               pk.bytes / GIB, (int)pk.at);
        for (int m = 0; m < CORE_MOMENT_COUNT; m++) {
            const double *b = &pk.stages[0][m].weights;

            printf("    moment %d total %6.2f:", m, pk.stages[0][m].total / GIB);
            for (int k = 0; k < 6; k++)
                printf(" %s %.2f", names[k], b[k] / GIB);
            printf("\n");
        }
    }
}

static void print_table(void)
{
    load_rows();
    for (int g = G_ALLOC; g < G_COUNT; g++) {
        int n, nt, nh;
        double mape = group_mape((enum group)g, &n);
        double tune = subset_mape((enum group)g, TUNING_ROWS, &nt);
        double held = subset_mape((enum group)g, HELD_OUT_ROWS, &nh);

        printf("\n%s: %d rows, MAPE %.1f %% (tuning %d rows %.1f %%, held out %d rows %.1f %%)\n",
               group_names[g], n, 100 * mape, nt, 100 * tune, nh, 100 * held);
        for (int i = 0; i < row_count; i++)
            if (rows[i].group == (enum group)g)
                printf("  %-34s %10.2f %10.2f %+6.1f %%%s\n", rows[i].id, rows[i].measured,
                       rows[i].predicted,
                       100 * (rows[i].predicted - rows[i].measured) / rows[i].measured,
                       rows[i].held_out ? "  (held out)" : "");
    }
    print_residents();
    print_replay();
    printf("\nunusable:\n");
    for (int i = 0; i < row_count; i++)
        if (rows[i].group == G_UNUSABLE)
            printf("  %-34s %s\n", rows[i].id, rows[i].why);
}

START_TEST(file_is_whole)
{
    int counts[G_COUNT] = {0};

    load_rows();
    ck_assert_int_eq(row_count, 126);
    for (int i = 0; i < row_count; i++) {
        counts[rows[i].group]++;
        if (rows[i].group == G_UNUSABLE)
            ck_assert_msg(rows[i].why != NULL, "%s unusable without a reason", rows[i].id);
    }
    /* Every gated group has rows to judge. */
    ck_assert_int_ge(counts[G_ALLOC], 10);
    ck_assert_int_ge(counts[G_DEVICE], 8);
    ck_assert_int_ge(counts[G_TPS], 12);
}
END_TEST

static void gate(enum group g, double limit)
{
    int n;
    double mape = group_mape(g, &n);

    ck_assert_msg(mape <= limit, "%s: MAPE %.1f %% over %d rows exceeds %.0f %%", group_names[g],
                  100 * mape, n, 100 * limit);
}

/* The held-out source a row belongs to (held_out_source's prefixes, without the dash). */
static const char *held_out_label(const char *id)
{
    static const char *const labels[] = {"TT31", "TT2", "FMS-L2-70B"};

    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (strncmp(id, labels[i], strlen(labels[i])) == 0 && id[strlen(labels[i])] == '-')
            return labels[i];
    return "";
}

/* core/validation.c's adapter peak table is what the rows give: per profile, the allocated and
 * nvidia-smi readings of adapter fine-tunes that evaluate, the held-out ones' mean absolute error
 * (to three decimals), the tuning ones counted. */
START_TEST(adapter_peak_error_is_the_held_out_rows)
{
    load_rows();
    for (int fw = 0; fw < CORE_FW_COUNT; fw++) {
        struct cv_fold_result cv = {0, 0, -1, ""};
        char sources[64] = "";
        double sum = 0;

        for (int i = 0; i < row_count; i++) {
            struct prow *r = &rows[i];
            const char *label = held_out_label(r->id);

            if ((r->group != G_ALLOC && r->group != G_DEVICE) || (int)r->in.framework != fw ||
                !predict(r))
                continue;
            if (!r->held_out) {
                cv.tuning++;
                continue;
            }
            cv.unseen++;
            sum += fabs(r->predicted - r->measured) / r->measured;
            if (strstr(sources, label) == NULL) {
                size_t len = strlen(sources);
                snprintf(sources + len, sizeof sources - len, "%s%s", len > 0 ? ", " : "", label);
            }
        }
        if (cv.unseen > 0)
            cv.expected_error = sum / cv.unseen;
        cv.unseen_sources = sources;
        cv_check_row(core_framework_names[fw], &core_adapter_peak_validation[fw], &cv);
    }
}
END_TEST

START_TEST(adapters_allocated_peaks)
{
    gate(G_ALLOC, ALLOC_LIMIT);
}
END_TEST

START_TEST(adapters_device_peaks)
{
    gate(G_DEVICE, DEVICE_LIMIT);
}
END_TEST

START_TEST(adapters_throughput)
{
    gate(G_TPS, TPS_LIMIT);
}
END_TEST

/* The state-at-rest file comes from the same runs as the measurements: each of its peaks is the
 * allocated peak of the row it names (GiB = bytes / 2^30, printed to 3 decimals in the file). */
START_TEST(resident_rows_match)
{
    load_residents();
    ck_assert_int_eq(resident_count, 13);
    for (int i = 0; i < resident_count; i++) {
        const struct resident *x = &residents[i];

        ck_assert_msg(fabs(x->peak / GIB - x->row->measured) < 0.0015, "%s: %.4f vs %.4f GiB",
                      x->id, x->peak / GIB, x->row->measured);
        ck_assert(x->resident > 0 && x->resident < x->peak);
    }
}
END_TEST

/* Every usable row evaluates: none of the file's configurations is refused. */
START_TEST(usable_rows_evaluate)
{
    load_rows();
    for (int i = 0; i < row_count; i++)
        if (rows[i].group != G_UNUSABLE)
            ck_assert_msg(predict(&rows[i]), "%s refused: %s", rows[i].id, rows[i].why);
}
END_TEST

/* The ordering the measurements show, whatever the constants: on one GPU and one batch, QLoRA
 * holds less than LoRA, which holds less than a full fine-tune (FMS-M7B, 1 GPU, batch 4). */
START_TEST(method_ordering)
{
    double full = 0, lora = 0, qlora = 0;

    load_rows();
    for (int i = 0; i < row_count; i++) {
        if (!predict(&rows[i]))
            continue;
        if (strcmp(rows[i].id, "FMS-M7B-FULL-1G-B4-ALLOC") == 0)
            full = rows[i].predicted;
        else if (strcmp(rows[i].id, "FMS-M7B-LORA-1G-B4-ALLOC") == 0)
            lora = rows[i].predicted;
        else if (strcmp(rows[i].id, "FMS-M7B-QLORA-HF-1G-B4-ALLOC") == 0)
            qlora = rows[i].predicted;
    }
    ck_assert(qlora > 0 && qlora < lora && lora < full);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("validation_peft");
    TCase *tc = tcase_create("rows");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, file_is_whole);
    tcase_add_test(tc, usable_rows_evaluate);
    tcase_add_test(tc, resident_rows_match);
    tcase_add_test(tc, adapters_allocated_peaks);
    tcase_add_test(tc, adapters_device_peaks);
    tcase_add_test(tc, adapter_peak_error_is_the_held_out_rows);
    tcase_add_test(tc, adapters_throughput);
    tcase_add_test(tc, method_ordering);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        print_table();
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--moments") == 0) {
        print_moments();
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--breakdown") == 0) {
        print_breakdown();
        return EXIT_SUCCESS;
    }
    return check_main_run(suite());
}
