/*
 * test_core_plan.c - the planner (core/plan.c, docs/planner.md).
 *
 * The headline case is small enough to derive by hand: 7e9 parameters (nearest preset
 * mistral-7b: L 32, d 4096, a 32, V 32000), T 512, 1.4e12 tokens, H100 only, at most 8 GPUs,
 * $2/GPU-hour, default global batch 2^22 tokens. Every plan handed back is fed through
 * core_evaluate() and must reproduce its memory to the byte and fit.
 */
#include <math.h>
#include <stdio.h>

#include "core_test_util.h"
#include "perf.h"
#include "plan_internal.h" /* plan_uneven_split */
#include "check_main.h"

static struct core_plan plans[CORE_PLAN_TOP], pareto[CORE_PLAN_PARETO_MAX];

static void seven_b(struct core_plan_input *in)
{
    core_plan_input_init(in);
    in->base.mfu = 0.5; /* a number: the assumed-MFU model these hand derivations use */
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
    c->cp = p->cp;
    c->ep = p->ep;
    c->etp = p->etp;
    c->virtual_stages = p->virtual_stages;
    c->first_stage_layers = p->first_stage_layers;
    c->last_stage_layers = p->last_stage_layers;
    c->global_batch = p->global_batch;
    c->zero_stage = p->zero_stage;
    c->checkpointing = p->checkpointing;
    c->batch = p->batch;
    c->sequence_parallel = p->sequence_parallel ? CORE_FLAG_YES : CORE_FLAG_NO;
    c->mfu = p->predicted ? CORE_MFU_PREDICTED : p->mfu;
    c->global_batch_tokens = p->global_batch_tokens;
    c->usd_per_gpu_hour = p->usd_per_gpu_hour;
}

/* A predicted plan: core_evaluate of its config gives its memory, and the time model on that
 * resolved config, times steps = ceil(D / global batch tokens), gives its seconds: what
 * /runtime computes for mfu "predicted". */
static void assert_predicted(const struct core_input *c, const struct core_plan *p)
{
    static struct core_result r;
    struct core_problems probs;
    struct core_perf_input pi;
    struct core_perf perf;
    double steps;

    ck_assert_int_eq(core_evaluate_parts(c, CORE_PART_FIT, &r, &probs), CORE_OK);
    ASSERT_I64(r.memory.params, p->params);
    ASSERT_I64(r.memory.grads, p->grads);
    ASSERT_I64(r.memory.optimizer, p->optimizer);
    ASSERT_I64(r.memory.activations, p->activations);
    ASSERT_I64(r.memory.total, p->total);
    ASSERT_I64(r.fit.capacity, p->capacity);
    /* What /fit judged (the ledger total, or the device peak under a framework profile). */
    ASSERT_I64(r.fit.capacity - r.fit.headroom, p->judged);
    ck_assert(r.fit.judged_peak == (c->framework != CORE_FW_GENERIC));
    ck_assert(r.fit.fits);
    ck_assert(r.resolved.mfu_predicted);
    ASSERT_REL(r.resolved.global_batch_tokens, p->global_batch_tokens, 0);
    steps = ceil(r.resolved.tokens / r.resolved.global_batch_tokens);
    ASSERT_REL(steps, p->steps, 0);
    core_perf_input_resolved(&pi, &r.resolved);
    core_perf_predict(&pi, &perf);
    /* To the last digit: the same two calls on the same resolved inputs. */
    ASSERT_REL(steps * perf.step_seconds, p->seconds, 0);
    ASSERT_REL(perf.step_seconds, p->performance.step_seconds, 0);
    ASSERT_REL(perf.mfu, p->mfu, 1e-12);
    ASSERT_REL(p->seconds * (double)p->gpus / 3600.0, p->gpu_hours, 1e-12);
    if (p->cost_usd >= 0)
        ASSERT_REL(p->gpu_hours * p->usd_per_gpu_hour, p->cost_usd, 1e-12);
}

