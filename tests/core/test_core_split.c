/*
 * test_core_split.c - MoE parallel folding and uneven pipeline splits (core/layout.c), every
 * expected value derived by hand below from the frameworks' code named in each comment.
 */
#include <check.h>
#include <stdio.h>

#include "check_main.h"
#include "core_test_util.h"

/* Does an evaluation fail with a problem on `field`? */
static bool fails_on(const struct core_input *in, const char *field)
{
    static struct core_result r;
    struct core_problems p;

    if (core_evaluate(in, &r, &p) != CORE_EINVAL)
        return false;
    for (int i = 0; i < p.count; i++)
        if (strcmp(p.items[i].field, field) == 0)
            return true;
    return false;
}

/*
 * Qwen3-30B-A3B (the preset: 48 layers, d 2048, 32 heads x 128, 4 KV heads, 128 experts of 768,
 * top-8, QK-norm, untied, V 151936) on 16 GPUs with tp 4, ep 8, etp 1, zero_stage 1, megatron.
 *
 * Counts (docs/architectures.md): one expert 3 x 2048 x 768 = 4,718,592; 128 of them x 48 layers
 * = 28,991,029,248 routed-expert weights. The rest: embedding and output 2 x 151936 x 2048 =
 * 622,329,856; per layer q 2048 x 4096 + k, v 2 x 2048 x 512 + o 4096 x 2048 = 18,874,368, QK-norm
 * 2 x 128, two norms 2 x 2048, router 2048 x 128 = 262,144: 19,140,864 x 48 = 918,761,472; final
 * norm 2048: 1,541,093,376.
 *
 * Megatron-Core's grids (parallel_state.py, initialize_model_parallel): dense tp 4 x dp 4; the
 * experts etp 1 x ep 8 x edp, edp = world / (etp ep pp) = 16 / 8 = 2 - ep 8 exceeds the dense
 * dp 4 (MoE parallel folding). Each GPU holds 128 / 8 = 16 whole experts of every layer, the
 * routers whole (moe/router.py: TopKRouter's E x d weight is on every tp rank) and a quarter
 * (tp 4) of everything else.
 *   dense per GPU: (1,541,093,376 - routers 262,144 x 48 = 12,582,912) / 4 = 382,127,616
 *     + 12,582,912 = 394,710,528 weights.
 *   weights (bf16, 2 B): dense 394,710,528 x 2 = 789,421,056;
 *                        experts 28,991,029,248 / 8 x 2 = 7,247,757,312.
 *   gradients: Megatron keeps bf16 runs' main gradients in fp32 (arguments.py, "accumulate and
 *     all-reduce gradients in fp32 for bfloat16 data type"), one full buffer per GPU
 *     (distributed/param_and_grad_buffer.py; the distributed optimizer shards only its states):
 *     dense 394,710,528 x 4 = 1,578,842,112; experts 3,623,878,656 x 4 = 14,495,514,624.
 *   optimizer (fp32 master + Adam's two moments, 12 B), sharded by the distributed optimizer over
 *     the data-parallel group of each parameter (optimizer/__init__.py builds the experts'
 *     optimizer over the expert data-parallel group): dense 394,710,528 x 12 / 4 = 1,184,131,584;
 *     experts 3,623,878,656 x 12 / 2 = 21,743,271,936.
 */
START_TEST(folded_expert_sharding)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpus = 16;
    in.tp = 4;
    in.ep = 8;
    in.etp = 1;
    in.zero_stage = 1;
    in.framework = CORE_FW_MEGATRON;
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.dp, 4);
    ASSERT_I64(r.resolved.edp, 2);
    ASSERT_I64(r.memory.expert_params, INT64_C(7247757312));
    ASSERT_I64(r.memory.params, INT64_C(789421056) + INT64_C(7247757312));
    ASSERT_I64(r.memory.expert_grads, INT64_C(14495514624));
    ASSERT_I64(r.memory.grads, INT64_C(1578842112) + INT64_C(14495514624));
    ASSERT_I64(r.memory.expert_optimizer, INT64_C(21743271936));
    ASSERT_I64(r.memory.optimizer, INT64_C(1184131584) + INT64_C(21743271936));
}
END_TEST

/* The rules of that grid (parallel_state.py, arguments.py): ep must divide the experts, and
 * etp x ep x pp the world; the old "ep divides gpus / (tp pp)" is not one of them. */
START_TEST(folding_rules)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpus = 16;
    in.tp = 2;  /* dp 8 */
    in.ep = 16; /* > dp: allowed with etp 1 (16 x 1 divides 16) */
    in.etp = 1;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.edp, 1);
    in.etp = 2; /* 2 x 16 = 32 does not divide 16 GPUs */
    ck_assert(fails_on(&in, "etp"));
    in.etp = 1;
    in.ep = 3; /* 128 experts are not divisible by 3 */
    ck_assert(fails_on(&in, "ep"));
}
END_TEST

