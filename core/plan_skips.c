/*
 * plan_skips.c - the layout rules the two searches skip by (plan.c, plan_predict.c), said in
 * `reasons` when no plan qualifies, so that an empty answer names the layouts it never tried as
 * well as the constraint that ruled out the rest:
 *   - a tp (powers of two up to 8, or 16 under the step-time model) that does not divide the
 *     heads, or is neither a multiple nor a divisor of the key/value heads (rules.h, the rule
 *     Megatron-LM's TransformerConfig raises);
 *   - a pp that does not divide the layers and that no uneven split serves: under the megatron
 *     and generic profiles a power-of-two pp gets Megatron-LM's first/last split
 *     (plan_uneven_split, plan_table.c); under the other frameworks every searched stage holds
 *     whole layers, so a model whose layer count 2, 4 or 8 does not divide is searched without
 *     those pipelines;
 *   - cp under the step-time model when seq_len is not a multiple of 2 cp = 4 (rules.h).
 * Only a rule that ruled out a value the search would otherwise have tried (within gpus_max)
 * is said. Writes into the caller's array and calls nothing of plan.c's (no symbol cycle).
 */
#include <stdio.h>

#include "plan_internal.h"

/* Appends ", v" (or "v" first) to buf of size n at *len; keeps it terminated. */
static void append_value(char *buf, size_t n, size_t *len, int64_t v)
{
    int k = snprintf(buf + *len, n - *len, "%s%lld", *len > 0 ? ", " : "", (long long)v);

    if (k > 0 && (size_t)k < n - *len)
        *len += (size_t)k;
}

static bool skip_tp(const struct search *s, struct core_plan_reason *out)
{
    const struct core_arch *a = &s->r.shape.arch;
    int64_t tp_max = s->predicted ? 16 : 8;
    char list[64] = "";
    size_t len = 0;

    for (int64_t tp = 2; tp <= tp_max && tp <= s->in->gpus_max; tp *= 2)
        if (!core_rule_tp_heads(a->heads, a->kv_heads, tp))
            append_value(list, sizeof list, &len, tp);
    if (len == 0)
        return false;
    out->field = "heads";
    snprintf(out->message, sizeof out->message,
             "tp %s not searched: tp must divide the %lld attention heads and be a multiple or "
             "divisor of the %lld key/value heads",
             list, (long long)a->heads, (long long)a->kv_heads);
    return true;
}

static bool skip_pp(const struct search *s, struct core_plan_reason *out)
{
    int64_t layers = s->r.shape.arch.layers;
    char list[64] = "";
    size_t len = 0;

    for (int64_t pp = 2; pp <= 8 && pp <= layers && pp <= s->in->gpus_max; pp *= 2)
        if (!s->pp_ok[pp])
            append_value(list, sizeof list, &len, pp);
    if (len == 0)
        return false;
    out->field = "layers";
    snprintf(out->message, sizeof out->message,
             "pp %s not searched: the %lld layers do not split into that many whole stages "
             "(uneven stages are searched under framework megatron or generic)",
             list, (long long)layers);
    return true;
}

static bool skip_cp(const struct search *s, struct core_plan_reason *out)
{
    int64_t seq = s->r.seq_len;

    if (!s->predicted || s->in->gpus_max < 2 || seq / 2 < CORE_PLAN_CP_MIN_TOKENS ||
        core_rule_cp_seq(seq, 2))
        return false;
    out->field = "seq_len";
    snprintf(out->message, sizeof out->message,
             "cp not searched: seq_len %lld is not a multiple of 2*cp = 4 (context parallelism "
             "splits the sequence into 2*cp chunks)",
             (long long)seq);
    return true;
}

int plan_skip_reasons(const struct search *s, struct core_plan_reason *out, int room)
{
    bool (*const rules[])(const struct search *, struct core_plan_reason *) = {skip_tp, skip_pp,
                                                                               skip_cp};
    int n = 0;

    for (size_t i = 0; i < sizeof rules / sizeof rules[0] && n < room; i++)
        if (rules[i](s, &out[n]))
            n++;
    return n;
}
