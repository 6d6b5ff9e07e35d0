/*
 * test_plan.c - POST /plan, batch requests and the memwall CLI, against a live daemon started
 * in-process on 127.0.0.1 port 0 (one per test; Check forks) and the real executable (its path
 * is argv[1]). Every plan /plan returns is asked back through /fit (as one batch) and must
 * reproduce its per-GPU memory to the byte and fit. Expected figures are derived by hand; the
 * 7B case is the one derived in tests/core/test_core_plan.c.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "http.h"
#include "live.h"
#include "check_main.h"

static const char *memwall; /* the executable under test */

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static void post(const char *path, const char *json, struct http_reply *r)
{
    static const char *const headers[] = {"Content-Type: application/json", NULL};
    struct http_request req = {
        .method = "POST", .body = json, .body_len = strlen(json), .headers = headers};
    char url[256];

    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", live_port, path);
    ck_assert_msg(http_do(url, &req, r), "POST %s failed", path);
}

/* POST and parse; the status must be want. */
static json_t *post_json(const char *path, const char *json, long want)
{
    struct http_reply r;
    json_error_t err;
    json_t *doc;

    post(path, json, &r);
    ck_assert_msg(r.status == want, "POST %s %s: status %ld, want %ld: %.400s", path, json,
                  r.status, want, r.body);
    doc = json_loadb(r.body, r.body_len, 0, &err);
    ck_assert_msg(doc != NULL, "not JSON: %s", err.text);
    http_reply_free(&r);
    return doc;
}

static const char *str_at(json_t *doc, const char *path)
{
    json_t *v = live_at(doc, path);
    ck_assert_msg(json_is_string(v), "%s is not a string", path);
    return json_string_value(v);
}

static void close_to(double actual, double expected, double rel)
{
    ck_assert_msg(fabs(actual - expected) <= rel * fabs(expected), "%.17g is not %.17g", actual,
                  expected);
}

/* Some entry of a problem's errors names field. */
static bool names_field(json_t *problem, const char *field)
{
    size_t i;
    json_t *e;

    json_array_foreach (json_object_get(problem, "errors"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "field")), field) == 0)
            return true;
    return false;
}

/* Every plan and Pareto point of reply, asked back through /fit and /runtime as two batches. */
static void assert_plans_reproduce(json_t *reply)
{
    static const char *const segments[] = {"params", "grads", "optimizer", "activations", "total"};
    json_t *configs = json_array(), *all = json_array(), *fits, *runs, *p;
    const char *lists[] = {"plans", "pareto"};
    char *text;
    size_t i;

    for (size_t l = 0; l < 2; l++)
        json_array_foreach (json_object_get(reply, lists[l]), i, p) {
            json_array_append(configs, json_object_get(p, "config"));
            json_array_append(all, p);
        }
    ck_assert_uint_gt(json_array_size(all), 0);
    text = json_dumps(configs, JSON_COMPACT);
    fits = post_json("/fit", text, 200);
    runs = post_json("/runtime", text, 200);
    ck_assert_uint_eq(json_array_size(fits), json_array_size(all));
    json_array_foreach (all, i, p) {
        json_t *fit = json_array_get(fits, i), *run = json_array_get(runs, i);
        char want[64], got[64];
        const char *judged;

        ck_assert_msg(json_is_true(live_at(fit, "fit.fits")), "plan %zu does not fit", i);
        for (size_t s = 0; s < sizeof segments / sizeof segments[0]; s++) {
            snprintf(want, sizeof want, "memory_per_gpu.%s.bytes", segments[s]);
            snprintf(got, sizeof got, "memory.per_gpu.%s.bytes", segments[s]);
            ck_assert_int_eq(live_int_at(fit, got), live_int_at(p, want));
        }
        ck_assert_int_eq(live_int_at(fit, "fit.capacity.bytes"),
                         live_int_at(p, "memory_per_gpu.capacity.bytes"));
        /* The bytes /fit judged (capacity - headroom): the device peak under a framework
         * profile (memory_per_gpu.device_peak), else the ledger total. */
        judged = json_object_get(json_object_get(p, "memory_per_gpu"), "device_peak") != NULL
                     ? "memory_per_gpu.device_peak.bytes"
                     : "memory_per_gpu.total.bytes";
        ck_assert_int_eq(live_int_at(fit, "fit.capacity.bytes") -
                             live_int_at(fit, "fit.headroom.bytes"),
                         live_int_at(p, judged));
        /* mfu in the config is the effective MFU, printed to 15 digits, or "predicted": then
         * /runtime runs the same time model on the same layout and global batch. */
        close_to(live_num_at(run, "runtime.days"), live_num_at(p, "days"), 1e-13);
        /* The time model re-asked: the same step time, to the last printed digit. */
        if (json_is_object(json_object_get(p, "performance")))
            close_to(live_num_at(run, "performance.step_seconds"),
                     live_num_at(p, "performance.step_seconds"), 0);
    }
    free(text);
    json_decref(configs);
    json_decref(all);
    json_decref(fits);
    json_decref(runs);
}

