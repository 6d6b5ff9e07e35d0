/*
 * test_core_plan.c - the planner (core/plan.c, docs/planner.md).
 *
 * The headline case is small enough to derive by hand: 7e9 parameters (nearest preset
 * mistral-7b: L 32, d 4096, a 32, V 32000), T 512, 1.4e12 tokens, H100 only, at most 8 GPUs,
 * $2/GPU-hour, default global batch 2^22 tokens. Every plan handed back is fed through
 * core_evaluate() and must reproduce its memory to the byte and fit.
 */
#include <stdio.h>

#include "core_test_util.h"
#include "check_main.h"

static struct core_plan plans[CORE_PLAN_TOP], pareto[CORE_PLAN_PARETO_MAX];

static void seven_b(struct core_plan_input *in)
{
    core_plan_input_init(in);
    in->gpu_count = 1;
    in->gpus[0] = core_gpu_find("h100-sxm");
    in->gpus_max = 8;
    in->usd_per_gpu_hour[in->gpus[0]] = 2.0;
}

static void search_ok(const struct core_plan_input *in, struct core_plan_summary *out)
{
    struct core_problems probs;
    enum core_status st;

    memset(&probs, 0, sizeof probs);
    st = core_plan_search(in, plans, CORE_PLAN_TOP, pareto, CORE_PLAN_PARETO_MAX, out, &probs);
    ck_assert_msg(st == CORE_OK, "core_plan_search %d: %s: %s", (int)st,
                  probs.count ? probs.items[0].field : "-",
                  probs.count ? probs.items[0].message : "-");
}

/* The plan's configuration as core_evaluate() input: what the API's config object carries. */
static void config_of(const struct core_plan_input *in, const struct core_plan *p,
                      struct core_input *c)
{
    *c = in->base;
    c->gpu = p->gpu;
    c->gpus = p->gpus;
    c->tp = p->tp;
    c->pp = p->pp;
    c->zero_stage = p->zero_stage;
    c->checkpointing = p->checkpointing;
    c->batch = p->batch;
    c->sequence_parallel = p->sequence_parallel ? CORE_FLAG_YES : CORE_FLAG_NO;
    c->mfu = p->mfu;
    c->global_batch_tokens = p->global_batch_tokens;
    c->usd_per_gpu_hour = p->usd_per_gpu_hour;
}

static void assert_reproduces(const struct core_plan_input *in, const struct core_plan *p)
{
    struct core_input c;
    static struct core_result r;

    config_of(in, p, &c);
    EVAL_OK(c, r);
    ASSERT_I64(r.memory.params, p->params);
    ASSERT_I64(r.memory.grads, p->grads);
    ASSERT_I64(r.memory.optimizer, p->optimizer);
    ASSERT_I64(r.memory.activations, p->activations);
    ASSERT_I64(r.memory.total, p->total);
    ASSERT_I64(r.fit.capacity, p->capacity);
    ck_assert(r.fit.fits);
    /* /runtime of the config gives the plan's time: mfu there is the effective MFU. */
    ASSERT_REL(r.runtime.days, p->days, 1e-12);
    ASSERT_REL(r.runtime.gpu_hours, p->gpu_hours, 1e-12);
    if (p->cost_usd >= 0)
        ASSERT_REL(r.runtime.cost_usd, p->cost_usd, 1e-12);
}

START_TEST(seven_b_cheapest_by_hand)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    const struct core_plan *p = &plans[0];

    seven_b(&in);
    search_ok(&in, &out);
    ck_assert(out.ranked_by_cost);
    ck_assert_int_ge(out.plan_count, 1);
    /* Cost = GPU-hours * $2 and GPU-hours = 6 N D / (peak * mfu_eff) / 3600 whatever G is, so
     * the cheapest plans run at the full mfu 0.5: no recompute, no bubble (pp = 1). Among
     * equal costs the fastest (G = 8) wins, then the fewest model-parallel ways (tp = pp = 1).
     * ZeRO: the lowest stage that fits. Stage 0 holds 16 B * 7e9 = 112e9 > 80e9. Stage 1
     * holds 2N + 2N + 12N/8 = 14e9 + 14e9 + 10.5e9 = 38.5e9. Activations per micro-batch
     * (t = 1, no checkpointing): (34 s d + 5 a s^2) L + 4 s V
     *   = (34*512*4096 + 5*32*512^2) * 32 + 4*512*32000 = 113246208*32 + 65536000
     *   = 3689414656 bytes; (80e9 - 38.5e9) / 3689414656 = 11.2 -> b = 8 (power of two);
     * 8 * 512 * 8 = 32768 tokens per micro-step <= 2^22, m = 2^22 / 32768 = 128. */
    ck_assert_str_eq(core_gpus[p->gpu].id, "h100-sxm");
    ASSERT_I64(p->gpus, 8);
    ASSERT_I64(p->tp, 1);
    ASSERT_I64(p->pp, 1);
    ASSERT_I64(p->dp, 8);
    ck_assert_int_eq(p->zero_stage, 1);
    ck_assert_int_eq(p->checkpointing, CORE_CKPT_NONE);
    ASSERT_I64(p->batch, 8);
    ASSERT_I64(p->micro_batches, 128);
    ASSERT_I64(p->params, 14000000000LL);
    ASSERT_I64(p->optimizer, 10500000000LL);
    ASSERT_I64(p->activations, 8LL * 3689414656LL);
    ASSERT_I64(p->total, 38500000000LL + 8LL * 3689414656LL);
    ASSERT_REL(p->mfu, 0.5, 1e-15);
    /* 6 * 7e9 * 1.4e12 = 5.88e22 FLOPs; / (8 * 989.4e12 * 0.5) = 14857489.39 s = 171.96 d. */
    ASSERT_REL(p->days, 5.88e22 / (8 * 989.4e12 * 0.5) / 86400, 1e-12);
    ASSERT_REL(p->gpu_hours, 5.88e22 / (989.4e12 * 0.5) / 3600, 1e-12);
    ASSERT_REL(p->cost_usd, 5.88e22 / (989.4e12 * 0.5) / 3600 * 2, 1e-12);
    /* Nothing is cheaper, and nothing faster at 8 GPUs: the front is this one point. */
    ck_assert_int_eq(out.pareto_count, 1);
    ASSERT_REL(pareto[0].days, p->days, 1e-15);
    ck_assert_int_eq(out.reason_count, 0);
    ck_assert(out.evaluated >= out.fitting && out.fitting >= out.feasible && out.feasible > 0);
}
END_TEST