/*
 * torchtitan's experts (distributed/parallel_dims.py, ParallelDims._validate): ep must divide
 * dp_shard x cp x tp, and there is no expert tensor parallelism (deprecated in #3167), so the
 * experts' FSDP group is dp cp tp / ep. Qwen3-30B-A3B on 16 GPUs with tp 2 (dp 8): ep 16
 * divides 8 x 2 = 16 (edp 1); ep 32 does not; etp 2 is refused.
 */
START_TEST(torchtitan_experts)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.framework = CORE_FW_TORCHTITAN;
    in.gpus = 16;
    in.tp = 2;
    in.ep = 16;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.etp_used, 1);
    ASSERT_I64(r.resolved.edp, 1);
    in.etp = 2;
    ck_assert(fails_on(&in, "etp"));
    in.etp = 0;
    in.gpus = 32; /* dp 16: 16 x 2 = 32, ep 32 divides it */
    in.ep = 32;
    in.experts = 128;
    EVAL_OK(in, r);
    in.gpus = 16; /* dp 8: 8 x 2 = 16, ep 32 does not divide it */
    ck_assert(fails_on(&in, "ep"));
}
END_TEST

/*
 * torchtitan's split (distributed/pipeline_parallel.py, generate_llm_fqn_per_model_part) of Llama
 * 3.1 405B's 126 layers over pp 8 x 2 interleaved stages: 126 + 2 units (embedding, output) over
 * 16 stages is 8 each, no remainder; stage 0 gives one to the embedding, stage 15 one to the
 * output: 7, 8 x 14, 7. Rank i holds stages i and i + 8: rank 0 7 + 8 = 15, ranks 1-6 16, rank 7
 * 8 + 7 = 15. The heaviest rank has 16 layers (Megatron would refuse: 126 % 8 != 0).
 */
START_TEST(torchtitan_uneven_interleaved)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("llama3.1-405b");
    in.framework = CORE_FW_TORCHTITAN;
    in.gpus = 512;
    in.tp = 8;
    in.pp = 8;
    in.virtual_stages = 2;
    in.global_batch = 64; /* dp 8: m = 8, a multiple of pp (schedules.py) */
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.split, CORE_SPLIT_BALANCED);
    ASSERT_I64(r.resolved.stage_layers, 16);
    in.framework = CORE_FW_MEGATRON;
    ck_assert(fails_on(&in, "pp"));
}
END_TEST

/*
 * Megatron-LM's uneven splits (transformer_block.py, get_num_layers_to_build):
 * - Qwen3-235B-A22B's recipe (Megatron-Bridge qwen3_moe.py) counts the embedding and the loss as
 *   layers: 94 + 2 = 96 over pp 8 x v 4 = 32 stages, 3 each; virtual stage 0 builds 3 - 1 = 2
 *   decoders, stage 31 also 2. Rank 0 holds stages 0, 8, 16, 24: 2 + 3 + 3 + 3 = 11; ranks 1-6
 *   12; rank 7 (7, 15, 23, 31) 3 + 3 + 3 + 2 = 11. Heaviest 12.
 * - decoder_first/last_pipeline_num_layers 13 and 16 of DeepSeek-V3's 61 over pp 4: the middle
 *   two ranks split 61 - 29 = 32 evenly, 16 each; heaviest 16. With virtual_stages 2 the first
 *   rank's 13 is no multiple of 2: a 422 (transformer_config.py).
 */
START_TEST(megatron_uneven)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.layers = 94;
    in.hidden = 4096;
    in.heads = 64;
    in.kv_heads = 4;
    in.head_dim = 128;
    in.moe_ffn_hidden = 1536;
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 256;
    in.tp = 2;
    in.pp = 8;
    in.ep = 32;
    in.etp = 1;
    in.virtual_stages = 4;
    in.global_batch = 128;          /* dp 16: m = 8 */
    ck_assert(fails_on(&in, "pp")); /* 94 % 8 != 0 without the embedding and loss counted */
    in.embedding_in_split = in.loss_in_split = true;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.stage_layers, 12);

    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 256;
    in.pp = 4;
    in.ep = 64;
    in.first_stage_layers = 13;
    in.last_stage_layers = 16;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.stage_layers, 16);
    in.virtual_stages = 2;
    ck_assert(fails_on(&in, "decoder_first_pipeline_num_layers"));
}
END_TEST

