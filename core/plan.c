/*
 * plan.c - the planner: the cheapest layouts that fit and meet a deadline and a budget.
 *
 * Two time models (docs/planner.md): with mfu "predicted" (the default) plan_predict.c times
 * every candidate with the step-time model; with a number, the search below prices it with the
 * assumed MFU times recompute, bubble and tensor factors, as before that model existed. Both
 * share the inputs, the ledger pieces, the ranking (plan_rank.c) and the reasons here.
 *
 * The search walks GPU type x tp x pp (divisors of L, and the powers of two that get Megatron's
 * uneven split, plan_table.c) x G x checkpointing x ZeRO stage x
 * micro-batch (powers of two). core_evaluate() costs microseconds because it resolves, checks
 * and annotates everything; a candidate here needs only two sums, so the work is hoisted to
 * where it varies: the base inputs are resolved and validated once (by core_evaluate itself),
 * the model-parallel state once per (tp, pp), activations once per (tp, pp, checkpointing,
 * micro-batch) through core_activation_bytes(), and the inner loop adds a ZeRO-sharded state
 * (core_state_shard) to a cached activation figure and prices the time. Those are the very
 * functions core_evaluate() uses, which is why /fit of a plan's configuration reproduces its
 * memory to the byte.
 *
 * Pruning, all exact: a checkpointing mode whose b = 1 activations exceed the GPU is skipped
 * for every G; a ZeRO stage whose state alone overflows is skipped; the micro-batch loop stops
 * at the first b that does not fit (activations grow with b) or that no longer divides into
 * the global batch. Within one layout (GPU, G, tp, pp) only the fastest setting counts (for a
 * fixed layout the fastest is also the cheapest); every layout's best goes to the Pareto
 * front, and the ranking takes the best layout of each (GPU, tp, pp), so the top list holds
 * twenty different shardings rather than one sharding at twenty cluster sizes (the front
 * shows the days/cost trade-off over G).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"

static const int64_t tp_choices[] = {1, 2, 4, 8};

void core_plan_input_init(struct core_plan_input *in)
{
    memset(in, 0, sizeof *in);
    core_input_init(&in->base);
    for (size_t i = 0; i < core_plan_input_count; i++)
        core_input_store_default(&core_plan_inputs[i], in);
}

double core_plan_effective_mfu(double mfu, double recompute_factor, int64_t pp, int64_t m,
                               int64_t tp)
{
    /* 1 - (pp-1)/(m+pp-1) written as m/(m+pp-1): exactly 1 when pp = 1. */
    double bubble = (double)m / (double)(m + pp - 1);
    double tensor = tp > CORE_PLAN_NODE_GPUS ? CORE_PLAN_CROSS_NODE_TP : 1.0;

    return mfu * recompute_factor * bubble * tensor;
}

/* ---------------------------------------------------------------------------------------------
 * Search state
 * ------------------------------------------------------------------------------------------- */

static void price(struct core_plan *p, double gpu_seconds)
{
    p->gpu_hours = gpu_seconds / 3600.0;
    p->seconds = gpu_seconds / (double)p->gpus;
    p->days = p->seconds / 86400.0;
    p->cost_usd = p->usd_per_gpu_hour >= 0 ? p->gpu_hours * p->usd_per_gpu_hour : -1.0;
}

/* Every (checkpointing, ZeRO, micro-batch) of one layout; the layout's best goes to the Pareto
 * front and, when it beats *group (the best of this GPU, tp and pp so far), into *group. */
