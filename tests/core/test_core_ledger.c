/*
 * test_core_ledger.c - the byte ledger's knobs, shape resolution, capacity and advice.
 *
 * The lesson suite pins the default AdamW row; this one walks the other rows of the bytes-per-
 * param table, model-parallel and ZeRO sharding with ceil divisions, the explicit-architecture
 * and aspect-ratio shape rules, reserve/capacity, and the advice drawn from the bottleneck.
 * Expected values are worked by hand in the comments from docs/model.md, never copied from output.
 */
#include "core_test_util.h"
#include "check_main.h"

/* ---------------------------------------------------------------------------------------------
 * Bytes per parameter
 * ------------------------------------------------------------------------------------------- */

static void bpp_row(enum core_optimizer opt, enum core_flag master, int weights, int master_b,
                    int moments, int grads, int total)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.optimizer = opt;
    in.master_weights = master;
    EVAL_OK(in, r);
    const struct core_bytes_per_param *b = &r.memory.bytes_per_param;
    ck_assert_int_eq(b->weights, weights);
    ck_assert_int_eq(b->master, master_b);
    ck_assert_int_eq(b->moments, moments);
    ck_assert_int_eq(b->grads, grads);
    ck_assert_int_eq(b->total, total);
    /* N 7e9 at G 1: params 2N, grads 2N, optimizer (master + moments) N. */
    ASSERT_I64(r.memory.params, INT64_C(7000000000) * weights);
    ASSERT_I64(r.memory.grads, INT64_C(7000000000) * grads);
    ASSERT_I64(r.memory.optimizer, INT64_C(7000000000) * (master_b + moments));
}

START_TEST(optimizer_rows)
{
    /* bf16 mixed: weights 2, master 4, grads 2; moments per optimizer. */
    bpp_row(CORE_OPT_ADAMW, CORE_FLAG_AUTO, 2, 4, 8, 2, 16);
    bpp_row(CORE_OPT_ADAM, CORE_FLAG_AUTO, 2, 4, 8, 2, 16);
    bpp_row(CORE_OPT_ADAMW_8BIT, CORE_FLAG_AUTO, 2, 4, 2, 2, 10); /* 2+4+2+2 */
    bpp_row(CORE_OPT_SGD_MOMENTUM, CORE_FLAG_AUTO, 2, 4, 4, 2, 12);
    bpp_row(CORE_OPT_LION, CORE_FLAG_AUTO, 2, 4, 4, 2, 12);
    bpp_row(CORE_OPT_ADAFACTOR, CORE_FLAG_AUTO, 2, 4, 0, 2, 8);
    bpp_row(CORE_OPT_SGD, CORE_FLAG_AUTO, 2, 4, 0, 2, 8);
    /* No master copy: 2 + 0 + 8 + 2 = 12 -> optimizer 8 * 7e9 = 56e9. */
    bpp_row(CORE_OPT_ADAMW, CORE_FLAG_NO, 2, 0, 8, 2, 12);
}
END_TEST

START_TEST(optimizer_warnings)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.optimizer = CORE_OPT_ADAFACTOR;
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(find_warning(&r, "adafactor_factored"));
    in.optimizer = CORE_OPT_ADAMW;
    EVAL_OK(in, r);
    ck_assert_ptr_null(find_warning(&r, "adafactor_factored"));
    ck_assert_ptr_null(find_warning(&r, "fp8_ledger"));
}
END_TEST

