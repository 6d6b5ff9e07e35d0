/*
 * plan_table.c - the one table both planner searches share (plan.c, the assumed-MFU model;
 * plan_predict.c, the step-time model): a layout's activations per checkpointing mode and
 * micro-batch, computed once per (tp, pp, cp) with the ledger's own function.
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