/* ---------------------------------------------------------------------------------------------
 * /plan
 * ------------------------------------------------------------------------------------------- */

START_TEST(plan_seven_b_by_hand)
{
    json_t *b = post_json(
        "/plan", "{\"gpu\":\"h100-sxm\",\"gpus_max\":8,\"usd_per_gpu_hour\":2,\"mfu\":0.5}", 200);

    /* tests/core/test_core_plan.c derives it: 8 H100s, tp = pp = 1, ZeRO 1, no checkpointing,
     * micro-batch 8; state 14e9 + 14e9 + 84e9/8 = 38.5e9, activations 8 * 3689414656. Cost
     * 6 * 7e9 * 1.4e12 / (989.4e12 * 0.5) / 3600 GPU-hours * $2. */
    ck_assert_str_eq(str_at(b, "ranked_by"), "cost_usd");
    ck_assert_str_eq(str_at(b, "plans.0.gpu"), "h100-sxm");
    ck_assert_int_eq(live_int_at(b, "plans.0.gpus"), 8);
    ck_assert_int_eq(live_int_at(b, "plans.0.tp"), 1);
    ck_assert_int_eq(live_int_at(b, "plans.0.pp"), 1);
    ck_assert_int_eq(live_int_at(b, "plans.0.zero_stage"), 1);
    ck_assert_str_eq(str_at(b, "plans.0.checkpointing"), "none");
    ck_assert_int_eq(live_int_at(b, "plans.0.batch"), 8);
    ck_assert_int_eq(live_int_at(b, "plans.0.memory_per_gpu.total.bytes"),
                     38500000000LL + 8LL * 3689414656LL);
    close_to(live_num_at(b, "plans.0.cost_usd"), 5.88e22 / (989.4e12 * 0.5) / 3600 * 2, 1e-12);
    close_to(live_num_at(b, "plans.0.days"), 5.88e22 / (8 * 989.4e12 * 0.5) / 86400, 1e-12);
    ck_assert_int_eq(live_int_at(b, "plans.0.config.gpus"), 8);
    ck_assert_int_gt(live_int_at(b, "evaluated"), 0);
    ck_assert(live_num_at(b, "elapsed_seconds") >= 0);
    ck_assert_uint_eq(json_array_size(json_object_get(b, "reasons")), 0);
    assert_plans_reproduce(b);
    json_decref(b);
}
END_TEST

