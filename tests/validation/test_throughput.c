/*
 * test_throughput.c - the step-time model (core/perf.c) against 105 measured training runs.
 *
 * Reads throughput-calibration.csv (PROVENANCE.md says where each row comes from), maps every
 * row to a core_perf_input, and compares the predicted seconds per optimizer step with the
 * measured one. The suite fails when the mean absolute percentage error over the fully
 * specified rows exceeds 12 %, or when the MAPE over all rows of throughput-tuning-2.csv (28 runs
 * from other frameworks and clusters; PROVENANCE-tuning-2.md) exceeds 12 %. That second set was
 * a hold-out until four Hopper constants were changed looking at it: it is a tuning set now
 * (the rule: a set that changed a constant is no longer a hold-out). The error to expect on an
 * unseen run comes from the leave-one-source-out folds below (--cv, core/validation.c). Further
 * tests check effects the papers report (ratios between rows) and properties over random
 * configurations.
 *
 * Run with --table to print the comparison and exit (script/validate does that).
 *
 * Settings the CSV leaves empty, and the frameworks' fixed behaviour, are filled in one place
 * (row_input) and documented in docs/model.md, "Step time" / "Validation".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "csv.h"
#include "core_test_util.h"
#include "perf.h"
#include "rules.h"
#include "cv_check.h"
#include "validation.h"

#ifndef MEMWALL_CALIBRATION_CSV
#error "MEMWALL_CALIBRATION_CSV must name the calibration file"
#endif
#ifndef MEMWALL_TUNING2_CSV
#error "MEMWALL_TUNING2_CSV must name the second tuning set"
#endif

/* The suite fails above this MAPE over the fully specified rows. */
#define MAPE_LIMIT 0.12
/* ... and above this MAPE over all rows of the second tuning set (PROVENANCE-tuning-2.md): runs the
 * constants were never fitted to, from other frameworks and clusters. */
#define TUNING2_LIMIT 0.12

#define ROWS_MAX  160
#define FIELDS    27
#define FIELD_MAX 160

struct row {
    char id[24];
    char source[8]; /* the id's prefix: K22, N21, LF, BL, VT; set 2 NM, MB, L3, TT, LFH */
    bool full;      /* micro_batch and virtual_stages stated */
    double measured;
    struct core_perf_input in;
};

/* One measured set: the calibration rows the constants were fitted to, or the second tuning
 * set. */
struct set {
    const char *path;
    const char *name;
    struct row list[ROWS_MAX];
    int count;
};

static struct set calibration = {.path = MEMWALL_CALIBRATION_CSV, .name = "calibration"};
static struct set tuning2 = {.path = MEMWALL_TUNING2_CSV, .name = "tuning set 2"};
/* The calibration rows under their old names (the effect tests read them). */
#define rows      calibration.list
#define row_count calibration.count

/* Loading runs both inside Check tests and in --table mode, where ck_assert cannot report:
 * a malformed file ends the process with a message either way (Check counts the exit). */
#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "calibration: " __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                                   \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * Rows into model inputs (the CSV reader is csv.h).
 * ------------------------------------------------------------------------------------------- */

/* N of a dense GPT/Llama shape with tied embeddings and no position weights (all five
 * calibration code bases tie them; position weights are a few million parameters either way). */
static void set_dense_params(struct core_perf_input *in)
{
    struct core_arch a = {.layers = in->layers,
                          .hidden = in->hidden,
                          .heads = in->heads,
                          .kv_heads = in->kv_heads,
                          .head_dim = in->head_dim,
                          .ffn_hidden = in->ffn_hidden,
                          .vocab = in->vocab,
                          .gated_mlp = in->gated_mlp,
                          .tied_embeddings = true};

    in->params = (double)core_arch_params(&a);
    in->active_params = in->params;
}

static enum core_checkpointing checkpointing_of(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, core_checkpointing_names[i]) == 0)
            return (enum core_checkpointing)i;
    NEED(0, "unknown checkpointing '%s'", s);
    return CORE_CKPT_NONE;
}

