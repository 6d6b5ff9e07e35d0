/*
 * test_core_moe_time.c - expert time in the step-time model (core/perf_moe.c, core/perf.c).
 *
 * The all-to-all bytes of one MoE layer split into what stays on the rank, what crosses NVLink
 * and what crosses the network, derived by hand from Megatron-Core's expert rank order
 * (parallel_state.py: the expert RankGenerator's order tp-ep-dp-pp with tp = etp, so an EP group
 * is ep*etp consecutive ranks, etp apart) and from the dispatchers' rules (token_dispatcher.py
 * alltoall: one copy per chosen expert; DeepEP / HybridEP: one copy per remote node holding any
 * of the token's experts, forwarded over NVLink). Then the effects the new inputs must have,
 * and that dense layouts do not move.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "moe_fixture.h"
#include "perf.h"

/*
 * alltoall, ep 16 on 8-GPU nodes: the group is ranks 0..15, nodes hold 8 of them. One dispatch
 * sends each of the 4096 tokens' 8 copies of 2048 bf16 elements: 4096 x 8 x 2048 x 2 =
 * 134,217,728 bytes, 1/16 to each rank: 8,388,608 stay (own experts), 7/16 = 58,720,256 go over
 * NVLink, 8/16 = 67,108,864 over the network. Half the bytes stay in the node.
 */
START_TEST(test_alltoall_ep16_two_nodes)
{
    struct core_perf_input in;
    struct core_ep_traffic tr;

    moe_qwen3_30b(&in);
    core_perf_ep_traffic(&in, &tr);
    ck_assert_double_eq(tr.tokens, 4096);
    ck_assert_double_eq(tr.in_node, 8);
    ck_assert_double_eq(tr.nodes, 2);
    ck_assert_double_eq(tr.local, 8388608);
    ck_assert_double_eq(tr.nvlink, 58720256);
    ck_assert_double_eq(tr.network, 67108864);
    ck_assert_double_eq(tr.local + tr.nvlink, tr.network); /* half in the node */
    /* ep 8 fits one node: nothing crosses the network; 7/8 of 134,217,728 over NVLink. */
    in.ep = 8;
    core_perf_ep_traffic(&in, &tr);
    ck_assert_double_eq(tr.network, 0);
    ck_assert_double_eq(tr.nvlink, 117440512);
}
END_TEST

/*
 * Qwen3-235B-A22B on 256 H100: tp 2 (sequence parallel), ep 32, etp 1, d 4096, top 8 of 128.
 * Each rank routes its 4096 / 2 = 2048 tokens: 2048 x 8 x 4096 x 2 = 134,217,728 bytes. With
 * etp 1 the EP group is 32 consecutive ranks, 8 per node: 1/32 = 4,194,304 stay, 7/32 =
 * 29,360,128 over NVLink, 24/32 = 100,663,296 over the network, over 4 nodes. Megatron's default
 * etp = tp = 2 spaces the EP ranks 2 apart: 4 per node, 28/32 = 117,440,512 over the network.
 */
START_TEST(test_alltoall_folded_tp2)
{
    struct core_perf_input in;
    struct core_ep_traffic tr;

    moe_qwen3_30b(&in);
    in.hidden = 4096;
    in.tp = 2;
    in.ep = 32;
    in.etp = 1;
    core_perf_ep_traffic(&in, &tr);
    ck_assert_double_eq(tr.tokens, 2048);
    ck_assert_double_eq(tr.in_node, 8);
    ck_assert_double_eq(tr.nodes, 4);
    ck_assert_double_eq(tr.local, 4194304);
    ck_assert_double_eq(tr.nvlink, 29360128);
    ck_assert_double_eq(tr.network, 100663296);
    in.etp = 2;
    core_perf_ep_traffic(&in, &tr);
    ck_assert_double_eq(tr.in_node, 4);
    ck_assert_double_eq(tr.network, 117440512);
    /* Tokens per local expert: the 32 x 2 ranks' 2048 tokens x 8 copies over 128 experts with
     * etp 2 (each expert's tokens reach both of its etp ranks): 2048 x 8 x 32 x 2 / 128. */
    ck_assert_double_eq(core_perf_expert_tokens(&in), 8192);
    in.etp = 1;
    ck_assert_double_eq(core_perf_expert_tokens(&in), 4096);
}
END_TEST

