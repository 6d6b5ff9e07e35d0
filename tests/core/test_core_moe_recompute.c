/*
 * test_core_moe_recompute.c - three step-time terms the MoE recipes exercise (core/perf.c): the
 * gradient reduction of the routed experts over the expert data-parallel group, selective
 * recompute priced per module (recompute_modules; Megatron-Core's --recompute-modules), the
 * output layer on a last pipeline rank that holds fewer layers than the heaviest, where a
 * token's copies go under group-limited routing (moe_router_num_groups / _group_topk), and the
 * element-wise bytes of the routed experts' output bias (moe_expert_bias).
 *
 * Every figure is derived by hand from perf.c's documented constants: Hopper and Blackwell
 * GEMMs at 0.65 of the 16-bit peak, a GEMM dimension x at x / (x + half_dim) of it (96 on
 * Hopper), element-wise kernels at 0.8 of HBM bandwidth, NCCL at 0.8 of NVLink and 0.9 of the
 * network, 10 us per collective and 2 us per ring step across nodes; and from the catalog: H100
 * SXM 989.4 TFLOP/s bf16, 3.35 TB/s; B200 900 GB/s NVLink, 50 GB/s network per GPU, 8 per node.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "internal.h" /* core_layout_parse, core_layout_heaviest, core_layout_last */
#include "moe_fixture.h"
#include "perf.h"

/* A MoE model on 64 B200 (8 per node) laid out as Megatron-Bridge's GPT-OSS-120B B200 preset
 * (tp 1, pp 1, ep 8, etp 1, dp 64), ZeRO 1, bf16, no gradient-reduce overlap so dp_comm is the
 * whole reduction: N = 120e9 of which N_e = 114e9 in the routed experts. */
static void oss_b200(struct core_perf_input *in)
{
    memset(in, 0, sizeof *in);
    in->precision = CORE_PREC_BF16;
    core_perf_input_hardware(in, core_gpu_find("b200"), in->precision);
    in->layers = 36;
    in->hidden = 2880;
    in->heads = 64;
    in->kv_heads = 8;
    in->head_dim = 64;
    in->ffn_hidden = 2880;
    in->vocab = 201088;
    in->gated_mlp = true;
    in->params = 120e9;
    in->active_params = 5.1e9;
    in->expert_params = 114e9;
    in->experts = 128;
    in->experts_per_token = 4;
    in->moe_ffn_hidden = 2880;
    in->shared_ffn_hidden = 2880;
    in->moe_layers = 36;
    in->seq_len = 4096;
    in->micro_batch = 4;
    in->global_batch = 1280;
    in->gpus = 64;
    in->tp = in->pp = in->cp = in->virtual_stages = 1;
    in->dp = 64;
    in->ep = 8;
    in->etp = 1;
    in->zero_stage = 1;
    in->flash_attention = true;
    in->optimizer = CORE_OPT_ADAMW;
    in->master_weights = true;
    in->moe_load_imbalance = 1.0;
}

/*
 * Megatron-Core orders the expert ranks etp-ep-dp-pp (parallel_state.py), so with ep 8 on 8-GPU
 * nodes an EP group is one node and the expert data-parallel group (edp = 64 / 8 = 8) takes one
 * rank of each node, 8 apart: one NIC per rank, 50 x 0.9 = 45 GB/s. The non-expert weights
 * reduce over all 64 ranks, 8 per node: NCCL's rings leave each node through its 8 NICs,
 * 8 x 45 = 360 GB/s (below NVLink's 900 x 0.8 = 720).
 *   non-expert: (120e9 - 114e9) x 2 bytes = 12e9 over 64 ranks; a double binary tree's
 *     2 log2 64 = 12 steps < 63: 10 us + 2 x 12 x 2 us + 2 x 63/64 x 12e9 / 360e9
 *     = 58e-6 + 0.065625 = 0.065683 s;
 *   experts: 114e9 / 8 x 2 = 28.5e9 over 8 ranks; 2 log2 8 = 6 steps < 7:
 *     10 us + 2 x 6 x 2 us + 2 x 7/8 x 28.5e9 / 45e9 = 34e-6 + 1.1083333 = 1.1083673 s.
 * dp_comm = 1.1740503 s. (Counted over the 64 ranks at 360 GB/s, as before, the experts' bytes
 * cost 0.1385 s: eight times too little.)
 */
START_TEST(test_expert_dp_group)
{
    struct core_perf_input in;

    oss_b200(&in);
    NEAR(moe_run(&in).breakdown.dp_comm, 0.065683 + 1.1083673, 1e-6);
}
END_TEST

