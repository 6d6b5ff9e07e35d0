/*
 * notes.c - warnings and advice, above the fit and the runtime: warnings (the answer stands but
 * a convention or an input deserves a second look) and advice (the lesson's failure modes
 * turned into a concrete input change), written as the records of problems.c.
 */
#include <math.h>
#include <stdio.h>

#include "internal.h"
#include "rules.h"
#include "validation.h"

#define MFU_OPTIMISTIC     0.6
#define MFU_LOW            0.35
#define ATTENTION_MATERIAL 0.10

/* ---------------------------------------------------------------------------------------------
 * Warnings
 * ------------------------------------------------------------------------------------------- */

#define WARN(res, ...) core_note_add((res)->warnings, &(res)->warning_count, __VA_ARGS__)

/* From the inputs and the FLOPs alone (as runtime.c derives them), so that routes that do not
 * price the runtime still say it. */
static void warn_mfu(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    bool measured = r->tokens_per_second > 0;
    double mfu = measured ? core_measured_mfu(r, &res->flops, r->tokens_per_second) : r->mfu;

    if (!measured && !r->mfu_predicted && mfu > MFU_OPTIMISTIC)
        WARN(res, "mfu_optimistic",
             "mfu %.2f is above the 0.40-0.55 that well-tuned dense training reaches; the "
             "runtime is likely optimistic",
             mfu);
    if (measured && mfu < MFU_LOW)
        WARN(res, "mfu_low",
             "measured mfu %.3f is below 0.35: look for small batches, unfused kernels or "
             "communication that is not overlapped",
             mfu);
}

static void warn_ledger(const struct core_input *in, struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;

    if (core_params_mismatch(in, &r->shape, r->params))
        WARN(res, "params_mismatch",
             "params %lld differs from the architecture's %lld by more than 5%%; the ledger and "
             "FLOPs use params, activations use the architecture",
             (long long)r->params, (long long)r->shape.arch_params);
    if (r->precision == CORE_PREC_FP8)
        WARN(res, "fp8_ledger",
             "fp8 uses the bf16 memory ledger (fp8 copies are transient) and the fp8 peak");
    if (r->optimizer == CORE_OPT_ADAFACTOR)
        WARN(res, "adafactor_factored",
             "adafactor keeps factored row/column statistics, counted as 0 bytes per parameter");
    /* transformer_config.py reads recompute_modules only under recompute_granularity
     * "selective" (memory.c and perf.c likewise): given with another mode it changes nothing. */
    if (in->recompute_modules[0] != '\0' && r->checkpointing != CORE_CKPT_SELECTIVE)
        WARN(res, "recompute_modules_ignored",
             "recompute_modules applies with checkpointing selective (Megatron-LM's "
             "--recompute-granularity selective); with checkpointing %s it changes nothing",
             core_checkpointing_names[r->checkpointing]);
    /* Megatron-LM's distributed optimizer is ZeRO-1; sharded gradients are Megatron-FSDP's
     * (arguments.py: --use-megatron-fsdp, --data-parallel-sharding-strategy optim_grads, which
     * asserts --ckpt-format fsdp_dtensor and --optimizer adam or sgd). */
    if (r->framework == CORE_FW_MEGATRON && r->zero_stage == 2)
        WARN(res, "zero2_megatron_fsdp",
             "zero_stage 2 under megatron is Megatron-FSDP (--use-megatron-fsdp "
             "--data-parallel-sharding-strategy optim_grads --ckpt-format fsdp_dtensor): "
             "gradients sharded over dp; the distributed optimizer alone is zero_stage 1");
    if (r->zero_stage == 0 && r->dp > 1)
        WARN(res, "zero0_replicated",
             "zero_stage 0 with %lld data-parallel ranks: every rank holds the full state",
             (long long)r->dp);
}

static void warn_shape(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    const struct core_shape *s = &r->shape;

    if (res->flops.attention_fraction > ATTENTION_MATERIAL)
        WARN(res, "attention_term_material",
             "the attention term is %.1f%% of training FLOPs (T comparable to d); 6ND "
             "under-counts, consider count=model",
             100.0 * res->flops.attention_fraction);
    if (s->source == CORE_SHAPE_PRESET && r->seq_len > core_presets[s->preset].context)
        WARN(res, "seq_len_exceeds_context", "seq_len %lld exceeds %s's trained context of %lld",
             (long long)r->seq_len, core_presets[s->preset].id,
             (long long)core_presets[s->preset].context);
    else if (s->arch.learned_positions > 0 && r->seq_len > s->arch.learned_positions)
        WARN(res, "seq_len_exceeds_context",
             "seq_len %lld exceeds the %lld learned position embeddings", (long long)r->seq_len,
             (long long)s->arch.learned_positions);
}