START_TEST(plan_every_config_fits_back)
{
    /* No price: ranked by GPU-hours; a preset, a longer sequence, several GPU types. */
    json_t *b = post_json("/plan",
                          "{\"model\":\"llama2-13b\",\"seq_len\":4096,\"tokens\":\"260B\","
                          "\"gpu\":[\"h100-sxm\",\"a100-sxm-40gb\"],\"gpus_max\":64,\"mfu\":0.5}",
                          200);

    ck_assert_str_eq(str_at(b, "ranked_by"), "gpu_hours");
    ck_assert_uint_eq(json_array_size(json_object_get(b, "plans")), 20);
    ck_assert(json_is_null(live_at(b, "plans.0.cost_usd")));
    ck_assert_uint_eq(json_array_size(live_at(b, "inputs.gpu")), 2);
    assert_plans_reproduce(b);
    json_decref(b);
}
END_TEST

START_TEST(plan_predicted_by_default)
{
    /* Without mfu the step-time model ranks: each plan carries its performance, its config
     * says mfu "predicted" with the cp, virtual stages and global batch chosen, and the
     * seconds are steps * step_seconds. /fit and /runtime of every config reproduce it. */
    json_t *b = post_json("/plan",
                          "{\"model\":\"llama3-70b\",\"tokens\":\"15T\",\"seq_len\":8192,"
                          "\"deadline_days\":120,\"gpu\":\"h100-sxm\",\"usd_per_gpu_hour\":2,"
                          "\"flash_attention\":true}",
                          200);
    size_t i;
    json_t *p;

    ck_assert_str_eq(str_at(b, "inputs.mfu"), "predicted");
    ck_assert_uint_ge(json_array_size(json_object_get(b, "pareto")), 3);
    json_array_foreach (json_object_get(b, "plans"), i, p) {
        double steps = ceil(15e12 / live_num_at(p, "global_batch_tokens"));

        ck_assert_str_eq(str_at(p, "config.mfu"), "predicted");
        ck_assert_int_eq(live_int_at(p, "config.cp"), live_int_at(p, "cp"));
        ck_assert_int_eq(live_int_at(p, "config.virtual_stages"), live_int_at(p, "virtual_stages"));
        close_to(live_num_at(p, "config.global_batch") * 8192,
                 live_num_at(p, "config.global_batch_tokens"), 0);
        close_to(live_num_at(p, "steps"), steps, 0);
        close_to(live_num_at(p, "seconds"), steps * live_num_at(p, "performance.step_seconds"),
                 1e-12);
        ck_assert(live_num_at(p, "days") <= 120);
        ck_assert(json_is_null(live_at(p, "efficiency")));
        ck_assert(json_is_string(live_at(p, "performance.bottleneck")));
        ck_assert(live_num_at(p, "performance.breakdown.compute") > 0);
        /* Megatron-LM's interleaved schedule: m a multiple of pp (core/rules.c). */
        if (live_int_at(p, "virtual_stages") > 1)
            ck_assert_int_eq(live_int_at(p, "micro_batches") % live_int_at(p, "pp"), 0);
    }
    assert_plans_reproduce(b);
    json_decref(b);
}
END_TEST

