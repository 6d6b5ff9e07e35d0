/*
 * test_memory.c - memory.peak (core/peak.c) against 22 measured peaks of real training runs.
 *
 * Reads memory-measured.csv (PROVENANCE-memory.md says where each row comes from), maps every
 * row to a core_input with its framework profile, evaluates it and compares the predicted peak,
 * in the statistic the source measured, with the measured one. The suite fails when the mean
 * absolute error exceeds 10 %. Further tests pin differences that isolate one term, with values
 * derived by hand, and properties over random configurations.
 *
 * Run with --table to print the comparison and exit (script/validate does that).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "csv.h"
#include "core_test_util.h"
#include "peak.h"
#include "cv_check.h"
#include "validation.h"

#ifndef MEMWALL_MEMORY_CSV
#error "MEMWALL_MEMORY_CSV must name the measured-peaks file"
#endif
#ifndef MEMWALL_MEMORY_TUNING2_CSV
#error "MEMWALL_MEMORY_TUNING2_CSV must name the second tuning set of peaks"
#endif

/* The suite fails above this mean absolute error over all rows of the fitted set. */
#define MAE_LIMIT 0.10
/* ... and above this one over the second set (PROVENANCE-memory-tuning-2.md), a hold-out until
 * peak.c's torchtitan terms were changed looking at its TTB rows (a tuning set now): larger models,
 * tensor, pipeline and context parallelism at 256-512 GPUs, another GPU. The allocator's reserved
 * slack alone varies by a few percent between runs of one configuration (TTB1 vs TTB2: async TP, 6
 * %), so 10 % is the honest bound. */
#define TUNING2_MAE_LIMIT 0.10
/* No single row of the second set may be off by more than this. */
#define TUNING2_ROW_LIMIT 0.20

#define ROWS_MAX  64
#define FIELDS    36
#define FIELD_MAX 200
#define GIB       1073741824.0

struct row {
    char id[24];
    char source[8];  /* the id's leading letters: TT, MLM, TTN, VSM */
    double measured; /* GiB */
    struct core_input in;
};

struct dataset {
    const char *path;
    struct row rows[ROWS_MAX];
    int count;
};

static struct dataset fitted = {.path = MEMWALL_MEMORY_CSV};
static struct dataset tuning2 = {.path = MEMWALL_MEMORY_TUNING2_CSV};
/* The fitted set, as most tests use it. */
static struct row *const rows = fitted.rows;

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "memory-measured: " __VA_ARGS__);                                      \
            fputc('\n', stderr);                                                                   \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

/* Index of s in names[0..n), or exit. */
static int choice(const char *s, const char *const *names, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    NEED(0, "unknown %s '%s'", what, s);
    return 0;
}

static enum core_flag flag(const char *s)
{
    return s[0] == '\0' ? CORE_FLAG_AUTO : strcmp(s, "true") == 0 ? CORE_FLAG_YES : CORE_FLAG_NO;
}

/*
 * One CSV row to a model input. Columns: id, source, framework, gpu, memory_gb, gpus, layers,
 * hidden, heads, kv_heads, ffn_hidden, gated_mlp, vocab, tied_embeddings, seq_len, micro_batch,
 * global_batch, tp, pp, cp, virtual_stages, zero_stage, sequence_parallel, checkpointing,
 * flash_attention, precision, grad_precision, master_weights, optimizer, loss, compile,
 * optimizer_in_backward, activation_offload, metric, measured_gib, note.
 */