static void assert_reproduces(const struct core_plan_input *in, const struct core_plan *p)
{
    struct core_input c;
    static struct core_result r;

    config_of(in, p, &c);
    if (p->predicted) {
        assert_predicted(&c, p);
        return;
    }
    EVAL_OK(c, r);
    ASSERT_I64(r.memory.params, p->params);
    ASSERT_I64(r.memory.grads, p->grads);
    ASSERT_I64(r.memory.optimizer, p->optimizer);
    ASSERT_I64(r.memory.activations, p->activations);
    ASSERT_I64(r.memory.total, p->total);
    ASSERT_I64(r.fit.capacity, p->capacity);
    ASSERT_I64(r.fit.capacity - r.fit.headroom, p->judged);
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
    in.base.mfu = 0.5;
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

    /* V100 has no bf16: naming it is an error; the default list simply leaves it out. The
     * default list is the training parts (CORE_GPU_TRAINING_COUNT); the inference parts appended
     * after them are searched only when named. */
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
    ck_assert_int_eq(out.gpus_searched, CORE_GPU_TRAINING_COUNT - 1);
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

/* The default mfu is "predicted": every plan's seconds are steps * the step-time model's step
 * on its own configuration, its memory is the ledger's, and the model's own claims the search
 * leans on hold for it (ZeRO 1 and 2 take the same time, ZeRO 0 is never faster). */
/* b * dp of one plan, and whether it divides the given global batch of gb sequences. */
static void assert_whole_micro_batches(const struct core_plan *p, double gb)
{
    double per_step = (double)(p->batch * p->dp);

    ASSERT_REL(p->global_batch, gb, 0);
    ck_assert(fmod(gb, per_step) == 0);
    ASSERT_REL((double)p->micro_batches, gb / per_step, 0);
}

/* A given global batch is a hyper-parameter: Megatron-LM asserts global_batch_size %
 * (micro_batch_size * data_parallel_size) == 0 (megatron/core/num_microbatches_calculator.py,
 * ConstantNumMicroBatchesCalculator), and the planner keeps it exactly. QA's case: qwen3-30b-a3b,
 * T 4096, global_batch 512 = 2^9, before this ranked first a plan of 384 = 24 * 8 * 2. 512 is a
 * power of two, so b * dp must be one: dp in {1, 2, 4, 8, 16, 32, 64} and never 24 or 12. */
START_TEST(given_global_batch_is_kept)
{
    struct core_plan_input in;
    struct core_plan_summary out;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("qwen3-30b-a3b");
    in.base.seq_len = 4096;
    in.base.global_batch = 512;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 64;
    /* Under framework=megatron: no ZeRO-2 and the batch kept; each plan re-asked as /fit would
     * under megatron (device peak against the usable bytes) fits at the plan's judged bytes. */
    in.base.framework = CORE_FW_MEGATRON;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count; i++) {
        assert_whole_micro_batches(&plans[i], 512);
        ck_assert_int_ne(plans[i].dp, 24);
        ck_assert_int_ne(plans[i].zero_stage, 2); /* no stage 2 under Megatron-LM */
        assert_reproduces(&in, &plans[i]);
    }
    for (int i = 0; i < out.pareto_count; i++) {
        assert_whole_micro_batches(&pareto[i], 512);
        ck_assert_int_ne(pareto[i].zero_stage, 2);
        assert_reproduces(&in, &pareto[i]);
    }
    in.base.framework = CORE_FW_GENERIC;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count; i++) {
        const struct core_plan *p = &plans[i];

        assert_whole_micro_batches(p, 512);
        ck_assert_int_eq(p->dp & (p->dp - 1), 0); /* a power of two */
        ck_assert_int_ne(p->dp, 24);
        assert_reproduces(&in, p);
    }
    for (int i = 0; i < out.pareto_count; i++) {
        assert_whole_micro_batches(&pareto[i], 512);
        assert_reproduces(&in, &pareto[i]);
    }

    /* 6 = 2 * 3 sequences: b * dp in {1, 2, 3, 6}, so b <= 2 and dp in {1, 2, 3, 6}. */
    in.base.global_batch = 6;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count; i++) {
        assert_whole_micro_batches(&plans[i], 6);
        ck_assert_int_le(plans[i].batch, 2);
        ck_assert(plans[i].dp == 1 || plans[i].dp == 2 || plans[i].dp == 3 || plans[i].dp == 6);
        assert_reproduces(&in, &plans[i]);
    }

    /* The assumed-MFU search keeps it too: 96 = 2^5 * 3 sequences. */
    in.base.mfu = 0.4;
    in.base.global_batch = 96;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count; i++) {
        assert_whole_micro_batches(&plans[i], 96);
        assert_reproduces(&in, &plans[i]);
    }
}
END_TEST

