/*
 * test_core_serve_plan.c - the serving planner (core/serve_plan.c): its best plan, re-asked
 * through the functions /inference uses, gives the same figures and meets its SLOs; impossible
 * SLOs and loads give no plan and name the binding constraint; the ranking and the Pareto front
 * are ordered; hand-derived cost arithmetic.
 */
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "serve_plan.h"
#include "serve_trace.h"

static struct core_serve_plan plans[CORE_SPLAN_TOP], pareto[CORE_SPLAN_PARETO_MAX];

/* Every figure of two timings equal (== on doubles: the same function over the same inputs). */
static bool same_time(const struct core_serve_time *a, const struct core_serve_time *b)
{
    return a->ttft_seconds == b->ttft_seconds && a->tpot_seconds == b->tpot_seconds &&
           a->e2e_seconds == b->e2e_seconds &&
           a->output_tokens_per_second == b->output_tokens_per_second &&
           a->requests_per_second == b->requests_per_second && a->concurrency == b->concurrency &&
           a->bottleneck == b->bottleneck && a->mbu == b->mbu && a->mfu == b->mfu &&
           a->usd_per_million_output_tokens == b->usd_per_million_output_tokens &&
           a->knee_batch == b->knee_batch && a->decode.seconds == b->decode.seconds &&
           a->prefill.seconds == b->prefill.seconds;
}

static void llama8b(struct core_serve_plan_input *in)
{
    core_serve_plan_input_init(in);
    in->base.base.preset = core_preset_find("llama3-8b");
    in->base.input_len = 1024;
    in->base.output_len = 128;
}

static void search_ok(const struct core_serve_plan_input *in, struct core_serve_plan_summary *s)
{
    struct core_problems p = {0};

    ck_assert_int_eq(
        core_serve_plan_search(in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX, s, &p),
        CORE_OK);
}

/* The best plan's inputs, sized and timed again, give the plan's figures to the bit. */
START_TEST(best_plan_reasked_is_the_same_and_meets_the_slos)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    struct core_serve_input serve;
    struct core_serve_result r;
    struct core_serve_time t;
    struct core_problems p = {0};

    llama8b(&in);
    in.requests_per_second = 20;
    in.tpot_slo_seconds = 0.030;
    in.ttft_slo_seconds = 0.5;
    in.gpu_count = 2;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.gpus[1] = core_gpu_find("a100-sxm-80gb");
    in.usd_per_gpu_hour[in.gpus[0]] = 3.0;
    in.usd_per_gpu_hour[in.gpus[1]] = 1.8;
    search_ok(&in, &s);
    ck_assert_int_gt(s.plan_count, 0);
    for (int i = 0; i < s.plan_count; i++) {
        core_serve_plan_request(&in, &plans[i], &serve);
        ck_assert_int_eq(core_serve(&serve, &r, &p), CORE_OK);
        ck_assert(r.fits);
        core_serve_timing(&r, &t);
        ck_assert(same_time(&t, &plans[i].time));
        ck_assert(t.tpot_seconds <= in.tpot_slo_seconds);
        ck_assert(t.ttft_seconds <= in.ttft_slo_seconds);
        /* The replicas carry the load: requests/s per replica x replicas >= 20. */
        ck_assert(t.requests_per_second * (double)plans[i].replicas >= 20.0 * (1 - 1e-12));
        /* Cost per hour = replicas x tp x the GPU's price. */
        ASSERT_REL(plans[i].usd_per_hour,
                   (double)(plans[i].replicas * plans[i].tp) * in.usd_per_gpu_hour[plans[i].gpu],
                   1e-12);
        if (i > 0)
            ck_assert(plans[i].usd_per_hour >= plans[i - 1].usd_per_hour);
    }
    /* The front: cost up, TPOT down. */
    for (int i = 1; i < s.pareto_count; i++) {
        ck_assert(pareto[i].usd_per_hour > pareto[i - 1].usd_per_hour);
        ck_assert(pareto[i].time.tpot_seconds < pareto[i - 1].time.tpot_seconds);
    }
}
END_TEST

