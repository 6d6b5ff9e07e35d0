/*
 * plan_predict.c - the planner's search under the step-time model (mfu "predicted").
 *
 * A candidate's run takes steps * step_seconds, with steps = ceil(tokens / global batch
 * tokens) and step_seconds from core_perf_predict() on the input core_perf_input_resolved()
 * builds from a resolved evaluation: the same two calls /runtime makes for a configuration
 * with mfu "predicted", so /runtime of a plan's config reproduces its days.
 *
 * The search adds context parallelism, interleaved stages and tp 16 (cross-node tensor
 * parallelism is priced by the model, not excluded) to the assumed-MFU search of plan.c, and
 * keeps it fast by skipping what the model proves cannot win, never by sampling:
 * - Memory first: the ledger (the functions core_evaluate uses, cached per sharding) rules out
 *   a candidate before any time is predicted; a micro-batch that overflows ends the b loop.
 * - ZeRO 0 is not searched: in the model it moves the same gradient bytes as stage 1 and runs
 *   the optimizer over the whole replica rather than a 1/dp shard, and it holds more memory,
 *   so stage 1 is never slower nor larger. Stages 1 and 2 take the same time (same traffic,
 *   same optimizer shard), so stage 2 is priced only where stage 1 does not fit.
 * - Virtual stages: only the bubble ((pp-1)/v micro-batch times) and the stage sends (2 v per
 *   micro-batch) depend on v, so step(v) = C + A/v + B v is convex and the walk up 1, 2, 4, ...
 *   stops at the first rise; and because no other term depends on v, the best v found for
 *   one ZeRO stage is the best for the other.
 * - Data parallelism takes the values 1..8, then four per doubling (10, 12, 14, 16, 20, ...):
 *   within 12 % of any cluster size, at a few percent of the sizes one-node steps would visit.
 */
#include <math.h>
#include <string.h>

#include "plan_internal.h"

static const int64_t tp_choices[] = {1, 2, 4, 8, 16};

/* 1, 2, ..., 8, then four steps per doubling: 10, 12, 14, 16, 20, 24, 28, 32, 40, ... */
static int64_t next_dp(int64_t dp)
{
    int64_t quarter = 1;

    while (quarter * 8 <= dp)
        quarter *= 2;
    return dp + quarter;
}

void plan_performance(const struct search *s, struct core_plan *p)
{
    struct core_resolved r;
    struct core_perf_input pi;

    plan_resolve(s, p, &r);
    core_perf_input_resolved(&pi, &r);
    core_perf_predict(&pi, &p->performance);
}

/* Seconds set directly (not through GPU-seconds) so that they equal steps * step_seconds. */
static void price_seconds(struct core_plan *p, double seconds)
{
    p->seconds = seconds;
    p->days = seconds / 86400.0;
    p->gpu_hours = seconds * (double)p->gpus / 3600.0;
    p->cost_usd = p->usd_per_gpu_hour >= 0 ? p->gpu_hours * p->usd_per_gpu_hour : -1.0;
}

/* The fastest virtual-stage count for the candidate in *pi (convex in v: see the top). */
static void best_virtual(struct search *s, struct core_perf_input *pi, const int64_t *vs, int nv,
                         struct core_perf *out)
{
    struct core_perf next;
    int64_t best = vs[0];

    pi->virtual_stages = vs[0];
    core_perf_predict(pi, out);
    for (int i = 1; i < nv; i++) {
        pi->virtual_stages = vs[i];
        core_perf_predict(pi, &next);
        s->out->evaluated++;
        if (!(next.step_seconds < out->step_seconds))
            break;
        *out = next;
        best = vs[i];
    }
    pi->virtual_stages = best;
}

/* The memory verdict of candidate c at its virtual stages (plan_judge.c). A framework profile's
 * device peak holds more micro-batches in flight when interleaved, so a candidate that overflows
 * at v > 1 is judged, and timed, at v = 1 instead (and that v is kept for its other ZeRO stages).
 */
