/*
 * plan_table.c - what both planner searches share (plan.c, the assumed-MFU model;
 * plan_predict.c, the step-time model): a layout's activations per checkpointing mode and
 * micro-batch, computed once per (tp, pp, cp, etp) with the ledger's own function, and the experts'
 * layouts (ep, etp) a MoE model is searched over.
 */
#include <stdint.h>
#include <string.h>

#include "plan_internal.h"

/* Activations for every checkpointing mode and micro-batch of a (tp, pp); INT64_MAX marks a
 * mode whose b = 1 overflows. steps[] counts the micro-batches whose activations fit alone. */
void plan_activation_table(struct search *s, struct layout *L)
{
    for (int ck = 0; ck < 3; ck++) {
        L->steps[ck] = 0;
        L->act[ck][0] = INT64_MAX;
        for (int bi = 0; bi < PLAN_BATCH_STEPS; bi++) {
            int64_t b = (int64_t)1 << bi, layers, logits;

            if (b > CORE_BATCH_MAX ||
                !core_activation_bytes(&s->r, b, s->r.seq_len, (enum core_checkpointing)ck, &layers,
                                       &logits))
                break;
            L->act[ck][bi] = layers + logits;
            if (L->act[ck][bi] > L->g->capacity)
                break;
            L->steps[ck] = bi + 1;
        }
    }
}

/* The experts' layouts the search tries (plan_internal.h). */
int plan_expert_choices(int64_t experts, int64_t tp, int64_t ep[], int64_t etp[])
{
    int n = 0;

    if (experts <= 0) {
        ep[0] = 1, etp[0] = tp;
        return 1;
    }
    for (int64_t e = 1; e <= experts && e <= CORE_PLAN_EP_MAX && n + 2 <= PLAN_EXPERT_CHOICES;
         e *= 2) {
        if (experts % e != 0)
            continue;
        ep[n] = e, etp[n++] = tp;
        if (tp > 1)
            ep[n] = e, etp[n++] = 1;
    }
    return n;
}

bool plan_expert_grid_ok(const struct layout *L, int64_t gpus)
{
    return gpus % (L->etp * L->ep * L->pp) == 0;
}

/* The loads of Megatron-LM's uneven split (f, l) of L layers over pp ranks (0 = not set), per
 * transformer_block.py's get_num_layers_to_build: f on rank 0, l on rank pp - 1, the rest
 * evenly over the others; false where layout.c's check_first_last refuses it (at one virtual
 * stage: a middle share that is not whole, or middle layers without middle ranks). */
static bool uneven_loads(int64_t L, int64_t pp, int64_t mtp, int64_t f, int64_t l, int64_t load[3])
{
    int64_t mid = pp - (f > 0) - (l > 0), rest = L - f - l, n;

    if (rest < 0 || (rest > 0) != (mid > 0) || (mid > 0 && rest % mid != 0))
        return false;
    n = mid > 0 ? rest / mid : 0;
    load[1] = f > 0 ? f : n;                         /* the first rank */
    load[2] = (l > 0 ? l : n) + mtp;                 /* the last, with the MTP */
    load[0] = load[1] > load[2] ? load[1] : load[2]; /* the busiest: ranks 1 .. pp - 2 hold n */
    load[0] = pp > 2 && n > load[0] ? n : load[0];
    return true;
}

bool plan_uneven_split(const struct core_resolved *r, int64_t pp, int64_t *first, int64_t *last)
{
    const int64_t L = r->shape.arch.layers, mtp = r->mtp_layers;
    int64_t best[4] = {0}, load[3];
    bool have = false;

    *first = *last = 0;
    if ((r->framework != CORE_FW_MEGATRON && r->framework != CORE_FW_GENERIC) || pp < 2 ||
        (pp & (pp - 1)) != 0 || L % pp == 0)
        return false;
    for (int64_t f = 0; f <= L; f++)
        for (int64_t l = f == 0 ? 1 : 0; l <= L - f; l++) {
            int64_t key[4];
            bool better = !have;

            if (!uneven_loads(L, pp, mtp, f, l, load))
                continue;
            key[0] = load[0], key[1] = load[2], key[2] = load[1], key[3] = (f > 0) + (l > 0);
            for (int k = 0; k < 4 && !better; k++) {
                if (key[k] != best[k]) {
                    better = key[k] < best[k];
                    break;
                }
            }
            if (better) {
                memcpy(best, key, sizeof best);
                *first = f, *last = l;
                have = true;
            }
        }
    /* Only a split as balanced as any can be: a busiest rank of ceil((L + mtp) / pp) layers.
     * Else (61 layers on 32 ranks: 16 + 30 x 1 + 15 at best) the pipeline runs at the pace of
     * a far smaller pp and is not searched. */
    return have && best[0] == (L + mtp + pp - 1) / pp;
}

void plan_set_split(struct core_resolved *r, int64_t first, int64_t last)
{
    r->first_stage_layers = first;
    r->last_stage_layers = last;
    r->split = first > 0 || last > 0 ? CORE_SPLIT_FIRST_LAST : CORE_SPLIT_EVEN;
    if (r->split != CORE_SPLIT_EVEN) /* an even split's is not read (memory.c) */
        r->stage_layers = core_layout_heaviest(r);
}

bool plan_pp_searched(const struct core_input *in, const struct core_resolved *r, int64_t pp,
                      int64_t *first, int64_t *last)
{
    struct core_resolved t;
    struct core_problems p = {0};

    *first = *last = 0;
    if (r->shape.arch.layers % pp == 0)
        return true;
    if (!plan_uneven_split(r, pp, first, last))
        return false;
    /* The check /fit runs (layout.c), on the split alone: the experts' grid is the search's. */
    t = *r;
    t.pp = t.gpus = pp;
    t.virtual_stages = 1;
    t.ep = 1;
    t.etp = 0;
    plan_set_split(&t, *first, *last);
    core_layout_check(in, &t, true, &p);
    return p.count == 0;
}

void plan_pp_table(struct search *s)
{
    for (int64_t pp = 1; pp <= CORE_PLAN_PP_MAX; pp++)
        s->pp_ok[pp] = pp <= s->r.shape.arch.layers &&
                       plan_pp_searched(&s->in->base, &s->r, pp, &s->pp_first[pp], &s->pp_last[pp]);
}