START_TEST(fp32_with_bf16_grads)
{
    /* fp32 weights 4, master 0, moments 8, grad_precision bf16 -> 2: total 14. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.precision = CORE_PREC_FP32;
    in.grad_precision = CORE_PREC_BF16;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.memory.bytes_per_param.grads, 2);
    ck_assert_int_eq(r.memory.bytes_per_param.total, 14);
    ck_assert(!r.resolved.master_weights);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Sharding: model parallel first (ceil), then ZeRO over dp (ceil)
 * ------------------------------------------------------------------------------------------- */

START_TEST(tensor_parallel_and_zero)
{
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(70000000000);
    in.tp = 8;
    in.gpus = 64; /* dp 8 */
    in.zero_stage = 1;
    EVAL_OK(in, r);
    /*
     * Totals 140e9 / 140e9 / 840e9. /tp 8: 17.5e9 / 17.5e9 / 105e9. ZeRO 1 shards only the
     * optimizer over dp 8: 105e9 / 8 = 13.125e9. state = 17.5e9 + 17.5e9 + 13.125e9 = 48.125e9.
     */
    ASSERT_I64(r.resolved.dp, 8);
    ASSERT_I64(r.memory.params, INT64_C(17500000000));
    ASSERT_I64(r.memory.grads, INT64_C(17500000000));
    ASSERT_I64(r.memory.optimizer, INT64_C(13125000000));
    ASSERT_I64(r.memory.state, INT64_C(48125000000));
    /* ZeRO 3: everything / 64: 2,187,500,000 + 2,187,500,000 + 13,125,000,000 = 17.5e9. */
    in.zero_stage = 3;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.params, INT64_C(2187500000));
    ASSERT_I64(r.memory.grads, INT64_C(2187500000));
    ASSERT_I64(r.memory.optimizer, INT64_C(13125000000));
    ASSERT_I64(r.memory.state, INT64_C(17500000000));
}
END_TEST

START_TEST(ceil_division)
{
    /* N = 7e9 + 1, tp 8, G 8 (dp 1; tp 8 divides the 32 heads and 8 key/value heads, as
     * Megatron-LM requires): params 2N / 8 = 14,000,000,002 / 8 = 1,750,000,000.25 ->
     * 1,750,000,001; grads the same; optimizer 12N / 8 = 84,000,000,012 / 8 = 10,500,000,001.5 ->
     * 10,500,000,002 (the 4N master and 8N moments rounded up apart give the same:
     * 3,500,000,001 + 7,000,000,001); state 14,000,000,004. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(7000000001);
    in.tp = 8;
    in.gpus = 8;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.params, INT64_C(1750000001));
    ASSERT_I64(r.memory.grads, INT64_C(1750000001));
    ASSERT_I64(r.memory.optimizer, INT64_C(10500000002));
    ASSERT_I64(r.memory.state, INT64_C(14000000004));
}
END_TEST

START_TEST(activations_not_divided_by_dp)
{
    /* Default 7B shape: 3,689,414,656 bytes of activations at G 1 and at G 8 (dp 8). */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 8;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.activations, INT64_C(3689414656));
    /* state 112e9 / 8 = 14e9. */
    ASSERT_I64(r.memory.state, INT64_C(14000000000));
}
END_TEST

