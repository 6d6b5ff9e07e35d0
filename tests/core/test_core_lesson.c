/*
 * test_core_lesson.c - the lesson's worked numbers (docs/lesson.md) out of core_evaluate().
 *
 * Every expected value below is derived by hand from docs/model.md and docs/lesson.md, with the
 * arithmetic in a comment; none is copied from the program's output. The lesson's defaults are
 * 7B params, one 80 GB H100, bf16 mixed precision, AdamW, T 512, B 1, no checkpointing, ZeRO 3.
 */
#include "core_test_util.h"
#include "check_main.h"

/* ---------------------------------------------------------------------------------------------
 * FLOPs: the budget identity C = 6 N D
 * ------------------------------------------------------------------------------------------- */

START_TEST(gpt3_six_nd)
{
    /* Lesson §1: GPT-3, N 175e9, D 300e9 -> 6 * 175e9 * 300e9 = 6 * 5.25e22 = 3.15e23. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(175000000000);
    in.tokens = 300e9;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.params, INT64_C(175000000000));
    ASSERT_REL(r.flops.six_nd, 3.15e23, 1e-12);
}
END_TEST

START_TEST(seven_b_six_nd)
{
    /* Default D = 1.4e12, N = 7e9: 6 * 7e9 * 1.4e12 = 42e9 * 1.4e12 = 5.88e22. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.params, INT64_C(7000000000));
    ASSERT_I64(r.resolved.active_params, INT64_C(7000000000));
    ASSERT_REL(r.resolved.tokens, 1.4e12, 0);
    ASSERT_REL(r.flops.six_nd, 5.88e22, 1e-12);
    /* count defaults to six_nd, so the runtime numerator is the same figure. */
    ASSERT_REL(r.runtime.flops, 5.88e22, 1e-12);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * The default input, end to end
 * ------------------------------------------------------------------------------------------- */

START_TEST(default_input_ledger_and_fit)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    EVAL_OK(in, r);

    /*
     * Shape: only N (7e9) is known, so the nearest preset by |ln(N/derived)| is used. Derived
     * counts (docs/model.md, "Presets"): mistral-7b 7,241,732,096 -> |ln(7/7.2417)| = 0.034;
     * llama2-7b 6,738,415,616 -> 0.038; gpt3-6.7b 6,656,958,464 -> 0.050; mpt-7b 6,649,286,656 ->
     * 0.051. Nearest: mistral-7b, L 32, d 4096, a 32, V 32000.
     */
    ck_assert_int_eq(r.resolved.shape.source, CORE_SHAPE_NEAREST);
    ck_assert_int_eq(r.resolved.shape.preset, preset_index("mistral-7b"));
    ASSERT_I64(r.resolved.shape.arch.layers, 32);
    ASSERT_I64(r.resolved.shape.arch.hidden, 4096);
    ASSERT_I64(r.resolved.shape.arch.heads, 32);
    ASSERT_I64(r.resolved.shape.arch.vocab, 32000);

    /* Defaults echoed. */
    ASSERT_I64(r.resolved.batch, 1);
    ASSERT_I64(r.resolved.seq_len, 512);
    ASSERT_I64(r.resolved.gpus, 1);
    ASSERT_I64(r.resolved.dp, 1);
    ck_assert_int_eq(r.resolved.zero_stage, 3);
    ck_assert_int_eq(r.resolved.gpu, CORE_GPU_DEFAULT);
    ck_assert_int_eq(r.resolved.precision, CORE_PREC_BF16);
    ck_assert(r.resolved.master_weights);

    /* Bytes per param (lesson §3): weights 2 + master 4 + moments 8 + grads 2 = 16. */
    ck_assert_int_eq(r.memory.bytes_per_param.weights, 2);
    ck_assert_int_eq(r.memory.bytes_per_param.master, 4);
    ck_assert_int_eq(r.memory.bytes_per_param.moments, 8);
    ck_assert_int_eq(r.memory.bytes_per_param.grads, 2);
    ck_assert_int_eq(r.memory.bytes_per_param.total, 16);

    /* Ledger at G 1 (ZeRO 3 over dp 1 divides by 1): params 2*7e9 = 14e9, grads 2*7e9 = 14e9,
     * optimizer (4 + 8)*7e9 = 84e9; state 14e9 + 14e9 + 84e9 = 112e9. */
    ASSERT_I64(r.memory.params, INT64_C(14000000000));
    ASSERT_I64(r.memory.grads, INT64_C(14000000000));
    ASSERT_I64(r.memory.optimizer, INT64_C(84000000000));
    ASSERT_I64(r.memory.state, INT64_C(112000000000));
    /* The lesson's "core 14 bytes": weights + master + moments = (2 + 4 + 8) * 7e9 = 98e9. */
    ASSERT_I64(r.memory.params + r.memory.optimizer, INT64_C(98000000000));

    /*
     * Activations, Korthikanti Table 2, t = 1, no checkpointing, s 512, b 1, d 4096, a 32:
     *   34 s b d      = 34 * 512 * 4096        =    71,303,168
     *   5 a s^2 b     = 5 * 32 * 512^2 = 160 * 262,144 = 41,943,040
     *   per layer     = 113,246,208  (= s b d * 54, since 5 a s / d = 5*32*512/4096 = 20)
     *   x L 32        = 3,623,878,656
     * Logits (pp 1): 4 s b V = 4 * 512 * 32000 = 65,536,000.
     * activations = 3,623,878,656 + 65,536,000 = 3,689,414,656.
     */
    ASSERT_I64(r.memory.activation_layers, INT64_C(3623878656));
    ASSERT_I64(r.memory.activation_logits, INT64_C(65536000));
    ASSERT_I64(r.memory.activations, INT64_C(3689414656));
    ASSERT_I64(r.memory.reserve, 0);
    /* total = 112e9 + 3,689,414,656 = 115,689,414,656. */
    ASSERT_I64(r.memory.total, INT64_C(115689414656));

    /* Fit: capacity = 80 GB = 80e9 bytes; headroom = 80e9 - 115,689,414,656 = -35,689,414,656;
     * utilization = 115,689,414,656 / 80e9 = 1.4461176832. */
    ASSERT_I64(r.fit.capacity, INT64_C(80000000000));
    ck_assert(!r.fit.fits);
    ASSERT_I64(r.fit.headroom, INT64_C(-35689414656));
    ASSERT_REL(r.fit.utilization, 1.4461176832, 1e-12);
    /* State alone (112e9) > 80e9 -> the bottleneck is state. */
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_STATE);
    /* G 2 (dp 2): state 112e9 / 2 = 56e9, + 3,689,414,656 = 59,689,414,656 <= 80e9 -> 2. */
    ASSERT_I64(r.fit.min_gpus, 2);
    /* State only: 56e9 <= 80e9 at G 2, 112e9 > 80e9 at G 1 -> 2. */
    ASSERT_I64(r.fit.min_gpus_state_only, 2);
    /* At G 1 even b = 1 overflows (state alone does), so no micro-batch fits. */
    ASSERT_I64(r.fit.max_batch, 0);

    /* Advice: shard the state across >= 2 GPUs. */
    const struct core_note *shard = find_advice(&r, "shard_state");
    ck_assert_msg(shard != NULL, "no shard_state advice");
    const struct core_change *ch = find_change(shard, "gpus");
    ck_assert_msg(ch != NULL, "shard_state advice does not change gpus");
    ck_assert_int_eq(ch->kind, CORE_VALUE_INT);
    ASSERT_I64(ch->int_value, 2);
    /* Checkpointing cannot help when state overflows: it must not be advised. */
    ck_assert_ptr_null(find_advice(&r, "enable_checkpointing"));
}
END_TEST