/*
 * HybridEP on the ep 16 layout: one copy of the 4096 tokens is 4096 x 2048 x 2 = 16,777,216
 * bytes. The other node holds 64 of the 128 experts; a token's 8 distinct experts all miss them
 * with probability C(64,8)/C(128,8) = 4,426,165,368 / 1,429,702,652,400 = 0.0030959, so it
 * crosses the network with p = 0.9969041: 16,725,276 bytes (vs 67,108,864 for alltoall). Each
 * GPU holds 8 experts, missed with C(120,8)/C(128,8) = 840,261,910,995 / 1,429,702,652,400:
 * p = 0.4122821; a GPU sends its own tokens to 7 peers and forwards the other node's to them:
 * 2 x 7 x 0.4122821 x 16,777,216 = 96,837,230 bytes over NVLink; 6,916,945 stay.
 */
START_TEST(test_hybridep_node_dedup)
{
    struct core_perf_input in;
    struct core_ep_traffic tr;

    moe_qwen3_30b(&in);
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    core_perf_ep_traffic(&in, &tr);
    NEAR(tr.network, 16725276.0, 1e-6);
    NEAR(tr.nvlink, 96837230.2, 1e-6);
    NEAR(tr.local, 6916945.0, 1e-6);
    in.moe_dispatcher = CORE_MOE_DEEPEP; /* the same algorithm */
    core_perf_ep_traffic(&in, &tr);
    NEAR(tr.network, 16725276.0, 1e-6);
}
END_TEST

/*
 * ep_comm of the ep 16 layout by hand: per all-to-all the network part, 67,108,864 bytes at the
 * H100 NIC's 50 GB/s x net 0.90 = 1.4913 ms, outlasts the NVLink part (58,720,256 B at
 * 450 x 0.80 = 360 GB/s: 0.1631 ms); plus 10 us base and 15 network hops of 2 us: 1.5313 ms.
 * Four per MoE layer per micro-batch (dispatch and combine, forward and backward), 48 layers,
 * 1024 / 16 = 64 micro-batches: 1.5313 ms x 4 x 48 x 64 = 18.817 s.
 */
START_TEST(test_ep_comm_by_hand)
{
    struct core_perf_input in;

    moe_qwen3_30b(&in);
    double one = 10e-6 + 15 * 2e-6 + 67108864.0 / (50e9 * 0.90);
    NEAR(moe_run(&in).breakdown.ep_comm, one * 4 * 48 * 64, 1e-9);
}
END_TEST

/* The overlap hides `overlap` (0.5 on Hopper) of the exchange when compute covers it, never
 * more; the load imbalance scales the bytes the busiest rank receives (capped at ep) and the
 * expert GEMMs; the flex dispatcher's deduplication shortens the exchange. */
START_TEST(test_moe_inputs_effects)
{
    struct core_perf_input in;

    moe_qwen3_30b(&in);
    struct core_perf base = moe_run(&in);
    in.moe_comm_overlap = true;
    struct core_perf ov = moe_run(&in);
    ck_assert(ov.breakdown.ep_comm < base.breakdown.ep_comm);
    ck_assert(ov.breakdown.ep_comm >= 0.5 * base.breakdown.ep_comm - 1e-12);
    ck_assert_double_eq(ov.breakdown.compute, base.breakdown.compute);

    in.moe_comm_overlap = false;
    in.moe_load_imbalance = 2.0;
    struct core_perf hot = moe_run(&in);
    ck_assert(hot.breakdown.compute > base.breakdown.compute);
    ck_assert(hot.breakdown.ep_comm > 1.9 * base.breakdown.ep_comm);
    ck_assert(hot.step_seconds > base.step_seconds);
    in.moe_load_imbalance = 1000.0; /* capped at ep = 16 */
    struct core_perf capped = moe_run(&in);
    in.moe_load_imbalance = 16.0;
    ck_assert_double_eq(moe_run(&in).step_seconds, capped.step_seconds);

    in.moe_load_imbalance = 1.0;
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    ck_assert(moe_run(&in).breakdown.ep_comm < 0.5 * base.breakdown.ep_comm);
}
END_TEST