START_TEST(min_gpus_multiple_of_tp)
{
    /*
     * 70e9, tp 2 (SP by default), ZeRO 3. Shape: nearest preset chinchilla-70b (derived
     * 70,318,825,472: |ln(70/70.319)| = 0.0045 beats llama2-70b 0.0147 and llama3-70b 0.0079):
     * L 80, d 8192, a 64, V 32000. Activations per GPU (t 2, SP):
     *   s b d = 512 * 8192 = 4,194,304; 34 sbd = 142,606,336; 5 a s^2 b = 5*64*262,144 = 83,886,080
     *   per layer (142,606,336 + 83,886,080) / 2 = 113,246,208; x 80 = 9,059,696,640
     *   logits 4 * 512 * 32000 / 2 = 32,768,000; activations 9,092,464,640.
     * State at G: 1120e9 / G. Need 1120e9 / G + 9,092,464,640 <= 80e9 -> G >= 15.8 -> G 16
     * (dp 8): 70e9 / 8 = 8.75e9 twice + 420e9 / 8 = 52.5e9 -> 70e9 + 9,092,464,640 fits.
     * State only: 1120e9 / G <= 80e9 -> G 14 (a multiple of 2).
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(70000000000);
    in.tp = 2;
    in.gpus = 2;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.shape.preset, preset_index("chinchilla-70b"));
    ck_assert(r.resolved.sequence_parallel);
    ASSERT_I64(r.memory.activation_layers, INT64_C(9059696640));
    ASSERT_I64(r.memory.activation_logits, INT64_C(32768000));
    ASSERT_I64(r.fit.min_gpus, 16);
    ASSERT_I64(r.fit.min_gpus_state_only, 14);
    in.gpus = 16;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.total, INT64_C(79092464640));
    ck_assert(r.fit.fits);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Shape resolution
 * ------------------------------------------------------------------------------------------- */

START_TEST(aspect_ratio_shape)
{
    /*
     * 1e12 is 2.46x the largest preset (llama3.1-405b, 405,853,388,800) -> aspect rule:
     * L = round((1e12 / (12 * 128^2))^(1/3)) = round(5,086,263^(1/3)) = round(171.98) = 172
     * (171^3 = 5,000,211; 172^3 = 5,088,448); d = 128 * 172 = 22,016; a = k = 172; f = 88,064.
     * arch count: per layer 12 d^2 + 2d = 5,816,451,072 + 44,032 = 5,816,495,104; x 172 =
     *   1,000,437,157,888; + d 22,016 + 2 V d (1,409,024,000) = 1,001,846,203,904.
     * Activations, T 512, b 1: s b d = 11,272,192; 34 sbd = 383,254,528;
     *   5 a s^2 = 5 * 172 * 262,144 = 225,443,840; per layer 608,698,368; x 172 =
     *   104,696,119,296.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = INT64_C(1000000000000);
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.shape.source, CORE_SHAPE_ASPECT);
    ck_assert_int_eq(r.resolved.shape.preset, -1);
    ASSERT_I64(r.resolved.params, INT64_C(1000000000000));
    ASSERT_I64(r.resolved.shape.arch.layers, 172);
    ASSERT_I64(r.resolved.shape.arch.hidden, 22016);
    ASSERT_I64(r.resolved.shape.arch.heads, 172);
    ASSERT_I64(r.resolved.shape.arch.kv_heads, 172);
    ASSERT_I64(r.resolved.shape.arch.head_dim, 128);
    ASSERT_I64(r.resolved.shape.arch.ffn_hidden, 88064);
    ASSERT_I64(r.resolved.shape.arch.vocab, 32000);
    ASSERT_I64(r.resolved.shape.arch_params, INT64_C(1001846203904));
    ASSERT_I64(r.memory.activation_layers, INT64_C(104696119296));
}
END_TEST

START_TEST(explicit_architecture)
{
    /*
     * layers 24, hidden 1000: 1000/128 and 1000/64 are not integers -> heads 1, head_dim 1000,
     * kv 1, f 4000, V 32000, ungated, untied. Count: per layer 4 * 1e6 + 2 * 1000 * 4000 + 2000
     * = 12,002,000; x 24 = 288,048,000; + 1,000 + 2 * 32000 * 1000 = 352,049,000.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.layers = 24;
    in.hidden = 1000;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.shape.source, CORE_SHAPE_ARCHITECTURE);
    ASSERT_I64(r.resolved.shape.arch.heads, 1);
    ASSERT_I64(r.resolved.shape.arch.head_dim, 1000);
    ASSERT_I64(r.resolved.shape.arch.ffn_hidden, 4000);
    ASSERT_I64(r.resolved.params, INT64_C(352049000));

    /* hidden 768 -> heads 768/128 = 6, head_dim 128. */
    core_input_init(&in);
    in.layers = 2;
    in.hidden = 768;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.shape.arch.heads, 6);
    ASSERT_I64(r.resolved.shape.arch.head_dim, 128);

    /*
     * Gated 32 x 4096 is Llama 2 7B: heads 32, f = 256 * ceil((8 * 4096 / 3) / 256)
     * = 256 * ceil(42.67) = 11,008; count 6,738,415,616 (see test_core_papers).
     */
    core_input_init(&in);
    in.layers = 32;
    in.hidden = 4096;
    in.gated_mlp = CORE_FLAG_YES;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.shape.arch.ffn_hidden, 11008);
    ASSERT_I64(r.resolved.params, INT64_C(6738415616));

    /* heads 3 does not divide 1000 and no head_dim is given -> "heads". */
    core_input_init(&in);
    in.layers = 2;
    in.hidden = 1000;
    in.heads = 3;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "heads"));
}
END_TEST