/* A TPOT below anything a GPU can do: no plan, and the reason names tpot_slo_seconds. */
START_TEST(impossible_tpot_names_the_slo)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;

    llama8b(&in);
    in.concurrency = 4;
    in.tpot_slo_seconds = 1e-5;
    search_ok(&in, &s);
    ck_assert_int_eq(s.plan_count, 0);
    ck_assert_int_ge(s.reason_count, 1);
    ck_assert_str_eq(s.reasons[0].field, "tpot_slo_seconds");
}
END_TEST

START_TEST(impossible_ttft_names_the_slo)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;

    llama8b(&in);
    in.concurrency = 4;
    in.base.input_len = 8000; /* 8000 x 16 GFLOPs = 128 TFLOPs: far beyond 1 ms on any GPU */
    in.ttft_slo_seconds = 1e-3;
    search_ok(&in, &s);
    ck_assert_int_eq(s.plan_count, 0);
    ck_assert_str_eq(s.reasons[0].field, "ttft_slo_seconds");
}
END_TEST

/* 405B in 16 bits (811 GB of weights) on one L40S type with tp <= 8 (384 GB): nothing fits. */
START_TEST(nothing_fits_names_memory)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;

    core_serve_plan_input_init(&in);
    in.base.base.preset = core_preset_find("llama3.1-405b");
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("l40s");
    in.quant_count = 1;
    in.quantizations[0] = CORE_QUANT_NONE;
    in.concurrency = 1;
    search_ok(&in, &s);
    ck_assert_int_eq(s.plan_count, 0);
    ck_assert_int_eq(s.fitting, 0);
    ck_assert_str_eq(s.reasons[0].field, "memory");
}
END_TEST

/* A workload longer than the model's context: every configuration is refused by the memory side
 * with the same problem, which the reason repeats (input_len). */
START_TEST(refused_everywhere_names_the_input)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;

    llama8b(&in);
    in.base.input_len = 9000; /* + 128 > Llama 3 8B's 8192 positions */
    in.base.max_model_len = 8192;
    search_ok(&in, &s);
    ck_assert_int_eq(s.plan_count, 0);
    ck_assert_str_eq(s.reasons[0].field, "input_len");
}
END_TEST

/* A load beyond replicas_max replicas names the load. */
START_TEST(load_beyond_replicas_names_the_load)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;

    llama8b(&in);
    in.requests_per_second = 1e6;
    in.replicas_max = 2;
    search_ok(&in, &s);
    ck_assert_int_eq(s.plan_count, 0);
    ck_assert_str_eq(s.reasons[0].field, "requests_per_second");
}
END_TEST

/* One H100, bf16 weights and cache, tp 1, one sequence in flight, no SLO: one replica of one GPU
 * at concurrency 1; at $2.50/h that is $2.50/h, and the cost per million output tokens is
 * 2.50 / 3600 / tokens_per_second x 1e6. */
START_TEST(one_gpu_one_sequence)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    int h100 = core_gpu_find("h100-sxm");

    llama8b(&in);
    in.concurrency = 1;
    in.gpu_count = 1;
    in.gpus[0] = h100;
    in.usd_per_gpu_hour[h100] = 2.5;
    in.tp_max = 1;
    in.quant_count = 1;
    in.quantizations[0] = CORE_QUANT_NONE;
    in.kv_count = 1;
    in.kv_cache_dtypes[0] = CORE_KV_AUTO;
    search_ok(&in, &s);
    ck_assert_int_eq(s.evaluated, 1);
    ck_assert_int_eq(s.plan_count, 1);
    ASSERT_I64(plans[0].replicas, 1);
    ASSERT_I64(plans[0].gpus, 1);
    ASSERT_I64(plans[0].concurrency, 1);
    ASSERT_REL(plans[0].usd_per_hour, 2.5, 1e-15);
    ASSERT_REL(plans[0].time.usd_per_million_output_tokens,
               2.5 / 3600.0 / plans[0].time.output_tokens_per_second * 1e6, 1e-12);
}
END_TEST

