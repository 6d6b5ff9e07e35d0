/*
 * adapters_notes.c - advice and warnings that know adapters (adapters.h; docs/model.md,
 * "Fine-tuning with adapters"). Kept apart from adapters.c because they price a changed input
 * through the ledger and the peak (memory.c, peak.c), which themselves call adapters.c: one
 * file for both would be a symbol cycle.
 */
#include <string.h>

#include "adapters.h"
#include "internal.h"
#include "peak.h"

/* ---------------------------------------------------------------------------------------------
 * Advice that knows adapters (core_advice calls it before the generic advice)
 * ------------------------------------------------------------------------------------------- */

/* What /fit would judge for r: the ledger's total, or the device peak under a profile. */
static bool judged_bytes(const struct core_resolved *r, double *out)
{
    struct core_memory m;
    struct core_state mp;
    struct core_problems p = {0};
    struct core_peak_options o;
    struct core_peak pk;

    memset(&m, 0, sizeof m);
    if (core_memory_compute(r, &m, &mp, &p) != CORE_OK)
        return false;
    if (r->framework == CORE_FW_GENERIC) {
        *out = (double)m.total;
        return true;
    }
    core_peak_options_resolved(r, &o);
    o.metric = CORE_METRIC_DEVICE;
    o.ledger = &m;
    core_peak_compute(r, &o, &pk);
    *out = pk.bytes;
    return true;
}

/* The frozen weights do not fit: QLoRA's NF4 base (a quarter of bf16's bytes). */
static bool advise_qlora(struct core_result *res)
{
    struct core_resolved q = res->resolved;
    double judged;
    struct core_note *n;

    const struct core_adapter_bytes *ad = &res->memory.adapters;

    /* Only when the frozen weights, not the adapters' own state, are what overflows. */
    if (q.adapters.base_quant != CORE_BASEQ_NONE || res->fit.bottleneck != CORE_BOTTLENECK_STATE ||
        ad->frozen < ad->params + ad->grads + ad->optimizer)
        return false;
    q.adapters.base_quant = q.adapters.torchtune ? CORE_BASEQ_NF4_TORCHAO : CORE_BASEQ_NF4_BNB_DQ;
    if (!judged_bytes(&q, &judged))
        return false;
    n = core_note_add(
        res->advice, &res->advice_count, "use_qlora",
        "the %s does not fit; an NF4 base (%s) needs %.4g GB, %s",
        res->resolved.adapters.finetune == CORE_FT_FULL ? "training state" : "frozen base",
        core_base_quant_names[q.adapters.base_quant], judged / 1e9,
        judged <= (double)res->fit.capacity ? "which fits" : "still not enough on its own");
    if (n != NULL && res->resolved.adapters.finetune == CORE_FT_DORA)
        core_note_change_string(n, "base_quant", "nf4"); /* QDoRA */
    else if (n != NULL)
        core_note_change_string(n, "finetune", "qlora");
    return true;
}

/* The adapters matter only when their state is a noticeable share of what does not fit: then a
 * halved rank halves it (their activations too). Usually they are a fraction of a percent. */
static void advise_rank(struct core_result *res)
{
    const struct core_memory *m = &res->memory;
    const struct core_resolved *r = &res->resolved;
    double share = (double)(m->adapters.params + m->adapters.grads + m->adapters.optimizer) /
                   (double)(m->total > 0 ? m->total : 1);
    struct core_note *n;

    if (r->adapters.rank < 2 || share < 0.05)
        return;
    n = core_note_add(res->advice, &res->advice_count, "reduce_lora_rank",
                      "the adapters' weights, gradients and optimizer state are %.3g %% of the "
                      "memory; rank %lld halves them (or wrap fewer lora_targets)",
                      100 * share, (long long)(r->adapters.rank / 2));
    if (n != NULL)
        core_note_change_int(n, "lora_rank", r->adapters.rank / 2);
}

void core_adapters_advice(struct core_result *res)
{
    /* Full training keeps its advice (the lesson's): these are for a frozen base. */
    if (res->fit.fits || res->resolved.adapters.finetune == CORE_FT_FULL)
        return;
    if (!advise_qlora(res))
        advise_rank(res);
}

void core_adapters_warnings(struct core_result *res, unsigned parts)
{
    const struct core_resolved *r = &res->resolved;

    if (r->adapters.finetune == CORE_FT_FULL || !(parts & CORE_PART_RUNTIME) ||
        r->count != CORE_COUNT_SIX_ND || r->mfu_predicted)
        return;
    core_note_add(res->warnings, &res->warning_count, "six_nd_overcounts_adapters",
                  "with a frozen base the step runs %.3g x fewer FLOPs than 6ND counts (no weight "
                  "gradients); count=model or mfu=predicted prices what runs",
                  6.0 * (double)r->active_params /
                      (res->flops.per_token.forward + res->flops.per_token.backward -
                       res->flops.per_token.attention));
}