/*
 * FP8 padding of the experts' rows (perf.c expert_pad_bytes; Megatron-Core experts.py
 * TEGroupedMLP runs Transformer Engine's Fp8Padding / Fp8Unpadding under fp8, fp8_padding.py at
 * TE 2.9 and 2.14.1 copies unless every expert's count is aligned; HybridEP's dispatch and
 * DeepEP's fused permute already pad, NCCL's all-to-all does not). The Qwen3-30B-A3B fixture:
 * k 8, d 2048, 2-byte elements, tp 1, 4096 tokens a micro-batch, 48 MoE layers, 64
 * micro-batches, H100 HBM 3.35 TB/s x 0.80 = 2.68e12 B/s. Between alltoall and hybridep only
 * the element-wise bytes differ (ep_comm is its own term):
 *   the permutation, 6 k d against 2 k d elements forward, backward twice: 4 x 8 x 2048 x 2 x 3
 *     = 393,216 bytes a token;
 *   under fp8 the padding too, pad and unpad, 2 copies of d per copy read + write forward (4 d)
 *     and the inverse copies backward (4 d): 8 x 8 x 2048 x 2 = 262,144 bytes a token.
 * bf16: 393,216 x 4096 / 2.68e12 = 0.600975 ms a layer pass, x 48 x 64 = 1.846197 s;
 * fp8: (393,216 + 262,144) x 4096 / 2.68e12 = 1.001625 ms, x 48 x 64 = 3.076992 s.
 * DeepEP and HybridEP price the same bytes (both pad in their permute). A dense model has no
 * experts to pad (test_dense_unmoved).
 */
START_TEST(test_fp8_padding_bytes)
{
    struct core_perf_input in;

    moe_qwen3_30b(&in);
    in.moe_dispatcher = CORE_MOE_ALLTOALL;
    double a2a = moe_run(&in).breakdown.memory_bound;
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    double hyb = moe_run(&in).breakdown.memory_bound;
    NEAR(a2a - hyb, 393216.0 * 4096 / 2.68e12 * 48 * 64, 1e-9);

    in.precision = CORE_PREC_FP8;
    core_perf_input_hardware(&in, core_gpu_find("h100-sxm"), in.precision);
    in.moe_dispatcher = CORE_MOE_ALLTOALL;
    a2a = moe_run(&in).breakdown.memory_bound;
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    hyb = moe_run(&in).breakdown.memory_bound;
    NEAR(a2a - hyb, (393216.0 + 262144.0) * 4096 / 2.68e12 * 48 * 64, 1e-9);
    NEAR(a2a - hyb, 3.076992, 1e-6);
    in.moe_dispatcher = CORE_MOE_DEEPEP;
    ck_assert_double_eq(moe_run(&in).breakdown.memory_bound, hyb);
}
END_TEST

/* A dense model: the MoE inputs change nothing (experts 0, moe_layers 0). */
START_TEST(test_dense_unmoved)
{
    struct core_perf_input in;

    moe_qwen3_30b(&in);
    in.experts = in.experts_per_token = in.moe_ffn_hidden = in.moe_layers = 0;
    in.shared_ffn_hidden = 0;
    in.expert_params = 0;
    in.ep = 1;
    in.etp = 0;
    struct core_perf base = moe_run(&in);
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    in.moe_comm_overlap = true;
    in.moe_load_imbalance = 4.0;
    struct core_perf p = moe_run(&in);
    ck_assert_double_eq(p.step_seconds, base.step_seconds);
    ck_assert_double_eq(p.breakdown.ep_comm, 0);
}
END_TEST

