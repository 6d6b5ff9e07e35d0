/*
 * test_core_moe.c - mixture of experts, expert parallelism, offload and the advice order, each
 * against figures derived by hand in the comments (docs/model.md, "Mixture of experts",
 * "Offload"; docs/architectures.md for the counts).
 */
#include <math.h>
#include <string.h>

#include "core_test_util.h"
#include "check_main.h"

/*
 * Mixtral 8x7B (L 32, d 4096, a 32, k 8, f 14336 gated, V 32000 untied, 8 experts, top-2):
 *   one expert 3 d f = 3 * 4096 * 14336 = 176,160,768; x 8 x 32 = 45,097,156,608 (45.10e9);
 *   per layer attention 2 d^2 + 2 d (k h_d) = 33,554,432 + 8,388,608 = 41,943,040, norms 2 d =
 *   8,192, router d E = 32,768: 41,984,000 x 32 = 1,343,488,000; embeddings 2 V d =
 *   262,144,000; final norm 4,096: non-experts 1,605,636,096 (1.606e9); total 46,702,792,704.
 *   Active: non-experts + 2/8 of the experts = 1,605,636,096 + 11,274,289,152 = 12,879,925,248
 *   (the input embedding counted as active, as Mistral's 12.9B does).
 */
#define MIX_EXPERTS     INT64_C(45097156608)
#define MIX_NON_EXPERTS INT64_C(1605636096)
#define MIX_ACTIVE      INT64_C(12879925248)

START_TEST(mixtral_ep8_per_gpu_and_flops)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.gpus = 8;
    in.ep = 8;
    in.zero_stage = 0; /* nothing sharded: the weights are what each GPU holds */
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.params, MIX_NON_EXPERTS + MIX_EXPERTS);
    ASSERT_I64(r.resolved.expert_params, MIX_EXPERTS);
    ASSERT_I64(r.resolved.active_params, MIX_ACTIVE);
    /* Each GPU: every non-expert weight plus 1/8 of the experts, 2 bytes each:
     * 2 (1,605,636,096 + 5,637,144,576) = 14,485,561,344. */
    ASSERT_I64(r.memory.params, 2 * (MIX_NON_EXPERTS + MIX_EXPERTS / 8));
    ASSERT_I64(r.memory.expert_params, 2 * (MIX_EXPERTS / 8));
    /* FLOPs: 6 x 12.88e9 x D, D = 1.4e12 by default. */
    ASSERT_REL(r.flops.six_nd, 6.0 * 12879925248.0 * 1.4e12, 1e-15);
}
END_TEST

/*
 * Activations of one Mixtral layer (b 1, s 512, t 1, no checkpointing) in bytes per token:
 * Korthikanti's 10 d whole + 24 d split, of which the dense MLP's 16 d is replaced by
 * k (4 d + 6 f) for the two routed experts - each copy's dispatched input (2 d), the expert output
 * unpermute saves for the probability's gradient (2 d, Megatron-Core moe_utils.unpermute) and the
 * gated hidden states (gate, up, product: 6 f) - and the router's 4 E + 8 k:
 * 40,960 + 8 d + 2 (16,384 + 86,016) + 48 = 40,960 + 32,768 + 204,800 + 48 = 278,576.
 * x 512 tokens = 142,630,912, + scores 5 a s^2 b = 41,943,040: 184,573,952 per layer; x 32 =
 * 5,906,366,464; + logits 4 s V = 65,536,000: 5,971,902,464.
 */
START_TEST(mixtral_activations)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.gpus = 8;
    in.ep = 8;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.activations, INT64_C(5971902464));
}
END_TEST