START_TEST(plan_keeps_a_given_global_batch)
{
    /* QA's case (qwen3-30b-a3b, T 4096, global_batch 512 = 2^9): every plan keeps 512 exactly,
     * so b * dp is a power of two (Megatron-LM asserts global_batch_size % (micro_batch_size *
     * data_parallel_size) == 0, megatron/core/num_microbatches_calculator.py), m = 512 / (b dp),
     * and /fit and /runtime of each config give the same bytes and step time. */
    json_t *b = post_json("/plan",
                          "{\"model\":\"qwen3-30b-a3b\",\"gpu\":\"h100-sxm\",\"global_batch\":512,"
                          "\"seq_len\":4096,\"gpus_max\":64}",
                          200);
    size_t i;
    json_t *p;

    json_array_foreach (json_object_get(b, "plans"), i, p) {
        int64_t per_step = live_int_at(p, "batch") * live_int_at(p, "dp");

        close_to(live_num_at(p, "global_batch"), 512, 0);
        close_to(live_num_at(p, "config.global_batch"), 512, 0);
        ck_assert_int_eq(per_step & (per_step - 1), 0);
        ck_assert_int_eq(live_int_at(p, "micro_batches"), 512 / per_step);
    }
    assert_plans_reproduce(b);
    json_decref(b);
    /* Under framework=megatron no plan is ZeRO-2: Megatron-LM's distributed optimizer keeps
     * the gradients in one full buffer, which the profile prices (docs/planner.md). */
    b = post_json("/plan",
                  "{\"model\":\"qwen3-30b-a3b\",\"gpu\":\"h100-sxm\",\"global_batch\":512,"
                  "\"seq_len\":4096,\"gpus_max\":64,\"framework\":\"megatron\"}",
                  200);
    ck_assert_uint_gt(json_array_size(json_object_get(b, "plans")), 0);
    json_array_foreach (json_object_get(b, "plans"), i, p) {
        ck_assert_int_ne(live_int_at(p, "zero_stage"), 2);
        close_to(live_num_at(p, "global_batch"), 512, 0);
    }
    assert_plans_reproduce(b);
    json_decref(b);
    /* The layout QA was offered, asked explicitly: 24 GPUs at b 8 give b dp = 192 and
     * 512 mod 192 = 128, so /runtime refuses it naming global_batch. */
    b = post_json("/runtime",
                  "{\"model\":\"qwen3-30b-a3b\",\"gpu\":\"h100-sxm\",\"global_batch\":512,"
                  "\"seq_len\":4096,\"gpus\":24,\"batch\":8,\"ep\":8}",
                  422);
    ck_assert(names_field(b, "global_batch"));
    json_decref(b);
    /* 6000 tokens at T 4096 is 1.46484375 sequences: nothing plans, and the reason says so. */
    b = post_json("/plan",
                  "{\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\",\"global_batch_tokens\":6000,"
                  "\"seq_len\":4096,\"gpus_max\":16}",
                  200);
    ck_assert_uint_eq(json_array_size(json_object_get(b, "plans")), 0);
    ck_assert_str_eq(str_at(b, "reasons.0.field"), "global_batch_tokens");
    json_decref(b);
}
END_TEST

/* Is plan p the layout megatron's device peak rejects (plan_megatron_judged_as_fit_judges)? */
static bool is_rejected_layout(json_t *p)
{
    return live_int_at(p, "gpus") == 8 && live_int_at(p, "tp") == 2 && live_int_at(p, "pp") == 2 &&
           live_int_at(p, "cp") == 1 && live_int_at(p, "virtual_stages") == 2 &&
           live_int_at(p, "zero_stage") == 1 && live_int_at(p, "batch") == 1 &&
           strcmp(str_at(p, "checkpointing"), "none") == 0;
}

/* framework=megatron: each plan is judged as /fit judges its config under megatron (the device
 * peak against the driver's usable bytes, 85,029,615,043 on an H100), and the config carries
 * the framework, so /fit and /runtime of it reproduce the verdict, the bytes and the step. The
 * layout tp 2 x pp 2 x dp 2, v 2, ZeRO 1, b 1 of Llama 3 8B at T 4096 (1024 sequences a step)
 * fits the generic ledger (total <= 80e9) and overflows megatron's device peak: both
 * inequalities are checked on /fit's replies, and the megatron plan does not offer it. Both pin
 * flash_attention false (the local attention's scores), megatron's default being true. */
