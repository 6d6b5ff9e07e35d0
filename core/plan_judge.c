/*
 * plan_judge.c - a planner candidate's memory verdict, as /fit gives it for the same config.
 *
 * The generic ledger is judged by its total against the marketed capacity (memory_gb less
 * reserve_gb), as before. Under a framework profile (framework megatron, torchtitan, ...) /fit
 * judges the device peak against the bytes the driver reports (core_fit_compute and
 * core_capacity_bytes, fit.c), so the planner does the same for each candidate whose ledger fits:
 * it resolves the candidate's configuration (plan_resolve) and prices its ledger and its device
 * peak with the very functions core_evaluate() calls (core_memory_compute, core_peak_in).
 */
#include "plan_internal.h"

bool plan_judge(const struct search *s, struct core_plan *c, int64_t ledger_total)
{
    struct core_resolved r;
    struct core_memory m;
    struct core_state mp;
    struct core_problems p;
    const char *at, *stage;

    c->judged = ledger_total;
    if (s->r.framework == CORE_FW_GENERIC)
        return ledger_total <= c->capacity;
    plan_resolve(s, c, &r);
    if (core_memory_compute(&r, &m, &mp, &p) != CORE_OK ||
        core_peak_in(&r, &m, CORE_METRIC_DEVICE, &c->judged, &at, &stage, &p) != CORE_OK)
        return false;
    return c->judged <= c->capacity;
}