static void search_layout(struct search *s, const struct layout *L, struct core_plan *group,
                          bool *have_group)
{
    const double seq = (double)s->r.seq_len;
    struct core_plan best, c;
    bool have = false;

    memset(&c, 0, sizeof c);
    c.gpu = L->g->index;
    c.gpus = L->gpus;
    c.tp = L->tp;
    c.pp = L->pp;
    c.ep = L->ep;
    c.etp = L->etp;
    c.cp = 1;
    c.virtual_stages = 1;
    c.first_stage_layers = L->first;
    c.last_stage_layers = L->last;
    c.dp = L->dp;
    c.sequence_parallel = L->tp > 1;
    c.capacity = L->g->capacity;
    c.usd_per_gpu_hour = L->g->price;
    for (int ck = 0; ck < 3; ck++) {
        if (L->act[ck][0] == INT64_MAX)
            continue;
        for (int zero = 0; zero <= 3; zero++) {
            struct core_state st;
            int64_t state, need;

            if (!core_state_shard(&L->mp, zero, L->dp, &st, &state))
                continue;
            s->out->evaluated++; /* b = 1 is priced even when it cannot fit */
            if (ck_add(state, L->act[ck][0], &need) && need < s->min_need)
                s->min_need = need;
            if (L->steps[ck] == 0 || need > L->g->capacity)
                continue;
            if (seq * (double)L->dp > s->gbt) {
                s->batch_blocked++;
                continue;
            }
            for (int bi = 0; bi < L->steps[ck]; bi++) {
                int64_t b = (int64_t)1 << bi, total;
                double micro = (double)b * seq * (double)L->dp;

                if (bi > 0)
                    s->out->evaluated++;
                if (micro > s->gbt || !ck_add(state, L->act[ck][bi], &total) ||
                    total > L->g->capacity)
                    break;
                if (plan_skip_candidate(s, micro, zero))
                    continue;
                c.batch = b;
                c.zero_stage = zero;
                c.checkpointing = (enum core_checkpointing)ck;
                c.micro_batches = (int64_t)floor(s->gbt / micro);
                c.global_batch_tokens = (double)c.micro_batches * micro;
                c.global_batch = (double)c.micro_batches * (double)b * (double)L->dp;
                if (!plan_judge(s, &c, total))
                    break; /* a framework's device peak grows with b too */
                s->out->fitting++;
                c.steps = ceil(s->r.tokens / c.global_batch_tokens);
                c.recompute_factor = s->recompute[ck];
                c.bubble_factor = (double)c.micro_batches / (double)(c.micro_batches + L->pp - 1);
                c.tensor_factor = L->tp > CORE_PLAN_NODE_GPUS ? CORE_PLAN_CROSS_NODE_TP : 1.0;
                c.mfu = core_plan_effective_mfu(s->r.mfu, c.recompute_factor, L->pp,
                                                c.micro_batches, L->tp);
                if (c.mfu < CORE_MFU_MIN)
                    continue;
                price(&c, s->gpu_flops[ck] / (L->g->peak * c.mfu));
                plan_consider(s, &c, &st, L->act[ck][bi], total, &best, &have);
            }
        }
    }
    if (have)
        plan_offer_layout_best(s, &best, group, have_group);
}

static int64_t next_gpus(int64_t g)
{
    return g < CORE_PLAN_NODE_GPUS ? g + 1 : g + CORE_PLAN_NODE_GPUS;
}