static enum core_precision precision_of(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, core_precision_names[i]) == 0)
            return (enum core_precision)i;
    NEED(0, "unknown precision '%s'", s);
    return CORE_PREC_BF16;
}

/*
 * One CSV row to a model input. Columns: id, source, gpu, gpus, layers, hidden, heads,
 * kv_heads, ffn_hidden, gated_mlp, vocab, seq_len, tp, pp, dp, cp, virtual_stages,
 * micro_batch, global_batch, checkpointing, sequence_parallel, flash_attention, precision,
 * zero_stage, inter_node_gbs, measured, step_seconds.
 */
static void row_input(char f[FIELDS][FIELD_MAX], struct row *r)
{
    struct core_perf_input *in = &r->in;
    int gpu = core_gpu_find(f[2]);

    NEED(gpu >= 0, "%s: unknown gpu %s", f[0], f[2]);
    memset(in, 0, sizeof *in);
    snprintf(r->id, sizeof r->id, "%.23s", f[0]);
    snprintf(r->source, sizeof r->source, "%.*s", (int)strcspn(f[0], "-"), f[0]);
    in->precision = precision_of(f[22]);
    core_perf_input_hardware(in, gpu, in->precision);
    in->gpus = csv_whole(f[3], 0);
    in->layers = csv_whole(f[4], 0);
    in->hidden = csv_whole(f[5], 0);
    in->heads = csv_whole(f[6], 0);
    in->kv_heads = csv_whole(f[7], in->heads); /* empty: multi-head attention */
    in->head_dim = in->hidden / in->heads;
    in->ffn_hidden = csv_whole(f[8], 0);
    in->gated_mlp = strcmp(f[9], "true") == 0;
    in->vocab = csv_whole(f[10], 0);
    in->seq_len = csv_whole(f[11], 0);
    in->tp = csv_whole(f[12], 1);
    in->pp = csv_whole(f[13], 1);
    in->dp = csv_whole(f[14], 1);
    in->cp = csv_whole(f[15], 1);
    /* Empty: interleaved with the number of stages not stated; take the smallest, 2. */
    in->virtual_stages = csv_whole(f[16], in->pp > 1 ? 2 : 1);
    in->micro_batch = csv_whole(f[17], 1); /* empty: 1 */
    in->global_batch = csv_num(f[18], 0);
    in->checkpointing = checkpointing_of(f[19]);
    in->sequence_parallel = strcmp(f[20], "true") == 0;
    in->flash_attention = strcmp(f[21], "true") == 0;
    in->zero_stage = (int)csv_whole(f[23], 0);
    in->inter_node_gbs = csv_num(f[24], in->inter_node_gbs); /* empty: the catalog's network */
    r->measured = csv_num(f[26], 0);
    r->full = f[16][0] != '\0' && f[17][0] != '\0';

    set_dense_params(in);
    /* Mixed precision AdamW with fp32 master weights everywhere. */
    in->optimizer = CORE_OPT_ADAMW;
    in->master_weights = true;
    /* Framework behaviour, not tuning: Megatron-LM (K22, N21 PTD-P), Megatron-DeepSpeed (VT,
     * BL) reduce gradients after the backward (K22 §6 states it for K22-9); PyTorch FSDP (LF)
     * and DeepSpeed ZeRO-3 (N21's ZeRO-3 rows) prefetch and overlap. No source overlaps the
     * tensor-parallel collectives. */
    in->dp_comm_overlap = in->zero_stage >= 3;
    in->tp_comm_overlap = false;
    /* The second set's frameworks (PROVENANCE-tuning-2.md). NeMo and Megatron-Bridge (NM, MB) run
     * their performance recipes: Transformer Engine's userbuffer overlap of the TP collectives
     * (ub_tp_comm_overlap) and the distributed optimizer's overlapped gradient reduce-scatter
     * and weight all-gather (overlap_grad_sync, overlap_param_sync). Meta's Llama 3 stack (L3)
     * overlaps its data-parallel traffic with compute. torchtitan rows whose source names
     * AsyncTP overlap the TP collectives. */
    if (strcmp(r->source, "NM") == 0 || strcmp(r->source, "MB") == 0) {
        in->tp_comm_overlap = in->tp > 1;
        in->dp_comm_overlap = true;
    }
    if (strcmp(r->source, "L3") == 0)
        in->dp_comm_overlap = true;
    if (strstr(f[1], "AsyncTP") != NULL)
        in->tp_comm_overlap = true;
}