START_TEST(every_plan_reproduces_through_core_evaluate)
{
    struct core_plan_input in;
    struct core_plan_summary out;

    seven_b(&in);
    in.usd_per_gpu_hour[in.gpus[0]] = -1.0; /* no price: ranked by GPU-hours */
    in.gpus_max = 64;
    in.base.seq_len = 4096;
    in.base.preset = core_preset_find("llama2-13b");
    search_ok(&in, &out);
    ck_assert(!out.ranked_by_cost);
    ck_assert_int_eq(out.plan_count, CORE_PLAN_TOP);
    for (int i = 0; i < out.plan_count; i++) {
        const struct core_plan *p = &plans[i];
        /* The documented time model, re-derived: m = floor(gbt / (b T dp)),
         * bubble = m / (m + pp - 1), recompute 1 without checkpointing. */
        int64_t m = (int64_t)(4194304.0 / ((double)p->batch * 4096.0 * (double)p->dp));
        ASSERT_I64(p->micro_batches, m);
        ASSERT_REL(p->bubble_factor, (double)m / (double)(m + p->pp - 1), 1e-15);
        ASSERT_REL(p->mfu, 0.5 * p->recompute_factor * p->bubble_factor, 1e-15);
        ck_assert(p->cost_usd < 0);
        if (i > 0)
            ck_assert(plans[i - 1].gpu_hours <= p->gpu_hours);
        assert_reproduces(&in, p);
    }
    for (int i = 0; i < out.pareto_count; i++) {
        assert_reproduces(&in, &pareto[i]);
        if (i > 0) { /* sorted by days, cost strictly falling */
            ck_assert(pareto[i - 1].days < pareto[i].days);
            ck_assert(pareto[i - 1].gpu_hours > pareto[i].gpu_hours);
        }
    }
}
END_TEST

START_TEST(effective_mfu)
{
    /* pp 4, m 12: bubble 1 - 3/15 = 0.8; tp 16 spans two 8-GPU nodes: x 0.7;
     * recompute 0.75: 0.5 * 0.75 * 0.8 * 0.7 = 0.21. tp 8 stays in a node. */
    ASSERT_REL(core_plan_effective_mfu(0.5, 0.75, 4, 12, 16), 0.21, 1e-15);
    ASSERT_REL(core_plan_effective_mfu(0.5, 1.0, 4, 12, 8), 0.4, 1e-15);
    ASSERT_REL(core_plan_effective_mfu(0.5, 1.0, 1, 1, 1), 0.5, 0);
}
END_TEST

START_TEST(full_recompute_factor)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    int full;

    /* 70B on 8 H100s: 70e9 * 16 B / 8 = 140e9 per GPU with ZeRO 3 alone, so nothing fits. */
    core_plan_input_init(&in);
    in.base.params = 70000000000LL;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 8;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_eq(out.fitting, 0);
    ck_assert_int_ge(out.reason_count, 1);
    ck_assert_str_eq(out.reasons[out.reason_count - 1].field, "memory");
    /* 16 GPUs: 1120e9 / 16 = 70e9 of state leaves 10e9 for activations. */
    in.gpus_max = 16;
    search_ok(&in, &out);
    ck_assert_int_ge(out.plan_count, 1);
    /* tp = pp = 1 at 16 GPUs: no checkpointing needs 80 layers * (34 s d + 5 a s^2) = 18.1e9
     * > 10e9, selective 80 * 34 s d = 11.4e9 > 10e9; only full (2 s d kept per layer) fits,
     * so that layout's plan must use it. */
    full = 0;
    for (int i = 0; i < out.plan_count; i++) {
        const struct core_plan *p = &plans[i];
        if (p->tp == 1 && p->pp == 1)
            ck_assert_int_eq(p->checkpointing, CORE_CKPT_FULL);
        if (p->checkpointing != CORE_CKPT_FULL)
            continue;
        full++;
        /* Full recompute re-runs the forward: model / hardware = (6N + att) / (8N + 4/3 att)
         * with att = 12 L T (a h_d) per token. */
        {
            const struct core_arch *a = &out.resolved.shape.arch;
            double att = 12.0 * (double)a->layers * 512.0 * (double)(a->heads * a->head_dim);
            double n = 7e10;
            ASSERT_REL(p->recompute_factor, (6 * n + att) / (8 * n + att * 4 / 3), 1e-12);
        }
    }
    ck_assert_int_ge(full, 1);
}
END_TEST

