/*
 * plan_rank.c - the planner's order of plans and the two collections it fills.
 *
 * Ranking and the Pareto front use caller-provided arrays: a bounded max-heap (worst plan at
 * the root, replaced when a better one arrives) and a front kept sorted by days with strictly
 * falling cost, so a dominated candidate is rejected by one binary search.
 */
#include <math.h>
#include <string.h>

#include "plan_internal.h"

double plan_rank_value(const struct search *s, const struct core_plan *p)
{
    return s->out->ranked_by_cost ? p->cost_usd : p->gpu_hours;
}

/* Order of plans: cost (or GPU-hours), then days, then fewer model-parallel ways, fewer GPUs,
 * catalog order. <0 when a ranks before b. */
int plan_cmp(const struct search *s, const struct core_plan *a, const struct core_plan *b)
{
    double ka = plan_rank_value(s, a), kb = plan_rank_value(s, b);

    if (ka != kb)
        return ka < kb ? -1 : 1;
    if (a->days != b->days)
        return a->days < b->days ? -1 : 1;
    if (a->tp * a->pp * a->cp != b->tp * b->pp * b->cp)
        return a->tp * a->pp * a->cp < b->tp * b->pp * b->cp ? -1 : 1;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->tp != b->tp)
        return a->tp < b->tp ? -1 : 1;
    if (a->pp != b->pp)
        return a->pp < b->pp ? -1 : 1;
    return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

/* ---------------------------------------------------------------------------------------------
 * The bounded heap of the best plans (root = the worst kept)
 * ------------------------------------------------------------------------------------------- */

static void swap_plans(struct core_plan *a, struct core_plan *b)
{
    struct core_plan t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(const struct search *s, struct core_plan *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, worst = i;
        if (l < n && plan_cmp(s, &h[l], &h[worst]) > 0)
            worst = l;
        if (r < n && plan_cmp(s, &h[r], &h[worst]) > 0)
            worst = r;
        if (worst == i)
            return;
        swap_plans(&h[i], &h[worst]);
        i = worst;
    }
}

void plan_offer_top(struct search *s, const struct core_plan *c)
{
    struct core_plan *h = s->plans;
    int n = s->out->plan_count;

    if (s->plans_max <= 0)
        return;
    if (n < s->plans_max) {
        int i = n;
        h[i] = *c;
        while (i > 0 && plan_cmp(s, &h[(i - 1) / 2], &h[i]) < 0) {
            swap_plans(&h[(i - 1) / 2], &h[i]);
            i = (i - 1) / 2;
        }
        s->out->plan_count = n + 1;
    } else if (plan_cmp(s, c, &h[0]) < 0) {
        h[0] = *c;
        sift_down(s, h, n, 0);
    }
}

/* Heap sort in place: the max-heap becomes ascending order. */
void plan_sort_top(const struct search *s)
{
    for (int n = s->out->plan_count; n > 1; n--) {
        swap_plans(&s->plans[0], &s->plans[n - 1]);
        sift_down(s, s->plans, n - 1, 0);
    }
}

/* ---------------------------------------------------------------------------------------------
 * The Pareto front of (days, cost): sorted by days, cost strictly falling
 * ------------------------------------------------------------------------------------------- */

void plan_offer_pareto(struct search *s, const struct core_plan *c)
{
    struct core_plan *f = s->pareto;
    int n = s->out->pareto_count, lo = 0, hi = n, end;
    double cost = plan_rank_value(s, c);

    if (s->pareto_max <= 0)
        return;
    while (lo < hi) { /* lo = first point with days > c->days */
        int mid = lo + (hi - lo) / 2;
        if (f[mid].days <= c->days)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The last point at most as slow is the cheapest of those: it alone can dominate c. */
    if (lo > 0 && plan_rank_value(s, &f[lo - 1]) <= cost)
        return;
    /* Points no faster and no cheaper than c are dominated by it; they follow lo-1 (a point
     * at exactly c's days sits at lo-1 and is dominated only when its cost >= c's, which the
     * test above excluded unless it is dearer). */
    if (lo > 0 && f[lo - 1].days == c->days)
        lo--;
    end = lo;
    while (end < n && plan_rank_value(s, &f[end]) >= cost)
        end++;
    if (end == lo && n == s->pareto_max) {
        /* Full: the slowest point gives way, and the front is reported as truncated. */
        s->out->pareto_truncated = true;
        if (lo == n)
            return;
        n--;
    }
    memmove(&f[lo + 1], &f[end], (size_t)(n - end) * sizeof *f);
    f[lo] = *c;
    s->out->pareto_count = n - (end - lo) + 1;
}

/* ---------------------------------------------------------------------------------------------
 * Candidates
 * ------------------------------------------------------------------------------------------- */

/* Is candidate c (same layout) better than the layout's best so far? Faster first; then a
 * lower ZeRO stage (less communication), a lighter checkpointing mode, a larger micro-batch. */
bool plan_better_in_layout(const struct core_plan *c, const struct core_plan *best)
{
    if (c->seconds != best->seconds)
        return c->seconds < best->seconds;
    if (c->zero_stage != best->zero_stage)
        return c->zero_stage < best->zero_stage;
    if (c->checkpointing != best->checkpointing)
        return c->checkpointing < best->checkpointing;
    if (c->virtual_stages != best->virtual_stages)
        return c->virtual_stages < best->virtual_stages;
    return c->batch > best->batch;
}

bool plan_meets(const struct search *s, const struct core_plan *p)
{
    const struct core_plan_input *in = s->in;

    return (in->deadline_days <= 0 || p->days <= in->deadline_days) &&
           (in->budget_usd < 0 || p->cost_usd <= in->budget_usd);
}

void plan_note_fitting(struct search *s, const struct core_plan *p)
{
    double v = plan_rank_value(s, p);

    if (p->days < s->min_days_fit)
        s->min_days_fit = p->days;
    if (v < s->min_cost_fit)
        s->min_cost_fit = v;
    if ((s->in->deadline_days <= 0 || p->days <= s->in->deadline_days) && v < s->min_cost_in_time)
        s->min_cost_in_time = v;
}

void plan_consider(struct search *s, struct core_plan *c, const struct core_state *st,
                   int64_t activations, int64_t total, struct core_plan *best, bool *have)
{
    c->params = st->weights;
    c->grads = st->grads;
    c->optimizer = st->optimizer;
    c->activations = activations;
    c->total = total;
    plan_note_fitting(s, c);
    if (!plan_meets(s, c))
        return;
    s->out->feasible++;
    if (!*have || plan_better_in_layout(c, best)) {
        *best = *c;
        *have = true;
    }
}

void plan_offer_layout_best(struct search *s, const struct core_plan *best, struct core_plan *group,
                            bool *have_group)
{
    plan_offer_pareto(s, best);
    if (!*have_group || plan_cmp(s, best, group) < 0) {
        *group = *best;
        *have_group = true;
    }
}

bool plan_skip_candidate(struct search *s, double micro, int zero)
{
    if (zero == 2 && s->r.framework == CORE_FW_MEGATRON)
        return true;
    if (s->exact_batch && fmod(s->gbt, micro) != 0) {
        s->batch_indivisible++;
        return true;
    }
    return false;
}
