/*
 * test_core_edges.c - validation, monotonicity, extremes and runtime arithmetic of core/.
 *
 * The lesson and paper suites pin exact figures; this one pins the rules between figures
 * (more GPUs never add state, checkpointing never adds activations, max_batch is the edge of
 * fitting), the CORE_EINVAL fields the API turns into 422s, that absurd inputs end in
 * CORE_ERANGE or finite numbers rather than a crash, and a sweep asserting no NaN/inf anywhere.
 */
#include "core_test_util.h"
#include "check_main.h"

/* ---------------------------------------------------------------------------------------------
 * Validation: impossible combinations name their field
 * ------------------------------------------------------------------------------------------- */

START_TEST(gpus_not_multiple_of_tp_pp)
{
    /* tp 2 * pp 1 = 2 does not divide 3 GPUs. */
    struct core_input in;
    core_input_init(&in);
    in.tp = 2;
    in.gpus = 3;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "gpus"));
    /* tp 2 * pp 2 = 4 does not divide 6. */
    in.pp = 2;
    in.gpus = 6;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "gpus"));
    /* 8 is a multiple of 4: fine, dp = 2. */
    struct core_result r;
    in.gpus = 8;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.dp, 2);
}
END_TEST

START_TEST(precision_the_gpu_lacks)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpu = core_gpu_find("v100-sxm-32gb");
    ck_assert_int_ge(in.gpu, 0);
    /* V100 has no bf16 (catalog 0) -> "precision". */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "precision"));
    /* fp16 is its 125 TFLOP/s path: OK, capacity 32e9 bytes. */
    in.precision = CORE_PREC_FP16;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.peak_flops_per_gpu, 125e12, 1e-12);
    ASSERT_I64(r.fit.capacity, INT64_C(32000000000));
    /* fp8 on an A100 (catalog 0) is refused too. */
    core_input_init(&in);
    in.gpu = core_gpu_find("a100-sxm-80gb");
    ck_assert_int_ge(in.gpu, 0);
    in.precision = CORE_PREC_FP8;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "precision"));
    /* ...unless the caller gives the peak: the catalog is no longer consulted. */
    in.peak_tflops = 312;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.peak_flops_per_gpu, 312e12, 1e-12);
}
END_TEST

START_TEST(kv_heads_must_divide_heads)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.preset = preset_index("llama2-7b"); /* 32 heads */
    in.kv_heads = 5;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "kv_heads"));
    in.kv_heads = 8; /* 32 / 8 = 4: GQA, fine */
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.shape.arch.kv_heads, 8);
}
END_TEST

START_TEST(other_invalid_combinations)
{
    struct core_input in;
    core_input_init(&in);
    /* fp32 has no master copy to keep. */
    in.precision = CORE_PREC_FP32;
    in.master_weights = CORE_FLAG_YES;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "master_weights"));
    /* active params cannot exceed total params. */
    core_input_init(&in);
    in.params = INT64_C(7000000000);
    in.active_params = INT64_C(8000000000);
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "active_params"));
    /* reserve eating the whole GPU leaves no capacity. */
    core_input_init(&in);
    in.reserve_gb = 80;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "reserve_gb"));
    /* Measured throughput above peak: 1e6 tok/s * 6 * 7e9 / (8 * 989.4e12) = 5.3 > 1. */
    core_input_init(&in);
    in.gpus = 8;
    in.tokens_per_second = 1e6;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "tokens_per_second"));
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * ZeRO and GPU count
 * ------------------------------------------------------------------------------------------- */

START_TEST(zero0_never_gains_from_gpus)
{
    /* ZeRO 0 replicates everything: 16 * 7e9 = 112e9 on every rank at G 1 and at G 64. */
    struct core_input in;
    struct core_result one, many;
    core_input_init(&in);
    in.params = INT64_C(7000000000);
    in.zero_stage = 0;
    EVAL_OK(in, one);
    in.gpus = 64;
    EVAL_OK(in, many);
    ASSERT_I64(one.memory.state, INT64_C(112000000000));
    ASSERT_I64(many.memory.state, INT64_C(112000000000));
    ASSERT_I64(many.memory.params, one.memory.params);
    ASSERT_I64(many.memory.grads, one.memory.grads);
    ASSERT_I64(many.memory.optimizer, one.memory.optimizer);
    /* It does not fit now and no G helps: min_gpus (and state-only) 0. */
    ck_assert(!many.fit.fits);
    ASSERT_I64(many.fit.min_gpus, 0);
    ASSERT_I64(many.fit.min_gpus_state_only, 0);
    ASSERT_I64(one.fit.min_gpus, 0);
    /* dp 64 with stage 0: every rank holds the full state -> warned. */
    ck_assert_ptr_nonnull(find_warning(&many, "zero0_replicated"));
    ck_assert_ptr_null(find_warning(&one, "zero0_replicated"));
}
END_TEST