START_TEST(plan_megatron_judged_as_fit_judges)
{
    static const char layout[] =
        "\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\",\"seq_len\":4096,\"gpus\":8,\"tp\":2,"
        "\"pp\":2,\"virtual_stages\":2,\"zero_stage\":1,\"checkpointing\":\"none\",\"batch\":1,"
        "\"global_batch\":1024,\"flash_attention\":false";
    char body[512];
    json_t *b, *p;
    size_t i;

    snprintf(body, sizeof body, "{%s}", layout);
    b = post_json("/fit", body, 200);
    ck_assert(json_is_true(live_at(b, "fit.fits")));
    ck_assert_int_le(live_int_at(b, "memory.per_gpu.total.bytes"), 80000000000);
    json_decref(b);
    snprintf(body, sizeof body, "{%s,\"framework\":\"megatron\"}", layout);
    b = post_json("/fit", body, 200);
    ck_assert(json_is_false(live_at(b, "fit.fits")));
    ck_assert_str_eq(str_at(b, "fit.judged"), "device_peak");
    ck_assert_int_eq(live_int_at(b, "fit.capacity.bytes"), 85029615043);
    ck_assert_int_lt(live_int_at(b, "fit.headroom.bytes"), 0);
    json_decref(b);

    b = post_json("/plan",
                  "{\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\",\"seq_len\":4096,"
                  "\"tokens\":1e12,\"gpus_max\":64,\"framework\":\"megatron\","
                  "\"flash_attention\":false}",
                  200);
    ck_assert_uint_gt(json_array_size(json_object_get(b, "plans")), 0);
    json_array_foreach (json_object_get(b, "plans"), i, p) {
        ck_assert_str_eq(str_at(p, "config.framework"), "megatron");
        ck_assert_str_eq(str_at(p, "memory_per_gpu.judged"), "device_peak");
        ck_assert(!is_rejected_layout(p));
    }
    json_array_foreach (json_object_get(b, "pareto"), i, p)
        ck_assert(!is_rejected_layout(p));
    assert_plans_reproduce(b);
    json_decref(b);
}
END_TEST

/* DeepSeek-V3 (61 layers) under Megatron-LM on up to 256 H100s: the plans with pp > 1 carry
 * Megatron-LM's uneven split in the plan and in its config, derived in tests/core/test_core_plan.c
 * (uneven_split_by_hand): 7 x 8 + 5 on pp 8, 15 x 4 + 1 on pp 16, 3 x 16 + 13 on pp 4, 31 + 30
 * on pp 2, the last rank's count only. /fit and /runtime of each config reproduce it. */
START_TEST(plan_megatron_uneven_pipeline)
{
    json_t *b, *p;
    size_t i;
    int uneven = 0;

    b = post_json("/plan",
                  "{\"model\":\"deepseek-v3\",\"framework\":\"megatron\",\"gpu\":\"h100-sxm\","
                  "\"gpus_max\":256}",
                  200);
    json_array_foreach (json_object_get(b, "plans"), i, p) {
        json_int_t pp = live_int_at(p, "pp");
        json_int_t want = pp == 2 ? 30 : pp == 4 ? 13 : pp == 8 ? 5 : pp == 16 ? 1 : 0;

        ck_assert(json_object_get(p, "decoder_first_pipeline_num_layers") == NULL);
        if (want == 0) {
            ck_assert(json_object_get(p, "decoder_last_pipeline_num_layers") == NULL);
            continue;
        }
        uneven++;
        ck_assert_int_eq(live_int_at(p, "decoder_last_pipeline_num_layers"), want);
        ck_assert_int_eq(live_int_at(p, "config.decoder_last_pipeline_num_layers"), want);
    }
    ck_assert_int_gt(uneven, 0);
    assert_plans_reproduce(b);
    json_decref(b);
}
END_TEST

START_TEST(plan_prices_by_gpu)
{
    /* Prices for two GPUs: only those two are searched, and costs rank the plans. */
    json_t *b = post_json(
        "/plan",
        "{\"params\":\"7B\",\"gpus_max\":16,\"usd_per_gpu_hour\":{\"h100-sxm\":2,\"b200\":\"5\"}}",
        200);
    json_t *gpus = live_at(b, "inputs.gpu");
    double prev = 0;
    size_t i;
    json_t *p;

    ck_assert_uint_eq(json_array_size(gpus), 2);
    close_to(live_num_at(b, "inputs.usd_per_gpu_hour.b200"), 5, 0);
    json_array_foreach (json_object_get(b, "plans"), i, p) {
        ck_assert(live_num_at(p, "cost_usd") >= prev);
        prev = live_num_at(p, "cost_usd");
    }
    json_decref(b);
}
END_TEST