/*
 * Mixtral 8x7B folded as an ML engineer would ask for it: tp 2, ep 4, pp 2 on 16 GPUs under
 * framework=megatron, ZeRO 1 (distributed optimizer), s 4096, b 1, selective recompute.
 * State (constants above): etp defaults to tp = 2, so the experts' grid is etp ep pp = 16 and
 * edp = 16 / 16 = 1; the dense grid tp pp = 4, dp = 4. The routers (d E = 32,768 a layer, x 32 =
 * 1,048,576) are whole on every tp rank (moe/router.py, TopKRouter), so split over pp only;
 * the other 1,605,636,096 - 1,048,576 = 1,604,587,520 non-experts over tp pp = 4.
 *   weights: experts 45,097,156,608 x 2 / 16 = 5,637,144,576, non-experts 1,604,587,520 x 2 /
 *   4 = 802,293,760, routers 1,048,576 x 2 / 2 = 1,048,576: 6,440,486,912;
 *   grads (fp32, Megatron's bf16 default): twice that, 12,880,973,824;
 *   optimizer (fp32 master + two moments, 12 B): experts 45,097,156,608 x 12 / 16 / edp 1 =
 *   33,822,867,456, non-experts 1,604,587,520 x 12 / 4 / dp 4 = 1,203,440,640, routers
 *   1,048,576 x 12 / 2 / dp 4 = 1,572,864: 35,027,880,960.
 * Activations per token of a layer (mixtral_activations's terms, no score term under selective):
 * 10 d whole + 8 d split attention + the router 4 E + 8 k = 48, and per routed copy the grouped
 * fc1's input, which the alltoall dispatcher has all-gathered over the expert-TP group
 * (token_dispatcher.py dispatch_postprocess, gather_from_sequence_parallel_region over
 * expt_tp): 2 d etp, the expert output 2 d, and the hidden states 6 f / etp of etp times the
 * copies, 6 f a rank: k (2 d etp + 2 d + 6 f).
 *   etp 2: 40,960 + 32,768 + 48 + 2 (16,384 + 8,192 + 86,016) = 294,960 bytes, sequence
 *   parallel over t 2: x 4,096 / 2 = 604,078,080 a layer; the first rank holds pp = 2
 *   micro-batches of its 16 layers (Korthikanti's 1F1B: 32 layer-micro-batches, no logits on
 *   it): 19,330,498,560.
 *   etp 1 (tokens not gathered): 278,576 x 4,096 / 2 x 32 = 18,256,756,736, the figure etp 2
 *   also gave before the gather was priced (the ledger now holds 1 GiB more there).
 */
START_TEST(mixtral_folded_tp2_ep4_pp2)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 16;
    in.tp = 2;
    in.ep = 4;
    in.pp = 2;
    in.zero_stage = 1;
    in.seq_len = 4096;
    in.batch = 1;
    in.checkpointing = CORE_CKPT_SELECTIVE;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.etp_used, 2);
    ASSERT_I64(r.memory.params, INT64_C(6440486912));
    ASSERT_I64(r.memory.expert_params, INT64_C(5637144576));
    ASSERT_I64(r.memory.grads, INT64_C(12880973824));
    ASSERT_I64(r.memory.optimizer, INT64_C(35027880960));
    ASSERT_I64(r.memory.expert_optimizer, INT64_C(33822867456));
    ASSERT_I64(r.memory.activations, INT64_C(19330498560));
    in.etp = 1; /* experts 45,097,156,608 x 2 / 8 = 11,274,289,152 weights, edp 2 */
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.expert_params, INT64_C(11274289152));
    ASSERT_I64(r.memory.activations, INT64_C(18256756736));
}
END_TEST

