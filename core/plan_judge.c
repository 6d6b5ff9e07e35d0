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

/* The resolved inputs of plan p's configuration, as core_evaluate() would resolve them: the
 * base, the layout, and the GPU's hardware and overlap defaults through the very function
 * core_evaluate() uses (core_resolve_hardware). The batch fields are the plan's. */
void plan_resolve(const struct search *s, const struct core_plan *p, struct core_resolved *r)
{
    *r = s->r;
    r->gpu = p->gpu;
    r->gpus = p->gpus;
    r->tp = p->tp;
    r->pp = p->pp;
    r->cp = p->cp;
    r->dp = p->dp;
    r->ep = p->ep;
    r->etp = p->etp;
    r->virtual_stages = p->virtual_stages;
    /* The search's current split is already in s->r (its heaviest rank does not depend on v). */
    if (p->pp != s->r.pp || p->first_stage_layers != s->r.first_stage_layers ||
        p->last_stage_layers != s->r.last_stage_layers || s->r.split != CORE_SPLIT_FIRST_LAST)
        plan_set_split(r, p->first_stage_layers, p->last_stage_layers);
    r->sequence_parallel = p->sequence_parallel;
    core_resolve_hardware(&s->in->base, p->gpu, r);
    r->batch = p->batch;
    r->zero_stage = p->zero_stage;
    r->checkpointing = p->checkpointing;
    r->global_batch = p->global_batch;
    r->global_batch_tokens = p->global_batch_tokens;
    r->micro_batches = (double)p->micro_batches;
}

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