/* More load never needs fewer GPUs. */
START_TEST(more_load_never_fewer_gpus)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    int64_t last = 0;

    llama8b(&in);
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("h100-sxm");
    in.tpot_slo_seconds = 0.05;
    for (double rps = 1; rps <= 512; rps *= 4) {
        in.requests_per_second = rps;
        search_ok(&in, &s);
        ck_assert_int_gt(s.plan_count, 0);
        ck_assert(plans[0].gpus >= last);
        last = plans[0].gpus;
    }
}
END_TEST

/* The scheduler admits what the pool holds: asking a million sequences of Llama 3 8B on an L4
 * runs floor(kv tokens / (1024 + 128)) of them (below max_num_seqs 256 there), as `max` does. */
START_TEST(concurrency_beyond_the_pool_runs_at_the_pool)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_serve_time t;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.gpu = core_gpu_find("l4");
    in.concurrency = 1000000;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    core_serve_timing(&r, &t);
    ck_assert_int_lt(r.kv.tokens / 1152, 256);
    ASSERT_I64(t.concurrency, r.kv.tokens / 1152);
    in.concurrency = CORE_SERVE_CONCURRENCY_MAX;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    core_serve_timing(&r, &t);
    ASSERT_I64(t.concurrency, r.kv.tokens / 1152);
}
END_TEST

/* Both loads at once is a contradiction (422 naming requests_per_second). */
START_TEST(two_loads_rejected)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    struct core_problems p = {0};

    llama8b(&in);
    in.concurrency = 4;
    in.requests_per_second = 2;
    ck_assert_int_eq(
        core_serve_plan_search(&in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX, &s, &p),
        CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "requests_per_second");
}
END_TEST

/* engine_version: a release of another engine is refused before the search, as /inference
 * refuses it (a 422 naming engine_version, core/serve.c): nothing is sized. */
START_TEST(release_of_another_engine_rejected)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    struct core_problems p = {0};

    llama8b(&in);
    in.base.engine = CORE_ENGINE_SGLANG;
    in.base.engine_version = CORE_VERSION_VLLM_0_4; /* a vLLM V0 release */
    ck_assert_int_eq(
        core_serve_plan_search(&in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX, &s, &p),
        CORE_EINVAL);
    ck_assert_int_eq(p.count, 1);
    ck_assert_str_eq(p.items[0].field, "engine_version");
    ck_assert_int_eq(s.evaluated, 0);
    in.base.engine = CORE_ENGINE_VLLM; /* V1: vllm_0.4 is not one of its releases either */
    p.count = 0;
    ck_assert_int_eq(
        core_serve_plan_search(&in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX, &s, &p),
        CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "engine_version");
}
END_TEST

/* A release of the engine is carried into every candidate: Llama 2 7B under vLLM V0 of mid 2024
 * (vllm_0.4) on one A100 80 GB, bf16 weights and KV. Every plan's request names the release, and
 * its replica's profiling peak is that release's: the caching allocator's reserved segments
 * (core_serve_profile_reserved) over vLLM V0's profile batch, max_num_batched_tokens =
 * max(max_model_len, 2048) = max(1024 + 128, 2048) = 2048 tokens and max_num_seqs 256
 * (vllm/config.py SchedulerConfig of 0.4-0.6), not the current code's live-tensor figure. */