/* 6000 tokens at T 4096 is 1.46484375 sequences: no whole m * b * dp equals it, so nothing is
 * planned and the reason names the input. Without a global batch the default (2^22 tokens) is
 * met flexibly and plans come back. */
static bool same_layout(const struct core_plan *p, const struct core_input *c)
{
    return p->gpu == c->gpu && p->gpus == c->gpus && p->tp == c->tp && p->pp == c->pp &&
           p->cp == c->cp && p->virtual_stages == c->virtual_stages &&
           p->zero_stage == c->zero_stage && p->checkpointing == c->checkpointing &&
           p->batch == c->batch;
}

/* framework=megatron judges a candidate as /fit does under megatron: its device peak against the
 * H100's usable bytes (79.19 GiB = 85,029,615,043 B, the driver's figure), not the ledger against
 * 80e9. Llama 3 8B, T 4096, 1024 sequences a step (the planner's 2^22-token default), 8 H100s as
 * tp 2 x pp 2 x dp 2, interleaved v 2, ZeRO 1, no checkpointing, b 1: the generic ledger accepts
 * it (its total is at most 80e9) and megatron's device peak rejects it (peak > usable bytes).
 * Both are inequalities checked here on core_evaluate's two verdicts, not figures derived by
 * hand. The plan must not offer that layout, and every plan and Pareto point must fit under
 * megatron at its judged bytes. */
START_TEST(megatron_plans_judged_by_device_peak)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_input c;
    static struct core_result r;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.seq_len = 4096;
    in.base.tokens = 1e12;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 64;
    in.base.framework = CORE_FW_MEGATRON;
    /* The local attention's scores (flash_attention would be true under megatron by default):
     * they are what puts the megatron peak above the usable bytes here. */
    in.base.flash_attention = CORE_FLAG_NO;

    c = in.base;
    c.gpu = in.gpus[0];
    c.gpus = 8;
    c.tp = 2;
    c.pp = 2;
    c.virtual_stages = 2;
    c.zero_stage = 1;
    c.checkpointing = CORE_CKPT_NONE;
    c.batch = 1;
    c.global_batch = 1024;
    c.framework = CORE_FW_GENERIC;
    EVAL_OK(c, r);
    ck_assert(r.fit.fits && r.memory.total <= (int64_t)80e9); /* the ledger accepts it */
    c.framework = CORE_FW_MEGATRON;
    EVAL_OK(c, r);
    ASSERT_I64(r.fit.capacity, 85029615043); /* core_gpu_usable_bytes: 79.19 GiB */
    ck_assert(!r.fit.fits && r.memory.peak.device > r.fit.capacity);

    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count; i++) {
        ck_assert(!same_layout(&plans[i], &c));
        ck_assert(plans[i].capacity == 85029615043 && plans[i].judged <= plans[i].capacity);
        assert_reproduces(&in, &plans[i]);
    }
    for (int i = 0; i < out.pareto_count; i++) {
        ck_assert(!same_layout(&pareto[i], &c));
        assert_reproduces(&in, &pareto[i]);
    }
}
END_TEST