START_TEST(fp32_grads_eighteen_bytes)
{
    /* grad_precision fp32: grads 4 B/param -> 2 + 4 + 8 + 4 = 18; 18 * 7e9 = 126e9 bytes. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.grad_precision = CORE_PREC_FP32;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.memory.bytes_per_param.grads, 4);
    ck_assert_int_eq(r.memory.bytes_per_param.total, 18);
    ASSERT_I64(r.memory.grads, INT64_C(28000000000)); /* 4 * 7e9 */
    ASSERT_I64(r.memory.state, INT64_C(126000000000));
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Checkpointing: shrinks only activations, costs recompute
 * ------------------------------------------------------------------------------------------- */

START_TEST(full_checkpointing)
{
    struct core_input in;
    struct core_result none, full;
    core_input_init(&in);
    EVAL_OK(in, none);
    in.checkpointing = CORE_CKPT_FULL;
    EVAL_OK(in, full);

    /*
     * Full: (L - 1) * 2 s b d kept (the layer being rebuilt holds its own input) + ONE layer's
     * working set (the no-checkpointing row) + logits:
     *   2 * 512 * 4096 * 31 = 130,023,424
     *   one layer  512 * 4096 * 54 = 113,246,208
     *   layers = 243,269,632; + logits 65,536,000 = 308,805,632 (the lesson's ~0.31 GB).
     */
    ASSERT_I64(full.memory.activation_layers, INT64_C(243269632));
    ASSERT_I64(full.memory.activation_logits, INT64_C(65536000));
    ASSERT_I64(full.memory.activations, INT64_C(308805632));

    /* It shrinks ONLY activations: params, grads and optimizer are unchanged. */
    ASSERT_I64(full.memory.params, none.memory.params);
    ASSERT_I64(full.memory.grads, none.memory.grads);
    ASSERT_I64(full.memory.optimizer, none.memory.optimizer);
    ASSERT_I64(full.memory.state, INT64_C(112000000000));
    /* ...so 7B still does not fit on one GPU, and state is still the bottleneck. */
    ck_assert(!full.fit.fits);
    ck_assert_int_eq(full.fit.bottleneck, CORE_BOTTLENECK_STATE);

    /*
     * FLOPs. att = 12 L T A = 12 * 32 * 512 * 4096 = 805,306,368 per token; att/3 = 268,435,456.
     * forward  = 2N + att/3   = 14e9 + 268,435,456 = 14,268,435,456
     * backward = 4N + 2att/3  = 28e9 + 536,870,912 = 28,536,870,912
     * recompute (full) = 2N + att/3 = 14,268,435,456; none: 0.
     * model per token = 6N + att = 42,805,306,368; hardware = model + recompute
     *   = 8N + 4att/3 = (4/3)(6N + att) -> exactly +33.3 %, whatever N and att are.
     */
    ASSERT_REL(none.flops.per_token.attention, 805306368.0, 1e-12);
    ASSERT_REL(none.flops.per_token.forward, 14268435456.0, 1e-12);
    ASSERT_REL(none.flops.per_token.backward, 28536870912.0, 1e-12);
    ASSERT_REL(none.flops.per_token.recompute, 0.0, 0);
    ASSERT_REL(full.flops.per_token.recompute, 14268435456.0, 1e-12);
    ASSERT_REL(none.flops.model, 1.4e12 * 42805306368.0, 1e-12);
    ASSERT_REL(none.flops.hardware, none.flops.model, 1e-12);
    ASSERT_REL(full.flops.model, none.flops.model, 1e-12);
    ASSERT_REL(full.flops.hardware, 1.4e12 * (42805306368.0 + 14268435456.0), 1e-12);
    ASSERT_REL(full.flops.hardware, none.flops.model * 4.0 / 3.0, 1e-12);
    /* six_nd does not see checkpointing. */
    ASSERT_REL(full.flops.six_nd, 5.88e22, 1e-12);
    /* attention_fraction = 805,306,368 / 42,805,306,368 = 0.018813... (below 10 %: no warning) */
    ASSERT_REL(none.flops.attention_fraction, 805306368.0 / 42805306368.0, 1e-12);
    ck_assert_ptr_null(find_warning(&none, "attention_term_material"));
}
END_TEST

START_TEST(selective_checkpointing)
{
    /*
     * Selective drops the 5 a s^2 b term: per layer 34 * 512 * 4096 = 71,303,168, x 32 =
     * 2,281,701,376; + logits 65,536,000 = 2,347,237,376. Recompute = att/3 = 268,435,456/token.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.checkpointing = CORE_CKPT_SELECTIVE;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.activation_layers, INT64_C(2281701376));
    ASSERT_I64(r.memory.activations, INT64_C(2347237376));
    ASSERT_REL(r.flops.per_token.recompute, 268435456.0, 1e-12);
    ASSERT_REL(r.flops.hardware, 1.4e12 * (42805306368.0 + 268435456.0), 1e-12);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Attention term
 * ------------------------------------------------------------------------------------------- */

START_TEST(attention_term_per_token)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.preset = preset_index("llama2-7b");
    in.seq_len = 2048;
    EVAL_OK(in, r);
    /* 12 L T d = 12 * 32 * 2048 * 4096 = 3,221,225,472 (a h_d = 32 * 128 = d). */
    ASSERT_REL(r.flops.per_token.attention, 3221225472.0, 1e-12);
    /* No params given: N is the preset's derived count 6,738,415,616 (see test_core_papers). */
    ASSERT_I64(r.resolved.params, INT64_C(6738415616));
    /* model = D (6N + att) = 1.4e12 * (40,430,493,696 + 3,221,225,472) = 1.4e12 * 43,651,719,168 */
    ASSERT_REL(r.flops.model, 1.4e12 * 43651719168.0, 1e-12);

    in.attention_flops = CORE_ATTN_CAUSAL;
    EVAL_OK(in, r);
    /* causal halves it: 3,221,225,472 / 2 = 1,610,612,736. */
    ASSERT_REL(r.flops.per_token.attention, 1610612736.0, 1e-12);

    /*
     * gpt3-13b has d 5140 but a h_d = 40 * 128 = 5120: the term uses A, not d.
     * 12 * 40 * 2048 * 5120 = 5,033,164,800.
     */
    core_input_init(&in);
    in.preset = preset_index("gpt3-13b");
    in.seq_len = 2048;
    EVAL_OK(in, r);
    ASSERT_REL(r.flops.per_token.attention, 5033164800.0, 1e-12);
}
END_TEST

START_TEST(attention_term_material_warning)
{
    /*
     * 7B (nearest mistral-7b, 32 x 4096), T 8192: att = 12 * 32 * 8192 * 4096 = 12,884,901,888;
     * fraction = 12,884,901,888 / (42e9 + 12,884,901,888) = 0.23476 > 0.10 -> warning.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.seq_len = 8192;
    EVAL_OK(in, r);
    ASSERT_REL(r.flops.attention_fraction, 12884901888.0 / 54884901888.0, 1e-12);
    ck_assert_ptr_nonnull(find_warning(&r, "attention_term_material"));
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Fit table (lesson §5) and the 13B exercise
 * ------------------------------------------------------------------------------------------- */

static void fit_row(int64_t params, int64_t state, int64_t min_gpus_state_only)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = params;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.state, state);
    ASSERT_I64(r.fit.min_gpus_state_only, min_gpus_state_only);
}