/* A dense model keeps one reduction: 120e9 x 2 bytes over 64 ranks at 360 GB/s,
 * 58e-6 + 2 x 63/64 x 240e9 / 360e9 = 1.312558 s. */
START_TEST(test_dense_dp_unchanged)
{
    struct core_perf_input in;

    oss_b200(&in);
    in.expert_params = 0;
    in.experts = in.experts_per_token = in.moe_layers = in.moe_ffn_hidden = 0;
    in.shared_ffn_hidden = 0;
    in.ep = 1;
    NEAR(moe_run(&in).breakdown.dp_comm, 1.312558, 1e-6);
}
END_TEST

/* moe_fixture.h's Qwen3-30B-A3B on 16 H100 (48 MoE layers of 128 experts of width 768, top 8,
 * d 2048, ep 16, 64 micro-batches of 4096 tokens) under selective recompute. */
static void qwen3_30b(struct core_perf_input *in)
{
    moe_qwen3_30b(in);
    in->checkpointing = CORE_CKPT_SELECTIVE;
}

/*
 * moe_act (experts.py: CheckpointWithoutOutput around the activation): per MoE layer the
 * activation reads the gate and up halves (2 x 768) and writes 768, bf16, for each of the 8
 * copies of a token: 8 x 3 x 768 x 2 = 36,864 bytes a token; 4096 tokens at 3.35e12 x 0.8 =
 * 2.68e12 B/s: 150,994,944 / 2.68e12 = 5.634140e-5 s a layer, x 48 layers x 64 micro-batches =
 * 0.17308078 s. layernorm: a non-MLA layer's input_layernorm is fused into linear_qkv
 * (TELayerNormColumnParallelLinear), so only the MoE layer's pre_mlp_layernorm re-runs: read and
 * write 2048 bf16 = 8192 bytes a token, 4096 x 8192 / 2.68e12 x 48 x 64 = 0.03846240 s.
 */
START_TEST(test_elementwise_modules)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.recompute_modules = CORE_RC_MOE_ACT;
    NEAR(moe_run(&in).breakdown.recompute, 0.17308078, 1e-6);
    in.recompute_modules = CORE_RC_LAYERNORM;
    NEAR(moe_run(&in).breakdown.recompute, 0.03846240, 1e-6);
    in.recompute_modules = CORE_RC_LAYERNORM | CORE_RC_MOE_ACT;
    NEAR(moe_run(&in).breakdown.recompute, 0.17308078 + 0.03846240, 1e-6);
    /* mlp recomputes only dense layers' MLPs (transformer_layer.py: not a MoELayer): none here */
    in.recompute_modules = CORE_RC_MLP;
    ck_assert_double_eq(moe_run(&in).breakdown.recompute, 0.0);
}
END_TEST

/* moe (moe_layer.py moe_layer_recompute): the block's dispatch and combine run again in the
 * backward, 6 all-to-alls per MoE layer instead of 4, and its host work once more, 4 passes
 * instead of 3 (without the all-to-all overlap the exchange is all exposed). */
START_TEST(test_moe_block_exchange)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.checkpointing = CORE_CKPT_NONE;
    struct core_perf base = moe_run(&in);
    in.checkpointing = CORE_CKPT_SELECTIVE;
    in.recompute_modules = CORE_RC_MOE;
    struct core_perf moe = moe_run(&in);
    NEAR(moe.breakdown.ep_comm, 1.5 * base.breakdown.ep_comm, 1e-12);
    NEAR(moe.breakdown.moe_host, 4.0 / 3.0 * base.breakdown.moe_host, 1e-12);
    ck_assert(moe.breakdown.recompute > 0.0);
    /* the shared experts are inside the block: asking for both re-runs them once */
    in.shared_experts = 1;
    struct core_perf one = moe_run(&in);
    in.recompute_modules = CORE_RC_MOE | CORE_RC_SHARED_EXPERTS;
    NEAR(moe_run(&in).breakdown.recompute, one.breakdown.recompute, 1e-12);
}
END_TEST