static bool judge_virtual(struct search *s, struct core_plan *c, struct core_perf_input *pi,
                          struct core_perf *perf, int64_t ledger_total)
{
    if (plan_judge(s, c, ledger_total))
        return true;
    if (c->virtual_stages == 1)
        return false;
    c->virtual_stages = pi->virtual_stages = 1;
    core_perf_predict(pi, perf);
    s->out->evaluated++;
    return plan_judge(s, c, ledger_total);
}

struct choices {
    int64_t vs[8]; /* virtual stages: powers of two dividing L/pp, up to CORE_PLAN_VIRTUAL_MAX */
    int nv;
};

/* A predicted plan of layout L before its batch, ZeRO stage and schedule are chosen. */
static void layout_candidate(const struct layout *L, struct core_plan *c)
{
    memset(c, 0, sizeof *c);
    c->predicted = true;
    c->gpu = L->g->index;
    c->gpus = L->gpus;
    c->tp = L->tp;
    c->pp = L->pp;
    c->ep = L->ep;
    c->etp = L->etp;
    c->cp = L->cp;
    c->dp = L->dp;
    c->virtual_stages = 1;
    c->first_stage_layers = L->first;
    c->last_stage_layers = L->last;
    c->batch = 1;
    c->sequence_parallel = L->tp > 1;
    c->capacity = L->g->capacity;
    c->usd_per_gpu_hour = L->g->price;
}

/* Every (checkpointing, micro-batch, ZeRO stage, virtual stages) of one layout; its fastest
 * candidate that meets the deadline and the budget goes to the front and the group. */
static void search_layout(struct search *s, const struct layout *L, const struct choices *ch,
                          struct core_plan *group, bool *have_group)
{
    static const int zeros[] = {1, 2, 3};
    const double seq = (double)s->r.seq_len;
    struct core_plan best, c;
    struct core_resolved r;
    struct core_perf_input pi;
    bool have = false;

    layout_candidate(L, &c);
    /* Once per layout; a candidate then changes only the fields core_perf_input_resolved
     * copies from the batch, ZeRO, checkpointing and schedule inputs. */
    plan_resolve(s, &c, &r);
    core_perf_input_resolved(&pi, &r);
    for (int ck = 0; ck < 3; ck++) {
        if (L->act[ck][0] == INT64_MAX)
            continue;
        pi.checkpointing = (enum core_checkpointing)ck;
        for (int bi = 0; bi < L->steps[ck]; bi++) {
            int64_t b = (int64_t)1 << bi;
            double micro = (double)b * seq * (double)L->dp;
            bool fit1 = false, have_v = false;

            for (size_t zi = 0; zi < sizeof zeros / sizeof zeros[0]; zi++) {
                struct core_state st;
                struct core_perf perf;
                int64_t state, total;

                if (!core_state_shard(&L->mp, zeros[zi], L->dp * L->cp, &st, &state))
                    continue;
                s->out->evaluated++;
                if (bi == 0 && ck_add(state, L->act[ck][0], &total) && total < s->min_need)
                    s->min_need = total;
                if (!ck_add(state, L->act[ck][bi], &total) || total > L->g->capacity)
                    continue;
                if (micro > s->gbt) {
                    s->batch_blocked += bi == 0;
                    continue;
                }
                if (zeros[zi] == 2 && fit1)
                    continue; /* same time as stage 1, which fits: the tie goes to stage 1 */
                if (plan_skip_candidate(s, micro, zeros[zi]))
                    continue;
                c.batch = b;
                c.zero_stage = zeros[zi];
                c.checkpointing = (enum core_checkpointing)ck;
                c.micro_batches = (int64_t)floor(s->gbt / micro);
                c.global_batch = (double)c.micro_batches * (double)b * (double)L->dp;
                c.global_batch_tokens = c.global_batch * seq;
                c.steps = ceil(s->r.tokens / c.global_batch_tokens);
                pi.micro_batch = b;
                pi.zero_stage = zeros[zi];
                pi.global_batch = c.global_batch;
                if (!have_v) {
                    /* Interleaving only where Megatron-LM runs it: m a multiple of pp. */
                    int nv = core_rule_interleave(L->pp, 2, (double)c.micro_batches) ? ch->nv : 1;
                    best_virtual(s, &pi, ch->vs, nv, &perf);
                    have_v = true;
                } else {
                    core_perf_predict(&pi, &perf);
                }
                c.virtual_stages = pi.virtual_stages;
                if (!judge_virtual(s, &c, &pi, &perf, total))
                    continue; /* a framework profile's device peak overflows (plan_judge.c) */
                fit1 = fit1 || zeros[zi] == 1;
                s->out->fitting++;
                c.performance = perf;
                c.mfu = perf.mfu;
                price_seconds(&c, c.steps * perf.step_seconds);
                plan_consider(s, &c, &st, L->act[ck][bi], total, &best, &have);
            }
            if (micro > s->gbt)
                break; /* a larger b only exceeds the global batch further */
        }
    }
    if (have)
        plan_offer_layout_best(s, &best, group, have_group);
}