static void row_input(char f[FIELDS][FIELD_MAX], struct row *r)
{
    struct core_input *in = &r->in;
    int gpu = core_gpu_find(f[3]);

    NEED(gpu >= 0, "%s: unknown gpu %s", f[0], f[3]);
    core_input_init(in);
    snprintf(r->id, sizeof r->id, "%.23s", f[0]);
    snprintf(r->source, sizeof r->source, "%.*s", (int)strspn(f[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
             f[0]);
    in->framework =
        (enum core_framework)choice(f[2], core_framework_names, CORE_FW_COUNT, "framework");
    in->gpu = gpu;
    in->memory_gb = csv_num(f[4], 0);
    in->gpus = csv_whole(f[5], 1);
    in->layers = csv_whole(f[6], 0);
    in->hidden = csv_whole(f[7], 0);
    in->heads = csv_whole(f[8], 0);
    in->kv_heads = csv_whole(f[9], in->heads); /* empty: multi-head attention */
    in->ffn_hidden = csv_whole(f[10], 0);
    in->gated_mlp = flag(f[11]);
    in->vocab = csv_whole(f[12], 0);
    in->tied_embeddings = flag(f[13]);
    in->seq_len = csv_whole(f[14], 0);
    in->batch = csv_whole(f[15], 1);
    in->global_batch = csv_num(f[16], 0);
    in->tp = csv_whole(f[17], 1);
    in->pp = csv_whole(f[18], 1);
    in->cp = csv_whole(f[19], 1);
    in->virtual_stages = csv_whole(f[20], 1);
    in->zero_stage = (int)csv_whole(f[21], 0);
    in->sequence_parallel = flag(f[22]);
    in->checkpointing =
        (enum core_checkpointing)choice(f[23], core_checkpointing_names, 3, "checkpointing");
    in->flash_attention = (strcmp(f[24], "true") == 0) ? CORE_FLAG_YES : CORE_FLAG_NO;
    in->precision = (enum core_precision)choice(f[25], core_precision_names, 4, "precision");
    in->grad_precision = f[26][0] ? choice(f[26], core_precision_names, 4, "grad_precision") : -1;
    in->master_weights = flag(f[27]);
    in->optimizer = (enum core_optimizer)choice(f[28], core_optimizer_names, 7, "optimizer");
    in->loss = f[29][0] ? choice(f[29], core_loss_names, CORE_LOSS_COUNT, "loss") : -1;
    in->compile = strcmp(f[30], "true") == 0;
    in->optimizer_in_backward = strcmp(f[31], "true") == 0;
    in->activation_offload = strcmp(f[32], "true") == 0;
    in->memory_metric = (enum core_memory_metric)choice(f[33], core_memory_metric_names,
                                                        CORE_METRIC_COUNT, "metric");
    r->measured = csv_num(f[34], 0);

    /* Megatron-LM's GPT models (MLM, MPP, VSM) carry biases, LayerNorm biases and learned
     * positions that the input rows cannot express: give N counted with them (a few percent of
     * the state). */
    if (in->framework == CORE_FW_MEGATRON) {
        struct core_arch a = {.layers = in->layers,
                              .hidden = in->hidden,
                              .heads = in->heads,
                              .kv_heads = in->kv_heads,
                              .head_dim = in->hidden / in->heads,
                              .ffn_hidden = in->ffn_hidden,
                              .vocab = in->vocab,
                              .tied_embeddings = in->tied_embeddings == CORE_FLAG_YES,
                              .learned_positions = in->seq_len,
                              .norm_bias = true,
                              .qkv_bias = true,
                              .o_bias = true,
                              .mlp_bias = true};
        in->params = core_arch_params(&a);
        NEED(in->params > 0, "%s: bad architecture", r->id);
    }
}

static void load_set(struct dataset *d)
{
    static char fields[FIELDS][FIELD_MAX];
    char line[2048];
    FILE *fp;

    if (d->count > 0)
        return;
    fp = fopen(d->path, "r");
    NEED(fp != NULL, "cannot open %s", d->path);
    NEED(fgets(line, sizeof line, fp) != NULL, "empty file");
    while (fgets(line, sizeof line, fp) != NULL && d->count < ROWS_MAX) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        NEED(csv_split(line, &fields[0][0], FIELDS, FIELD_MAX) == FIELDS,
             "row %d: expected %d fields", d->count + 1, FIELDS);
        row_input(fields, &d->rows[d->count++]);
    }
    fclose(fp);
}

static void load_rows(void)
{
    load_set(&fitted);
}

static const struct row *find_row(const char *id)
{
    load_rows();
    for (int i = 0; i < fitted.count; i++)
        if (strcmp(rows[i].id, id) == 0)
            return &rows[i];
    NEED(0, "row %s missing", id);
    return NULL;
}

/* Evaluate and compute the peak; exits on an evaluation error (the inputs are the file's). */
static void peak_of(const struct core_input *in, bool first_step, struct core_peak *pk)
{
    static struct core_result res;
    struct core_problems probs;
    struct core_peak_options o;
    enum core_status st = core_evaluate_parts(in, CORE_PART_MEMORY, &res, &probs);

    NEED(st == CORE_OK, "evaluation failed: %s: %s", probs.count ? probs.items[0].field : "",
         probs.count ? probs.items[0].message : "");
    core_peak_options_resolved(&res.resolved, &o);
    o.first_step = first_step;
    core_peak_compute(&res.resolved, &o, pk);
}

/* ---------------------------------------------------------------------------------------------
 * The table: per row and per source; returns the mean absolute error over all rows.
 * ------------------------------------------------------------------------------------------- */

/* The peak in the statistic and on the rank the source reports. Megatron-LM logs its memory
 * report on the last rank, i.e. the last pipeline stage, not the largest stage. */
static double reported_gib(const struct row *r, const struct core_peak *pk, const char **stage)
{
    if (r->in.framework == CORE_FW_MEGATRON && pk->metric == CORE_METRIC_ALLOCATED &&
        r->in.pp > 1) {
        double last = 0;

        for (int k = 0; k < CORE_MOMENT_COUNT; k++)
            last = fmax(last, pk->stages[1][k].total);
        *stage = "last*";
        return last / GIB;
    }
    *stage = pk->stage_name;
    return pk->gib;
}

struct table_stats {
    double mae;     /* mean absolute error over the rows memwall accepts */
    double max_err; /* largest absolute error of one row */
    int rejected;   /* rows whose layout memwall's inputs refuse (printed with the reason) */
};

/* Whether memwall accepts a row's inputs; prints the reason when not. */
static bool accepted(FILE *out, const struct row *r)
{
    static struct core_result res;
    struct core_problems probs;

    if (core_evaluate_parts(&r->in, CORE_PART_MEMORY, &res, &probs) == CORE_OK)
        return true;
    fprintf(out, "%-11s rejected: %s: %s\n", r->id, probs.count ? probs.items[0].field : "",
            probs.count ? probs.items[0].message : "");
    return false;
}

/* The table of one set: per row, then the mean absolute error per source (the id's leading
 * letters, in order of first appearance) and over all rows. */
static struct table_stats print_table(FILE *out, struct dataset *d)
{
    char sources[ROWS_MAX][8];
    double sum[ROWS_MAX] = {0}, sum_all = 0;
    int n[ROWS_MAX] = {0}, ns = 0;
    struct table_stats st = {1.0, 1.0, 0};
    int used = 0;

    load_set(d);
    fprintf(out, "%-11s %-10s %-9s %9s %9s %7s  %-14s %-5s\n", "id", "framework", "metric",
            "predicted", "measured", "error", "at", "stage");
    st.max_err = 0;
    for (int i = 0; i < d->count; i++) {
        const struct row *r = &d->rows[i];
        struct core_peak pk;
        const char *stage;
        double err, gib;
        int s;

        if (!accepted(out, r)) {
            st.rejected++;
            continue;
        }
        used++;
        peak_of(&r->in, false, &pk);
        gib = reported_gib(r, &pk, &stage);
        err = (gib - r->measured) / r->measured;
        fprintf(out, "%-11s %-10s %-9s %9.2f %9.2f %+6.1f%%  %-14s %-5s\n", r->id,
                core_framework_names[pk.framework], core_memory_metric_names[pk.metric], gib,
                r->measured, 100 * err, core_peak_moment_names[pk.at], stage);
        for (s = 0; s < ns && strcmp(sources[s], r->source) != 0; s++)
            ;
        if (s == ns)
            snprintf(sources[ns++], sizeof sources[0], "%s", r->source);
        sum[s] += fabs(err);
        n[s]++;
        sum_all += fabs(err);
        st.max_err = fmax(st.max_err, fabs(err));
    }
    fprintf(out, "\nmean absolute error by source:");
    for (int s = 0; s < ns; s++)
        fprintf(out, " %s %.1f%% (%d)", sources[s], 100 * sum[s] / n[s], n[s]);
    if (used > 0)
        st.mae = sum_all / used;
    fprintf(out, "\nmean absolute error, all rows: %.1f%% (%d); largest %.1f%%; rejected %d\n",
            100 * st.mae, used, 100 * st.max_err, st.rejected);
    return st;
}

/* Per-moment breakdown of every row of a set, GiB (--terms). */
static void print_terms(FILE *out, struct dataset *d)
{
    load_set(d);
    for (int i = 0; i < d->count; i++) {
        struct core_peak pk;

        if (!accepted(out, &d->rows[i]))
            continue;
        peak_of(&d->rows[i].in, false, &pk);
        fprintf(out, "%s (in flight %.2f)\n", d->rows[i].id, pk.in_flight);
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < CORE_MOMENT_COUNT; k++) {
                const struct core_peak_moment_bytes *m = &pk.stages[s][k];
                fprintf(out,
                        "  %-5s %-14s w %6.2f g %6.2f opt %6.2f act %6.2f logits %6.2f buf %6.2f"
                        " = %6.2f\n",
                        s == 0 ? "first" : "last", core_peak_moment_names[k], m->weights / GIB,
                        m->grads / GIB, m->optimizer / GIB, m->activations / GIB, m->logits / GIB,
                        m->buffers / GIB, m->total / GIB);
            }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Leave-one-source-out per framework profile (core/validation.c).
 *
 * peak.c's terms and constants were chosen by hand: a fold refits nothing, and a source's error
 * is out of sample only if nothing was chosen looking at its rows. The fitted set's sources
 * (TT, MLM, TTN, VSM) set the profiles (18e86d6, afa4af5); the second set's TTB rows set
 * torchtitan's loss_parallel, sequence-parallel and pipelined-FSDP terms (626ce2b). TTH and MPP
 * set nothing.
 * ------------------------------------------------------------------------------------------- */

static const char *const peak_tuning_sources[] = {"TT", "MLM", "TTN", "VSM", "TTB"};

static bool peak_informed(const char *source)
{
    for (size_t i = 0; i < sizeof peak_tuning_sources / sizeof peak_tuning_sources[0]; i++)
        if (strcmp(source, peak_tuning_sources[i]) == 0)
            return true;
    return false;
}

struct cv_profile {
    double expected_error; /* mean absolute error over the unseen rows; -1 = none */
    int unseen, tuning;    /* rows (tuning counts refused rows too) */
    char unseen_sources[32];
};

/* One source's rows of one framework over both sets: their count, those accepted, error sum. */
static void fold(const char *source, int fw, int *n, int *used, double *sum)
{
    struct dataset *sets[] = {&fitted, &tuning2};

    *n = *used = 0;
    *sum = 0;
    for (size_t k = 0; k < 2; k++)
        for (int i = 0; i < sets[k]->count; i++) {
            const struct row *r = &sets[k]->rows[i];
            static struct core_result res;
            struct core_problems probs;
            struct core_peak pk;
            const char *stage;

            if (strcmp(r->source, source) != 0 || (int)r->in.framework != fw)
                continue;
            (*n)++;
            if (core_evaluate_parts(&r->in, CORE_PART_MEMORY, &res, &probs) != CORE_OK)
                continue; /* refused (the table prints why) */
            peak_of(&r->in, false, &pk);
            *sum += fabs(reported_gib(r, &pk, &stage) - r->measured) / r->measured;
            (*used)++;
        }
}

static void print_fold(FILE *out, int fw, const char *source, int n, int used, double sum,
                       bool unseen)
{
    if (out != NULL)
        fprintf(out, "%-10s %-4s %3d peaks %5.1f%%  %s\n", core_framework_names[fw], source, n,
                used > 0 ? 100 * sum / used : 0.0,
                unseen ? "unseen: informed nothing" : "tuning: terms chosen looking at it");
}

static void print_profile(FILE *out, int fw, const struct cv_profile *cv)
{
    if (out == NULL)
        return;
    if (cv->unseen > 0)
        fprintf(out, "%-10s expected_error %.1f%% (%d unseen peaks, %d tuning peaks)\n\n",
                core_framework_names[fw], 100 * cv->expected_error, cv->unseen, cv->tuning);
    else
        fprintf(out, "%-10s expected_error null (no unseen peak; %d tuning peaks)\n\n",
                core_framework_names[fw], cv->tuning);
}

/* The folds of one profile: each source with rows under it, once. */
static void cross_validate_profile(FILE *out, int fw, struct cv_profile *cv)
{
    struct dataset *sets[] = {&fitted, &tuning2};
    char seen[16][8];
    int n_seen = 0;
    double sum_unseen = 0;

    memset(cv, 0, sizeof *cv);
    cv->expected_error = -1;
    for (size_t k = 0; k < 2; k++)
        for (int i = 0; i < sets[k]->count; i++) {
            const struct row *r = &sets[k]->rows[i];
            bool dup = false, unseen;
            int n, used;
            double sum;

            if ((int)r->in.framework != fw)
                continue;
            for (int j = 0; j < n_seen && !dup; j++)
                dup = strcmp(seen[j], r->source) == 0;
            if (dup || n_seen == 16)
                continue;
            snprintf(seen[n_seen++], sizeof seen[0], "%s", r->source);
            fold(r->source, fw, &n, &used, &sum);
            unseen = !peak_informed(r->source);
            print_fold(out, fw, r->source, n, used, sum, unseen);
            if (unseen) {
                size_t len = strlen(cv->unseen_sources);
                snprintf(cv->unseen_sources + len, sizeof cv->unseen_sources - len, "%s%s",
                         len > 0 ? ", " : "", r->source);
                cv->unseen += used;
                sum_unseen += sum;
            } else {
                cv->tuning += n;
            }
        }
    if (cv->unseen > 0)
        cv->expected_error = sum_unseen / cv->unseen;
    print_profile(out, fw, cv);
}

static void cross_validate(FILE *out, struct cv_profile cv[CORE_FW_COUNT])
{
    load_set(&fitted);
    load_set(&tuning2);
    for (int fw = 0; fw < CORE_FW_COUNT; fw++)
        cross_validate_profile(out, fw, &cv[fw]);
}

/* core/validation.c's peak table is what the folds give (the figure to three decimals). */
START_TEST(test_peak_error_is_cross_validated)
{
    struct cv_profile cv[CORE_FW_COUNT];

    cross_validate(NULL, cv);
    for (int fw = 0; fw < CORE_FW_COUNT; fw++) {
        struct cv_fold_result r = {cv[fw].unseen, cv[fw].tuning, cv[fw].expected_error,
                                   cv[fw].unseen_sources};

        cv_check_row(core_framework_names[fw], &core_peak_validation[fw], &r);
    }
}
END_TEST

START_TEST(test_measured_mae)
{
    struct table_stats st = print_table(stdout, &fitted);

    ck_assert_int_eq(fitted.count, 22);
    ck_assert_int_eq(st.rejected, 0);
    ck_assert_msg(st.mae <= MAE_LIMIT, "mean absolute error %.1f%% exceeds %.0f%%", 100 * st.mae,
                  100 * MAE_LIMIT);
}
END_TEST

/* The second tuning set: published peaks; TTB's rows changed peak.c's torchtitan terms
 * (626ce2b), TTH's and MPP's changed nothing. */
START_TEST(test_tuning2_mae)
{
    struct table_stats st = print_table(stdout, &tuning2);

    ck_assert_int_eq(tuning2.count, 13);
    /* TTB4: torchtitan splits 126 layers unevenly over 16 interleaved stages (core/layout.c,
     * the balanced split): priced since the uneven pipeline stages, no longer rejected. */
    ck_assert_int_eq(st.rejected, 0);
    ck_assert_msg(st.mae <= TUNING2_MAE_LIMIT,
                  "tuning set 2 mean absolute error %.1f%% exceeds %.0f%%", 100 * st.mae,
                  100 * TUNING2_MAE_LIMIT);
    ck_assert_msg(st.max_err <= TUNING2_ROW_LIMIT,
                  "a row of tuning set 2 is off by %.1f%% (> %.0f%%)", 100 * st.max_err,
                  100 * TUNING2_ROW_LIMIT);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Differences that isolate one term, derived by hand.
 * ------------------------------------------------------------------------------------------- */

/* Megatron creates Adam's moments lazily at the first optimizer step, so step 2's peak exceeds
 * step 1's by the moments: 8 bytes per parameter, sharded by the distributed optimizer over
 * dp = 8 / tp 4 = 2 ranks, i.e. 4 bytes x local parameters (N / tp). */
START_TEST(test_megatron_step_two)
{
    const struct row *r = find_row("MLM1-H100");
    struct core_peak one, two;
    double local = (double)r->in.params / 4.0;

    peak_of(&r->in, true, &one);
    peak_of(&r->in, false, &two);
    ck_assert_str_eq(core_peak_moment_names[two.at], "forward_end");
    ASSERT_REL(two.allocated - one.allocated, 4.0 * local, 1e-9);
}
END_TEST

/* Korthikanti et al. 2022: with tensor parallelism t, sequence parallelism divides the 10 s b h
 * bytes per layer that are otherwise replicated: 10 sbh - 10 sbh / t = 5 sbh at t = 2. GPT-2
 * large, s 1024, b 64, h 1280, L 36: 5 * 1024 * 64 * 1280 * 36 bytes. */
START_TEST(test_sequence_parallel_difference)
{
    struct core_input in = find_row("VSM3")->in;
    struct core_peak without, with;

    in.memory_metric = CORE_METRIC_ALLOCATED;
    peak_of(&in, false, &without);
    in.sequence_parallel = CORE_FLAG_YES;
    peak_of(&in, false, &with);
    ASSERT_REL(without.allocated - with.allocated, 5.0 * 1024 * 64 * 1280 * 36, 1e-9);
}
END_TEST

/* FSDP with fp32 sharded parameters, fp32 gradients and fp32 AdamW moments holds 16 bytes per
 * parameter, sharded over the data-parallel ranks: going from 8 to 128 GPUs drops
 * 16 N (1/8 - 1/128) bytes of what the allocator holds at the peak (the gradients are freed by
 * zero_grad, but their blocks stay reserved). Llama 3.1 8B (TT1 -> TT8). */
START_TEST(test_fsdp_scaling)
{
    struct core_input in = find_row("TT1")->in;
    struct core_peak small, large;
    double n;
    struct core_result res;

    in.memory_metric = CORE_METRIC_ALLOCATED;
    EVAL_OK(in, res);
    n = (double)res.resolved.params;
    peak_of(&in, false, &small);
    in.gpus = 128;
    in.global_batch = 256;
    peak_of(&in, false, &large);
    ASSERT_REL(small.held - large.held, 16.0 * n * (1.0 / 8 - 1.0 / 128), 0.10);
}
END_TEST

/* torchtitan's loss, cross_entropy(logits.float()) uncompiled, peaks at the start of its
 * backward with three fp32 logits-sized buffers (log-softmax, its gradient, the input's
 * gradient): 12 bytes x s x b x V = 12 x 8192 x 2 x 128256 on TT1; compiled, bf16 logits and a
 * bf16 gradient: 4 bytes per logit. */
START_TEST(test_loss_buffers)
{
    struct core_input in = find_row("TT1")->in;
    struct core_peak pk;
    const double logits = 8192.0 * 2 * 128256;

    peak_of(&in, false, &pk);
    ck_assert_str_eq(core_peak_moment_names[pk.at], "backward");
    ASSERT_REL(pk.stages[1][CORE_MOMENT_BACKWARD].logits, 12 * logits, 1e-12);
    in.loss = CORE_LOSS_COMPILED;
    peak_of(&in, false, &pk);
    ck_assert(pk.stages[1][CORE_MOMENT_BACKWARD].logits <= 4 * logits);
}
END_TEST

/* Under tensor parallelism torchtitan's loss runs as PyTorch's loss_parallel on vocabulary
 * shards, whose backward holds the saved log-softmax, a zeros_like gradient, exp(x), their sum
 * and its product: 16 bytes per local logit. Llama 3.1 70B, TP 8, batch 16 x 8192 (TTB1):
 * 16 x 8192 x 16 x 128256 / 8 bytes. */
START_TEST(test_loss_parallel_buffers)
{
    struct core_peak pk;
    const struct row *r;

    load_set(&tuning2);
    r = &tuning2.rows[0];
    ck_assert_str_eq(r->id, "TTB1");
    peak_of(&r->in, false, &pk);
    ASSERT_REL(pk.stages[1][CORE_MOMENT_BACKWARD].logits, 16 * 8192.0 * 16 * 128256 / 8, 1e-12);
}
END_TEST

/* Micro-batches in flight on the first stage: plain 1F1B holds min(pp, m); Megatron's
 * interleaved schedule warms up (pp - 1) * 2 + (v - 1) * pp + 1 chunks of L / (pp v) layers:
 * pp 4, v 2, m 8 -> 11 chunks = 5.5 stage micro-batches (Korthikanti's pp (1 + (pp-1)/(pp v))). */
START_TEST(test_in_flight)
{
    struct core_input in;
    struct core_peak pk;

    core_input_init(&in);
    in.framework = CORE_FW_MEGATRON;
    in.layers = 32, in.hidden = 4096, in.heads = 32, in.seq_len = 4096;
    in.gpus = 8, in.pp = 4, in.tp = 2, in.zero_stage = 1, in.global_batch = 8;
    peak_of(&in, false, &pk);
    ck_assert_str_eq(pk.stage_name, "first");
    ASSERT_REL(pk.in_flight, 4, 1e-12);
    in.virtual_stages = 2;
    peak_of(&in, false, &pk);
    ASSERT_REL(pk.in_flight, 5.5, 1e-12);
    /* m = 4 (the least multiple of pp the interleaved schedule takes): only m v = 8 chunks
     * exist, 4 stage micro-batches. Plain 1F1B with m = 2 < pp holds both. */
    in.global_batch = 4;
    peak_of(&in, false, &pk);
    ASSERT_REL(pk.in_flight, 4, 1e-12);
    in.virtual_stages = 1;
    in.global_batch = 2;
    peak_of(&in, false, &pk);
    ASSERT_REL(pk.in_flight, 2, 1e-12);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Properties
 * ------------------------------------------------------------------------------------------- */

/* generic is the ledger: the peak equals memory.total for the lesson's default and others. */
START_TEST(test_generic_is_ledger)
{
    struct core_input in;
    struct core_result res;
    struct core_peak pk;

    core_input_init(&in);
    EVAL_OK(in, res);
    ck_assert_int_eq(res.resolved.framework, CORE_FW_GENERIC);
    ck_assert_int_eq(res.resolved.loss, CORE_LOSS_FP32_LOGITS);
    peak_of(&in, false, &pk);
    ck_assert(pk.allocated == (double)res.memory.total);
    ck_assert(pk.bytes == (double)res.memory.total);
    ck_assert_str_eq(pk.stage_name, "only");
}
END_TEST

static uint64_t lcg_state;

static uint64_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg_state >> 33;
}

/* Random layouts of every framework: the peak is finite, at least the stored weights, never
 * below the allocated peak in the reserved and device statistics, and grows with the batch. */
START_TEST(test_properties)
{
    static const int64_t hidden[] = {512, 1024, 2048, 4096, 8192};
    static const int64_t seq[] = {256, 1024, 4096, 16384};
    static const int64_t pow2[] = {1, 2, 4, 8};

    lcg_state = 14;
    for (int it = 0; it < 3000; it++) {
        struct core_input in;
        struct core_result res;
        struct core_problems probs;
        struct core_peak pk, big;
        struct core_peak_options o;
        int64_t tp = pow2[lcg() % 4], pp = pow2[lcg() % 4], cp = pow2[lcg() % 2];
        int64_t dp = pow2[lcg() % 4];

        core_input_init(&in);
        in.framework = (enum core_framework)(lcg() % CORE_FW_COUNT);
        in.loss = (int)(lcg() % (CORE_LOSS_COUNT + 1)) - 1;
        in.compile = lcg() % 2, in.optimizer_in_backward = lcg() % 2;
        in.activation_offload = lcg() % 2;
        in.memory_metric = (enum core_memory_metric)(lcg() % CORE_METRIC_COUNT);
        in.hidden = hidden[lcg() % 5];
        in.layers = 8 * (int64_t)(1 + lcg() % 6);
        in.gated_mlp = lcg() % 2 ? CORE_FLAG_YES : CORE_FLAG_NO;
        in.seq_len = seq[lcg() % 4];
        in.batch = 1 + (int64_t)(lcg() % 4);
        in.tp = tp, in.pp = pp, in.cp = cp, in.gpus = tp * pp * cp * dp;
        in.global_batch = (double)(in.batch * dp * (int64_t)(1 + lcg() % 8));
        in.zero_stage = (int)(lcg() % 4);
        in.checkpointing = (enum core_checkpointing)(lcg() % 3);
        in.flash_attention = (lcg() % 2) ? CORE_FLAG_YES : CORE_FLAG_NO;
        in.precision = (enum core_precision)(lcg() % 3);
        in.optimizer = (enum core_optimizer)(lcg() % 7);
        if (core_evaluate_parts(&in, CORE_PART_MEMORY, &res, &probs) != CORE_OK)
            continue;
        core_peak_options_resolved(&res.resolved, &o);
        core_peak_compute(&res.resolved, &o, &pk);
        ck_assert_msg(isfinite(pk.bytes) && pk.bytes > 0, "iteration %d: peak %g", it, pk.bytes);
        ck_assert_msg(pk.bytes >= pk.allocated, "iteration %d", it);
        /* Every profile stores at least the ledger's weight bytes per parameter, and the
         * stage that peaks holds at least the average stage's share. */
        ck_assert_msg(pk.allocated >= (double)res.memory.params * (1 - 1e-9), "iteration %d", it);
        ck_assert_msg(pk.allocated >= pk.stages[0][CORE_MOMENT_FORWARD_END].weights, "it %d", it);
        in.batch *= 2;
        in.global_batch *= 2;
        if (core_evaluate_parts(&in, CORE_PART_MEMORY, &res, &probs) != CORE_OK)
            continue;
        core_peak_options_resolved(&res.resolved, &o);
        core_peak_compute(&res.resolved, &o, &big);
        ck_assert_msg(big.allocated >= pk.allocated, "iteration %d: batch x2 %g < %g", it,
                      big.allocated, pk.allocated);
    }
}
END_TEST

static Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("validation");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_measured_mae);
    tcase_add_test(tc, test_tuning2_mae);
    tcase_add_test(tc, test_peak_error_is_cross_validated);
    tcase_add_test(tc, test_megatron_step_two);
    tcase_add_test(tc, test_sequence_parallel_difference);
    tcase_add_test(tc, test_fsdp_scaling);
    tcase_add_test(tc, test_generic_is_ledger);
    tcase_add_test(tc, test_loss_buffers);
    tcase_add_test(tc, test_loss_parallel_buffers);
    tcase_add_test(tc, test_in_flight);
    tcase_add_test(tc, test_properties);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--terms") == 0) {
        print_terms(stdout, &fitted);
        print_terms(stdout, &tuning2);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--cv") == 0) {
        struct cv_profile cv[CORE_FW_COUNT];
        printf("Leave-one-source-out folds per framework profile (nothing is refitted: a fold is\n"
               "out of sample only for a source no term was chosen looking at)\n\n");
        cross_validate(stdout, cv);
        return EXIT_SUCCESS;
    }
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        struct table_stats a = print_table(stdout, &fitted), b;

        printf("\nTuning set 2 (memory-tuning-2.csv: TTB informed torchtitan's terms; TTH, MPP "
               "nothing)\n");
        b = print_table(stdout, &tuning2);
        return a.mae <= MAE_LIMIT && b.mae <= TUNING2_MAE_LIMIT && b.max_err <= TUNING2_ROW_LIMIT
                   ? EXIT_SUCCESS
                   : EXIT_FAILURE;
    }
    return check_main_run(memory_suite());
}