/*
 * mla_up_proj (multi_latent_attention.py qkv_up_proj_and_rope_apply) on DeepSeek-V3's attention
 * (128 heads, nope 128, rope 64, v 128, q_lora 1536, kv_lora 512), 4 layers, one micro-batch of
 * 4096 tokens on one H100, tp 1: the two up projections at 989.4e12 x 0.65 = 643.11e12 FLOP/s,
 *   kv_b (4096, 128 x 256 = 32768, 512): 2 x 4096 x 32768 x 512 = 1.3744e11 FLOP at
 *     sat 4096/4192 x 32768/32864 x 512/608 = 0.82042 -> 2.604894e-4 s;
 *   q_b (4096, 128 x 192 = 24576, 1536): 3.0924e11 FLOP at 4096/4192 x 24576/24672 x
 *     1536/1632 = 0.91603 -> 5.249169e-4 s;
 * and the fused RoPE reading q (128 x 192) and kv (128 x 256) and writing query and key
 * (128 x 192 each) and value (128 x 128): 128 x 960 x 2 = 245,760 bytes a token, 4096 tokens at
 * 2.68e12 B/s = 3.756093e-4 s. 1.1610156e-3 s a layer, x 4 = 4.6440622e-3 s. core_attn is not in
 * the list, so the attention core is not recomputed.
 */
START_TEST(test_mla_up_proj)
{
    struct core_perf_input in;

    memset(&in, 0, sizeof in);
    in.precision = CORE_PREC_BF16;
    core_perf_input_hardware(&in, core_gpu_find("h100-sxm"), in.precision);
    in.layers = 4;
    in.hidden = 7168;
    in.heads = 128;
    in.kv_heads = 128;
    in.head_dim = 128;
    in.ffn_hidden = 18432;
    in.vocab = 129280;
    in.gated_mlp = true;
    in.params = in.active_params = 2e9;
    in.q_lora_rank = 1536;
    in.kv_lora_rank = 512;
    in.qk_nope_head_dim = 128;
    in.qk_rope_head_dim = 64;
    in.v_head_dim = 128;
    in.seq_len = 4096;
    in.micro_batch = 1;
    in.global_batch = 1;
    in.gpus = in.tp = in.pp = in.cp = in.dp = in.virtual_stages = 1;
    in.flash_attention = true;
    in.optimizer = CORE_OPT_ADAMW;
    in.master_weights = true;
    in.checkpointing = CORE_CKPT_SELECTIVE;
    in.recompute_modules = CORE_RC_MLA_UP_PROJ;
    struct core_perf p = moe_run(&in);
    NEAR(p.breakdown.recompute, 4.6440622e-3, 1e-6);
    ck_assert(isfinite(p.step_seconds)); /* a dense MLA model: no expert GEMMs (was NaN) */
    /* HFU counts the re-run FLOPs: per token 4 layers x 2 x (128 x 256 x 512 + 128 x 192 x 1536)
     * = 8 x 54,525,952 = 436,207,616 FLOP more than MFU's, at the 989.4e12 bf16 peak. */
    NEAR((p.hfu - p.mfu) * 989.4e12 / p.tokens_per_second_per_gpu, 436207616.0, 1e-9);
}
END_TEST

/* Megatron's default list is core_attn: recompute_modules 0 prices exactly that (the dense
 * model's selective recompute, unchanged). */
START_TEST(test_default_is_core_attn)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.recompute_modules = 0;
    double def = moe_run(&in).breakdown.recompute;
    in.recompute_modules = CORE_RC_CORE_ATTN;
    ck_assert_double_eq(moe_run(&in).breakdown.recompute, def);
    ck_assert(def > 0.0);
}
END_TEST

/*
 * The pipeline runs at its busiest rank's pace. Qwen3-30B on 16 H100 with pp 2 (dp 8: 1024 / 8
 * = 128 micro-batches), the heaviest rank 24 layers: with the last rank holding 24 too, its
 * output layer adds, per micro-batch, the logits GEMM (4096, 151936, 2048) three times at
 * 643.11e12 FLOP/s x sat 4096/4192 x 151936/152032 x 2048/2144 = 0.932759:
 * 2.54908e12 / (643.11e12 x 0.932759) = 4.249382e-3 s, x 3 = 0.01274815 s, and 12 bytes a logit,
 * 4096 x 151936 x 12 / 2.68e12 = 2.786552e-3 s. With the last rank holding 21 layers, its three
 * spare layers (each about 3 ms of GEMMs + 1.3 ms element-wise + 8 x 0.147 x 3 = 3.5 ms host)
 * exceed those 15.5 ms: the output layer costs the step nothing, 128 x 0.01274815 = 1.631763 s
 * less compute and 128 x 2.786552e-3 = 0.3566786 s less memory_bound.
 */