START_TEST(more_gpus_never_raise_state)
{
    static const int64_t params[] = {INT64_C(125000000), INT64_C(7000000000), INT64_C(13000000000),
                                     INT64_C(70000000000), INT64_C(1000000000001)};
    static const int64_t tps[] = {1, 2, 4}; /* each divides every inferred head count here */
    for (int stage = 1; stage <= 3; stage++)
        for (size_t p = 0; p < sizeof params / sizeof params[0]; p++)
            for (size_t t = 0; t < sizeof tps / sizeof tps[0]; t++) {
                struct core_input in;
                struct core_result r;
                core_input_init(&in);
                in.params = params[p];
                in.zero_stage = stage;
                in.tp = tps[t];
                int64_t prev_state = INT64_MAX, prev_total = INT64_MAX;
                for (int64_t dp = 1; dp <= 80; dp += (dp < 16 ? 1 : 7)) {
                    in.gpus = dp * tps[t];
                    EVAL_OK(in, r);
                    ck_assert_msg(r.memory.state <= prev_state,
                                  "stage %d N %lld tp %lld: state rose to %lld at G %lld", stage,
                                  (long long)params[p], (long long)tps[t],
                                  (long long)r.memory.state, (long long)in.gpus);
                    /* Activations do not depend on dp, so the total cannot rise either. */
                    ck_assert(r.memory.total <= prev_total);
                    prev_state = r.memory.state;
                    prev_total = r.memory.total;
                }
            }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Checkpointing never raises activations
 * ------------------------------------------------------------------------------------------- */

START_TEST(checkpointing_never_raises_activations)
{
    /*
     * Per layer, the selective row is the no-checkpointing row minus 5 a s^2 b (or minus it / t),
     * so selective <= none always. Full keeps (L - 1) * 2 s b d plus one no-checkpointing layer X:
     * (L - 1) * 2sbd + X <= L * X  <=>  2 (L - 1) sbd <= (L - 1) X, true since X >= 10 sbd
     * (2sbd/t <= X with SP as well). With L = 1 full equals none exactly.
     */
    static const int64_t layers[] = {1, 2, 3, 12, 32, 96};
    static const int64_t hidden[] = {256, 1024, 4096};
    static const int64_t seq[] = {1, 128, 512, 4096};
    static const int64_t batch[] = {1, 3, 16};
    static const int64_t tp[] = {1, 2, 8};
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++)
        for (size_t h = 0; h < sizeof hidden / sizeof hidden[0]; h++)
            for (size_t s = 0; s < sizeof seq / sizeof seq[0]; s++)
                for (size_t b = 0; b < sizeof batch / sizeof batch[0]; b++)
                    for (size_t t = 0; t < sizeof tp / sizeof tp[0]; t++)
                        for (int flash = 0; flash <= 1; flash++)
                            for (int sp = CORE_FLAG_NO; sp <= CORE_FLAG_YES; sp++) {
                                struct core_input in;
                                struct core_result none, sel, full;
                                core_input_init(&in);
                                in.layers = layers[l];
                                in.hidden = hidden[h];
                                in.heads = 16; /* tp 8 must divide the heads (Megatron-LM) */
                                in.seq_len = seq[s];
                                in.batch = batch[b];
                                in.tp = tp[t];
                                in.gpus = tp[t];
                                in.flash_attention = (flash != 0) ? CORE_FLAG_YES : CORE_FLAG_NO;
                                in.sequence_parallel = (enum core_flag)sp;
                                EVAL_OK(in, none);
                                in.checkpointing = CORE_CKPT_SELECTIVE;
                                EVAL_OK(in, sel);
                                in.checkpointing = CORE_CKPT_FULL;
                                EVAL_OK(in, full);
                                ck_assert_msg(sel.memory.activations <= none.memory.activations,
                                              "selective raised activations: L %lld d %lld "
                                              "s %lld b %lld t %lld",
                                              (long long)layers[l], (long long)hidden[h],
                                              (long long)seq[s], (long long)batch[b],
                                              (long long)tp[t]);
                                ck_assert_msg(full.memory.activations <= none.memory.activations,
                                              "full raised activations: L %lld d %lld s %lld "
                                              "b %lld t %lld flash %d sp %d",
                                              (long long)layers[l], (long long)hidden[h],
                                              (long long)seq[s], (long long)batch[b],
                                              (long long)tp[t], flash, sp);
                                /* ...and never touches the state. */
                                ASSERT_I64(full.memory.state, none.memory.state);
                                ASSERT_I64(sel.memory.state, none.memory.state);
                            }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * max_batch
 * ------------------------------------------------------------------------------------------- */

START_TEST(max_batch_by_hand)
{
    /*
     * 7B default shape on 2 GPUs (ZeRO 3): state 112e9 / 2 = 56e9; capacity 80e9 leaves 24e9.
     * Activations are linear in b: b * (3,623,878,656 + 65,536,000) = b * 3,689,414,656.
     * 24e9 / 3,689,414,656 = 6.505 -> max_batch 6.
     *   b 6: 56e9 + 22,136,487,936 = 78,136,487,936 <= 80e9 (fits)
     *   b 7: 56e9 + 25,825,902,592 = 81,825,902,592 >  80e9 (does not)
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 2;
    EVAL_OK(in, r);
    ck_assert(r.fit.fits);
    ASSERT_I64(r.fit.max_batch, 6);
    const struct core_note *grow = find_advice(&r, "batch_headroom");
    ck_assert_ptr_nonnull(grow);
    const struct core_change *ch = find_change(grow, "batch");
    ck_assert_ptr_nonnull(ch);
    ASSERT_I64(ch->int_value, 6);

    in.batch = 6;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.total, INT64_C(78136487936));
    ck_assert(r.fit.fits);
    ASSERT_I64(r.fit.max_batch, 6);
    in.batch = 7;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.total, INT64_C(81825902592));
    ck_assert(!r.fit.fits);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_ACTIVATIONS);
    ASSERT_I64(r.fit.max_batch, 6);
    /* Activations are the overflow: checkpointing or a smaller batch is the advice. */
    ck_assert(find_advice(&r, "enable_checkpointing") != NULL ||
              find_advice(&r, "reduce_batch") != NULL);
}
END_TEST

START_TEST(max_batch_is_the_edge)
{
    /* For several shapes, batch = max_batch fits and max_batch + 1 does not. */
    static const char *const presets[] = {"llama2-7b", "llama3-8b", "gpt3-1.3b", "mistral-7b"};
    static const int64_t seq[] = {512, 2048, 8192};
    static const int64_t gpus[] = {2, 8};
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++)
        for (size_t s = 0; s < sizeof seq / sizeof seq[0]; s++)
            for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
                struct core_input in;
                struct core_result r;
                core_input_init(&in);
                in.preset = preset_index(presets[p]);
                in.seq_len = seq[s];
                in.gpus = gpus[g];
                EVAL_OK(in, r);
                int64_t m = r.fit.max_batch;
                if (m == 0) {
                    in.batch = 1;
                    EVAL_OK(in, r);
                    ck_assert(!r.fit.fits);
                    continue;
                }
                in.batch = m;
                EVAL_OK(in, r);
                ck_assert_msg(r.fit.fits, "%s T %lld G %lld: max_batch %lld does not fit",
                              presets[p], (long long)seq[s], (long long)gpus[g], (long long)m);
                if (m < CORE_BATCH_MAX) {
                    in.batch = m + 1;
                    EVAL_OK(in, r);
                    ck_assert_msg(!r.fit.fits, "%s T %lld G %lld: max_batch %lld + 1 fits",
                                  presets[p], (long long)seq[s], (long long)gpus[g], (long long)m);
                }
            }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Extremes: CORE_ERANGE or finite, never a crash
 * ------------------------------------------------------------------------------------------- */