START_TEST(indivisible_global_batch_reason)
{
    struct core_plan_input in;
    struct core_plan_summary out;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.seq_len = 4096;
    in.base.global_batch_tokens = 6000;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 16;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_ge(out.reason_count, 1);
    ck_assert_str_eq(out.reasons[0].field, "global_batch_tokens");
    ck_assert_msg(strstr(out.reasons[0].message, "1.46484375") != NULL, "%s",
                  out.reasons[0].message);
    in.base.global_batch_tokens = 0;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
}
END_TEST

START_TEST(predicted_plans_reproduce)
{
    struct core_plan_input in;
    struct core_plan_summary out;

    core_plan_input_init(&in);
    ck_assert(in.base.mfu == CORE_MFU_PREDICTED);
    in.base.preset = core_preset_find("llama2-13b");
    in.base.seq_len = 4096;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 64;
    search_ok(&in, &out);
    ck_assert(out.resolved.mfu_predicted);
    ck_assert_int_eq(out.plan_count, CORE_PLAN_TOP);
    for (int i = 0; i < out.plan_count; i++) {
        const struct core_plan *p = &plans[i];
        struct core_input c;
        struct core_result r;
        struct core_perf_input pi;
        struct core_perf z0, z1, z2;

        ck_assert(p->predicted);
        ck_assert_int_ge(p->zero_stage, 1);
        ck_assert(p->global_batch_tokens <= 4194304.0);
        ASSERT_REL(p->global_batch, (double)(p->micro_batches * p->batch * p->dp), 0);
        ASSERT_I64(p->gpus, p->tp * p->pp * p->cp * p->dp);
        if (i > 0)
            ck_assert(plans[i - 1].gpu_hours <= p->gpu_hours);
        assert_reproduces(&in, p);
        config_of(&in, p, &c);
        ck_assert_int_eq(core_evaluate_parts(&c, CORE_PART_MEMORY, &r, NULL), CORE_OK);
        core_perf_input_resolved(&pi, &r.resolved);
        pi.zero_stage = 0;
        core_perf_predict(&pi, &z0);
        pi.zero_stage = 1;
        core_perf_predict(&pi, &z1);
        pi.zero_stage = 2;
        core_perf_predict(&pi, &z2);
        ASSERT_REL(z2.step_seconds, z1.step_seconds, 0);
        ck_assert(z0.step_seconds >= z1.step_seconds);
    }
    for (int i = 0; i < out.pareto_count; i++)
        assert_reproduces(&in, &pareto[i]);
}
END_TEST

/* The case: Llama 3 70B, 15T tokens at T 8192, 120 days, H100 at $2. Under the step-time
 * model more GPUs finish sooner but pay for more communication and smaller per-GPU work, so the
 * front of (days, cost) has several points, on different layouts, each within the deadline. */
START_TEST(llama3_70b_front)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    int shardings = 0;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("llama3-70b");
    in.base.tokens = 15e12;
    in.base.seq_len = 8192;
    in.base.flash_attention = CORE_FLAG_YES;
    in.deadline_days = 120;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.usd_per_gpu_hour[in.gpus[0]] = 2.0;
    search_ok(&in, &out);
    ck_assert_int_ge(out.pareto_count, 3);
    /* Only layouts Megatron-LM runs (rules.h): interleaving with m a multiple of pp, tp
     * dividing the 64 heads and a divisor or multiple of the 8 key/value heads, seq_len a
     * multiple of 2 cp. assert_reproduces also has core_evaluate accept each config. */
    for (int i = 0; i < out.plan_count; i++) {
        const struct core_plan *p = &plans[i];
        ck_assert(p->virtual_stages == 1 || p->micro_batches % p->pp == 0);
        ck_assert(64 % p->tp == 0 && (8 % p->tp == 0 || p->tp % 8 == 0));
        ck_assert(8192 % (2 * p->cp) == 0 || p->cp == 1);
        assert_reproduces(&in, p);
    }
    for (int i = 0; i < out.pareto_count; i++) {
        const struct core_plan *p = &pareto[i];
        bool seen = false;

        ck_assert(p->days <= 120);
        for (int j = 0; j < i; j++) {
            const struct core_plan *q = &pareto[j];
            /* Layouts differ: a front point per layout, never two of one. */
            ck_assert(q->gpus != p->gpus || q->tp != p->tp || q->pp != p->pp || q->cp != p->cp);
            seen = seen || (q->tp == p->tp && q->pp == p->pp && q->cp == p->cp);
        }
        shardings += !seen;
        if (i > 0) { /* slower and strictly cheaper */
            ck_assert(pareto[i - 1].days < p->days);
            ck_assert(pareto[i - 1].cost_usd > p->cost_usd);
        }
        assert_reproduces(&in, p);
    }
    ck_assert_int_ge(shardings, 2);
}
END_TEST