START_TEST(context_warning)
{
    /* gpt3-175b was trained at 2048 tokens (and has 2048 learned positions): T 4096 warns. */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.preset = preset_index("gpt3-175b");
    in.seq_len = 4096;
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(find_warning(&r, "seq_len_exceeds_context"));
    in.seq_len = 2048;
    EVAL_OK(in, r);
    ck_assert_ptr_null(find_warning(&r, "seq_len_exceeds_context"));
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Capacity and advice
 * ------------------------------------------------------------------------------------------- */

START_TEST(reserve_and_memory_override)
{
    /*
     * 7B on 2 GPUs, reserve 5.5 GB: capacity 80e9 - 5.5e9 = 74.5e9; state 56e9; room 18.5e9;
     * 18.5e9 / 3,689,414,656 = 5.01 -> max_batch 5 (5 * 3,689,414,656 = 18,447,073,280).
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 2;
    in.reserve_gb = 5.5;
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.capacity, INT64_C(74500000000));
    ASSERT_I64(r.memory.reserve, INT64_C(5500000000));
    /* reserve is held out of capacity, not added to total: 56e9 + 3,689,414,656. */
    ASSERT_I64(r.memory.total, INT64_C(59689414656));
    ASSERT_I64(r.fit.max_batch, 5);
    /* memory_gb overrides the catalog: 141 GB -> 141e9 bytes (minus nothing). */
    core_input_init(&in);
    in.memory_gb = 141;
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.capacity, INT64_C(141000000000));
    /* 112e9 + 3,689,414,656 <= 141e9: the 7B fits one 141 GB GPU. */
    ck_assert(r.fit.fits);
    /* The catalog's h200-sxm gives the same 141 GB. */
    core_input_init(&in);
    in.gpu = core_gpu_find("h200-sxm");
    ck_assert_int_ge(in.gpu, 0);
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.capacity, INT64_C(141000000000));
}
END_TEST

START_TEST(advice_when_activations_overflow)
{
    /*
     * 7B, 2 GPUs (state 56e9), capacity 80e9.
     * b 7: none 7 * 3,689,414,656 = 25,825,902,592 -> 81.8e9 > 80e9; selective per b
     *   2,281,701,376 + 65,536,000 = 2,347,237,376, x 7 = 16,430,661,632 -> 72.4e9 fits:
     *   the lightest checkpointing that fits is "selective"; max_batch 6 -> reduce_batch 6.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.gpus = 2;
    in.batch = 7;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_ACTIVATIONS);
    const struct core_note *ck = find_advice(&r, "enable_checkpointing");
    ck_assert_ptr_nonnull(ck);
    const struct core_change *ch = find_change(ck, "checkpointing");
    ck_assert_ptr_nonnull(ch);
    ck_assert_int_eq(ch->kind, CORE_VALUE_STRING);
    ck_assert_str_eq(ch->string_value, "selective");
    const struct core_note *rb = find_advice(&r, "reduce_batch");
    ck_assert_ptr_nonnull(rb);
    ch = find_change(rb, "batch");
    ck_assert_ptr_nonnull(ch);
    ASSERT_I64(ch->int_value, 6);

    /*
     * b 12: none 44,272,975,872 and selective 28,166,848,512 both overflow (56e9 + ... > 80e9);
     * full per b 308,805,632, x 12 = 3,705,667,584 -> 59.7e9 fits: advise "full".
     */
    in.batch = 12;
    EVAL_OK(in, r);
    ck = find_advice(&r, "enable_checkpointing");
    ck_assert_ptr_nonnull(ck);
    ch = find_change(ck, "checkpointing");
    ck_assert_ptr_nonnull(ch);
    ck_assert_str_eq(ch->string_value, "full");

    /* Already full checkpointing: it is not advised again. */
    in.checkpointing = CORE_CKPT_FULL;
    in.batch = 100; /* 100 * 308,805,632 = 30,880,563,200 -> 86.9e9 > 80e9 */
    EVAL_OK(in, r);
    ck_assert(!r.fit.fits);
    ck_assert_ptr_null(find_advice(&r, "enable_checkpointing"));
    /* max_batch under full: 24e9 / 308,805,632 = 77.72 -> 77 (77 * 308,805,632 =
     * 23,778,033,664 <= 24e9; 78 -> 24,086,839,296 > 24e9). */
    ASSERT_I64(r.fit.max_batch, 77);
}
END_TEST