/*
 * The same layout asked through core_evaluate (the API's path): the qwen3-30b-a3b preset on 16
 * H100, ep 16, etp 1, global batch 1024 of 4096 tokens, predicted MFU. The inputs must reach the
 * time model: ep_comm is the hand figure of test_ep_comm_by_hand, 18.817 s (the preset's d 2048,
 * 48 MoE layers, top 8 of 128, bf16); moe_host is 64 micro-batches x 3 passes x 48 layers x
 * (0 ms fixed + 0.147 ms x 128/16 = 8 local experts = 1.176 ms) = 10.838016 s; with the overlap
 * ep_comm shrinks, with hybridep to the deduplicated bytes (16,725,276 network bytes per dispatch
 * at 45 GB/s + 40 us: 0.41167 ms, x 4 x 48 x 64).
 */
/* The data-parallel traffic of one layout, overlap off (dp_comm is then the whole collective). */
static double dp_comm_of(struct core_perf_input in, double params, double whole, int zero)
{
    in.params = params;
    in.tp_whole_params = whole;
    in.zero_stage = zero;
    return moe_run(&in).breakdown.dp_comm;
}

/*
 * The weights every tp rank keeps whole (Qwen3-30B-A3B: the routers, E d per MoE layer =
 * 128 x 2048 x 48 = 12,582,912) are reduced whole by each tp rank, not a 1/t share. moe_fixture's
 * layout at tp 4 x dp 4 (16 H100s), ep 16, etp 1: the expert data-parallel group is
 * t dp / (ep etp) = 1, so the dense reduction is the only term. A ring over a fixed group costs
 * latency + c x bytes per rank (ZeRO 1: one all-reduce; ZeRO 3: 3 m passes of 48 pieces, one per
 * layer while the stage's N/t/5e7 < 48, each a half ring), so with N fixed, moving W from split
 * (W/t per rank) to whole (W per rank) adds W (1 - 1/t) = 3 W / 4 bytes-of-parameters per rank,
 * three times what W more split weights (W / 4 per rank) add: d_whole = 3 d_split, both ZeRO 1
 * and ZeRO 3.
 */
START_TEST(test_tp_whole_reduced_whole)
{
    struct core_perf_input in;
    const double n = 30.5e9, w = 12582912.0;

    moe_qwen3_30b(&in);
    in.tp = 4;
    in.dp = 4;
    in.sequence_parallel = true;
    in.dp_comm_overlap = false;
    for (int zero = 1; zero <= 3; zero += 2) {
        double base = dp_comm_of(in, n, 0, zero);
        double whole = dp_comm_of(in, n, w, zero) - base;
        double split = dp_comm_of(in, n + w, 0, zero) - base;
        ck_assert(split > 0);
        NEAR(whole, 3.0 * split, 1e-6);
    }
    /* At tp 1 nothing is kept whole beyond what every rank holds anyway: no change. */
    in.tp = 1;
    in.dp = 16;
    ck_assert_double_eq(dp_comm_of(in, n, w, 1), dp_comm_of(in, n, 0, 1));
}
END_TEST

/* The API path passes them: Qwen3-30B-A3B's routers, 128 x 2048 x 48 = 12,582,912 at tp > 1 (no
 * router bias, no shared-expert gate in its config), 0 at tp 1. */
START_TEST(test_tp_whole_from_evaluate)
{
    struct core_input in;
    struct core_result r;
    struct core_perf_input p;
    struct core_problems probs;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpus = 16;
    in.tp = 2;
    in.ep = 8;
    in.framework = CORE_FW_MEGATRON;
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    core_perf_input_resolved(&p, &r.resolved);
    ck_assert_double_eq(p.tp_whole_params, 12582912.0);
    in.tp = 1;
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    core_perf_input_resolved(&p, &r.resolved);
    ck_assert_double_eq(p.tp_whole_params, 0.0);
}
END_TEST