/* The prediction stands even for a layout that cannot run: say so beside it. */
static void warn_runtime(struct core_result *res)
{
    const struct core_memory *m = &res->memory;
    const struct core_resolved *r = &res->resolved;
    int64_t capacity = core_capacity_bytes(r);

    if (m->total > capacity)
        WARN(res, "runtime_does_not_fit",
             "this layout needs %.4g GB per GPU of the %.4g GB available: the runtime assumes a "
             "run that would not fit (see /fit)",
             (double)m->total / 1e9, (double)capacity / 1e9);
}

/* Offloaded state leaves the GPU verdict; the host must still hold it. */
static void warn_host(struct core_result *res)
{
    const struct core_memory *m = &res->memory;
    const struct core_resolved *r = &res->resolved;

    if (m->host.total > 0)
        WARN(res, "offload_host",
             "offloaded state needs %.4g GB of host memory per GPU, %.4g GB per node of %lld "
             "GPUs; the fit judges the GPU alone",
             (double)m->host.total / 1e9, (double)m->host_node.total / 1e9,
             (long long)(r->gpus_per_node < r->gpus ? r->gpus_per_node : r->gpus));
}

/* A figure no measured run backs: the time model on a generation never measured, a framework
 * profile with no peak it was not tuned on (core/validation.c). */
static void warn_unvalidated(struct core_result *res, unsigned parts)
{
    const struct core_resolved *r = &res->resolved;
    int gen = (int)core_gpus[r->gpu].generation;
    const struct core_validation *pv = core_peak_validation_of(r);

    if ((parts & CORE_PART_RUNTIME) && core_perf_validation[gen].expected_error < 0)
        WARN(res, "unvalidated_hardware",
             "no measured training run on a %s GPU (%s): the step-time constants are %s, so "
             "performance.expected_error is null",
             core_generation_names[gen], core_gpus[r->gpu].id, core_perf_validation[gen].borrowed);
    if ((parts & CORE_PART_MEMORY) && r->framework != CORE_FW_GENERIC && pv->expected_error < 0)
        WARN(res, "unvalidated_profile",
             "memory.peak under %s%s is not validated (%s), so memory.peak.expected_error is "
             "null",
             core_framework_names[r->framework],
             r->adapters.finetune != CORE_FT_FULL ? " with adapters" : "", pv->borrowed);
}

void core_warnings(const struct core_input *in, struct core_result *res, unsigned parts)
{
    warn_mfu(res);
    warn_ledger(in, res);
    warn_shape(res);
    if (parts & CORE_PART_MEMORY)
        warn_host(res);
    if (parts & CORE_PART_RUNTIME)
        warn_runtime(res);
    warn_unvalidated(res, parts);
    core_adapters_warnings(in, res, parts);
    if ((parts & CORE_PART_FIT) && res->fit.judged_peak && !res->fit.fits)
        WARN(res, "peak_exceeds_capacity",
             "with %s the device peak is %.4g GB at %s on the %s stage, over the %.4g GB capacity",
             core_framework_names[res->resolved.framework], (double)res->memory.peak.device / 1e9,
             res->memory.peak.device_at, res->memory.peak.device_stage,
             (double)res->fit.capacity / 1e9);
}

/* ---------------------------------------------------------------------------------------------
 * Advice: the lesson's failure modes. Checkpointing never shrinks state; sharding does.
 * ------------------------------------------------------------------------------------------- */

#define ADVISE(res, ...) core_note_add((res)->advice, &(res)->advice_count, __VA_ARGS__)

/* Does the micro-batch fit under this checkpointing mode, with or without FlashAttention? */
static bool fits_with(const struct core_result *res, enum core_checkpointing ckpt, bool flash)
{
    struct core_resolved r = res->resolved;

    r.flash_attention = flash;
    return core_max_batch(&r, res->memory.state, res->fit.capacity, ckpt) >= r.batch;
}

static const char *enough(bool fits)
{
    return fits ? "enough on its own" : "not enough on its own";
}

/* The micro-batch an advice may name: the largest b in [lo, hi] the step's schedule takes. With a
 * given global batch, b * dp must divide it (megatron/core/num_microbatches_calculator.py asserts
 * it; /fit's 422 on global_batch), and under the interleaved schedule its micro-batches per step,
 * global_batch / (b dp), must stay a multiple of pp (rules.h). 0 when none does within
 * BATCH_WALK values below hi (a larger walk buys nothing a user would launch). */