static void load_set(struct set *set)
{
    static char fields[FIELDS][FIELD_MAX];
    char line[1024];
    FILE *fp;

    if (set->count > 0)
        return;
    fp = fopen(set->path, "r");
    NEED(fp != NULL, "cannot open %s", set->path);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty %s file", set->name);
    while (fgets(line, sizeof line, fp) != NULL && set->count < ROWS_MAX) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        NEED(csv_split(line, &fields[0][0], FIELDS, FIELD_MAX) == FIELDS,
             "%s row %d: expected %d fields", set->name, set->count + 1, FIELDS);
        row_input(fields, &set->list[set->count++]);
    }
    fclose(fp);
}

static void load_rows(void)
{
    load_set(&calibration);
}

static const struct row *find_row(const char *id)
{
    load_rows();
    for (int i = 0; i < row_count; i++)
        if (strcmp(rows[i].id, id) == 0)
            return &rows[i];
    NEED(0, "row %s missing", id);
    return NULL;
}

static double predict(const struct core_perf_input *in)
{
    struct core_perf p;

    core_perf_predict(in, &p);
    return p.step_seconds;
}

/* ---------------------------------------------------------------------------------------------
 * The table: per row and per source; returns the MAPE over the fully specified rows.
 * ------------------------------------------------------------------------------------------- */

/* Every row's breakdown, seconds per step (--terms). */
static void print_terms(FILE *out, struct set *set)
{
    load_set(set);
    fprintf(out, "%-8s %9s", "id", "measured");
    for (int k = 0; k < CORE_PERF_TERMS; k++)
        fprintf(out, " %9.9s", core_perf_term_names[k]);
    fputc('\n', out);
    for (int i = 0; i < set->count; i++) {
        struct core_perf p;

        core_perf_predict(&set->list[i].in, &p);
        fprintf(out, "%-8s %9.3f", set->list[i].id, set->list[i].measured);
        for (int k = 0; k < CORE_PERF_TERMS; k++)
            fprintf(out, " %9.3f", (&p.breakdown.compute)[k]);
        fputc('\n', out);
    }
}

/* The comparison for one set, per row and per source (in order of first appearance); returns
 * the MAPE over the fully specified rows, or over all rows when `all` is set. */
static double print_set(FILE *out, struct set *set, bool all)
{
    enum { SOURCES = 12 };
    char names[SOURCES][8];
    double sum[SOURCES] = {0}, sum_full = 0, sum_all = 0;
    int n[SOURCES] = {0}, n_sources = 0, n_full = 0;

    load_set(set);
    fprintf(out, "%-8s %5s %9s %9s %7s %5s  %-12s\n", "id", "full", "predicted", "measured",
            "error", "mfu", "bottleneck");
    for (int i = 0; i < set->count; i++) {
        const struct row *r = &set->list[i];
        struct core_perf p;
        double err;
        int s = 0;

        core_perf_predict(&r->in, &p);
        err = (p.step_seconds - r->measured) / r->measured;
        fprintf(out, "%-8s %5s %9.3f %9.3f %+6.1f%% %5.3f  %-12s\n", r->id, r->full ? "yes" : "no",
                p.step_seconds, r->measured, 100 * err, p.mfu, p.bottleneck);
        while (s < n_sources && strcmp(names[s], r->source) != 0)
            s++;
        if (s == n_sources && n_sources < SOURCES)
            snprintf(names[n_sources++], sizeof names[0], "%s", r->source);
        if (s < n_sources) {
            sum[s] += fabs(err);
            n[s]++;
        }
        sum_all += fabs(err);
        if (r->full) {
            sum_full += fabs(err);
            n_full++;
        }
    }
    fprintf(out, "\nMAPE by source (all rows):");
    for (int s = 0; s < n_sources; s++)
        fprintf(out, " %s %.1f%% (%d)", names[s], 100 * sum[s] / n[s], n[s]);
    fprintf(out, "\nMAPE all rows %.1f%% (%d); fully specified rows %.1f%% (%d)\n",
            100 * sum_all / set->count, set->count, n_full ? 100 * sum_full / n_full : 0.0, n_full);
    if (all)
        return set->count ? sum_all / set->count : 1.0;
    return n_full ? sum_full / n_full : 1.0;
}