START_TEST(test_last_rank_slack)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.checkpointing = CORE_CKPT_NONE;
    in.pp = 2;
    in.dp = 8;
    in.stage_layers = 24;
    in.last_stage_layers = 24;
    struct core_perf full = moe_run(&in);
    in.last_stage_layers = 0; /* 0 = the last rank is the heaviest */
    ck_assert_double_eq(moe_run(&in).breakdown.compute, full.breakdown.compute);
    in.last_stage_layers = 21;
    struct core_perf spare = moe_run(&in);
    NEAR(full.breakdown.compute - spare.breakdown.compute, 1.631763, 1e-6);
    NEAR(full.breakdown.memory_bound - spare.breakdown.memory_bound, 0.3566786, 1e-6);
}
END_TEST

/* The last rank's layers under Megatron's pipeline_model_parallel_layout (each `|` ends a virtual
 * stage; stage g on rank g mod pp). DeepSeek-V3's B200 preset, pp 8, "Et*4|(t*4|)*14tmL": 16
 * stages, rank 7 holds stage 7 (4 layers) and stage 15 (1 layer, the MTP module, the loss) =
 * 4 + 1 + 1 = 6, the others 4 + 4 = 8. The write-up's "Et|(tt|)*30L" with pp 8: 32 stages, rank
 * 7 holds stages 7, 15, 23 (2 each) and 31 (the loss alone) = 6; ranks 1-6 hold 8. */
START_TEST(test_layout_last_rank)
{
    static struct core_resolved r;
    const char *b200 = "Et*4|(t*4|)*14tmL", *blog = "Et|(tt|)*30L";

    memset(&r, 0, sizeof r);
    r.shape.arch.layers = 61;
    r.pp = 8;
    r.split = CORE_SPLIT_LAYOUT;
    r.mtp_layers = 1;
    ck_assert(core_layout_parse(b200, strlen(b200), &r.layout) == NULL);
    r.virtual_stages = r.layout.stages / r.pp;
    ck_assert_int_eq(r.virtual_stages, 2);
    ck_assert_int_eq(core_layout_heaviest(&r), 8);
    ck_assert_int_eq(core_layout_last(&r), 6);
    r.mtp_layers = 0;
    ck_assert(core_layout_parse(blog, strlen(blog), &r.layout) == NULL);
    r.virtual_stages = r.layout.stages / r.pp;
    ck_assert_int_eq(r.virtual_stages, 4);
    ck_assert_int_eq(core_layout_heaviest(&r), 8);
    ck_assert_int_eq(core_layout_last(&r), 6);
}
END_TEST

/*
 * The routed experts' fc2 bias (moe_expert_bias; Megatron-Core experts.py TEGroupedMLP._apply_bias:
 * t + b * p per local expert after the grouped GEMM, then torch.cat). On the GPT-OSS B200 layout
 * above, bf16: each of the 4 x 4096 = 16384 tokens of a micro-batch has k = 4 copies of d = 2880
 * values at this rank (etp 1, balanced). Forward 6 element passes (b * p writes 1; the add reads 2,
 * writes 1; cat reads 1, writes 1), backward 8 (grad * p read 1 write 1, its sum read 1; the same
 * for p; the split's backward cat read 1 write 1): 14 x 4 x 2880 x 2 = 322,560 bytes a token;
 * 16384 x 322,560 = 5,284,823,040 bytes a layer at 8.0e12 x 0.8 = 6.4e12 B/s = 8.2575360e-4 s,
 * x 36 layers x 5 micro-batches (1280 / (4 x 64)) = 0.14863565 s more memory_bound. Under
 * recompute_modules moe the block's forward runs again: 6 / 14 of it, 0.06370099 s more recompute.
 * Nothing else moves (pp 1, no EP overlap).
 */
START_TEST(test_expert_bias)
{
    struct core_perf_input in;

    oss_b200(&in);
    struct core_perf off = moe_run(&in);
    in.moe_expert_bias = true;
    struct core_perf on = moe_run(&in);
    NEAR(on.breakdown.memory_bound - off.breakdown.memory_bound, 0.14863565, 1e-6);
    ck_assert_double_eq(on.breakdown.compute, off.breakdown.compute);
    ck_assert_double_eq(on.breakdown.moe_host, off.breakdown.moe_host);
    in.checkpointing = CORE_CKPT_SELECTIVE;
    in.recompute_modules = CORE_RC_MOE;
    struct core_perf rc_on = moe_run(&in);
    in.moe_expert_bias = false;
    struct core_perf rc_off = moe_run(&in);
    NEAR(rc_on.breakdown.recompute - rc_off.breakdown.recompute, 0.06370099, 1e-6);
}
END_TEST