START_TEST(engine_version_is_carried_into_every_candidate)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    struct core_serve_input serve;
    struct core_serve_result r, cur;
    struct core_problems p = {0};
    const struct core_arch *a = &core_presets[core_preset_find("llama2-7b")].arch;

    core_serve_plan_input_init(&in);
    in.base.base.preset = core_preset_find("llama2-7b");
    in.base.input_len = 1024;
    in.base.output_len = 128;
    in.base.engine = CORE_ENGINE_VLLM_V0;
    in.base.engine_version = CORE_VERSION_VLLM_0_4;
    in.concurrency = 16;
    in.tp_max = 1;
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("a100-sxm-80gb");
    in.quant_count = 1;
    in.quantizations[0] = CORE_QUANT_NONE;
    in.kv_count = 1;
    in.kv_cache_dtypes[0] = CORE_KV_AUTO;
    search_ok(&in, &s);
    ck_assert_int_eq(s.evaluated, 1);
    ck_assert_int_eq(s.plan_count, 1);
    core_serve_plan_request(&in, &plans[0], &serve);
    ck_assert_int_eq(serve.engine_version, CORE_VERSION_VLLM_0_4);
    ck_assert_int_eq(core_serve(&serve, &r, &p), CORE_OK);
    ck_assert_int_eq(r.resolved.engine_version, CORE_VERSION_VLLM_0_4);
    ASSERT_I64(r.resolved.max_num_batched_tokens, 2048);
    ASSERT_I64(r.resolved.max_num_seqs, 256);
    ASSERT_I64(r.per_gpu.activations,
               core_serve_profile_reserved(a, &core_serve_releases[CORE_VERSION_VLLM_0_4],
                                           CORE_QUANT_NONE, 1, 1, 1, 2048, 256, 2,
                                           core_serve_cublas_workspace_bytes(in.gpus[0])));
    serve.engine_version = CORE_VERSION_CURRENT; /* the same replica under the current code */
    ck_assert_int_eq(core_serve(&serve, &cur, &p), CORE_OK);
    ck_assert(cur.per_gpu.activations != r.per_gpu.activations);
    ck_assert(cur.kv.blocks != r.kv.blocks);
}
END_TEST

/* One rule on the parts each engine is modelled on (serve_checks.c core_serve_engine_models):
 * the catalog's TPU rows (tpu-v4, tpu-v5p: generation TPU) are in no engine's search, as
 * /inference's larger_gpu advice skips them; named alone under vLLM they are the 422 /inference
 * gives for them, on gpu. */
START_TEST(tpu_rows_are_no_engine_part)
{
    struct core_serve_plan_input in;
    struct core_serve_plan_summary s;
    struct core_problems p = {0};

    llama8b(&in);
    search_ok(&in, &s);
    ck_assert_int_gt(s.gpus_searched, 0);
    for (int i = 0; i < s.gpus_searched; i++)
        ck_assert_int_ne(core_gpus[s.searched[i]].generation, CORE_GEN_TPU);
    for (int i = 0; i < s.plan_count; i++)
        ck_assert_int_ne(core_gpus[plans[i].gpu].generation, CORE_GEN_TPU);
    llama8b(&in);
    in.gpu_count = 1;
    in.gpus[0] = core_gpu_find("tpu-v5p");
    ck_assert_int_ge(in.gpus[0], 0);
    ck_assert_int_eq(
        core_serve_plan_search(&in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX, &s, &p),
        CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "gpu");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_serve_plan");
    TCase *tc = tcase_create("plan");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, best_plan_reasked_is_the_same_and_meets_the_slos);
    tcase_add_test(tc, impossible_tpot_names_the_slo);
    tcase_add_test(tc, impossible_ttft_names_the_slo);
    tcase_add_test(tc, nothing_fits_names_memory);
    tcase_add_test(tc, load_beyond_replicas_names_the_load);
    tcase_add_test(tc, refused_everywhere_names_the_input);
    tcase_add_test(tc, one_gpu_one_sequence);
    tcase_add_test(tc, more_load_never_fewer_gpus);
    tcase_add_test(tc, two_loads_rejected);
    tcase_add_test(tc, release_of_another_engine_rejected);
    tcase_add_test(tc, engine_version_is_carried_into_every_candidate);
    tcase_add_test(tc, concurrency_beyond_the_pool_runs_at_the_pool);
    tcase_add_test(tc, tpu_rows_are_no_engine_part);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