/*
 * At equal GPUs, TP inside a node beats TP across nodes. Llama 2 70B at T 4096 needs 16 H100s
 * (16 B * 69e9 / 8 = 138e9 per GPU does not fit 80 GB), so with gpus_max 16 every plan has
 * G = 16; compare tp 8 x dp 2 with tp 16 x dp 1 (pp = cp = 1). In the model, the TP term per
 * step is m * 3 (L/pp) * 2 all-reduces of the (b s d) activations, each 2 (t-1)/t bytes/bw:
 * - m = 1024 sequences / (b dp) is twice as large at dp 1 (each GPU runs twice the
 *   micro-batches, each half as wide in the GEMMs);
 * - tp 8 inside the 8-GPU node overlaps half of it with the GEMMs (tp_comm_overlap defaults on
 *   within a node), tp 16 across nodes does not: another factor 2;
 * - the ring moves 30/16 instead of 14/8 of the bytes, at the same bus bandwidth (8 NICs x
 *   50 GB/s x 0.9 = 360 GB/s = NVLink's 450 x 0.8), with slower cross-node hops.
 * So tp_comm(16) >= 2 * 2 * (30/16) / (14/8) = 4.29 x tp_comm(8) at the same b, while the
 * FLOPs per GPU are equal: the cross-node plan is slower and dearer, and ranks after.
 */
START_TEST(tp_inside_a_node_first)
{
    static struct core_plan many[256];
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_problems probs;
    int inside = -1, across = -1;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("llama2-70b");
    in.base.seq_len = 4096;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 16;
    ck_assert_int_eq(core_plan_search(&in, many, 256, pareto, CORE_PLAN_PARETO_MAX, &out, &probs),
                     CORE_OK);
    ck_assert_int_lt(out.plan_count, 256); /* every (tp, pp, cp) group is listed */
    for (int i = 0; i < out.plan_count; i++) {
        ASSERT_I64(many[i].gpus, 16);
        if (many[i].pp == 1 && many[i].cp == 1 && many[i].tp == 8)
            inside = i;
        if (many[i].pp == 1 && many[i].cp == 1 && many[i].tp == 16)
            across = i;
    }
    ck_assert_int_ge(inside, 0);
    ck_assert_int_ge(across, 0);
    ck_assert_int_lt(inside, across);
    ck_assert(many[inside].gpu_hours < many[across].gpu_hours);
    ASSERT_I64(many[inside].batch, many[across].batch);
    ck_assert(many[across].performance.breakdown.tp_comm >=
              2.0 * 2.0 * (30.0 / 16.0) / (14.0 / 8.0) *
                  many[inside].performance.breakdown.tp_comm);
}
END_TEST