/* v divides every rank's layers: L / pp for an even split; under an uneven one the first and
 * last counts set and the middle ranks' share (layout.c, check_first_last). */
static void virtual_choices(int64_t layers, const struct layout *L, struct choices *ch)
{
    int64_t pp = L->pp, mid = pp - (L->first > 0) - (L->last > 0);
    int64_t share = mid > 0 ? (layers - L->first - L->last) / mid : 0;

    ch->nv = 0;
    ch->vs[ch->nv++] = 1;
    for (int64_t v = 2; pp > 1 && v <= CORE_PLAN_VIRTUAL_MAX; v *= 2)
        if (share % v == 0 && L->first % v == 0 && L->last % v == 0)
            ch->vs[ch->nv++] = v;
}

void plan_search_predicted(struct search *s, const struct gpu_row *g)
{
    const int64_t layers = s->r.shape.arch.layers, seq = s->r.seq_len;
    const int64_t gmax = s->in->gpus_max;
    struct layout L;
    struct choices ch;
    struct core_plan group;
    bool have;
    int64_t ep[PLAN_EXPERT_CHOICES], etp[PLAN_EXPERT_CHOICES];
    int nx;

    memset(&L, 0, sizeof L);
    L.g = g;
    for (size_t t = 0; t < sizeof tp_choices / sizeof tp_choices[0]; t++) {
        for (int64_t pp = 1; pp <= layers && pp <= CORE_PLAN_PP_MAX; pp++) {
            if (tp_choices[t] * pp > gmax ||
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
            s->r.sequence_parallel = L.tp > 1;
            nx = plan_expert_choices(s->r.shape.arch.experts, L.tp, ep, etp);
            virtual_choices(layers, &L, &ch);
            for (int64_t cp = 1; cp <= CORE_PLAN_CP_MAX; cp *= 2) {
                int64_t ways = L.tp * pp * cp;

                if (!core_rule_cp_seq(seq, cp) || seq % cp != 0 ||
                    (cp > 1 && seq / cp < CORE_PLAN_CP_MIN_TOKENS) || ways > gmax)
                    break; /* a larger cp splits the sequence finer still */
                L.cp = cp;
                s->r.cp = cp;
                have = false;
                for (int x = 0; x < nx; x++) {
                    L.ep = s->r.ep = ep[x];
                    L.etp = s->r.etp = etp[x];
                    /* The experts' fc1 input grows with etp (memory.c, moe_bytes). */
                    if (x == 0 || etp[x] != etp[x - 1])
                        plan_activation_table(s, &L);
                    if (!core_state_model_parallel(&s->r, &s->bpp, &L.mp))
                        continue;
                    for (int64_t dp = 1; dp * ways <= gmax; dp = next_dp(dp)) {
                        L.gpus = dp * ways;
                        L.dp = dp;
                        if ((L.gpus > CORE_PLAN_NODE_GPUS && L.gpus % CORE_PLAN_NODE_GPUS != 0) ||
                            !plan_expert_grid_ok(&L, L.gpus))
                            continue;
                        search_layout(s, &L, &ch, &group, &have);
                    }
                }
                if (have)
                    plan_offer_top(s, &group);
            }
            s->r.cp = 1;
        }
    }
}