START_TEST(test_evaluate_path)
{
    struct core_input in;
    struct core_result r;
    struct core_problems probs;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpu = core_gpu_find("h100-sxm");
    in.gpus = 16;
    in.ep = 16;
    in.etp = 1;
    in.zero_stage = 1;
    in.seq_len = 4096;
    in.global_batch = 1024;
    in.flash_attention = CORE_FLAG_YES;
    in.mfu = CORE_MFU_PREDICTED;
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    double one = 10e-6 + 15 * 2e-6 + 67108864.0 / (50e9 * 0.90);
    NEAR(r.performance.breakdown.ep_comm, one * 4 * 48 * 64, 1e-9);
    NEAR(r.performance.breakdown.moe_host, 64 * 3 * 48 * (0.0 + 0.147e-3 * 8), 1e-9);
    ck_assert_str_eq(r.performance.bottleneck, "ep_comm");

    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    double dedup = 10e-6 + 15 * 2e-6 + 16725276.016 / (50e9 * 0.90);
    NEAR(r.performance.breakdown.ep_comm, dedup * 4 * 48 * 64, 1e-6);

    in.moe_dispatcher = CORE_MOE_ALLTOALL;
    in.moe_comm_overlap = true;
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    ck_assert(r.performance.breakdown.ep_comm < one * 4 * 48 * 64);
}
END_TEST

/* A seeded LCG (no libc rand: the same sequence everywhere). */
static uint64_t lcg_state = 0x9E3779B97F4A7C15ull;