/* An empty answer names the layouts the searches never tried (core/plan_skips.c). A shape of
 * 61 layers (a prime, as DeepSeek-V3's), 14 heads over 2 key/value heads (Qwen2.5-0.5B's) and
 * seq_len 4095, on a 1 GB GPU where nothing fits, under the step-time model (tp up to 16):
 *   tp: 14 mod 2 = 0 and 2 mod 2 = 0, so tp 2 is searched; 14 mod 4 = 2, 14 mod 8 = 6,
 *       14 mod 16 = 14: tp 4, 8, 16 are not;
 *   pp: 61 mod 2 = 1, 61 mod 4 = 1, 61 mod 8 = 5: pp 2, 4, 8 are not;
 *   cp: 4095 mod (2 * 2) = 3 (and 4095 / 2 >= 1024 tokens per rank): cp 2 is not.
 * Llama 3 8B's shape (32 layers, 32 heads over 8, seq_len 4096) breaks none of the rules: its
 * only reason is memory. */
START_TEST(empty_plan_names_the_skipped_layouts)
{
    struct core_plan_input in;
    struct core_plan_summary out;

    core_plan_input_init(&in);
    in.base.layers = 61;
    in.base.hidden = 1792;
    in.base.heads = 14;
    in.base.kv_heads = 2;
    in.base.ffn_hidden = 4864;
    in.base.vocab = 151936;
    in.base.seq_len = 4095;
    in.base.memory_gb = 1;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 64;
    /* torchtitan takes no Megatron-LM first/last counts: 61 layers (a prime) leave pp 2, 4, 8
     * unsearched there. Under the generic profile they get Megatron's uneven split (below). */
    in.base.framework = CORE_FW_TORCHTITAN;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_eq(out.reason_count, 4);
    ck_assert_str_eq(out.reasons[0].field, "memory");
    ck_assert_str_eq(out.reasons[1].field, "heads");
    ck_assert_msg(strstr(out.reasons[1].message, "tp 4, 8, 16 not searched") != NULL, "%s",
                  out.reasons[1].message);
    ck_assert_str_eq(out.reasons[2].field, "layers");
    ck_assert_msg(strstr(out.reasons[2].message, "pp 2, 4, 8 not searched: the 61 layers") != NULL,
                  "%s", out.reasons[2].message);
    ck_assert_str_eq(out.reasons[3].field, "seq_len");
    ck_assert_msg(strstr(out.reasons[3].message, "seq_len 4095") != NULL, "%s",
                  out.reasons[3].message);
    in.base.framework = CORE_FW_GENERIC;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_eq(out.reason_count, 3);
    ck_assert_str_eq(out.reasons[1].field, "heads");
    ck_assert_str_eq(out.reasons[2].field, "seq_len");

    /* Under a framework profile the smallest need is still the ledger's (at b = 1), which the
     * device peak exceeds; the reason says which figure it is. DeepSeek-V3 on 8 H100s: 671e9
     * parameters x at least 2 bytes / 8 GPUs is over 160 GB a GPU, and 61 is a prime. */
    core_plan_input_init(&in);
    in.base.preset = core_preset_find("deepseek-v3");
    in.base.framework = CORE_FW_MEGATRON;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 8;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_str_eq(out.reasons[0].field, "memory");
    ck_assert_msg(strstr(out.reasons[0].message, "by the ledger") != NULL, "%s",
                  out.reasons[0].message);
    /* pp 2, 4, 8 were searched, split unevenly (test uneven_split_by_hand): no layout skipped. */
    ck_assert_int_eq(out.reason_count, 1);

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.seq_len = 4096;
    in.base.memory_gb = 1;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 64;
    search_ok(&in, &out);
    ck_assert_int_eq(out.plan_count, 0);
    ck_assert_int_eq(out.reason_count, 1);
    ck_assert_str_eq(out.reasons[0].field, "memory");
}
END_TEST

/* plan_uneven_split on a bare resolved shape: L layers, m MTP layers, a framework. */
static bool split_of(int64_t layers, int64_t mtp, enum core_framework fw, int64_t pp,
                     int64_t *first, int64_t *last)
{
    static struct core_resolved r;

    memset(&r, 0, sizeof r);
    r.shape.arch.layers = layers;
    r.mtp_layers = mtp;
    r.framework = fw;
    return plan_uneven_split(&r, pp, first, last);
}

