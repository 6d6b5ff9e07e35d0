/*
 * plan_table.c - what both planner searches share (plan.c, the assumed-MFU model;
 * plan_predict.c, the step-time model): a layout's activations per checkpointing mode and
 * micro-batch, computed once per (tp, pp, cp, etp) with the ledger's own function, and the experts'
 * layouts (ep, etp) a MoE model is searched over.
 */
#include <stdint.h>

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