/*
 * The flexible layout Megatron-Bridge ran DeepSeek-V3 with on pp 8 x 4 (scripts/performance,
 * "Et|(tt|)*30mL"): 32 stages - embedding + 1 layer, 30 of 2, MTP + loss. virtual_stages
 * becomes 32 / 8 = 4 and mtp_layers 1. Rank 0 holds stages 0, 8, 16, 24: 1 + 2 + 2 + 2 = 7;
 * ranks 1-6 8; rank 7 holds 7, 15, 23, 31: 2 + 2 + 2 + 0 = 6 layers plus the MTP layer = 7.
 * Heaviest 8. Megatron's checks: 61 decoder layers t, one E first and one L last, the MTP in the
 * last virtual stage of its rank.
 */
START_TEST(flexible_layout)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 256;
    in.pp = 8;
    in.ep = 32;
    in.global_batch = 256; /* dp 32: m = 8 */
    snprintf(in.pipeline_layout, sizeof in.pipeline_layout, "Et|(tt|)*30mL");
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.virtual_stages, 4);
    ASSERT_I64(r.resolved.mtp_layers, 1);
    ASSERT_I64(r.resolved.stage_layers, 8);
    snprintf(in.pipeline_layout, sizeof in.pipeline_layout, "Et|(tt|)*29mL"); /* 59 layers */
    ck_assert(fails_on(&in, "pipeline_model_parallel_layout"));
    snprintf(in.pipeline_layout, sizeof in.pipeline_layout, "Et|(tt|)*30|mL"); /* 33 stages */
    ck_assert(fails_on(&in, "pipeline_model_parallel_layout"));
}
END_TEST

/*
 * DeepSeek-V3's MTP layer (Megatron-Core multi_token_prediction.py): one more decoder layer of
 * the model's last kind - a MoE layer: MLA attention 187,107,328 + 2 norms 14,336 + 256 experts
 * x 3 x 7168 x 2048 = 11,274,289,152 + shared 44,040,192 + router 7168 x 256 + its bias 256 =
 * 1,835,264, i.e. 11,507,286,272 - plus eh_proj 2 x 7168 x 7168 = 102,760,448 and three norms
 * (enorm, hnorm, final) 3 x 7168 = 21,504: 11,610,068,224 weights on top of the 671B.
 */
START_TEST(mtp_parameters)
{
    struct core_input in;
    struct core_result base, mtp;

    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    EVAL_OK(in, base);
    in.mtp_layers = 1;
    EVAL_OK(in, mtp);
    ASSERT_I64(mtp.resolved.params - base.resolved.params, INT64_C(11610068224));
    ASSERT_I64(mtp.resolved.expert_params - base.resolved.expert_params, INT64_C(11274289152));
}
END_TEST

/*
 * MTP on a dense model (Megatron-Core builds MultiTokenPredictionBlock for any GPTModel with
 * --mtp-num-layers; nothing in it needs MoE). Llama 3 8B (L 32, d 4096, 32 heads, 8 KV heads of
 * 128, f 14336 gated, V 128256 untied): one more decoder layer = q, o 2 d^2 = 33,554,432 + k, v
 * 2 d (8 x 128) = 8,388,608 + MLP 3 d f = 176,160,768 + 2 norms 8,192 = 218,112,000; + eh_proj
 * 2 d^2 = 33,554,432 and enorm, hnorm, final norm 3 d = 12,288: 251,678,720 weights, so N =
 * 8,030,261,248 + 251,678,720 = 8,281,939,968. N_active (the FLOP count) adds the shared output
 * layer's second run V d = 525,336,576: 8,807,276,544, above N by exactly that, which is no
 * input error (it was a 422 naming active_params, an input nobody gave). A given active_params
 * above N still is one.
 */
START_TEST(mtp_on_dense_model)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 8;
    in.mtp_layers = 1;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.params, INT64_C(8281939968));
    ASSERT_I64(r.resolved.active_params, INT64_C(8807276544));
    in.active_params = INT64_C(8281939969);
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "active_params"));
}
END_TEST