/*
 * DeepSeek-V3's node-limited routing (config.json n_group 8, topk_group 4) under DeepEP on 256
 * B200, ep 32 (Megatron-Bridge's B200 MXFP8 preset): 4 nodes of 8 EP ranks, 8 experts a rank, 64
 * a node = 2 of the 8 groups of 32. One micro-batch: 4096 tokens of 7168 bf16 values = 58,720,256
 * bytes a copy. With force-balanced (random) scores moe_utils.py group_limited_topk picks a
 * uniform 4 of the 8 groups, about 8 / 4 = 2 experts in each:
 *   a remote node is reached when one of its 2 groups is picked: 1 - C(6,4)/C(8,4) = 1 - 15/70
 *     = 55/70, so network = 58,720,256 x 3 nodes x 55/70 = 138,412,032 bytes (without groups
 *     1 - C(192,8)/C(256,8) = 0.903554: 159,170,692);
 *   a GPU (8 experts of one group) when its group is picked (4/8) and one of the group's 2 picks
 *     lands on its 8 of 32: 1 - C(24,2)/C(32,2) = 1 - 276/496, so 1/2 x 220/496 = 0.2217742:
 *     local = 58,720,256 x 0.2217742 = 13,022,637.4, NVLink (each node's copy forwarded to its 7
 *     other GPUs, 4 nodes' worth) 58,720,256 x 4 x 7 x 0.2217742 = 364,633,847.7.
 */
START_TEST(test_group_limited_routing)
{
    struct core_perf_input in;
    struct core_ep_traffic tr;

    memset(&in, 0, sizeof in);
    in.precision = CORE_PREC_FP8;
    core_perf_input_hardware(&in, core_gpu_find("b200"), in.precision);
    in.hidden = 7168;
    in.experts = 256;
    in.experts_per_token = 8;
    in.micro_batch = 1;
    in.seq_len = 4096;
    in.tp = in.cp = in.etp = 1;
    in.ep = 32;
    in.moe_dispatcher = CORE_MOE_DEEPEP;
    core_perf_ep_traffic(&in, &tr);
    NEAR(tr.network, 159170691.9, 1e-8);
    in.router_groups = 8;
    in.router_group_topk = 4;
    core_perf_ep_traffic(&in, &tr);
    NEAR(tr.network, 138412032.0, 1e-9);
    NEAR(tr.local, 13022637.42, 1e-8);
    NEAR(tr.nvlink, 364633847.7, 1e-8);
    /* NCCL's all-to-all sends every one of the k copies, grouped or not: 8/32 of them local */
    in.moe_dispatcher = CORE_MOE_ALLTOALL;
    core_perf_ep_traffic(&in, &tr);
    NEAR(tr.local, 58720256.0 * 8.0 / 32.0, 1e-12);
}
END_TEST

/* The deepseek-v3 preset carries n_group 8 / topk_group 4; Megatron-Core's rules are 422s
 * (transformer_config.py: a group top-k needs the groups; group_limited_topk's view needs the
 * groups to divide E and top-k / group_topk >= 1). */
START_TEST(test_group_rules)
{
    struct core_input in;
    struct core_result r;
    struct core_problems probs;

    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    ck_assert_int_eq(r.resolved.shape.arch.router_groups, 8);
    ck_assert_int_eq(r.resolved.shape.arch.router_group_topk, 4);
    in.moe_router_num_groups = 7; /* 256 % 7 != 0 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_router_num_groups"));
    in.moe_router_num_groups = 16;
    in.moe_router_group_topk = 9; /* more than the 8 experts a token uses */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_router_group_topk"));
    in.moe_router_num_groups = 0; /* a group top-k without groups */
    in.moe_router_group_topk = 4;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_router_group_topk"));
    in.moe_router_group_topk = 0; /* no groups at all: fine */
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("moe_recompute");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_expert_dp_group);
    tcase_add_test(tc, test_dense_dp_unchanged);
    tcase_add_test(tc, test_elementwise_modules);
    tcase_add_test(tc, test_moe_block_exchange);
    tcase_add_test(tc, test_mla_up_proj);
    tcase_add_test(tc, test_default_is_core_attn);
    tcase_add_test(tc, test_last_rank_slack);
    tcase_add_test(tc, test_layout_last_rank);
    tcase_add_test(tc, test_group_limited_routing);
    tcase_add_test(tc, test_group_rules);
    tcase_add_test(tc, test_expert_bias);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