/* Megatron-LM's uneven split (transformer_block.py get_num_layers_to_build; transformer_config.py
 * "Uneven PP"): f layers on rank 0, l on rank pp - 1 (either may be unset), the rest n each on
 * the other ranks, which must be whole. Derived by hand, busiest rank first (it can be no less
 * than ceil((L + mtp) / pp)), then the lightest last rank, then the lightest first, then the
 * fewest counts set (f = n is f unset):
 *   61 on pp 2:  ceil 31; l + 31 = 61 gives l = 30: 31 | 30 -> (0, 30).
 *   61 on pp 4:  ceil 16; n = 16, f + l = 61 - 2*16 = 29 with f <= 16: l >= 13 -> l 13, f 16 = n:
 *                16 16 16 13 -> (0, 13).
 *   61 on pp 8:  ceil 8; n = 8, f + l = 61 - 6*8 = 13, f <= 8: l >= 5 -> 8 x 7 | 5 -> (0, 5).
 *   61 on pp 16: ceil 4; n = 4, f + l = 61 - 14*4 = 5, f <= 4: l >= 1 -> 4 x 15 | 1 -> (0, 1).
 *   61 on pp 32: ceil 2; n = 2 leaves f + l = 61 - 30*2 = 1 (two counts of at least 1: no), one
 *                count set: 61 - 31*2 < 0; n = 1 leaves f + l = 31, busiest >= 16 > 2: refused.
 *   61 + 1 MTP on pp 8: ceil(62 / 8) = 8; n = 8, f + l = 13, l + 1 <= 8, f <= 8: l >= 5 ->
 *                l 5 (the last rank 5 + 1 = 6) -> (0, 5).
 *   58 on pp 16: ceil 4; n = 4, f + l = 58 - 14*4 = 2: f = l = 1 -> 1 | 4 x 14 | 1 -> (1, 1).
 *   62 on pp 4:  ceil 16; n = 16, f + l = 30, f <= 16: l 14 -> (0, 14), not (14, 0).
 * Not proposed: pp dividing L (the even split), pp not a power of two, torchtitan (its own
 * balanced split, no Megatron counts). */
START_TEST(uneven_split_by_hand)
{
    static const struct {
        int64_t layers, mtp, pp, first, last;
    } cases[] = {{61, 0, 2, 0, 30}, {61, 0, 4, 0, 13}, {61, 0, 8, 0, 5}, {61, 0, 16, 0, 1},
                 {61, 1, 8, 0, 5},  {58, 0, 16, 1, 1}, {62, 0, 4, 0, 14}};
    struct core_input c;
    static struct core_result r;
    int64_t f, l;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert(split_of(cases[i].layers, cases[i].mtp, CORE_FW_MEGATRON, cases[i].pp, &f, &l));
        ck_assert_int_eq(f, cases[i].first);
        ck_assert_int_eq(l, cases[i].last);
        ck_assert(split_of(cases[i].layers, cases[i].mtp, CORE_FW_GENERIC, cases[i].pp, &f, &l));
    }
    ck_assert(!split_of(61, 0, CORE_FW_MEGATRON, 32, &f, &l));
    ck_assert(!split_of(64, 0, CORE_FW_MEGATRON, 8, &f, &l));
    ck_assert(!split_of(61, 0, CORE_FW_MEGATRON, 3, &f, &l));
    ck_assert(!split_of(61, 0, CORE_FW_TORCHTITAN, 8, &f, &l));

    /* /fit takes DeepSeek-V3 (61 layers) on pp 8 with decoder_last_pipeline_num_layers 5: the
     * busiest rank holds 8 layers (layout.c). */
    core_input_init(&c);
    c.preset = core_preset_find("deepseek-v3");
    c.framework = CORE_FW_MEGATRON;
    c.gpu = core_gpu_find("h100-sxm");
    c.gpus = 256;
    c.pp = 8;
    c.ep = 8;
    c.last_stage_layers = 5;
    EVAL_OK(c, r);
    ck_assert_int_eq(r.resolved.split, CORE_SPLIT_FIRST_LAST);
    ck_assert_int_eq(r.resolved.stage_layers, 8);
}
END_TEST