/*
 * DeepSeek-V3 at tp 8, ep 256, etp 1 on 256 GPUs (pp 1, dp 32, edp 1), megatron, ZeRO 1: the
 * weights every tp rank keeps whole. Megatron-Core builds MLA's q and kv down projections as
 * TELinear with parallel_mode "duplicated" (multi_latent_attention.py), their latent norms are
 * norms, and TopKRouter's E x d weight and expert bias are whole (moe/router.py):
 *   per layer 7168 x 1536 + 1536 + 7168 x (512 + 64) + 512 = 15,140,864, x 61 = 923,592,704;
 *   per MoE layer 7168 x 256 + 256 = 1,835,264, x 58 = 106,445,312: W = 1,030,038,016.
 * docs/architectures.md: N = 671,026,419,200, experts 256 x 44,040,192 x 58 = 653,908,770,816,
 * so N - E_x = 17,117,648,384, of which 16,087,610,368 split over tp 8.
 *   weights (2 B): 16,087,610,368 x 2 / 8 = 4,021,902,592 + W x 2 = 2,060,076,032 + experts
 *     653,908,770,816 x 2 / 256 = 5,108,662,272: 11,190,640,896 (was 9,388,074,368 with W / 8);
 *   grads (fp32): 8,043,805,184 + 4,120,152,064 + 10,217,324,544 = 22,381,281,792;
 *   optimizer (12 B): (16,087,610,368 x 12 / 8 + W x 12) / dp 32 = 1,140,370,992, experts
 *     653,908,770,816 x 12 / 256 / edp 1 = 30,651,973,632: 31,792,344,624.
 * 5.75 GB more state per GPU than the ledger held when W was split by tp.
 */
START_TEST(tp_whole_weights)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 256;
    in.tp = 8;
    in.ep = 256;
    in.etp = 1;
    in.zero_stage = 1;
    in.seq_len = 4096;
    in.checkpointing = CORE_CKPT_SELECTIVE;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.tp_whole_params, INT64_C(1030038016));
    ASSERT_I64(r.memory.params, INT64_C(11190640896));
    ASSERT_I64(r.memory.grads, INT64_C(22381281792));
    ASSERT_I64(r.memory.optimizer, INT64_C(31792344624));
    ASSERT_I64(r.memory.expert_optimizer, INT64_C(30651973632));
}
END_TEST

/*
 * Megatron-Core's MoELayer.forward (transformer/moe/moe_layer.py) raises ValueError in training
 * when tensor parallelism is on without sequence parallelism ("During training, performance may
 * degrade if MoE and tensor parallelism are enabled without also enabling sequence
 * parallelism."). Mixtral 8x7B at tp 2, ep 8 on 16 GPUs: sequence_parallel false is a 422 naming
 * it under framework=megatron; the default (true at tp > 1), tp 1, a dense model and the generic
 * framework are accepted.
 */
START_TEST(moe_tp_needs_sequence_parallel)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 16;
    in.tp = 2;
    in.ep = 8;
    in.sequence_parallel = CORE_FLAG_NO;
    ck_assert(fails_on(&in, "sequence_parallel"));
    in.sequence_parallel = CORE_FLAG_AUTO;
    EVAL_OK(in, r);
    ck_assert(r.resolved.sequence_parallel);
    in.sequence_parallel = CORE_FLAG_NO;
    in.framework = CORE_FW_GENERIC;
    EVAL_OK(in, r);
    in.framework = CORE_FW_MEGATRON;
    in.preset = core_preset_find("llama3-8b");
    in.ep = 1;
    EVAL_OK(in, r);
}
END_TEST

/*
 * recompute_modules is Megatron-LM's --recompute-modules, which transformer_config.py reads only
 * under --recompute-granularity selective. Mixtral 8x7B, 8 GPUs, ep 8: "moe" with checkpointing
 * none keeps the full ledger (no module dropped: the 5,971,902,464 activation bytes of
 * test_core_moe.c's mixtral_activations, s 512) and warns recompute_modules_ignored; with
 * checkpointing selective it is read and there is no such warning.
 */
START_TEST(recompute_modules_ignored_outside_selective)
{
    struct core_input in;
    static struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.gpus = 8;
    in.ep = 8;
    in.checkpointing = CORE_CKPT_NONE;
    snprintf(in.recompute_modules, sizeof in.recompute_modules, "moe");
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.activations, INT64_C(5971902464));
    ck_assert_ptr_nonnull(find_warning(&r, "recompute_modules_ignored"));
    in.checkpointing = CORE_CKPT_SELECTIVE;
    EVAL_OK(in, r);
    ck_assert_ptr_null(find_warning(&r, "recompute_modules_ignored"));
}
END_TEST

static Suite *split_suite(void)
{
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("split");

    tcase_add_test(tc, folded_expert_sharding);
    tcase_add_test(tc, folding_rules);
    tcase_add_test(tc, torchtitan_experts);
    tcase_add_test(tc, torchtitan_uneven_interleaved);
    tcase_add_test(tc, megatron_uneven);
    tcase_add_test(tc, flexible_layout);
    tcase_add_test(tc, mtp_parameters);
    tcase_add_test(tc, mtp_on_dense_model);
    tcase_add_test(tc, tp_whole_weights);
    tcase_add_test(tc, moe_tp_needs_sequence_parallel);
    tcase_add_test(tc, recompute_modules_ignored_outside_selective);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(split_suite());
}
