/*
 * fit.c - the verdict against one GPU (lesson section 5).
 *
 * fits <=> state + activations <= capacity (the device peak under a framework profile). The
 * searches (fewest GPUs, largest micro-batch, longest sequence) are bisections over monotone
 * predicates - state never grows with more data-parallel ranks, activations never shrink with a
 * larger batch or sequence - so each costs ~25 evaluations however large the bounds, which keeps
 * core_evaluate() at a few microseconds (a profile's micro-batch and sequence searches price a
 * ledger and a peak per evaluation: tens of microseconds).
 * An overflowing candidate simply does not fit.
 */
#include <math.h>

#include "internal.h"
#include "peak.h"

/* Smallest x in [lo, hi] (lo >= 1) with pred(x) true, pred false...true; 0 when pred(hi) is
 * false. Gallops up from lo by doubling, then bisects the last step: answers near lo (the
 * common case: a few GPUs, a small batch) cost a handful of evaluations, the worst case about
 * twice log2(hi). */
static int64_t bisect_first(int64_t lo, int64_t hi, bool (*pred)(const void *, int64_t),
                            const void *ctx)
{
    int64_t prev = lo - 1, x = lo;

    if (lo > hi || !pred(ctx, hi))
        return 0;
    while (x < hi && !pred(ctx, x)) {
        prev = x;
        x = x > hi / 2 ? hi : 2 * x;
    }
    lo = prev + 1; /* pred(prev) false (or prev < lo), pred(x) true */
    while (lo < x) {
        int64_t mid = lo + (x - lo) / 2;
        if (pred(ctx, mid))
            x = mid;
        else
            lo = mid + 1;
    }
    return x;
}

/* Largest x in [lo, hi] (lo >= 1) with pred(x) true, pred true...false; 0 when pred(lo) is
 * false. Same gallop-then-bisect shape as bisect_first. */