START_TEST(fit_table)
{
    /* state = 16 N at G 1; min G with ceil-sharded 16 N / G <= 80e9. */
    /* 1.3e9: 16 * 1.3e9 = 20.8e9 <= 80e9 -> 1. */
    fit_row(INT64_C(1300000000), INT64_C(20800000000), 1);
    /* 7e9: 112e9 -> 112/80 = 1.4 -> 2. */
    fit_row(INT64_C(7000000000), INT64_C(112000000000), 2);
    /* 13e9: 208e9 -> 208/80 = 2.6 -> 3. */
    fit_row(INT64_C(13000000000), INT64_C(208000000000), 3);
    /* 70e9: 1120e9 -> 1120/80 = 14 exactly (each piece divides by 14 exactly: 140e9/14 = 10e9,
     * 140e9/14 = 10e9, 840e9/14 = 60e9, sum 80e9 <= 80e9) -> 14; at 13 it is 86.15e9. */
    fit_row(INT64_C(70000000000), INT64_C(1120000000000), 14);
}
END_TEST

START_TEST(fit_table_small_model_fits)
{
    /*
     * 1.3e9 alone: nearest preset gpt3-1.3b (derived 1,315,180,544), L 24, d 2048, a 16,
     * V 50257. Activations: 34*512*2048 = 35,651,584 + 5*16*512^2 = 20,971,520 -> 56,623,104
     * per layer, x 24 = 1,358,954,496; logits 4*512*50257 = 102,926,336.
     * total = 20.8e9 + 1,358,954,496 + 102,926,336 = 22,261,880,832 <= 80e9 -> fits.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(1300000000);
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.shape.preset, preset_index("gpt3-1.3b"));
    ASSERT_I64(r.memory.activation_layers, INT64_C(1358954496));
    ASSERT_I64(r.memory.activation_logits, INT64_C(102926336));
    ASSERT_I64(r.memory.total, INT64_C(22261880832));
    ck_assert(r.fit.fits);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_NONE);
    ASSERT_I64(r.fit.min_gpus, 1);
    ASSERT_I64(r.fit.headroom, INT64_C(80000000000) - INT64_C(22261880832));
}
END_TEST

START_TEST(thirteen_b_exercise)
{
    /*
     * By hand: 13e9 * 16 = 208e9 bytes of state; 208e9 / 80e9 = 2.6 -> 3 GPUs.
     * At G 3 each piece is a ceil division: params 26e9/3 -> 8,666,666,667; grads the same;
     * optimizer 156e9/3 = 52e9 exactly; state = 69,333,333,334.
     * Nearest preset for 13e9: llama2-13b (13,015,864,320, |ln| 0.0012) over gpt3-13b
     * (12,934,224,040, 0.0051): L 40, d 5120, a 40, V 32000. Activations at T 512, b 1:
     * 34*512*5120 = 89,128,960 + 5*40*512^2 = 52,428,800 -> 141,557,760 x 40 = 5,662,310,400,
     * + logits 65,536,000 = 5,727,846,400. 69,333,333,334 + 5,727,846,400 = 75,061,179,734
     * <= 80e9, so min_gpus is also 3; at G 2 the state alone is 104e9 > 80e9.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(13000000000);
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.state, INT64_C(208000000000));
    ASSERT_I64(r.fit.min_gpus_state_only, 3);
    ASSERT_I64(r.fit.min_gpus, 3);
    ck_assert_int_eq(r.resolved.shape.preset, preset_index("llama2-13b"));

    in.gpus = 3;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.params, INT64_C(8666666667));
    ASSERT_I64(r.memory.grads, INT64_C(8666666667));
    ASSERT_I64(r.memory.optimizer, INT64_C(52000000000));
    ASSERT_I64(r.memory.state, INT64_C(69333333334));
    ASSERT_I64(r.memory.activations, INT64_C(5727846400));
    ASSERT_I64(r.memory.total, INT64_C(75061179734));
    ck_assert(r.fit.fits);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Runtime (lesson §5)
 * ------------------------------------------------------------------------------------------- */

START_TEST(seven_b_eight_h100_days)
{
    /*
     * 7B, D 1.4e12 -> F = 5.88e22; 8 x H100 SXM bf16 989.4e12 FLOP/s, mfu 0.5:
     * denominator 8 * 989.4e12 * 0.5 = 3.9576e15 FLOP/s;
     * seconds = 5.88e22 / 3.9576e15 = 1.48575e7 (14,857,489.39); days = / 86400 = 171.96.
     */
    struct core_input in;
    struct core_result r, half;
    core_input_init(&in);
    in.gpus = 8;
    EVAL_OK(in, r);
    const double seconds = 5.88e22 / (8.0 * 989.4e12 * 0.5);
    ASSERT_REL(r.runtime.peak_flops_per_gpu, 989.4e12, 1e-12);
    ASSERT_REL(r.runtime.seconds, seconds, 1e-12);
    ASSERT_REL(r.runtime.seconds, 1.4857e7, 1e-4);
    ck_assert_double_eq_tol(r.runtime.days, 171.96, 0.1);
    ASSERT_REL(r.runtime.days, seconds / 86400.0, 1e-12);
    ASSERT_REL(r.runtime.hours, seconds / 3600.0, 1e-12);
    ASSERT_REL(r.runtime.gpu_hours, seconds / 3600.0 * 8.0, 1e-12);
    ASSERT_REL(r.runtime.mfu, 0.5, 0);
    ck_assert(!r.runtime.mfu_measured);
    /* tokens/s = D / seconds = 1.4e12 / 14,857,489.39 = 94,228.9; per GPU / 8. */
    ASSERT_REL(r.runtime.tokens_per_second, 1.4e12 / seconds, 1e-12);
    ASSERT_REL(r.runtime.tokens_per_second_per_gpu, 1.4e12 / seconds / 8.0, 1e-12);

    /* Halving MFU doubles the calendar, exactly. */
    in.mfu = 0.25;
    EVAL_OK(in, half);
    ASSERT_REL(half.runtime.seconds, 2.0 * r.runtime.seconds, 1e-12);
    ASSERT_REL(half.runtime.days, 2.0 * r.runtime.days, 1e-12);

    /* Doubling the GPUs halves it. */
    in.mfu = 0.5;
    in.gpus = 16;
    EVAL_OK(in, half);
    ASSERT_REL(half.runtime.seconds, 0.5 * r.runtime.seconds, 1e-12);
}
END_TEST

static Suite *lesson_suite(void)
{
    Suite *s = suite_create("core_lesson");
    TCase *tc = tcase_create("lesson");
    tcase_add_test(tc, gpt3_six_nd);
    tcase_add_test(tc, seven_b_six_nd);
    tcase_add_test(tc, default_input_ledger_and_fit);
    tcase_add_test(tc, fp32_grads_eighteen_bytes);
    tcase_add_test(tc, full_checkpointing);
    tcase_add_test(tc, selective_checkpointing);
    tcase_add_test(tc, attention_term_per_token);
    tcase_add_test(tc, attention_term_material_warning);
    tcase_add_test(tc, fit_table);
    tcase_add_test(tc, fit_table_small_model_fits);
    tcase_add_test(tc, thirteen_b_exercise);
    tcase_add_test(tc, seven_b_eight_h100_days);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(lesson_suite());
}