/*
 * Megatron-LM's expert-data-parallel optimizer sharding on a small case. Architecture: L 2,
 * d 64 (a 1, h_d 64), f 128 ungated, V 100 untied, 4 experts, top-1; 8 GPUs, ep 4, ZeRO 1.
 *   experts: 2 d f = 16,384 each, x 4 x 2 layers = 131,072;
 *   non-experts: attention 4 d^2 = 16,384 + norms 128 + router d E = 256 -> 16,768 x 2 =
 *   33,536, final norm 64, embeddings 2 V d = 12,800: 46,400.
 *   Optimizer (12 B/param): experts 131,072 x 12 / ep 4 = 393,216, sharded over the expert
 *   data-parallel group 8 / 4 = 2 ranks: 196,608; non-experts 46,400 x 12 = 556,800 over 8
 *   ranks: 69,600. Per GPU 266,208. (Sharding the experts' state over all 8 ranks instead
 *   would give 49,152 + 69,600 = 118,752.)
 *   Weights (not sharded at ZeRO 1): 2 (46,400 + 131,072 / 4) = 158,336, and so are the grads.
 *   Active: 46,400 + 131,072 / 4 = 79,168.
 */
START_TEST(expert_data_parallel_sharding)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in);
    in.layers = 2;
    in.hidden = 64;
    in.ffn_hidden = 128;
    in.vocab = 100;
    in.experts = 4;
    in.experts_per_token = 1;
    in.gpus = 8;
    in.ep = 4;
    in.zero_stage = 1;
    EVAL_OK(in, r);
    ASSERT_I64(r.resolved.params, 177472);
    ASSERT_I64(r.resolved.expert_params, 131072);
    ASSERT_I64(r.resolved.active_params, 79168);
    ASSERT_I64(r.memory.optimizer, 266208);
    ASSERT_I64(r.memory.expert_optimizer, 196608);
    ASSERT_I64(r.memory.params, 158336);
    ASSERT_I64(r.memory.grads, 158336);
}
END_TEST

/* ep must divide the experts and the data-parallel ranks; a dense model has no experts to
 * split; top-k cannot exceed E; dense_layers must leave a MoE layer. */
START_TEST(moe_contradictions)
{
    struct core_input in;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.gpus = 12;
    in.ep = 3; /* 8 experts */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "ep"));
    in.gpus = 8;
    in.ep = 16; /* divides no 8 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "ep"));
    core_input_init(&in);
    in.gpus = 2;
    in.ep = 2; /* the default model is dense */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "ep"));
    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.experts_per_token = 9;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "experts_per_token"));
    in.experts_per_token = 0;
    in.dense_layers = 32;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "dense_layers"));
    core_input_init(&in);
    in.layers = 2;
    in.hidden = 64;
    in.experts = 4; /* no top-k anywhere */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "experts_per_token"));
}
END_TEST

/*
 * Offload moves exactly the offloaded bytes. Lesson default (7e9, 16 B/param) on 8 GPUs at
 * ZeRO 3: weights 14e9 / 8 = 1.75e9, grads 1.75e9, optimizer 84e9 / 8 = 10.5e9 per GPU.
 * offload_optimizer cpu: per_gpu optimizer 0, host 10.5e9 per GPU and 8 x 10.5e9 = 84e9 per
 * node; the GPU total falls by exactly 10.5e9. offload_params adds the 1.75e9 of weights.
 */
START_TEST(offload_moves_state_to_host)
{
    struct core_input in;
    struct core_result base, r;

    core_input_init(&in);
    in.gpus = 8;
    EVAL_OK(in, base);
    ASSERT_I64(base.memory.optimizer, INT64_C(10500000000));
    in.offload_optimizer = CORE_OFFLOAD_CPU;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.optimizer, 0);
    ASSERT_I64(r.memory.host.optimizer, INT64_C(10500000000));
    ASSERT_I64(r.memory.host_node.optimizer, INT64_C(84000000000));
    ASSERT_I64(r.memory.total, base.memory.total - INT64_C(10500000000));
    ASSERT_I64(r.memory.params, base.memory.params);
    ck_assert_ptr_nonnull(find_warning(&r, "offload_host"));
    in.offload_params = CORE_OFFLOAD_CPU;
    EVAL_OK(in, r);
    ASSERT_I64(r.memory.params, 0);
    ASSERT_I64(r.memory.host.params, INT64_C(1750000000));
    ASSERT_I64(r.memory.host.total, INT64_C(12250000000));
    ASSERT_I64(r.memory.total, base.memory.total - INT64_C(12250000000));
    /* The time model pays for it: the CPU step replaces the GPU's. */
    ck_assert(r.performance.breakdown.offload > 0);
    ck_assert(r.performance.breakdown.optimizer == 0);
    in.zero_stage = 2; /* ZeRO-Infinity offloads parameters only at stage 3 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "offload_params"));
}
END_TEST

/*
 * Advice in the order of what it costs. Lesson default on 8 GPUs with b 16, s 4096: state
 * 112e9 / 8 = 14e9; activations far beyond 66e9. Scores per token per layer 5 a s / d =
 * 5 x 32 x 4096 / 4096 = 160 >= 34: FlashAttention first; then (no tp) context parallelism,
 * then full checkpointing; the smaller micro-batch or sequence last.
 */