static void search_gpu(struct search *s, const struct gpu_row *g)
{
    const int64_t layers = s->r.shape.arch.layers;
    struct layout L;
    struct core_plan group;
    bool have;
    int64_t ep[PLAN_EXPERT_CHOICES], etp[PLAN_EXPERT_CHOICES];
    int nx;

    memset(&L, 0, sizeof L);
    L.g = g;
    for (size_t t = 0; t < sizeof tp_choices / sizeof tp_choices[0]; t++) {
        for (int64_t pp = 1; pp <= layers && pp <= CORE_PLAN_PP_MAX; pp++) {
            int64_t ways = tp_choices[t] * pp;

            if (ways > s->in->gpus_max ||
                !core_rule_tp_heads(s->r.shape.arch.heads, s->r.shape.arch.kv_heads,
                                    tp_choices[t]) ||
                !s->pp_ok[pp])
                continue; /* a layout Megatron-LM refuses (rules.h, plan_table.c) */
            L.tp = tp_choices[t];
            L.pp = pp;
            L.first = s->pp_first[pp];
            L.last = s->pp_last[pp];
            s->r.tp = L.tp;
            s->r.pp = pp;
            s->r.virtual_stages = 1;
            plan_set_split(&s->r, L.first, L.last);
            nx = plan_expert_choices(s->r.shape.arch.experts, L.tp, ep, etp);
            s->r.sequence_parallel = L.tp > 1;
            have = false;
            for (int x = 0; x < nx; x++) {
                L.ep = s->r.ep = ep[x];
                L.etp = s->r.etp = etp[x];
                /* The experts' fc1 input grows with etp (memory.c, moe_bytes). */
                if (x == 0 || etp[x] != etp[x - 1])
                    plan_activation_table(s, &L);
                if (!core_state_model_parallel(&s->r, &s->bpp, &L.mp))
                    continue;
                for (int64_t gpus = 1; gpus <= s->in->gpus_max; gpus = next_gpus(gpus)) {
                    if (gpus % ways != 0 || !plan_expert_grid_ok(&L, gpus))
                        continue;
                    L.gpus = gpus;
                    L.dp = gpus / ways;
                    search_layout(s, &L, &group, &have);
                }
            }
            if (have)
                plan_offer_top(s, &group);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Inputs
 * ------------------------------------------------------------------------------------------- */

static void check_plan_ranges(const struct core_plan_input *in, struct core_problems *p)
{
    /* The scalar rows of /plan's input table; the GPU list and the prices are checked below. */
    for (size_t i = 0; i < core_plan_input_count; i++) {
        const struct core_input_spec *spec = &core_plan_inputs[i];
        if (spec->store != CORE_STORE_GPUS && spec->store != CORE_STORE_PRICES &&
            !core_input_valid(spec, in))
            core_problem_add(p, spec->name, "must be %s %.15g and <= %.15g",
                             spec->min_exclusive ? ">" : ">=", spec->min, spec->max);
    }
    if (in->gpu_count < 0 || in->gpu_count > CORE_PLAN_GPU_MAX)
        core_problem_add(p, "gpu", "at most %d GPU types", CORE_PLAN_GPU_MAX);
    for (int i = 0; i < in->gpu_count && i < CORE_PLAN_GPU_MAX; i++)
        if (in->gpus[i] < 0 || (size_t)in->gpus[i] >= core_gpu_count)
            core_problem_add(p, "gpu", "%d is not a catalog index", in->gpus[i]);
    for (size_t i = 0; i < core_gpu_count && i < CORE_PLAN_GPU_MAX; i++)
        if (!isfinite(in->usd_per_gpu_hour[i]) || in->usd_per_gpu_hour[i] > CORE_USD_MAX)
            core_problem_add(p, "usd_per_gpu_hour", "must be a finite price of at most %g",
                             CORE_USD_MAX);
}

/* What /fit judges a config on GPU g against (core_capacity_bytes, fit.c): memory_gb less
 * reserve_gb for the generic ledger, the driver's usable bytes less reserve_gb under a framework
 * profile. */
static int64_t row_capacity(const struct core_input *b, int g)
{
    static const struct core_resolved zero;
    struct core_resolved r = zero;

    core_resolve_hardware(b, g, &r);
    r.framework = b->framework;
    r.reserve_gb = b->reserve_gb;
    return core_capacity_bytes(&r);
}

/* The GPU rows to search: the listed ones, or every catalog GPU with a peak for the
 * precision. An explicitly listed GPU without one is an error; with prices, unpriced GPUs go. */
static int gpu_rows(const struct core_plan_input *in, struct gpu_row *rows, bool *priced,
                    struct core_problems *p)
{
    const struct core_input *b = &in->base;
    int want[CORE_PLAN_GPU_MAX], n = 0, count = 0;

    if (in->gpu_count > 0)
        for (int i = 0; i < in->gpu_count; i++)
            want[n++] = in->gpus[i];
    else
        for (size_t i = 0; i < CORE_GPU_TRAINING_COUNT && n < CORE_PLAN_GPU_MAX; i++)
            want[n++] = (int)i;
    *priced = false;
    for (int i = 0; i < n; i++)
        *priced = *priced || in->usd_per_gpu_hour[want[i]] >= 0;
    for (int i = 0; i < n; i++) {
        int g = want[i];
        double peak =
            b->peak_tflops > 0 ? b->peak_tflops : core_catalog_peak_tflops(g, b->precision);
        int64_t capacity = row_capacity(b, g);

        if (peak <= 0 && in->gpu_count > 0)
            core_problem_add(p, "gpu", "%s does not support %s", core_gpus[g].id,
                             core_precision_names[b->precision]);
        if (peak <= 0 || capacity <= 0 || (*priced && in->usd_per_gpu_hour[g] < 0))
            continue;
        rows[count++] = (struct gpu_row){g, peak * 1e12, peak, capacity, in->usd_per_gpu_hour[g]};
    }
    return count;
}

/* Resolve and validate the base inputs once, through core_evaluate(), on a plain layout. */
static enum core_status resolve_base(const struct core_plan_input *in, int gpu, struct search *s,
                                     struct core_problems *p)
{
    struct core_input base = in->base;
    static const struct core_result zero;
    struct core_result res = zero;
    enum core_status st;

    base.gpus = 1;
    base.tp = 1;
    base.pp = 1;
    base.cp = 1;
    base.virtual_stages = 1;
    base.ep = 1; /* the search chooses the experts' grid */
    base.etp = 0;
    base.batch = 1;
    base.zero_stage = 3;
    base.checkpointing = CORE_CKPT_NONE;
    base.sequence_parallel = CORE_FLAG_AUTO;
    base.gpu = gpu;
    base.usd_per_gpu_hour = -1.0;
    base.tokens_per_second = 0;
    /* The base is evaluated only to resolve and check it; the predicted time is the search's. */
    s->predicted = in->base.mfu == CORE_MFU_PREDICTED;
    if (s->predicted)
        base.mfu = 0.5;
    if (in->base.finetune != CORE_FT_FULL) { /* the search prices full training only */
        core_problem_add(p, "finetune",
                         "/plan searches full training; price a fine-tune with "
                         "/fit and /runtime");
        return CORE_EINVAL;
    }
    st = core_evaluate(&base, &res, p);
    if (st != CORE_OK)
        return st;
    s->r = res.resolved;
    s->r.mfu_predicted = s->predicted;
    s->r.mfu = in->base.mfu;
    core_bytes_per_param(&s->r, &s->bpp);
    for (int ck = 0; ck < 3; ck++) {
        struct core_flops f;
        double model, hardware;

        s->r.checkpointing = (enum core_checkpointing)ck;
        core_flops_compute(&s->r, &f);
        model = f.model;
        hardware = f.hardware;
        s->recompute[ck] = s->r.count == CORE_COUNT_HARDWARE ? 1.0 : model / hardware;
        s->gpu_flops[ck] = core_flops_counted(&f, s->r.count);
    }
    s->r.checkpointing = CORE_CKPT_NONE;
    s->exact_batch = in->base.global_batch_tokens > 0 || in->base.global_batch > 0;
    s->gbt = s->exact_batch ? s->r.global_batch_tokens
                            : fmax((double)CORE_PLAN_GLOBAL_BATCH, (double)s->r.seq_len);
    s->r.global_batch_tokens = s->gbt;
    s->r.global_batch = s->gbt / (double)s->r.seq_len;
    return CORE_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Reasons for an empty answer, one per constraint that rules every plan out
 * ------------------------------------------------------------------------------------------- */

static void reason(struct core_plan_summary *out, const char *field, const char *fmt, ...)
    CORE_PRINTF(3, 4);

static void reason(struct core_plan_summary *out, const char *field, const char *fmt, ...)
{
    va_list ap;
    struct core_plan_reason *r;

    if (out->reason_count >= CORE_PLAN_REASONS)
        return;
    r = &out->reasons[out->reason_count++];
    r->field = field;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

static void explain_constraints(const struct search *s)
{
    const struct core_plan_input *in = s->in;
    struct core_plan_summary *out = s->out;
    const char *unit = out->ranked_by_cost ? "USD" : "GPU-hours";

    if (out->fitting == 0) {
        if (s->batch_indivisible > 0) {
            /* Megatron-LM asserts global_batch % (micro_batch * dp) == 0 */
            reason(out, in->base.global_batch > 0 ? "global_batch" : "global_batch_tokens",
                   "no layout that fits splits the global batch of %.15g sequences into whole "
                   "micro-batches: Megatron-LM needs it divisible by batch*dp",
                   s->gbt / (double)s->r.seq_len);
            return;
        }
        if (s->batch_blocked > 0)
            reason(out, "global_batch_tokens",
                   "a layout fits only where one sequence per data-parallel rank exceeds the "
                   "global batch of %.15g tokens",
                   s->gbt);
        if (s->min_need == INT64_MAX)
            reason(out, "memory", "no configuration of up to %lld GPUs fits in memory",
                   (long long)in->gpus_max);
        else
            reason(out, "memory",
                   "no configuration of up to %lld GPUs fits in memory; the smallest needs "
                   "%.4g GB per GPU%s",
                   (long long)in->gpus_max, (double)s->min_need / 1e9,
                   s->r.framework != CORE_FW_GENERIC
                       ? " by the ledger, before the framework's own buffers"
                       : "");
        return;
    }
    if (in->deadline_days > 0 && s->min_days_fit > in->deadline_days)
        reason(out, "deadline_days", "the fastest plan that fits takes %.4g days (deadline %g)",
               s->min_days_fit, in->deadline_days);
    if (in->budget_usd >= 0 && s->min_cost_fit > in->budget_usd)
        reason(out, "budget_usd", "the cheapest plan that fits costs %.6g %s (budget %g)",
               s->min_cost_fit, unit, in->budget_usd);
    if (out->reason_count == 0)
        reason(out, "budget_usd",
               "no plan meets both: the cheapest within the %g-day deadline costs %.6g %s "
               "(budget %g)",
               in->deadline_days, s->min_cost_in_time, unit, in->budget_usd);
}

/* The constraint at fault, then the layouts the searches never tried (plan_skips.c). */
static void explain(const struct search *s)
{
    struct core_plan_summary *out = s->out;

    if (out->plan_count > 0)
        return;
    explain_constraints(s);
    out->reason_count += plan_skip_reasons(s, &out->reasons[out->reason_count],
                                           CORE_PLAN_REASONS - out->reason_count);
}

enum core_status core_plan_search(const struct core_plan_input *in, struct core_plan *plans,
                                  int plans_max, struct core_plan *pareto, int pareto_max,
                                  struct core_plan_summary *out, struct core_problems *problems)
{
    struct core_problems scratch;
    struct core_problems *p = problems != NULL ? problems : &scratch;
    struct gpu_row rows[CORE_PLAN_GPU_MAX];
    struct search s;
    bool priced;
    int n;
    enum core_status st;

    p->count = 0;
    if (in == NULL || out == NULL || (plans == NULL && plans_max > 0) ||
        (pareto == NULL && pareto_max > 0)) {
        core_problem_add(p, "input", "no input or no result to fill");
        return CORE_EINVAL;
    }
    memset(out, 0, sizeof *out);
    check_plan_ranges(in, p);
    if (p->count > 0)
        return CORE_EINVAL;
    n = gpu_rows(in, rows, &priced, p);
    if (p->count > 0)
        return CORE_EINVAL;
    if (n == 0) {
        core_problem_add(p, "gpu", "no GPU to search supports %s%s",
                         core_precision_names[in->base.precision],
                         priced ? " and has a price" : "");
        return CORE_EINVAL;
    }
    if (in->budget_usd >= 0 && !priced) {
        core_problem_add(p, "budget_usd", "a budget needs usd_per_gpu_hour");
        return CORE_EINVAL;
    }
    memset(&s, 0, sizeof s);
    s.in = in;
    st = resolve_base(in, rows[0].index, &s, p);
    if (st != CORE_OK)
        return st;
    out->resolved = s.r;
    out->ranked_by_cost = priced;
    s.plans = plans;
    s.plans_max = plans_max;
    s.pareto = pareto;
    s.pareto_max = pareto_max;
    s.out = out;
    s.min_need = INT64_MAX;
    s.min_days_fit = s.min_cost_fit = s.min_cost_in_time = INFINITY;
    plan_pp_table(&s);
    for (int i = 0; i < n; i++) {
        out->searched[out->gpus_searched++] = rows[i].index;
        if (s.predicted)
            plan_search_predicted(&s, &rows[i]);
        else
            search_gpu(&s, &rows[i]);
    }
    plan_sort_top(&s);
    for (int i = 0; i < out->plan_count; i++)
        plan_performance(&s, &plans[i]);
    for (int i = 0; i < out->pareto_count; i++)
        plan_performance(&s, &pareto[i]);
    explain(&s);
    return CORE_OK;
}