#define BATCH_WALK 4096
static int64_t schedulable_batch(const struct core_resolved *r, int64_t lo, int64_t hi,
                                 int64_t capacity)
{
    if (!r->global_batch_given)
        return hi >= lo ? hi : 0;
    for (int64_t b = hi; b >= lo && b > hi - BATCH_WALK; b--) {
        double per = (double)b * (double)r->dp;
        struct core_resolved y = *r;

        if (fmod(r->global_batch, per) != 0 ||
            (r->pp > 1 && !core_rule_interleave(r->pp, r->virtual_stages, r->global_batch / per)))
            continue;
        /* a kept global batch in smaller micro-batches is more of them, and a pipeline holds more
         * in flight: max_batch bounds the search but each candidate is judged itself */
        y.batch = b;
        y.micro_batches = r->global_batch / per;
        if (r->pp <= 1 || core_config_fits(&y, capacity))
            return b;
    }
    return 0;
}

/* The GPU count an advice may name: the smallest G >= g (a multiple of tp*pp*cp) that /fit then
 * accepts at micro-batch b: with a given global batch b * dp must divide it and, interleaved,
 * leave a multiple of pp micro-batches (as above), and the experts' grid must hold (layout.c).
 * More GPUs only shard more, so G still fits. 0 when none does within BATCH_WALK data-parallel
 * sizes (b * dp already above the global batch, say). */
static int64_t schedulable_gpus(const struct core_resolved *r, int64_t g, int64_t b)
{
    int64_t ways = r->tp * r->pp * r->cp;
    struct core_resolved y = *r;

    for (int64_t dp = g / ways; g > 0 && dp < g / ways + BATCH_WALK && dp * ways <= CORE_GPUS_MAX;
         dp++) {
        double per = (double)b * (double)dp;

        y.dp = dp;
        y.gpus = dp * ways;
        if (r->global_batch_given &&
            (fmod(r->global_batch, per) != 0 ||
             (r->pp > 1 && !core_rule_interleave(r->pp, r->virtual_stages, r->global_batch / per))))
            continue;
        if (core_layout_experts_ok(&y))
            return y.gpus;
    }
    return 0;
}

/* The smallest global batch >= the given one that G GPUs split into whole micro-batches of the
 * batch asked (and, interleaved, into a multiple of pp of them). */
static int64_t split_global_batch(const struct core_resolved *r, int64_t g)
{
    int64_t unit = r->batch * (g / (r->tp * r->pp * r->cp)) * (r->virtual_stages > 1 ? r->pp : 1);
    int64_t k = (int64_t)ceil(r->global_batch / (double)unit);

    return (k > 0 ? k : 1) * unit;
}

/* Sharding over g GPUs: the schedulable G at the micro-batch asked, or, when a given global batch
 * cannot be split into b * dp with dp >= g / (tp pp cp), at the largest smaller micro-batch that
 * can and still fits (judged: a smaller b is more micro-batches, and a pipeline holds more of
 * them in flight). *b is the micro-batch, 0 when none splits the global batch over that many
 * ranks: then the G the experts' grid alone takes (the caller raises the global batch). */
static int64_t shard_gpus(const struct core_resolved *r, int64_t g, int stage, int64_t capacity,
                          int64_t *b)
{
    int64_t gs = schedulable_gpus(r, g, r->batch), ways = r->tp * r->pp * r->cp;

    *b = r->batch;
    if (gs > 0 || g <= 0 || !r->global_batch_given)
        return gs > 0 ? gs : g;
    for (int64_t c = r->batch - 1, tries = 0; c >= 1 && tries < 64; c--, tries++) {
        struct core_resolved y = *r;

        if ((double)c * (double)(g / ways) > r->global_batch)
            continue;
        gs = schedulable_gpus(r, g, c);
        if (gs == 0)
            continue;
        /* more micro-batches per step hold more in flight in a pipeline: verify */
        y.batch = c;
        y.gpus = gs;
        y.dp = gs / ways;
        y.zero_stage = stage;
        y.micro_batches = r->global_batch / ((double)c * (double)y.dp);
        if (core_config_fits(&y, capacity)) {
            *b = c;
            return gs;
        }
    }
    *b = 0; /* no micro-batch splits it: the experts' grid alone, and the global batch raised */
    {
        struct core_resolved free_gb = *r;

        free_gb.global_batch_given = false;
        gs = schedulable_gpus(&free_gb, g, r->batch);
    }
    return gs > 0 ? gs : g;
}