static int64_t bisect_last(int64_t lo, int64_t hi, bool (*pred)(const void *, int64_t),
                           const void *ctx)
{
    int64_t x;

    if (lo > hi || !pred(ctx, lo))
        return 0;
    for (;;) { /* invariant: pred(lo) true */
        if (lo == hi)
            return lo;
        x = lo > hi / 2 ? hi : 2 * lo;
        if (!pred(ctx, x))
            break;
        lo = x;
    }
    hi = x - 1; /* pred(x) false */
    while (lo < hi) {
        int64_t mid = hi - (hi - lo) / 2;
        if (pred(ctx, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---------------------------------------------------------------------------------------------
 * Under a framework profile /fit judges the device peak (core_fit_compute), so the searches that
 * stand behind its figures and its advice (max_batch, the longest sequence, the fewest GPUs)
 * judge it too: the changed config, its ledger (memory.c) and its device peak (peak.c)
 * recomputed at each step of the bisection. A fine-tune under the generic ledger is judged by the
 * recomputed ledger total (the frozen base's transient weight is not an activation term).
 * ------------------------------------------------------------------------------------------- */

static bool judged_fits(const struct core_resolved *y, int64_t capacity)
{
    struct core_memory m = {0};
    struct core_state mp;
    struct core_problems p = {0};
    struct core_peak_options o;
    struct core_peak pk;

    if (core_memory_compute(y, &m, &mp, &p) != CORE_OK)
        return false;
    if (y->framework == CORE_FW_GENERIC)
        return m.total <= capacity;
    core_peak_options_resolved(y, &o);
    o.metric = CORE_METRIC_DEVICE;
    o.ledger = &m;
    core_peak_compute(y, &o, &pk);
    return pk.bytes >= 0 && pk.bytes < 9.0e18 && llround(pk.bytes) <= capacity;
}

/* y's step after its micro-batch or its data-parallel ranks changed: a given global batch is
 * kept, as /fit of the changed config keeps it (m = global_batch / (b dp)); one derived from the
 * batch (one micro-batch per rank per step) follows b * dp. */
static void rebatch(const struct core_resolved *r, struct core_resolved *y)
{
    if (!r->global_batch_given)
        y->global_batch = (double)y->batch * (double)y->dp;
    y->micro_batches = y->global_batch / ((double)y->batch * (double)y->dp);
    y->global_batch_tokens = y->global_batch * (double)y->seq_len;
}

/* ---------------------------------------------------------------------------------------------
 * Fewest GPUs: bisection over dp; G = dp * tp * pp * cp
 * ------------------------------------------------------------------------------------------- */

struct dp_ctx {
    const struct core_state *mp;
    int stage;
    int64_t cp, activations, capacity;
};

/* ZeRO shards over the data-parallel ranks of every context-parallel group (dp * cp ranks hold
 * the same layers), as Megatron-LM's distributed optimizer and FSDP over dp x cp do. */
static bool fits_at_dp(const void *c, int64_t dp)
{
    const struct dp_ctx *x = c;
    struct core_state st;
    int64_t total;

    return core_state_shard(x->mp, x->stage, dp * x->cp, &st, &total) &&
           ck_add(total, x->activations, &total) && total <= x->capacity;
}

int64_t core_min_gpus(const struct core_resolved *r, const struct core_state *mp, int stage,
                      int64_t activations, int64_t capacity)
{
    struct dp_ctx x = {mp, stage, r->cp, activations, capacity};
    int64_t ways = r->tp * r->pp * r->cp;
    int64_t dp = bisect_first(1, CORE_GPUS_MAX / ways, fits_at_dp, &x);

    return dp * ways;
}

struct judged_dp_ctx {
    const struct core_resolved *r;
    int stage;
    int64_t ways, capacity;
};

static bool judged_at_dp(const void *c, int64_t dp)
{
    const struct judged_dp_ctx *x = c;
    struct core_resolved y = *x->r;

    y.dp = dp;
    y.gpus = dp * x->ways;
    y.zero_stage = x->stage;
    rebatch(x->r, &y);
    return judged_fits(&y, x->capacity);
}

int64_t core_min_gpus_judged(const struct core_resolved *r, const struct core_state *mp, int stage,
                             int64_t activations, int64_t capacity)
{
    struct judged_dp_ctx x = {r, stage, r->tp * r->pp * r->cp, capacity};

    if (r->framework == CORE_FW_GENERIC)
        return core_min_gpus(r, mp, stage, activations, capacity);
    return bisect_first(1, CORE_GPUS_MAX / x.ways, judged_at_dp, &x) * x.ways;
}

/* ---------------------------------------------------------------------------------------------
 * Largest micro-batch and longest sequence at the current G
 * ------------------------------------------------------------------------------------------- */

struct act_ctx {
    const struct core_resolved *r;
    enum core_checkpointing ckpt;
    int64_t state, capacity;
    bool vary_seq; /* false: vary the batch */
};

bool core_config_fits(const struct core_resolved *r, int64_t capacity)
{
    return judged_fits(r, capacity);
}

/* At micro-batch b and sequence s: what /fit judges for that config (under the generic ledger
 * with adapters too: their frozen layer's transient full-size weight is in the total). */
static bool judged_at(const struct act_ctx *x, int64_t b, int64_t s)
{
    struct core_resolved y = *x->r;

    y.batch = b;
    y.seq_len = s;
    y.checkpointing = x->ckpt;
    rebatch(x->r, &y);
    return judged_fits(&y, x->capacity);
}

static bool fits_with(const void *c, int64_t v)
{
    const struct act_ctx *x = c;
    int64_t layers, logits, total;
    int64_t b = x->vary_seq ? x->r->batch : v, s = x->vary_seq ? v : x->r->seq_len;

    if (x->r->framework != CORE_FW_GENERIC || x->r->adapters.finetune != CORE_FT_FULL)
        return judged_at(x, b, s);
    return core_activation_bytes(x->r, b, s, x->ckpt, &layers, &logits) &&
           ck_add(x->state, layers, &total) && ck_add(total, logits, &total) &&
           total <= x->capacity;
}

int64_t core_max_batch(const struct core_resolved *r, int64_t state, int64_t capacity,
                       enum core_checkpointing ckpt)
{
    struct act_ctx x = {r, ckpt, state, capacity, false};

    return bisect_last(1, CORE_BATCH_MAX, fits_with, &x);
}

int64_t core_max_seq_len(const struct core_resolved *r, int64_t state, int64_t capacity)
{
    struct act_ctx x = {r, r->checkpointing, state, capacity, true};

    return bisect_last(1, r->seq_len, fits_with, &x);
}

/* The smallest G >= g whose experts' grid holds (layout.c: etp*ep*pp divides G, or under
 * torchtitan ep divides dp*cp*tp): Qwen3-30B-A3B with ep 16 fits one GPU's memory but needs 16.
 * More GPUs only shard more, so G still fits. g itself for a dense model, or when none does
 * within 4096 data-parallel sizes. */
static int64_t expert_grid_gpus(const struct core_resolved *r, int64_t g)
{
    int64_t ways = r->tp * r->pp * r->cp;
    struct core_resolved y = *r;

    if (g <= 0 || r->shape.arch.experts == 0)
        return g;
    for (int64_t dp = g / ways; dp < g / ways + 4096 && dp * ways <= CORE_GPUS_MAX; dp++) {
        y.dp = dp;
        y.gpus = dp * ways;
        if (core_layout_experts_ok(&y))
            return y.gpus;
    }
    return g;
}

void core_fit_compute(const struct core_resolved *r, const struct core_memory *m,
                      const struct core_state *mp, int64_t capacity, struct core_fit *fit)
{
    /* A framework profile is judged by its device peak (what the CUDA allocator, the context and
     * the communicators really take); the generic ledger by its total, as the lesson does. */
    int64_t judged = r->framework != CORE_FW_GENERIC ? m->peak.device : m->total;

    fit->capacity = capacity;
    fit->judged_peak = r->framework != CORE_FW_GENERIC;
    fit->fits = judged <= capacity;
    fit->headroom = capacity - judged; /* both within [0, 2^63): no overflow */
    fit->utilization = (double)judged / (double)capacity;
    if (fit->fits)
        fit->bottleneck = CORE_BOTTLENECK_NONE;
    else
        fit->bottleneck = m->state > capacity ? CORE_BOTTLENECK_STATE : CORE_BOTTLENECK_ACTIVATIONS;
    fit->min_gpus =
        expert_grid_gpus(r, core_min_gpus_judged(r, mp, r->zero_stage, m->activations, capacity));
    fit->min_gpus_state_only =
        expert_grid_gpus(r, core_min_gpus(r, mp, r->zero_stage, 0, capacity));
    fit->max_batch = core_max_batch(r, m->state, capacity, r->checkpointing);
}

/* The memory a GPU offers the run, less reserve_gb (bytes). The generic ledger keeps the lesson's
 * marketed capacity (memory_gb: 80 GB = 80e9 bytes); a framework profile's device peak is what
 * nvidia-smi shows, so it is judged against what the driver reports (usable_bytes: 79.19 GiB =
 * 85.03e9 bytes on an 80 GB H100; docs/serving.md, "GPU catalog"). */
int64_t core_capacity_bytes(const struct core_resolved *r)
{
    int64_t device =
        r->framework != CORE_FW_GENERIC ? r->usable_bytes : (int64_t)llround(r->memory_gb * 1e9);

    return device - (int64_t)llround(r->reserve_gb * 1e9);
}