START_TEST(huge_inputs)
{
    struct core_input in;
    struct core_result r;
    struct core_problems probs;
    core_input_init(&in);
    in.params = (int64_t)CORE_PARAMS_MAX; /* 1e15 */
    in.seq_len = CORE_SEQ_LEN_MAX;        /* 1e8 */
    in.batch = CORE_BATCH_MAX;            /* 1e6 */
    in.tokens = CORE_TOKENS_MAX;
    in.gpus = CORE_GPUS_MAX;
    /* 5 a s^2 b alone is 5 * 32 * 1e16 * 1e6 = 1.6e24 bytes > 2^63 ~ 9.2e18: must be ERANGE. */
    memset(&probs, 0, sizeof probs);
    enum core_status st = core_evaluate(&in, &r, &probs);
    ck_assert_int_eq(st, CORE_ERANGE);
    ck_assert_int_ge(probs.count, 1);
    ck_assert_ptr_nonnull(probs.items[0].field);
    ck_assert_msg(strcmp(probs.items[0].field, "seq_len") == 0 ||
                      strcmp(probs.items[0].field, "batch") == 0,
                  "ERANGE names %s", probs.items[0].field);

    /* Each extreme on its own (and a few pairs): ERANGE with a field, or OK and finite. */
    for (int mask = 1; mask < 32; mask++) {
        core_input_init(&in);
        if (mask & 1)
            in.params = (int64_t)CORE_PARAMS_MAX;
        if (mask & 2)
            in.seq_len = CORE_SEQ_LEN_MAX;
        if (mask & 4)
            in.batch = CORE_BATCH_MAX;
        if (mask & 8) {
            in.tokens = CORE_TOKENS_MAX;
            in.mfu = CORE_MFU_MIN;
        }
        if (mask & 16) {
            in.layers = CORE_LAYERS_MAX;
            in.hidden = CORE_HIDDEN_MAX;
            in.heads = 1000;
            in.vocab = CORE_VOCAB_MAX;
        }
        memset(&probs, 0, sizeof probs);
        st = core_evaluate(&in, &r, &probs);
        /* The brief's extremes (params, seq_len, batch, tokens) must be OK or ERANGE; a
         * 1e5 x 1e6 architecture (~1.2e18 params, beyond CORE_PARAMS_MAX) may also be refused
         * as EINVAL - either way with a named field, never a crash. */
        ck_assert_msg(st == CORE_OK || st == CORE_ERANGE || ((mask & 16) && st == CORE_EINVAL),
                      "mask %d: status %d", mask, (int)st);
        if (st != CORE_OK) {
            ck_assert_int_ge(probs.count, 1);
            ck_assert_ptr_nonnull(probs.items[0].field);
        } else {
            const char *bad = first_nonfinite(&r);
            ck_assert_msg(bad == NULL, "mask %d: %s is not finite", mask, bad ? bad : "");
            ck_assert(r.memory.total >= 0);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Property sweep: no NaN/inf anywhere, every refusal names a problem, no negative segment
 * ------------------------------------------------------------------------------------------- */

START_TEST(sweep_finite_and_consistent)
{
    static const int64_t params[] = {0,
                                     INT64_C(1000),
                                     INT64_C(125000000),
                                     INT64_C(7000000000),
                                     INT64_C(405000000000),
                                     INT64_C(1000000000000000)};
    static const int presets[] = {-1, 0, 7, 13};
    static const int64_t seq[] = {1, 512, 32768};
    static const int64_t gpus_tp_pp[][3] = {{1, 1, 1}, {8, 2, 2}, {1024, 8, 1}};
    int evaluated = 0, ok = 0;
    for (size_t a = 0; a < sizeof params / sizeof params[0]; a++)
        for (size_t b = 0; b < sizeof presets / sizeof presets[0]; b++)
            for (size_t c = 0; c < sizeof seq / sizeof seq[0]; c++)
                for (size_t e = 0; e < sizeof gpus_tp_pp / sizeof gpus_tp_pp[0]; e++)
                    for (int v = 0; v < 3; v++) {
                        struct core_input in;
                        struct core_result r;
                        struct core_problems probs;
                        core_input_init(&in);
                        in.params = params[a];
                        if (presets[b] >= 0 && (size_t)presets[b] < core_preset_count)
                            in.preset = presets[b];
                        in.seq_len = seq[c];
                        in.gpus = gpus_tp_pp[e][0];
                        in.tp = gpus_tp_pp[e][1];
                        in.pp = gpus_tp_pp[e][2];
                        /* vary the rest along with v so each combination differs */
                        in.precision = (enum core_precision)((a + c + (size_t)v) % 3); /* no fp8 */
                        in.optimizer = (enum core_optimizer)((b + e + (size_t)v) % 7);
                        in.checkpointing = (enum core_checkpointing)v;
                        in.zero_stage = (int)((a + b + (size_t)v) % 4);
                        in.attention_flops = (enum core_attention_flops)(v % 2);
                        in.count = (enum core_count)((c + (size_t)v) % 3);
                        in.flash_attention = ((a + e) % 2 == 0) ? CORE_FLAG_YES : CORE_FLAG_NO;
                        in.batch = v == 2 ? 64 : 1;
                        if (v == 1)
                            in.usd_per_gpu_hour = 2.5;
                        if (v == 2 && params[a] != 0 && params[a] < INT64_C(1000000000))
                            in.tokens_per_second = 1000.0;
                        memset(&probs, 0, sizeof probs);
                        enum core_status st = core_evaluate(&in, &r, &probs);
                        evaluated++;
                        if (st != CORE_OK) {
                            ck_assert_msg(st == CORE_ERANGE || st == CORE_EINVAL, "status %d",
                                          (int)st);
                            ck_assert_int_ge(probs.count, 1);
                            continue;
                        }
                        ok++;
                        const char *bad = first_nonfinite(&r);
                        ck_assert_msg(bad == NULL, "combination %d: %s not finite", evaluated,
                                      bad ? bad : "");
                        /* No identities between the ledger's fields here: total = state +
                         * activations and its kin are how core/memory.c and core/fit.c assign
                         * them, so asserting them could not fail. The hand-derived ledgers
                         * (test_core_lesson.c, test_core_ledger.c) pin those figures, and
                         * core_properties checks sharding against ZeRO's definition. */
                        const struct core_memory *m = &r.memory;
                        ck_assert(m->params >= 0 && m->grads >= 0 && m->optimizer >= 0 &&
                                  m->activation_layers >= 0 && m->activation_logits >= 0);
                        ck_assert(r.runtime.seconds > 0);
                        ck_assert(r.flops.hardware >= r.flops.model);
                    }
    /* Of the 6 * 4 * 3 * 3 * 3 = 648 combinations, most must evaluate, not all be rejected (the
     * loop's own count, `evaluated`, is not asserted: it could only equal its bounds). */
    ck_assert_int_ge(ok, 300);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Runtime arithmetic
 * ------------------------------------------------------------------------------------------- */

START_TEST(runtime_cost)
{
    /*
     * 7B, 8 H100, mfu 0.5: seconds = 5.88e22 / 3.9576e15 = 14,857,489.39;
     * gpu_hours = seconds / 3600 * 8 = 33,016.64; at $2.50/GPU-hour cost = 82,541.61.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 8;
    in.usd_per_gpu_hour = 2.5;
    EVAL_OK(in, r);
    const double seconds = 5.88e22 / (8.0 * 989.4e12 * 0.5);
    ASSERT_REL(r.runtime.gpu_hours, seconds / 3600.0 * 8.0, 1e-12);
    ASSERT_REL(r.runtime.cost_usd, seconds / 3600.0 * 8.0 * 2.5, 1e-12);
    ASSERT_REL(r.runtime.cost_usd, r.runtime.gpu_hours * 2.5, 1e-12);
    /* No price: cost_usd < 0 means "not given". */
    in.usd_per_gpu_hour = -1;
    EVAL_OK(in, r);
    ck_assert(r.runtime.cost_usd < 0);
}
END_TEST

START_TEST(runtime_measured_tokens_per_second)
{
    /*
     * 7B, 8 H100, measured 1e5 tok/s: seconds = D / tps = 1.4e12 / 1e5 = 1.4e7;
     * achieved mfu = tps * (F / D) / (G * peak) = 1e5 * 6 * 7e9 / (8 * 989.4e12)
     *   = 4.2e15 / 7.9152e15 = 0.530625 (above 0.35: no mfu_low).
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 8;
    in.tokens_per_second = 1e5;
    EVAL_OK(in, r);
    ck_assert(r.runtime.mfu_measured);
    ASSERT_REL(r.runtime.seconds, 1.4e7, 1e-12);
    ASSERT_REL(r.runtime.mfu, 4.2e15 / 7.9152e15, 1e-12);
    ASSERT_REL(r.runtime.tokens_per_second, 1e5, 1e-12);
    ASSERT_REL(r.runtime.tokens_per_second_per_gpu, 1e5 / 8.0, 1e-12);
    ck_assert_ptr_null(find_warning(&r, "mfu_low"));
    /* 5e4 tok/s -> 0.2653 < 0.35 -> mfu_low. */
    in.tokens_per_second = 5e4;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.mfu, 2.1e15 / 7.9152e15, 1e-12);
    ck_assert_ptr_nonnull(find_warning(&r, "mfu_low"));
}
END_TEST

START_TEST(runtime_steps)
{
    /*
     * Default global batch = b * T * dp = 1 * 512 * 8 = 4096 tokens;
     * steps = ceil(1.4e12 / 4096) = 341,796,875 exactly (1.4e12 = 7 * 5^11 * 2^12).
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 8;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.global_batch_tokens, 4096.0, 0);
    ASSERT_REL(r.runtime.steps, 341796875.0, 0);
    ASSERT_REL(r.runtime.step_seconds, r.runtime.seconds / 341796875.0, 1e-12);
    /* Given 3e6 tokens per step: 1.4e12 / 3e6 = 466,666.67 -> ceil 466,667. */
    in.global_batch_tokens = 3e6;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.steps, 466667.0, 0);
    ASSERT_REL(r.runtime.step_seconds, (5.88e22 / (8.0 * 989.4e12 * 0.5)) / 466667.0, 1e-12);
}
END_TEST

START_TEST(runtime_count_and_warnings)
{
    /* count model uses D (6N + att) = 1.4e12 * 42,805,306,368 for the default 7B shape. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 8;
    in.count = CORE_COUNT_MODEL;
    EVAL_OK(in, r);
    ASSERT_REL(r.runtime.flops, 1.4e12 * 42805306368.0, 1e-12);
    ASSERT_REL(r.runtime.seconds, 1.4e12 * 42805306368.0 / (8.0 * 989.4e12 * 0.5), 1e-12);
    /* mfu 0.7 > 0.6 -> mfu_optimistic. */
    in.count = CORE_COUNT_SIX_ND;
    in.mfu = 0.7;
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(find_warning(&r, "mfu_optimistic"));
    /* fp8: bf16 ledger (16 B/param), fp8 peak 1978.9e12, fp8_ledger warning. */
    in.mfu = 0.5;
    in.precision = CORE_PREC_FP8;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.memory.bytes_per_param.total, 16);
    ASSERT_REL(r.runtime.peak_flops_per_gpu, 1978.9e12, 1e-12);
    ck_assert_ptr_nonnull(find_warning(&r, "fp8_ledger"));
}
END_TEST

static Suite *edges_suite(void)
{
    Suite *s = suite_create("core_edges");
    TCase *tc = tcase_create("validation");
    tcase_add_test(tc, gpus_not_multiple_of_tp_pp);
    tcase_add_test(tc, precision_the_gpu_lacks);
    tcase_add_test(tc, kv_heads_must_divide_heads);
    tcase_add_test(tc, other_invalid_combinations);
    suite_add_tcase(s, tc);

    tc = tcase_create("monotone");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, zero0_never_gains_from_gpus);
    tcase_add_test(tc, more_gpus_never_raise_state);
    tcase_add_test(tc, checkpointing_never_raises_activations);
    tcase_add_test(tc, max_batch_by_hand);
    tcase_add_test(tc, max_batch_is_the_edge);
    suite_add_tcase(s, tc);

    tc = tcase_create("extremes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, huge_inputs);
    tcase_add_test(tc, sweep_finite_and_consistent);
    suite_add_tcase(s, tc);

    tc = tcase_create("runtime");
    tcase_add_test(tc, runtime_cost);
    tcase_add_test(tc, runtime_measured_tokens_per_second);
    tcase_add_test(tc, runtime_steps);
    tcase_add_test(tc, runtime_count_and_warnings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(edges_suite());
}