START_TEST(deadline_and_budget_reasons)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_problems probs;

    /* The fastest 7B plan on 8 H100s takes 171.96 days (see above): a 100-day deadline
     * leaves nothing, and the reason names the deadline and the fastest plan. */
    seven_b(&in);
    in.deadline_days = 100;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_eq(out.feasible, 0);
    ck_assert_int_gt(out.fitting, 0);
    ck_assert_int_eq(out.reason_count, 1);
    ck_assert_str_eq(out.reasons[0].field, "deadline_days");
    ck_assert_msg(strstr(out.reasons[0].message, "172") != NULL, "%s", out.reasons[0].message);
    /* Every plan costs at least $66033 (33016.6 GPU-hours * $2): a $50000 budget fails. */
    in.deadline_days = 0;
    in.budget_usd = 50000;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_str_eq(out.reasons[0].field, "budget_usd");
    in.budget_usd = 70000;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    /* A budget without a price cannot be checked. */
    in.usd_per_gpu_hour[in.gpus[0]] = -1;
    ck_assert_int_eq(
        core_plan_search(&in, plans, CORE_PLAN_TOP, pareto, CORE_PLAN_PARETO_MAX, &out, &probs),
        CORE_EINVAL);
    ck_assert_str_eq(probs.items[0].field, "budget_usd");
}
END_TEST

START_TEST(gpu_choice)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_problems probs;

    /* V100 has no bf16: naming it is an error; the default list simply leaves it out. */
    core_plan_input_init(&in);
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("v100-sxm-32gb");
    ck_assert_int_eq(
        core_plan_search(&in, plans, CORE_PLAN_TOP, pareto, CORE_PLAN_PARETO_MAX, &out, &probs),
        CORE_EINVAL);
    ck_assert_str_eq(probs.items[0].field, "gpu");
    core_plan_input_init(&in);
    in.gpus_max = 8;
    search_ok(&in, &out);
    ck_assert_int_eq(out.gpus_searched, (int)core_gpu_count - 1);
    for (int i = 0; i < out.gpus_searched; i++)
        ck_assert_str_ne(core_gpus[out.searched[i]].id, "v100-sxm-32gb");
    /* With prices for two GPUs only, only those two are searched (the rest cannot be costed). */
    in.usd_per_gpu_hour[core_gpu_find("h100-sxm")] = 2;
    in.usd_per_gpu_hour[core_gpu_find("b200")] = 5;
    search_ok(&in, &out);
    ck_assert_int_eq(out.gpus_searched, 2);
    ck_assert(out.ranked_by_cost);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 1; i < out.plan_count; i++)
        ck_assert(plans[i - 1].cost_usd <= plans[i].cost_usd);
    /* gpus_max out of bounds. */
    in.gpus_max = CORE_PLAN_GPUS_MAX + 1;
    ck_assert_int_eq(
        core_plan_search(&in, plans, CORE_PLAN_TOP, pareto, CORE_PLAN_PARETO_MAX, &out, &probs),
        CORE_EINVAL);
    ck_assert_str_eq(probs.items[0].field, "gpus_max");
}
END_TEST

START_TEST(small_arrays)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_plan one[1], front[1];
    struct core_problems probs;

    /* The caller's arrays bound the output: one plan (still the cheapest), one front point. */
    seven_b(&in);
    ck_assert_int_eq(core_plan_search(&in, one, 1, front, 1, &out, &probs), CORE_OK);
    ck_assert_int_eq(out.plan_count, 1);
    ASSERT_I64(one[0].gpus, 8);
    ASSERT_I64(one[0].tp, 1);
    ck_assert_int_eq(out.pareto_count, 1);
}
END_TEST

static Suite *plan_suite(void)
{
    Suite *s = suite_create("core_plan");
    TCase *t = tcase_create("plan");

    tcase_set_timeout(t, 60);
    tcase_add_test(t, seven_b_cheapest_by_hand);
    tcase_add_test(t, every_plan_reproduces_through_core_evaluate);
    tcase_add_test(t, effective_mfu);
    tcase_add_test(t, full_recompute_factor);
    tcase_add_test(t, deadline_and_budget_reasons);
    tcase_add_test(t, gpu_choice);
    tcase_add_test(t, small_arrays);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(plan_suite());
}