static double uniform(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static int64_t pick(const int64_t *v, int n)
{
    int i = (int)(uniform() * n);
    return v[i < n ? i : n - 1];
}

/* Random MoE layouts on random GPUs: every term finite and >= 0, the terms sum to the step, and
 * more network bandwidth, the overlap, or balanced routing never make a step slower. */
START_TEST(test_moe_properties)
{
    static const int64_t pow2[] = {1, 2, 4, 8, 16, 32, 64};
    static const int64_t experts[] = {8, 16, 64, 128, 256, 384};
    static const char *const gpus[] = {"h100-sxm", "b200",          "gb200",
                                       "gb300",    "a100-sxm-80gb", "mi300x"};

    for (int trial = 0; trial < 5000; trial++) {
        struct core_perf_input in;
        moe_qwen3_30b(&in);
        in.precision = uniform() < 0.5 ? CORE_PREC_BF16 : CORE_PREC_FP8;
        core_perf_input_hardware(&in, core_gpu_find(gpus[(int)(uniform() * 5) % 5]), in.precision);
        in.experts = pick(experts, 6);
        in.experts_per_token = 1 + (int64_t)(uniform() * 8);
        in.tp = pick(pow2, 4);
        in.etp = uniform() < 0.5 ? 0 : pick(pow2, 4);
        in.ep = pick(pow2, 7);
        in.pp = pick(pow2, 4);
        in.virtual_stages = in.pp > 1 ? pick(pow2, 3) : 1;
        in.micro_batch = pick(pow2, 3);
        in.dp = in.ep * pick(pow2, 3);
        in.gpus = in.tp * in.pp * in.dp;
        in.global_batch = (double)(in.micro_batch * in.dp * pick(pow2, 6));
        in.moe_dispatcher = (enum core_moe_dispatcher)((int)(uniform() * 3) % 3);
        in.checkpointing = uniform() < 0.3 ? CORE_CKPT_FULL : CORE_CKPT_NONE;
        in.mtp_layers = uniform() < 0.2 ? 1 : 0;
        in.moe_load_imbalance = 1.0 + 3.0 * uniform();
        struct core_perf p = moe_run(&in);
        const double *t = &p.breakdown.compute;
        double sum = 0;
        for (int i = 0; i < CORE_PERF_TERMS; i++) {
            ck_assert_msg(isfinite(t[i]) && t[i] >= 0, "trial %d: %s = %g", trial,
                          core_perf_term_names[i], t[i]);
            sum += t[i];
        }
        NEAR(p.step_seconds, sum, 1e-12);
        ck_assert(isfinite(p.tokens_per_second_per_gpu) && p.tokens_per_second_per_gpu > 0);

        struct core_perf_input more = in;
        more.inter_node_gbs *= 2;
        more.intra_node_gbs *= 2;
        ck_assert(moe_run(&more).step_seconds <= p.step_seconds * (1 + 1e-12));
        more = in;
        more.moe_comm_overlap = true;
        ck_assert(moe_run(&more).step_seconds <= p.step_seconds * (1 + 1e-12));
        more = in;
        more.moe_load_imbalance = 1.0;
        ck_assert(moe_run(&more).step_seconds <= p.step_seconds * (1 + 1e-12));
    }
}
END_TEST

/*
 * The host time's per-local-expert part (perf.c, MOE_EXPERT_HOST_S): the layout of
 * test_evaluate_path with ep 8 instead of 16 holds 128 / 8 = 16 experts per rank, so each MoE
 * layer pass costs 0 ms + 16 x 0.147 ms = 2.352 ms: 64 micro-batches x 3 passes x 48 layers x
 * 2.352 ms = 21.676032 s (ep 16: 1.176 ms, 10.838016 s).
 */
START_TEST(test_host_per_local_expert)
{
    struct core_input in;
    struct core_result r;
    struct core_problems probs;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpu = core_gpu_find("h100-sxm");
    in.gpus = 16;
    in.ep = 8;
    in.etp = 1;
    in.zero_stage = 1;
    in.seq_len = 4096;
    in.global_batch = 1024;
    in.flash_attention = CORE_FLAG_YES;
    in.mfu = CORE_MFU_PREDICTED;
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    NEAR(r.performance.breakdown.moe_host, 21.676032, 1e-9);
}
END_TEST

/*
 * The gb300 catalog row from the GB300 NVL72 specifications (catalog.c): the rack's dense
 * 180 PF bf16 and 360 PF fp8 over 72 GPUs = 2500 and 5000 TFLOP/s, up to 288 GB HBM3e per GPU,
 * 576 TB/s / 72 = 8 TB/s, 72 GPUs in one NVLink domain at 1.8 TB/s bidirectional = 900 GB/s per
 * direction, one 800 Gb/s ConnectX-8 per GPU = 100 GB/s.
 */
START_TEST(test_gb300_row)
{
    int i = core_gpu_find("gb300");

    ck_assert_int_ge(i, 0);
    const struct core_gpu *g = &core_gpus[i];
    NEAR(g->bf16_tflops, 180e3 / 72, 1e-9);
    NEAR(g->fp8_tflops, 360e3 / 72, 1e-9);
    NEAR(g->memory_gb, 288.0, 1e-9);
    NEAR(g->hbm_tbps, 576.0 / 72, 1e-9);
    NEAR(g->scale_up_gbs, 1800.0 / 2, 1e-9);
    NEAR(g->network_gbs, 800.0 / 8, 1e-9);
    ck_assert_int_eq(g->gpus_per_node, 72);
    ck_assert_int_eq(g->generation, CORE_GEN_BLACKWELL);
}
END_TEST

static Suite *moe_time_suite(void)
{
    Suite *s = suite_create("core_moe_time");
    TCase *tc = tcase_create("expert_time");

    tcase_add_test(tc, test_alltoall_ep16_two_nodes);
    tcase_add_test(tc, test_alltoall_folded_tp2);
    tcase_add_test(tc, test_hybridep_node_dedup);
    tcase_add_test(tc, test_ep_comm_by_hand);
    tcase_add_test(tc, test_moe_inputs_effects);
    tcase_add_test(tc, test_fp8_padding_bytes);
    tcase_add_test(tc, test_dense_unmoved);
    tcase_add_test(tc, test_moe_properties);
    tcase_add_test(tc, test_evaluate_path);
    tcase_add_test(tc, test_tp_whole_reduced_whole);
    tcase_add_test(tc, test_tp_whole_from_evaluate);
    tcase_add_test(tc, test_host_per_local_expert);
    tcase_add_test(tc, test_gb300_row);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(moe_time_suite());
}