START_TEST(advice_flash_attention_first)
{
    struct core_input in;
    struct core_result r;
    int flash = -1, ckpt = -1, cp = -1, last = -1;

    core_input_init(&in);
    in.gpus = 8;
    in.batch = 16;
    in.seq_len = 4096;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_ACTIVATIONS);
    for (int i = 0; i < r.advice_count; i++) {
        const char *c = r.advice[i].code;
        if (strcmp(c, "enable_flash_attention") == 0)
            flash = i;
        else if (strcmp(c, "enable_checkpointing") == 0)
            ckpt = i;
        else if (strcmp(c, "enable_context_parallel") == 0)
            cp = i;
        else if (strcmp(c, "reduce_batch") == 0 || strcmp(c, "reduce_seq_len") == 0)
            last = i;
    }
    ck_assert_int_eq(flash, 0);
    ck_assert(cp > flash && ckpt > cp && last > ckpt);
    const struct core_change *ch = find_change(&r.advice[0], "flash_attention");
    ck_assert_ptr_nonnull(ch);
    ck_assert(ch->kind == CORE_VALUE_BOOL && ch->bool_value);
    /* s 512: 5 x 32 x 512 / 4096 = 20 < 34: the scores do not dominate, no such advice. */
    core_input_init(&in);
    in.gpus = 2;
    in.batch = 7;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.fit.bottleneck, CORE_BOTTLENECK_ACTIVATIONS);
    ck_assert_ptr_null(find_advice(&r, "enable_flash_attention"));
}
END_TEST

/* The time model prices the all-to-alls only when experts are split over ranks, over NVLink
 * while ep fits a node and slower over the network once it does not. */
START_TEST(ep_all_to_all)
{
    struct core_input in;
    struct core_result in_node, across;

    core_input_init(&in);
    in.preset = core_preset_find("mixtral-8x7b");
    in.gpus = 64;
    in.ep = 8; /* 8 GPUs: one node */
    in.mfu = CORE_MFU_PREDICTED;
    EVAL_OK(in, in_node);
    ck_assert(in_node.performance.breakdown.ep_comm > 0);
    in.ep = 1;
    EVAL_OK(in, across);
    ck_assert(across.performance.breakdown.ep_comm == 0);
    in.ep = 8;
    in.gpus_per_node = 4; /* the same group now spans two nodes */
    EVAL_OK(in, across);
    ck_assert(across.performance.breakdown.ep_comm > in_node.performance.breakdown.ep_comm);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_moe");
    TCase *t = tcase_create("moe");

    tcase_add_test(t, mixtral_ep8_per_gpu_and_flops);
    tcase_add_test(t, mixtral_activations);
    tcase_add_test(t, mixtral_folded_tp2_ep4_pp2);
    tcase_add_test(t, expert_data_parallel_sharding);
    tcase_add_test(t, moe_contradictions);
    tcase_add_test(t, offload_moves_state_to_host);
    tcase_add_test(t, advice_flash_attention_first);
    tcase_add_test(t, ep_all_to_all);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