static double print_table(FILE *out)
{
    return print_set(out, &calibration, false);
}

START_TEST(test_calibration_mape)
{
    double mape = print_table(stdout);

    ck_assert_int_eq(row_count, 105);
    ck_assert_msg(mape <= MAPE_LIMIT, "MAPE %.1f%% over the fully specified rows exceeds %.0f%%",
                  100 * mape, 100 * MAPE_LIMIT);
}
END_TEST

/* The second tuning set: runs from other frameworks and clusters (PROVENANCE-tuning-2.md), four
 * Hopper constants chosen looking at NM, MB and L3. All rows count, the not fully specified
 * ones too. */
START_TEST(test_tuning2_mape)
{
    double mape = print_set(stdout, &tuning2, true);

    ck_assert_int_eq(tuning2.count, 28);
    ck_assert_msg(mape <= TUNING2_LIMIT, "tuning set 2 MAPE %.1f%% exceeds %.0f%%", 100 * mape,
                  100 * TUNING2_LIMIT);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Leave-one-source-out: the error to expect per GPU generation (core/validation.c).
 *
 * The constants of perf.c were chosen by hand, not fitted by a procedure, so a fold refits
 * nothing: leaving a source out changes no constant, and the source's error is out of sample
 * only if no constant was chosen looking at its rows. Which were (docs/model.md, "Constants",
 * and the commits that set them):
 * - the calibration set, every source (K22, N21, LF, BL, VT): the Ampere constants, and the
 *   first Hopper ones from LF's H100 rows (gemm 0.55, gemm_fp8 0.42 from LF-11, flash 0.25
 *   from LF-5/7/14); N21's ZeRO-3 rows set hop_net and, with LF's FSDP rows, overlap, which
 *   every generation shares (89c5a23);
 * - the second tuning set's NM and MB rows (Hopper and Blackwell gemm 0.65, gemm_fp8 0.55, flash
 *   0.30, tp_hide 0.9) and L3's (gemm checked on them) (82d2eca).
 * TT and LFH set nothing: TT's rows were in the table when the Hopper constants moved, and got
 * worse (13.8 % -> 21.0 %); no value was chosen by them.
 * ------------------------------------------------------------------------------------------- */

static const char *const tuning_sources[] = {"K22", "N21", "LF", "BL", "VT", "NM", "MB", "L3"};

static bool informed_constants(const char *source)
{
    for (size_t i = 0; i < sizeof tuning_sources / sizeof tuning_sources[0]; i++)
        if (strcmp(source, tuning_sources[i]) == 0)
            return true;
    return false;
}

/* One generation's folds. */
struct cv_gen {
    double expected_error; /* MAPE over the unseen runs; -1 = none */
    int unseen, tuning;
    char unseen_sources[32];
};