START_TEST(advice_state_never_fits)
{
    /*
     * 1e15 params on 1 GB GPUs: state 16e15 / G <= 1e9 needs G >= 1.6e7 > CORE_GPUS_MAX (1e7):
     * nothing fits at any G -> min_gpus 0, min_gpus_state_only 0, advice state_never_fits.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.params = (int64_t)CORE_PARAMS_MAX;
    in.memory_gb = 1;
    EVAL_OK(in, r);
    ck_assert(!r.fit.fits);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_STATE);
    ASSERT_I64(r.fit.min_gpus, 0);
    ASSERT_I64(r.fit.min_gpus_state_only, 0);
    ck_assert_ptr_nonnull(find_advice(&r, "state_never_fits"));
    ck_assert_ptr_null(find_advice(&r, "shard_state"));
}
END_TEST

START_TEST(advice_zero0_suggests_stage3)
{
    /*
     * ZeRO 0 replicates state, so no G fits at stage 0 (min_gpus 0); docs/model.md (advice under
     * "Fit"): shard_state adds {zero_stage: 3} when stage < 3 and that is what makes it fit. At
     * stage 3 the 7B fits on 2 GPUs (test_core_lesson), so the advice is {gpus: 2, zero_stage: 3}.
     */
    struct core_input in;
    struct core_result r;
    core_input_init(&in);
    in.zero_stage = 0;
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.min_gpus, 0);
    const struct core_note *shard = find_advice(&r, "shard_state");
    ck_assert_ptr_nonnull(shard);
    const struct core_change *g = find_change(shard, "gpus");
    const struct core_change *z = find_change(shard, "zero_stage");
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_nonnull(z);
    ASSERT_I64(g->int_value, 2);
    ASSERT_I64(z->int_value, 3);
}
END_TEST

static Suite *ledger_suite(void)
{
    Suite *s = suite_create("core_ledger");
    TCase *tc = tcase_create("ledger");
    tcase_add_test(tc, optimizer_rows);
    tcase_add_test(tc, optimizer_warnings);
    tcase_add_test(tc, fp32_with_bf16_grads);
    tcase_add_test(tc, tensor_parallel_and_zero);
    tcase_add_test(tc, ceil_division);
    tcase_add_test(tc, activations_not_divided_by_dp);
    tcase_add_test(tc, min_gpus_multiple_of_tp);
    suite_add_tcase(s, tc);

    tc = tcase_create("shape");
    tcase_add_test(tc, aspect_ratio_shape);
    tcase_add_test(tc, explicit_architecture);
    tcase_add_test(tc, context_warning);
    suite_add_tcase(s, tc);

    tc = tcase_create("fit");
    tcase_add_test(tc, reserve_and_memory_override);
    tcase_add_test(tc, advice_when_activations_overflow);
    tcase_add_test(tc, advice_state_never_fits);
    tcase_add_test(tc, advice_zero0_suggests_stage3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(ledger_suite());
}