/* DeepSeek-V3 (61 layers, a prime) on up to 256 H100s under Megatron-LM: before the uneven
 * split only pp 1 (and 61) could be searched; now pp 2, 4, 8 and 16 are, each with the split of
 * uneven_split_by_hand, at one virtual stage (v must divide every rank's count: 30 and 31, 13
 * and 16, 5 and 8, 1 and 4 have no common factor above 1). Every plan reproduces through /fit
 * (core_evaluate) with its first/last counts, and /fit's busiest rank is ceil(61 / pp). */
START_TEST(deepseek_v3_uneven_pipelines)
{
    struct core_plan_input in;
    struct core_plan_summary out;
    struct core_input c;
    static struct core_result r;
    int uneven = 0;

    core_plan_input_init(&in);
    in.base.preset = core_preset_find("deepseek-v3");
    in.base.framework = CORE_FW_MEGATRON;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus_max = 256;
    search_ok(&in, &out);
    ck_assert_int_gt(out.plan_count, 0);
    for (int i = 0; i < out.plan_count + out.pareto_count; i++) {
        const struct core_plan *p = i < out.plan_count ? &plans[i] : &pareto[i - out.plan_count];
        int64_t want = p->pp == 2 ? 30 : p->pp == 4 ? 13 : p->pp == 8 ? 5 : p->pp == 16 ? 1 : 0;

        ck_assert_msg(p->pp <= 16 || p->pp == 61, "pp %lld", (long long)p->pp);
        ck_assert_int_eq(p->first_stage_layers, 0);
        ck_assert_int_eq(p->last_stage_layers, want);
        if (want > 0) {
            uneven++;
            ck_assert_int_eq(p->virtual_stages, 1);
            config_of(&in, p, &c);
            ck_assert_int_eq(core_evaluate_parts(&c, CORE_PART_FIT, &r, NULL), CORE_OK);
            ck_assert_int_eq(r.resolved.stage_layers, (61 + p->pp - 1) / p->pp);
        }
        assert_reproduces(&in, p);
    }
    ck_assert_int_gt(uneven, 0);

    /* The assumed-MFU search (plan.c) under the generic ledger takes the same splits, and /fit
     * and /runtime reproduce its plans too. */
    in.base.framework = CORE_FW_GENERIC;
    in.base.mfu = 0.4;
    search_ok(&in, &out);
    uneven = 0;
    for (int i = 0; i < out.plan_count; i++) {
        int64_t pp = plans[i].pp;
        int64_t want = pp == 2 ? 30 : pp == 4 ? 13 : pp == 8 ? 5 : pp == 16 ? 1 : 0;

        ck_assert_int_eq(plans[i].first_stage_layers, 0);
        ck_assert_int_eq(plans[i].last_stage_layers, want);
        uneven += want > 0;
        assert_reproduces(&in, &plans[i]);
    }
    ck_assert_int_gt(uneven, 0);
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
    tcase_add_test(t, predicted_plans_reproduce);
    tcase_add_test(t, given_global_batch_is_kept);
    tcase_add_test(t, indivisible_global_batch_reason);
    tcase_add_test(t, empty_plan_names_the_skipped_layouts);
    tcase_add_test(t, megatron_plans_judged_by_device_peak);
    tcase_add_test(t, llama3_70b_front);
    tcase_add_test(t, tp_inside_a_node_first);
    tcase_add_test(t, uneven_split_by_hand);
    tcase_add_test(t, deepseek_v3_uneven_pipelines);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(plan_suite());
}