/* The folds of every generation over both sets, printed when out is not NULL. */
static void cross_validate(FILE *out, struct cv_gen cv[CORE_GEN_COUNT])
{
    struct set *sets[] = {&calibration, &tuning2};

    load_set(&calibration);
    load_set(&tuning2);
    for (int g = 0; g < CORE_GEN_COUNT; g++) {
        char seen[16][8];
        int n_seen = 0;
        double sum_unseen = 0;

        memset(&cv[g], 0, sizeof cv[g]);
        cv[g].expected_error = -1;
        for (size_t k = 0; k < 2; k++)
            for (int i = 0; i < sets[k]->count; i++) {
                const struct row *r = &sets[k]->list[i];
                bool dup = false;
                double sum = 0;
                int n = 0;

                if (core_gpus[r->in.gpu].generation != (enum core_gpu_generation)g)
                    continue;
                for (int j = 0; j < n_seen && !dup; j++)
                    dup = strcmp(seen[j], r->source) == 0;
                if (dup || n_seen == 16)
                    continue;
                snprintf(seen[n_seen++], sizeof seen[0], "%s", r->source);
                /* The fold that leaves this source out: its rows, of this generation. */
                for (size_t k2 = 0; k2 < 2; k2++)
                    for (int j = 0; j < sets[k2]->count; j++) {
                        const struct row *q = &sets[k2]->list[j];
                        if (strcmp(q->source, r->source) != 0 ||
                            core_gpus[q->in.gpu].generation != (enum core_gpu_generation)g)
                            continue;
                        sum += fabs(predict(&q->in) - q->measured) / q->measured;
                        n++;
                    }
                bool unseen = !informed_constants(r->source);
                if (out != NULL)
                    fprintf(out, "%-10s %-4s %3d runs  %5.1f%%  %s\n", core_generation_names[g],
                            r->source, n, 100 * sum / n,
                            unseen ? "unseen: informed no constant"
                                   : "tuning: constants chosen looking at it");
                if (unseen) {
                    size_t len = strlen(cv[g].unseen_sources);
                    snprintf(cv[g].unseen_sources + len, sizeof cv[g].unseen_sources - len, "%s%s",
                             len > 0 ? ", " : "", r->source);
                    cv[g].unseen += n;
                    sum_unseen += sum;
                } else {
                    cv[g].tuning += n;
                }
            }
        if (cv[g].unseen > 0)
            cv[g].expected_error = sum_unseen / cv[g].unseen;
        if (out != NULL && cv[g].unseen > 0)
            fprintf(out, "%-10s expected_error %.1f%% (%d unseen runs, %d tuning runs)\n\n",
                    core_generation_names[g], 100 * cv[g].expected_error, cv[g].unseen,
                    cv[g].tuning);
        else if (out != NULL)
            fprintf(out, "%-10s expected_error null (no measured run of it: constants %s)\n\n",
                    core_generation_names[g],
                    core_perf_validation[g].borrowed != NULL ? core_perf_validation[g].borrowed
                                                             : "(none said)");
    }
}

/* core/validation.c holds what the folds give: the figure to three decimals, the run counts and
 * the sources, and a null figure exactly where no run of the generation is unseen. */