/* Materialized attention scores dominate a layer's activations when 5 a s / d, their bytes per
 * token over d, reaches the 34 of everything else (Korthikanti's table): then FlashAttention,
 * which costs no recompute, is the cheapest fix. */
static void advise_flash(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    const struct core_arch *a = &r->shape.arch;
    double ratio = 5.0 * (double)a->heads * (double)r->seq_len / (double)a->hidden;
    struct core_note *n;

    if (r->flash_attention || ratio < 34.0)
        return;
    n = ADVISE(res, "enable_flash_attention",
               "materialized attention scores dominate the activations (5as/d = %.4g against 34); "
               "FlashAttention drops them without recompute (%s)",
               ratio, enough(fits_with(res, r->checkpointing, true)));
    core_note_change_bool(n, "flash_attention", true);
}

/* Sequence parallelism splits the tp-replicated 10 sbd; without tp, context parallelism over
 * twice the ranks (and twice the GPUs, dp unchanged) halves every rank's tokens. */
static void advise_parallel(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    struct core_note *n;

    if (r->tp > 1 && !r->sequence_parallel) {
        n = ADVISE(res, "enable_sequence_parallel",
                   "sequence parallelism divides the activations tp replicates by tp = %lld",
                   (long long)r->tp);
        core_note_change_bool(n, "sequence_parallel", true);
    } else if (core_rule_cp_seq(r->seq_len, 2 * r->cp) && r->gpus <= CORE_GPUS_MAX / 2) {
        /* the doubled cp splits the sequence into 4 cp chunks (rules.h): 4094 tokens do not */
        n = ADVISE(res, "enable_context_parallel",
                   "context parallelism over %lld ranks halves each GPU's tokens (and doubles "
                   "the GPUs to keep dp)",
                   (long long)(2 * r->cp));
        core_note_change_int(n, "cp", 2 * r->cp);
        core_note_change_int(n, "gpus", 2 * r->gpus);
    }
}

static void advise_checkpointing(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    struct core_note *n;
    /* With FlashAttention, selective recompute saves nothing more. */
    bool selective = r->checkpointing == CORE_CKPT_NONE && !r->flash_attention &&
                     fits_with(res, CORE_CKPT_SELECTIVE, false);

    if (selective) {
        n = ADVISE(res, "enable_checkpointing",
                   "activations overflow; selective checkpointing recomputes only the attention "
                   "scores (%s)",
                   enough(true));
        core_note_change_string(n, "checkpointing", "selective");
    }
    advise_parallel(res);
    if (!selective && r->checkpointing != CORE_CKPT_FULL) {
        n = ADVISE(res, "enable_checkpointing",
                   "activations overflow; full checkpointing trades a forward's recompute for "
                   "activation memory (%s)",
                   enough(fits_with(res, CORE_CKPT_FULL, r->flash_attention)));
        core_note_change_string(n, "checkpointing", "full");
    }
}

/* In the order of what each costs: FlashAttention (nothing), selective recompute (the scores),
 * sequence or context parallelism (communication), full recompute (a forward), a smaller
 * micro-batch (throughput). */
static void advise_activations(struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    struct core_note *n;

    advise_flash(res);
    advise_checkpointing(res);
    int64_t b = schedulable_batch(
        r, 1, res->fit.max_batch < r->batch ? res->fit.max_batch : r->batch - 1, res->fit.capacity);
    if (b >= 1) {
        n = ADVISE(res, "reduce_batch", "the micro-batch must shrink to %lld to fit", (long long)b);
        core_note_change_int(n, "batch", b);
        return;
    }
    int64_t s = core_max_seq_len(r, res->memory.state, res->fit.capacity);
    if (r->cp > 1) /* context parallelism takes 2 cp equal chunks (rules.h) */
        s -= s % (2 * r->cp);
    if (s > 0) {
        n = ADVISE(res, "reduce_seq_len",
                   "even a micro-batch of 1 overflows; seq_len must shrink to %lld", (long long)s);
        core_note_change_int(n, "seq_len", s);
    } else {
        ADVISE(res, "reduce_seq_len",
               "even a micro-batch of 1 overflows at any sequence length; shrink the vocabulary "
               "or split the model with tp/pp");
    }
}

/* The fewest GPUs under full checkpointing, for a run whose activations, not its state, set
 * min_gpus (70B at T 1024 with eager attention on 48 GB: 859 GPUs as asked, 30-odd with full
 * recompute); then "checkpointing cannot help" would be false. 0 when already full. */