START_TEST(plan_impossible_is_200_with_reasons)
{
    /* The fastest 7B plan on 8 H100s takes 171.96 days, so 10 days leaves nothing. */
    json_t *b =
        post_json("/plan", "{\"gpu\":\"h100-sxm\",\"gpus_max\":8,\"deadline_days\":10}", 200);

    ck_assert_uint_eq(json_array_size(json_object_get(b, "plans")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(b, "pareto")), 0);
    ck_assert_str_eq(str_at(b, "reasons.0.field"), "deadline_days");
    json_decref(b);
    /* 70B on one H100: 1.12e12 bytes of state cannot fit 80e9. */
    b = post_json("/plan", "{\"params\":\"70B\",\"gpu\":\"h100-sxm\",\"gpus_max\":1}", 200);
    ck_assert_uint_eq(json_array_size(json_object_get(b, "plans")), 0);
    ck_assert_str_eq(str_at(b, "reasons.0.field"), "memory");
    json_decref(b);
}
END_TEST

START_TEST(plan_errors)
{
    json_t *p = post_json("/plan", "{\"batch\":4,\"gpu\":[\"nope\"],\"deadline_days\":0}", 400);
    struct http_reply r;
    char allow[64];

    /* The planner chooses batch; an unknown GPU; a deadline must be > 0. */
    ck_assert(names_field(p, "batch"));
    ck_assert(names_field(p, "gpu"));
    ck_assert(names_field(p, "deadline_days"));
    json_decref(p);
    p = post_json("/plan", "{\"budget_usd\":100}", 422); /* a budget needs a price */
    ck_assert(names_field(p, "budget_usd"));
    json_decref(p);
    p = post_json("/plan", "[{}]", 400); /* /plan takes no batch */
    json_decref(p);
    {
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/plan", live_port);
        ck_assert(http_get(url, &r));
    }
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(http_header(&r, "Allow", allow, sizeof allow), "POST, OPTIONS");
    http_reply_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Batch
 * ------------------------------------------------------------------------------------------- */

START_TEST(batch_items_in_order)
{
    json_t *b =
        post_json("/fit", "[{}, {\"batch\":0}, 7, {\"gpus\":3,\"tp\":2}, {\"gpus\":2}]", 200);
    json_t *single = post_json("/fit", "{}", 200);

    ck_assert_uint_eq(json_array_size(b), 5);
    /* Item 0 is exactly the single reply: 7B on one H100 does not fit (112e9 > 80e9). */
    ck_assert(json_equal(json_array_get(b, 0), single));
    ck_assert(json_is_false(live_at(b, "0.fit.fits")));
    ck_assert_int_eq(live_int_at(b, "1.status"), 400);
    ck_assert(names_field(json_array_get(b, 1), "batch"));
    ck_assert_int_eq(live_int_at(b, "2.status"), 400);
    ck_assert_str_eq(str_at(b, "2.type"), "https://memwall.dev/problems/malformed-json");
    ck_assert_int_eq(live_int_at(b, "3.status"), 422);
    ck_assert(names_field(json_array_get(b, 3), "gpus"));
    /* 112e9 / 2 = 56e9 of state + 3.69e9 of activations fits 80e9. */
    ck_assert(json_is_true(live_at(b, "4.fit.fits")));
    json_decref(b);
    json_decref(single);
    b = post_json("/flops", "[]", 200);
    ck_assert_uint_eq(json_array_size(b), 0);
    json_decref(b);
}
END_TEST

START_TEST(batch_limit)
{
    /* 1001 items of "{}," is about 3 KB, well inside the body limit; the item cap refuses it. */
    size_t n = 1001, i;
    char *body = malloc(3 * n + 2), *q = body;
    json_t *p;

    *q++ = '[';
    for (i = 0; i < n; i++) {
        memcpy(q, "{},", 3);
        q += 3;
    }
    q[-1] = ']';
    *q = '\0';
    p = post_json("/memory", body, 400);
    ck_assert_ptr_nonnull(strstr(str_at(p, "detail"), "1000"));
    json_decref(p);
    body[1 + 3 * 1000 - 1] = ']'; /* item i starts at 1 + 3 i: keep the first 1000 */
    body[1 + 3 * 1000] = '\0';
    p = post_json("/memory", body, 200);
    ck_assert_uint_eq(json_array_size(p), 1000);
    json_decref(p);
    free(body);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * The CLI
 * ------------------------------------------------------------------------------------------- */

struct run {
    int status;
    char out[1 << 20], err[1 << 16];
};

static void read_file(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}

/* Run memwall with args (NULL-terminated), stdin from in_text (or /dev/null). */
static void run_cli(const char *const *args, const char *in_text, struct run *r)
{
    char out_path[] = "/tmp/memwall-cli-XXXXXX", err_path[] = "/tmp/memwall-cli-XXXXXX",
         in_path[] = "/tmp/memwall-cli-XXXXXX";
    int out = mkstemp(out_path), err = mkstemp(err_path), in = mkstemp(in_path), wstatus;
    pid_t pid;

    ck_assert(out >= 0 && err >= 0 && in >= 0);
    if (in_text != NULL)
        ck_assert(write(in, in_text, strlen(in_text)) == (ssize_t)strlen(in_text));
    lseek(in, 0, SEEK_SET);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char *argv[32];
        size_t n = 0;
        argv[n++] = (char *)memwall;
        for (const char *const *a = args; *a != NULL && n < 31; a++)
            argv[n++] = (char *)*a;
        argv[n] = NULL;
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        execv(memwall, argv);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
    ck_assert(WIFEXITED(wstatus));
    r->status = WEXITSTATUS(wstatus);
    read_file(out, r->out, sizeof r->out);
    read_file(err, r->err, sizeof r->err);
    close(out);
    close(err);
    close(in);
    unlink(out_path);
    unlink(err_path);
    unlink(in_path);
}

static struct run cli_run;

START_TEST(cli_exit_codes)
{
    struct run *r = &cli_run;

    /* Lesson: 7B on one H100 does not fit (1); on two it does (0). */
    run_cli((const char *const[]){"fit", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 1);
    ck_assert_ptr_nonnull(strstr(r->out, "fits: no"));
    run_cli((const char *const[]){"fit", "--gpus", "2", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 0);
    run_cli((const char *const[]){"runtime", "--gpus=8", "--usd-per-gpu-hour", "2", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "171.96")); /* 5.88e22 / 3.9576e15 / 86400 */
    /* Bad input: 2, the problem on stderr naming the fields. */
    run_cli((const char *const[]){"memory", "--batch", "0", "--bacth", "2", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 2);
    ck_assert_ptr_nonnull(strstr(r->err, "batch"));
    ck_assert_ptr_nonnull(strstr(r->err, "bacth"));
    ck_assert_str_eq(r->out, "");
    run_cli((const char *const[]){"fit", "--gpus", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 2);
    /* Plans found: 0; none within 10 days: 1. */
    run_cli((const char *const[]){"plan", "--gpu", "h100-sxm", "--gpus_max", "8", NULL}, NULL, r);
    ck_assert_int_eq(r->status, 0);
    run_cli((const char *const[]){"plan", "--gpu", "h100-sxm", "--gpus_max", "8", "--deadline_days",
                                  "10", NULL},
            NULL, r);
    ck_assert_int_eq(r->status, 1);
    ck_assert_ptr_nonnull(strstr(r->out, "deadline_days"));
    /* A batch job on stdin: the worst item decides (a bad item: 2). */
    run_cli((const char *const[]){"fit", "-", NULL}, "[{\"gpus\":2},{}]", r);
    ck_assert_int_eq(r->status, 1);
    run_cli((const char *const[]){"fit", "-", NULL}, "[{\"gpus\":2},{\"batch\":0}]", r);
    ck_assert_int_eq(r->status, 2);
}
END_TEST

/* Reply body of POST path with body, NUL-terminated, malloc'd. */
static char *http_body(const char *path, const char *body)
{
    struct http_reply r;
    char *copy;

    post(path, body, &r);
    copy = strdup(r.body);
    http_reply_free(&r);
    return copy;
}

START_TEST(cli_json_is_the_http_body)
{
    struct run *r = &cli_run;
    char *want, job[] = "/tmp/memwall-job-XXXXXX";
    int fd;
    json_t *a, *b;
    const char *text = "{\"model\":\"llama2-7b\",\"gpus\":8,\"tp\":2,\"checkpointing\":\"full\"}";

    /* Flags are sent as JSON strings: the same bytes as POSTing those strings. */
    run_cli((const char *const[]){"fit", "--json", "--gpus", "2", "--params", "7B", NULL}, NULL, r);
    want = http_body("/fit", "{\"gpus\":\"2\",\"params\":\"7B\"}");
    ck_assert_int_eq(r->status, 0);
    ck_assert_uint_eq(strlen(r->out), strlen(want) + 1);
    ck_assert(strncmp(r->out, want, strlen(want)) == 0 && r->out[strlen(want)] == '\n');
    free(want);
    /* A job file: byte for byte the reply to POSTing the file. */
    fd = mkstemp(job);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    run_cli((const char *const[]){"memory", "--json", job, NULL}, NULL, r);
    want = http_body("/memory", text);
    ck_assert_int_eq(r->status, 0);
    ck_assert(strncmp(r->out, want, strlen(want)) == 0 && r->out[strlen(want)] == '\n');
    free(want);
    /* A batch on stdin. */
    run_cli((const char *const[]){"flops", "--json", "-", NULL}, "[{},{\"batch\":0}]", r);
    want = http_body("/flops", "[{},{\"batch\":0}]");
    ck_assert(strncmp(r->out, want, strlen(want)) == 0 && r->out[strlen(want)] == '\n');
    free(want);
    unlink(job);
    /* /plan: the same reply except elapsed_seconds, which is a measurement. */
    run_cli((const char *const[]){"plan", "--json", "-", NULL},
            "{\"gpu\":\"h100-sxm\",\"gpus_max\":16}", r);
    want = http_body("/plan", "{\"gpu\":\"h100-sxm\",\"gpus_max\":16}");
    a = json_loads(r->out, 0, NULL);
    b = json_loads(want, 0, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    json_object_del(a, "elapsed_seconds");
    json_object_del(b, "elapsed_seconds");
    ck_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    free(want);
}
END_TEST

static Suite *plan_suite(void)
{
    Suite *s = suite_create("plan_batch_cli");
    TCase *t = tcase_create("live");

    tcase_add_checked_fixture(t, live_start, live_stop);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, plan_seven_b_by_hand);
    tcase_add_test(t, plan_every_config_fits_back);
    tcase_add_test(t, plan_predicted_by_default);
    tcase_add_test(t, plan_keeps_a_given_global_batch);
    tcase_add_test(t, plan_megatron_judged_as_fit_judges);
    tcase_add_test(t, plan_megatron_uneven_pipeline);
    tcase_add_test(t, plan_prices_by_gpu);
    tcase_add_test(t, plan_impossible_is_200_with_reasons);
    tcase_add_test(t, plan_errors);
    tcase_add_test(t, batch_items_in_order);
    tcase_add_test(t, batch_limit);
    tcase_add_test(t, cli_exit_codes);
    tcase_add_test(t, cli_json_is_the_http_body);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/memwall\n", argv[0]);
        return EXIT_FAILURE;
    }
    memwall = argv[1];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = check_main_run(plan_suite());
    curl_global_cleanup();
    return rc;
}