START_TEST(test_expected_error_is_cross_validated)
{
    struct cv_gen cv[CORE_GEN_COUNT];

    cross_validate(NULL, cv);
    for (int g = 0; g < CORE_GEN_COUNT; g++) {
        struct cv_fold_result r = {cv[g].unseen, cv[g].tuning, cv[g].expected_error,
                                   cv[g].unseen_sources};

        cv_check_row(core_generation_names[g], &core_perf_validation[g], &r);
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Effects the sources report, as ratios between rows (or one row varied).
 * ------------------------------------------------------------------------------------------- */

/* vTrain, 3.6B on 64 A100s at micro-batch 4: TP 16 spans two nodes (11.96 s, VT-25) where TP 8
 * stays on NVLink (5.618 s, VT-20): 2.13x slower at the same GPU count. */
START_TEST(test_tp_across_nodes)
{
    double ratio = predict(&find_row("VT-25")->in) / predict(&find_row("VT-20")->in);

    ck_assert_msg(ratio > 1.5, "TP 16 / TP 8 = %.2f, expected far slower", ratio);
    ASSERT_REL(ratio, 11.96 / 5.618, 0.25);
}
END_TEST

/* Narayanan et al. 2021 Table 2: ZeRO-3 on 175B at 1536 GPUs with micro-batch 1 (66.75 s for
 * 1536 sequences) against 384 GPUs at micro-batch 4 (81.58 s): per-GPU throughput falls to
 * (1536 / 66.75 / 1536) / (1536 / 81.58 / 384) = 0.31 -- communication-bound. */
START_TEST(test_zero3_small_batch)
{
    const struct core_perf_input *z1 = &find_row("N21-Z1")->in, *z3 = &find_row("N21-Z3")->in;
    double tput1 = z1->global_batch / predict(z1) / (double)z1->gpus;
    double tput3 = z3->global_batch / predict(z3) / (double)z3->gpus;
    struct core_perf p;

    ASSERT_REL(tput3 / tput1, (1536 / 66.75 / 1536) / (1536 / 81.58 / 384), 0.3);
    core_perf_predict(z3, &p);
    ck_assert_str_eq(p.bottleneck, "dp_comm");
}
END_TEST

/* Korthikanti et al. 2022 Tables 3-5: selective recompute with sequence parallelism against
 * full recompute without it, same layout: 1.42/1.1, 18.13/13.75, 49.05/37.83, 94.42/71.49 s,
 * i.e. 1.29-1.32x faster. */
START_TEST(test_selective_recompute)
{
    static const char *pairs[][2] = {
        {"K22-1a", "K22-1b"}, {"K22-2a", "K22-2b"}, {"K22-3a", "K22-3b"}, {"K22-4a", "K22-4b"}};

    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const struct row *a = find_row(pairs[i][0]), *b = find_row(pairs[i][1]);
        double ratio = predict(&a->in) / predict(&b->in);

        ASSERT_REL(ratio, a->measured / b->measured, 0.1);
    }
}
END_TEST

/* Interleaved 1F1B: the bubble is (pp - 1) / v micro-batch times, so three virtual stages cut
 * it to exactly a third of plain 1F1B's (K22-2b, 175B on pp 8, run with v = 3), and the step
 * gets shorter even though each micro-batch crosses v times as many stage boundaries. */
START_TEST(test_interleaving)
{
    struct core_perf_input in = find_row("K22-2b")->in;
    struct core_perf plain, inter;

    in.virtual_stages = 1;
    core_perf_predict(&in, &plain);
    in.virtual_stages = 3;
    core_perf_predict(&in, &inter);
    ASSERT_REL(inter.breakdown.pp_bubble, plain.breakdown.pp_bubble / 3, 1e-12);
    ck_assert(inter.breakdown.pp_comm > plain.breakdown.pp_comm);
    ck_assert(inter.step_seconds < plain.step_seconds);
}
END_TEST

/* FlashAttention-2 (Dao 2023, A100, head dim 128, forward + backward, no causal mask): at 8k
 * context the fused kernel is about 3x faster than attention written in PyTorch (scores
 * materialized in HBM). Isolate the attention part of one layer as the difference between
 * the same 8192-token micro-batch as one 8k sequence and as 128 sequences of 64 tokens, where
 * attention is negligible: GEMMs, element-wise work and the step count are identical. */
static double attention_seconds_per_token(bool flash)
{
    struct core_perf_input in;
    double t[2];
    const int64_t s[2] = {8192, 64};

    memset(&in, 0, sizeof in);
    core_perf_input_hardware(&in, core_gpu_find("a100-sxm-80gb"), CORE_PREC_BF16);
    in.layers = 1, in.hidden = 2048, in.heads = 16, in.kv_heads = 16, in.head_dim = 128;
    in.ffn_hidden = 8192, in.vocab = 1, in.params = 5e7, in.active_params = 5e7;
    in.gpus = in.tp = in.pp = in.dp = in.cp = in.virtual_stages = 1;
    in.precision = CORE_PREC_BF16, in.flash_attention = flash, in.full_mask = true;
    in.optimizer = CORE_OPT_SGD;
    for (int i = 0; i < 2; i++) {
        in.seq_len = s[i];
        in.micro_batch = 8192 / s[i];
        in.global_batch = (double)in.micro_batch; /* one micro-batch of 8192 tokens */
        t[i] = predict(&in);
    }
    return (t[0] - t[1]) / 8192.0;
}

START_TEST(test_flash_attention)
{
    double ratio = attention_seconds_per_token(false) / attention_seconds_per_token(true);

    ck_assert_msg(ratio > 2.0 && ratio < 4.5, "materialized / flash attention = %.2f, ~3x", ratio);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Properties over random configurations (seeded LCG, so a failure reproduces).
 * ------------------------------------------------------------------------------------------- */

static uint64_t lcg_state;

static uint64_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg_state >> 33;
}

static int64_t pick(const int64_t *choices, size_t n)
{
    return choices[lcg() % n];
}

static void random_input(struct core_perf_input *in)
{
    static const int64_t pow2[] = {1, 2, 4, 8, 16, 32, 64};
    static const int64_t hidden[] = {512, 1024, 2048, 4096, 5120, 8192, 12288, 16384};
    static const int64_t seq[] = {128, 512, 2048, 4096, 8192, 32768, 131072};
    int gpu = (int)(lcg() % core_gpu_count);
    enum core_precision prec = (enum core_precision)(lcg() % 4);

    memset(in, 0, sizeof *in);
    core_perf_input_hardware(in, gpu, prec);
    if (in->peak_tflops <= 0)
        in->peak_tflops = 100; /* a user override where the catalog lacks the precision */
    in->precision = prec;
    in->hidden = pick(hidden, sizeof hidden / sizeof hidden[0]);
    in->heads = in->hidden / 128;
    in->kv_heads = lcg() % 2 ? in->heads : 8;
    in->head_dim = 128;
    in->ffn_hidden = in->hidden * (int64_t)(2 + lcg() % 3);
    in->gated_mlp = lcg() % 2;
    in->vocab = 32000 + (int64_t)(lcg() % 100000);
    in->layers = 1 + (int64_t)(lcg() % 128);
    set_dense_params(in);
    in->seq_len = pick(seq, sizeof seq / sizeof seq[0]);
    in->micro_batch = pick(pow2, 5);
    in->tp = pick(pow2, 6);
    in->pp = pick(pow2, 5);
    in->dp = pick(pow2, 7);
    in->cp = pick(pow2, 4);
    in->virtual_stages = in->pp > 1 ? pick(pow2, 3) : 1;
    in->gpus = in->tp * in->pp * in->dp * in->cp;
    in->global_batch = (double)(in->micro_batch * in->dp) * (double)pick(pow2, 7);
    in->checkpointing = (enum core_checkpointing)(lcg() % 3);
    in->flash_attention = lcg() % 2;
    in->optimizer = (enum core_optimizer)(lcg() % 7);
    in->master_weights = lcg() % 2;
    in->zero_stage = (int)(lcg() % 4);
    in->sequence_parallel = in->tp > 1 && lcg() % 2;
    in->tp_comm_overlap = lcg() % 2;
    in->dp_comm_overlap = lcg() % 2;
}

START_TEST(test_properties)
{
    lcg_state = 12;
    for (int i = 0; i < 20000; i++) {
        struct core_perf_input in, faster;
        struct core_perf p, q;

        random_input(&in);
        core_perf_predict(&in, &p);
        const double *terms = &p.breakdown.compute;
        double sum = 0;
        for (int k = 0; k < CORE_PERF_TERMS; k++) {
            ck_assert_msg(isfinite(terms[k]) && terms[k] >= 0, "case %d: %s = %g", i,
                          core_perf_term_names[k], terms[k]);
            sum += terms[k];
        }
        ck_assert(isfinite(p.step_seconds) && p.step_seconds > 0);
        ASSERT_REL(sum, p.step_seconds, 1e-12);
        ck_assert_msg(p.mfu > 0 && p.mfu <= 1 && p.hfu >= p.mfu && p.hfu <= 1,
                      "case %d: mfu %g hfu %g (gpu %s prec %d L %lld d %lld s %lld b %lld tp %lld "
                      "pp %lld dp %lld cp %lld flash %d ckpt %d)",
                      i, p.mfu, p.hfu, core_gpus[in.gpu].id, (int)in.precision,
                      (long long)in.layers, (long long)in.hidden, (long long)in.seq_len,
                      (long long)in.micro_batch, (long long)in.tp, (long long)in.pp,
                      (long long)in.dp, (long long)in.cp, in.flash_attention,
                      (int)in.checkpointing);
        ck_assert(isfinite(p.tokens_per_second_per_gpu) && p.tokens_per_second_per_gpu > 0);
        ck_assert(p.bottleneck != NULL && strcmp(p.bottleneck, "compute") != 0);

        /* More bandwidth, either link, never makes a step slower. */
        faster = in;
        faster.intra_node_gbs *= 2;
        core_perf_predict(&faster, &q);
        ck_assert_msg(q.step_seconds <= p.step_seconds, "case %d: faster NVLink slower", i);
        faster = in;
        faster.inter_node_gbs *= 2;
        core_perf_predict(&faster, &q);
        ck_assert_msg(q.step_seconds <= p.step_seconds, "case %d: faster network slower", i);
    }
}
END_TEST

/* Every catalog row carries the interconnect columns the model needs. */
START_TEST(test_catalog_interconnect)
{
    for (size_t i = 0; i < core_gpu_count; i++) {
        ck_assert_msg(core_gpus[i].scale_up_gbs > 0 && core_gpus[i].network_gbs > 0 &&
                          core_gpus[i].gpus_per_node >= 1,
                      "%s lacks interconnect figures", core_gpus[i].id);
        ck_assert(core_gpus[i].network_gbs <= core_gpus[i].scale_up_gbs);
    }
    ck_assert_int_eq(core_gpus[core_gpu_find("gb200")].gpus_per_node, 72);
}
END_TEST

/* Every measured run satisfies the layout rules (core/rules.c): the frameworks ran them, so a
 * rule that refused one would be stricter than the framework. Rows without a stated stage
 * count take v = 2 (row_input), which the rule must accept as well. */
START_TEST(test_layout_rules_accept_measured_runs)
{
    struct set *sets[] = {&calibration, &tuning2};

    for (size_t k = 0; k < 2; k++) {
        load_set(sets[k]);
        for (int i = 0; i < sets[k]->count; i++) {
            const struct core_perf_input *in = &sets[k]->list[i].in;
            double m = in->global_batch / ((double)in->micro_batch * (double)in->dp);

            ck_assert_msg(core_rule_tp_heads(in->heads, in->kv_heads, in->tp), "%s: tp",
                          sets[k]->list[i].id);
            ck_assert_msg(core_rule_cp_seq(in->seq_len, in->cp), "%s: cp", sets[k]->list[i].id);
            ck_assert_msg(core_rule_interleave(in->pp, in->virtual_stages, m),
                          "%s: pp %lld v %lld m %g", sets[k]->list[i].id, (long long)in->pp,
                          (long long)in->virtual_stages, m);
        }
    }
}
END_TEST

static Suite *throughput_suite(void)
{
    Suite *s = suite_create("throughput");
    TCase *tc = tcase_create("validation");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_calibration_mape);
    tcase_add_test(tc, test_tuning2_mape);
    tcase_add_test(tc, test_expected_error_is_cross_validated);
    tcase_add_test(tc, test_tp_across_nodes);
    tcase_add_test(tc, test_zero3_small_batch);
    tcase_add_test(tc, test_selective_recompute);
    tcase_add_test(tc, test_interleaving);
    tcase_add_test(tc, test_layout_rules_accept_measured_runs);
    tcase_add_test(tc, test_flash_attention);
    tcase_add_test(tc, test_properties);
    tcase_add_test(tc, test_catalog_interconnect);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--terms") == 0) {
        print_terms(stdout, &calibration);
        fputc('\n', stdout);
        print_terms(stdout, &tuning2);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        double mape = print_table(stdout);
        printf("\nTuning set 2: other frameworks and clusters (PROVENANCE-tuning-2.md)\n");
        double held = print_set(stdout, &tuning2, true);
        return mape <= MAPE_LIMIT && held <= TUNING2_LIMIT ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    if (argc > 1 && strcmp(argv[1], "--cv") == 0) {
        struct cv_gen cv[CORE_GEN_COUNT];
        printf("Leave-one-source-out folds per GPU generation (no constant is refitted: a fold\n"
               "is out of sample only for a source no constant was chosen looking at)\n\n");
        cross_validate(stdout, cv);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--tuning2") == 0)
        return print_set(stdout, &tuning2, true) <= TUNING2_LIMIT ? EXIT_SUCCESS : EXIT_FAILURE;
    return check_main_run(throughput_suite());
}