static int64_t full_ckpt_gpus(const struct core_resolved *r, const struct core_memory *m,
                              const struct core_state *mp, int stage, int64_t capacity)
{
    struct core_resolved f = *r;
    int64_t cur_l, cur_g, full_l, full_g;

    if (r->checkpointing == CORE_CKPT_FULL ||
        !core_activation_bytes(r, r->batch, r->seq_len, r->checkpointing, &cur_l, &cur_g) ||
        !core_activation_bytes(r, r->batch, r->seq_len, CORE_CKPT_FULL, &full_l, &full_g))
        return 0;
    f.checkpointing = CORE_CKPT_FULL;
    /* the adapters' transient weight (m->activations beyond the layers and logits) stays */
    return core_min_gpus_judged(&f, mp, stage, m->activations - cur_l - cur_g + full_l + full_g,
                                capacity);
}

static void advise_state(const struct core_memory *m, const struct core_state *mp,
                         struct core_result *res)
{
    const struct core_resolved *r = &res->resolved;
    int64_t g = res->fit.min_gpus, b, gf;
    bool zero3 = false;
    char ckpt[64] = "";
    struct core_note *n;

    if (g == 0 && r->zero_stage < 3) {
        g = core_min_gpus_judged(r, mp, 3, m->activations, res->fit.capacity);
        zero3 = g > 0;
    }
    g = shard_gpus(r, g, zero3 ? 3 : r->zero_stage, res->fit.capacity, &b);
    gf = g > 0 ? full_ckpt_gpus(r, m, mp, zero3 ? 3 : r->zero_stage, res->fit.capacity) : 0;
    if (gf > 0 && gf < g)
        snprintf(ckpt, sizeof ckpt, " (about %lld with full checkpointing)", (long long)gf);
    if (g > 0) {
        /* The lesson's wording when it is literally true (7B: 84 GB of optimizer > 80 GB). */
        n = ADVISE(res, "shard_state", "the %s overflows; %sshard it across \u2265 %lld GPUs%s%s%s",
                   m->optimizer > res->fit.capacity
                       ? "optimizer state alone"
                       : "training state (weights, gradients, optimizer)",
                   ckpt[0] ? "" : "checkpointing cannot help \u2014 ", (long long)g,
                   zero3 ? " with zero_stage 3" : "", ckpt,
                   b == 0          ? "; raise global_batch to a multiple of batch*dp"
                   : b != r->batch ? ", a micro-batch that splits the global batch"
                                   : "");
        core_note_change_int(n, "gpus", g);
        if (zero3)
            core_note_change_int(n, "zero_stage", 3);
        if (b != 0 && b != r->batch)
            core_note_change_int(n, "batch", b);
        if (b == 0) /* the smallest global batch that G's ranks split (interleaved: into pp) */
            core_note_change_int(n, "global_batch", split_global_batch(r, g));
        return;
    }
    g = shard_gpus(r, core_min_gpus(r, mp, 3, 0, res->fit.capacity), 3, res->fit.capacity, &b);
    if (g > 0) {
        n = ADVISE(res, "shard_state",
                   "the optimizer state overflows and the activations alone exceed a GPU: shard "
                   "state across \u2265 %lld GPUs and shrink activations too",
                   (long long)g);
        core_note_change_int(n, "gpus", g);
        if (r->zero_stage < 3)
            core_note_change_int(n, "zero_stage", 3);
        if (b != 0 && b != r->batch)
            core_note_change_int(n, "batch", b);
        if (b == 0)
            core_note_change_int(n, "global_batch", split_global_batch(r, g));
        advise_checkpointing(res);
        return;
    }
    ADVISE(res, "state_never_fits",
           "the training state does not fit even sharded across %d GPUs; use a smaller model, "
           "a lighter optimizer or a larger GPU",
           CORE_GPUS_MAX);
}

void core_advice(const struct core_memory *m, const struct core_state *mp, struct core_result *res)
{
    const struct core_fit *fit = &res->fit;

    core_adapters_advice(res);
    switch (fit->bottleneck) {
    case CORE_BOTTLENECK_STATE:
        advise_state(m, mp, res);
        break;
    case CORE_BOTTLENECK_ACTIVATIONS:
        advise_activations(res);
        break;
    case CORE_BOTTLENECK_NONE:
    default: {
        int64_t b = schedulable_batch(&res->resolved, res->resolved.batch + 1, fit->max_batch,
                                      fit->capacity);
        if (b > res->resolved.batch) {
            struct core_note *n =
                ADVISE(res, "batch_headroom", "micro-batch can grow to %lld", (long long)b);
            core_note_change_int(n, "batch", b);
        }
        break;
    }
    }
}
