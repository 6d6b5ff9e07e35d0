/*
 * adapters_notes.c - advice and warnings that know adapters (adapters.h; docs/model.md,
 * "Fine-tuning with adapters"). Kept apart from adapters.c because they price a changed input
 * through the ledger and the peak (memory.c, peak.c), which themselves call adapters.c: one
 * file for both would be a symbol cycle.
 */
#include <string.h>

#include "adapters.h"
#include "inputs.h"
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

/* The lora_* rows that a full fine-tune ignores, when they differ from the table's default
 * (core/inputs.c): their names, comma-separated, into out; false when none. */
static bool ignored_lora_inputs(const struct core_input *in, char *out, size_t size)
{
    size_t n = 0;

    out[0] = '\0';
    for (size_t i = 0; i < core_input_count; i++) {
        const struct core_input_spec *row = &core_inputs[i];
        const char *at = (const char *)in + row->offset;
        double v;

        if (strncmp(row->name, "lora_", 5) != 0)
            continue;
        if (row->store == CORE_STORE_DOUBLE) {
            memcpy(&v, at, sizeof v);
        } else if (row->store == CORE_STORE_I64) {
            int64_t x;
            memcpy(&x, at, sizeof x);
            v = (double)x;
        } else {
            int x;
            memcpy(&x, at, sizeof x);
            v = (double)x;
        }
        if (v == row->dflt)
            continue;
        size_t len = strlen(row->name);
        if (n + len + 3 > size)
            break;
        if (n > 0) {
            memcpy(out + n, ", ", 2);
            n += 2;
        }
        memcpy(out + n, row->name, len + 1);
        n += len;
    }
    return n > 0;
}

/*
 * Adapters under a framework profile that has no LoRA of its own: Megatron-LM's training loop
 * (megatron/training) has none - LoRA on Megatron-core is NeMo's and Megatron-Bridge's PEFT -
 * and torchtitan's is a model converter still being added (pytorch/torchtitan#2515,
 * LoRAConverter over every nn.Linear). The profile's buffers are priced as the framework's own,
 * with memwall's adapter ledger: a warning, not a refusal, since both stacks do run LoRA.
 */
static void warn_framework_adapters(const struct core_resolved *r, struct core_result *res)
{
    if (r->framework == CORE_FW_MEGATRON)
        core_note_add(res->warnings, &res->warning_count, "adapters_not_in_framework",
                      "Megatron-LM's own training loop has no LoRA (NeMo / Megatron-Bridge PEFT "
                      "runs it on Megatron-core): priced as Megatron-LM's buffers with the %s "
                      "adapters",
                      core_finetune_names[r->adapters.finetune]);
    else if (r->framework == CORE_FW_TORCHTITAN)
        core_note_add(res->warnings, &res->warning_count, "adapters_not_in_framework",
                      "torchtitan's LoRA is a model converter still being added "
                      "(pytorch/torchtitan#2515): priced as torchtitan's buffers with the %s "
                      "adapters",
                      core_finetune_names[r->adapters.finetune]);
}

void core_adapters_warnings(const struct core_input *in, struct core_result *res, unsigned parts)
{
    const struct core_resolved *r = &res->resolved;
    char names[96];

    if (r->adapters.finetune == CORE_FT_FULL && ignored_lora_inputs(in, names, sizeof names))
        core_note_add(res->warnings, &res->warning_count, "lora_inputs_ignored",
                      "%s: finetune is full (every weight trains), so the adapter inputs price "
                      "nothing; give finetune lora, qlora or dora",
                      names);
    if (r->adapters.finetune != CORE_FT_FULL)
        warn_framework_adapters(r, res);
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
