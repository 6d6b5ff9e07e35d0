/*
 * test_core_cuda_graph.c - per-layer CUDA graphs (cuda_graph_modules, core/cuda_graph.c) in the
 * MoE host term, DeepEP, HybridEP and NCCL's all-to-all over a 72-GPU NVLink domain, and the
 * all-to-all overlap's window (core/perf.c).
 *
 * Every figure is derived by hand from perf.c's documented constants: the fitted host time per
 * local expert (MOE_EXPERT_HOST_S 0.147 ms per MoE layer per pass, fixed part 0) and the host
 * shares the write-up measured (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization:
 * attn 0.610 ms, router + preprocess 0.081 ms, shared experts 0.260 ms per MoE layer per pass),
 * and from the write-up's DeepEP bandwidths over NVL72 (400 GB/s dispatch, 190 GB/s combine) and
 * HybridEP's over NVL36 (694.1 / 617.62 GB/s with 16 blocks).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "moe_fixture.h"
#include "perf.h"

#define CG_ALL (CORE_CG_ATTN | CORE_CG_MOE_ROUTER | CORE_CG_MOE_PREPROCESS)

/* moe_fixture.h's Qwen3-30B-A3B on 16 H100 under selective recompute: 48 MoE layers of 128 experts,
 * top 8, ep 16 (8 local experts), one micro-batch of 4096 tokens, global batch 1024 over dp 16: 64
 * micro-batches, 3 passes per layer (backward counted twice). */
static void qwen3_30b(struct core_perf_input *in)
{
    moe_qwen3_30b(in);
    in->checkpointing = CORE_CKPT_SELECTIVE;
}

/*
 * moe_host = 64 micro-batches x 3 passes x 48 layers x the per-pass host time:
 *   no graphs            0.147 x 8 = 1.176 ms                        -> 10.838016 s
 *   attn                 1.176 - 0.610 = 0.566 ms                    ->  5.216256 s
 *   moe_router,preproc.  1.176 - 0.081 = 1.095 ms (no shared experts) -> 10.09152 s
 *   all three            1.176 - 0.691 = 0.485 ms                    ->  4.46976 s
 *   all, 1 shared expert 1.176 - 0.951 = 0.225 ms                    ->  2.0736 s
 *   moe_router alone     no shared experts: nothing it captures is priced -> 10.838016 s
 *   all, ep 32 (4 local) 0.588 - 0.951 < 0: no host time left         ->  0 s
 */
START_TEST(test_graph_host_by_hand)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    NEAR(moe_run(&in).breakdown.moe_host, 10.838016, 1e-9);
    in.cuda_graph_modules = CORE_CG_ATTN;
    NEAR(moe_run(&in).breakdown.moe_host, 5.216256, 1e-9);
    in.cuda_graph_modules = CORE_CG_MOE_ROUTER | CORE_CG_MOE_PREPROCESS;
    NEAR(moe_run(&in).breakdown.moe_host, 10.09152, 1e-9);
    in.cuda_graph_modules = CG_ALL;
    NEAR(moe_run(&in).breakdown.moe_host, 4.46976, 1e-9);
    in.shared_experts = 1;
    NEAR(moe_run(&in).breakdown.moe_host, 2.0736, 1e-9);
    in.shared_experts = 0;
    in.cuda_graph_modules = CORE_CG_MOE_ROUTER;
    NEAR(moe_run(&in).breakdown.moe_host, 10.838016, 1e-9);
    in.cuda_graph_modules = CG_ALL;
    in.shared_experts = 1;
    in.ep = 32;
    ck_assert_double_eq(moe_run(&in).breakdown.moe_host, 0.0);
}
END_TEST

/*
 * Graphs take host time away and nothing else: every other term stays as it was, and a dense
 * model (no MoE host term) does not move at all.
 */
START_TEST(test_graph_only_moves_host)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    struct core_perf off = moe_run(&in);
    in.cuda_graph_modules = CG_ALL;
    struct core_perf on = moe_run(&in);
    ck_assert_double_eq(on.breakdown.compute, off.breakdown.compute);
    ck_assert_double_eq(on.breakdown.memory_bound, off.breakdown.memory_bound);
    ck_assert_double_eq(on.breakdown.ep_comm, off.breakdown.ep_comm); /* no overlap: no window */
    NEAR(off.step_seconds - on.step_seconds, 10.838016 - 4.46976, 1e-9);

    qwen3_30b(&in);
    in.experts = in.experts_per_token = in.moe_layers = in.ep = 0;
    in.expert_params = 0;
    off = moe_run(&in);
    in.cuda_graph_modules = CORE_CG_ATTN;
    on = moe_run(&in);
    ck_assert_double_eq(on.step_seconds, off.step_seconds);
    ck_assert_double_eq(on.breakdown.moe_host, 0.0);
}
END_TEST

/*
 * DeepEP over an NVLink domain of more than 8 GPUs (GB200 NVL72, 72 per domain): ep 32, etp 1,
 * 8 layers all MoE of 256 experts, top 8, d 7168, 4096 tokens, bf16, one micro-batch (global
 * batch 32 over dp 32). One copy of the tokens is 4096 x 7168 x 2 = 58,720,256 bytes; a GPU
 * holds 8 of the 256 experts, which a token misses with probability
 * prod_{i<8} (248 - i)/(256 - i) = 0.772913, so it goes to a given GPU with p = 0.227087. All 32
 * ranks sit in one domain: no network part.
 *   hybridep: what the rank takes in, 32 x p x 58,720,256 = 426,708,351 bytes, half the passes
 *     at the write-up's measured 694.1 GB/s (dispatch, 16 blocks) and half at 617.62 GB/s
 *     (combine): 0.5 x (0.614765 + 0.690892) ms = 0.652828 ms, + 10 us + 31 x 1 us = 0.693828 ms
 *     per exchange;
 *   deepep: what the rank takes in, 32 x p x 58,720,256 = 426,708,351 bytes, half the passes
 *     at 400 GB/s and half at 190 GB/s: 0.5 x (1.066771 + 2.245833) ms = 1.656302 ms, + 41 us
 *     = 1.697302 ms.
 * ep_comm = 4 exchanges x 8 layers x 1 micro-batch: 22.202502 ms and 54.313669 ms.
 */
START_TEST(test_deepep_over_nvl72)
{
    struct core_perf_input in;

    memset(&in, 0, sizeof in);
    in.precision = CORE_PREC_BF16;
    core_perf_input_hardware(&in, core_gpu_find("gb200"), in.precision);
    ck_assert_int_eq(in.gpus_per_node, 72);
    in.layers = in.moe_layers = 8;
    in.hidden = 7168;
    in.heads = 128;
    in.kv_heads = 128;
    in.head_dim = 128;
    in.ffn_hidden = 18432;
    in.vocab = 129280;
    in.gated_mlp = true;
    in.params = 1e11;
    in.active_params = 1e10;
    in.expert_params = 9e10;
    in.experts = 256;
    in.experts_per_token = 8;
    in.moe_ffn_hidden = in.shared_ffn_hidden = 2048;
    in.seq_len = 4096;
    in.micro_batch = 1;
    in.global_batch = 32;
    in.gpus = in.dp = in.ep = 32;
    in.tp = in.pp = in.cp = in.virtual_stages = in.etp = 1;
    in.zero_stage = 1;
    in.flash_attention = true;
    in.moe_load_imbalance = 1.0;

    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    NEAR(moe_run(&in).breakdown.ep_comm, 0.022202502, 1e-6);
    in.moe_dispatcher = CORE_MOE_DEEPEP;
    NEAR(moe_run(&in).breakdown.ep_comm, 0.054313669, 1e-6);
    /* inside an 8-GPU domain DeepEP is priced as HybridEP's dedup at the link rate */
    in.gpus_per_node = 8;
    struct core_perf deepep = moe_run(&in);
    in.moe_dispatcher = CORE_MOE_HYBRIDEP;
    ck_assert_double_eq(deepep.breakdown.ep_comm, moe_run(&in).breakdown.ep_comm);
}
END_TEST

/*
 * NCCL's all-to-all (alltoall dispatcher) over the same 72-GPU domain, same job as above: one
 * copy per chosen expert, 8 x 58,720,256 = 469,762,048 bytes, 31/32 of them to peers,
 * 455,081,984 bytes over NVLink at 900 GB/s x 0.80 = 0.632058 ms per exchange; DeepEP's time for
 * the same tokens is 1.656302 ms (above), so the floor applies: 1.656302 + 0.041 = 1.697302 ms,
 * x 32 exchanges = 54.313669 ms, DeepEP's figure (the write-up: no communication gain from the
 * switch). The floor is for NVLink domains of more than 8 GPUs only: with 8 per node the same
 * job's exchange is network-bound and not DeepEP's figure.
 */
START_TEST(test_nccl_over_nvl72)
{
    struct core_perf_input in;

    memset(&in, 0, sizeof in);
    in.precision = CORE_PREC_BF16;
    core_perf_input_hardware(&in, core_gpu_find("gb200"), in.precision);
    in.layers = in.moe_layers = 8;
    in.hidden = 7168;
    in.heads = 128;
    in.kv_heads = 128;
    in.head_dim = 128;
    in.ffn_hidden = 18432;
    in.vocab = 129280;
    in.gated_mlp = true;
    in.params = 1e11;
    in.active_params = 1e10;
    in.expert_params = 9e10;
    in.experts = 256;
    in.experts_per_token = 8;
    in.moe_ffn_hidden = in.shared_ffn_hidden = 2048;
    in.seq_len = 4096;
    in.micro_batch = 1;
    in.global_batch = 32;
    in.gpus = in.dp = in.ep = 32;
    in.tp = in.pp = in.cp = in.virtual_stages = in.etp = 1;
    in.zero_stage = 1;
    in.flash_attention = true;
    in.moe_load_imbalance = 1.0;

    in.moe_dispatcher = CORE_MOE_ALLTOALL;
    NEAR(moe_run(&in).breakdown.ep_comm, 0.054313669, 1e-6);
    in.gpus_per_node = 8;
    ck_assert(fabs(moe_run(&in).breakdown.ep_comm - 0.054313669) > 1e-3);
}
END_TEST

/*
 * The overlapped exchange hides under the paired micro-batch's whole time, host time included:
 * on a network slow enough that the exchange outlasts the window, exposed = comm - 0.5 x window,
 * so taking host time away with graphs (a smaller window) exposes half of it on the micro-batches
 * the combined 1F1B schedule pairs: pp 1 runs the first forward and the last backward alone
 * (schedules.py), 63 of the 64 micro-batches are paired, so ep_comm rises by
 * 0.5 x 63/64 x (10.838016 - 4.46976) s = 3.134376 s.
 */
START_TEST(test_overlap_window_has_host)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.inter_node_gbs = 0.5;
    in.moe_comm_overlap = true;
    struct core_perf off = moe_run(&in);
    in.cuda_graph_modules = CG_ALL;
    struct core_perf on = moe_run(&in);
    ck_assert(off.breakdown.ep_comm >
              off.breakdown.compute + off.breakdown.memory_bound + off.breakdown.moe_host);
    NEAR(on.breakdown.ep_comm - off.breakdown.ep_comm, 3.134376, 1e-6);
}
END_TEST

/*
 * Through core_evaluate (the API's path): the qwen3-30b-a3b preset on 16 H100, ep 16, etp 1,
 * global batch 1024 of 4096 tokens, predicted MFU, as test_core_moe_time.c's test_evaluate_path.
 * The list reaches the time model (moe_host 4.46976 s with all three, as by hand above) and is
 * echoed in Megatron's order; Megatron's rules are 422s naming the field
 * (transformer_config.py: moe_preprocess only with moe_router; moe graphs only for MoE), and a
 * name Megatron does not have is refused by the row check.
 */
/*
 * The paired share under interleaving: pp 2, v 2, ep 8 over dp 8 (16 GPUs), global batch 1024 =
 * 128 micro-batches, 256 virtual micro-batch passes each way on a rank. The first rank's warm-up
 * (schedules.py): (pp - 1) x 2 + (v - 1) x pp = 4 forwards, + 1 for the overlap = 5, and 5
 * backwards in the cool-down; 251 of 256 are paired. With an exchange shorter than its window,
 * overlap hides 0.5 of it on the paired ones: ep_comm on / off = 1 - 0.5 x 251/256 = 0.5097656.
 */
START_TEST(test_overlap_paired_share)
{
    struct core_perf_input in;

    qwen3_30b(&in);
    in.pp = in.virtual_stages = 2;
    in.ep = in.dp = 8;
    struct core_perf off = moe_run(&in);
    in.moe_comm_overlap = true;
    struct core_perf on = moe_run(&in);
    ck_assert(off.breakdown.ep_comm <
              off.breakdown.compute + off.breakdown.memory_bound + off.breakdown.moe_host);
    NEAR(on.breakdown.ep_comm / off.breakdown.ep_comm, 0.5097656, 1e-6);
}
END_TEST

START_TEST(test_graph_rules)
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
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s",
             "moe_preprocess moe_router,attn");
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    ck_assert_str_eq(r.resolved.cuda_graph_text, "attn,moe_router,moe_preprocess");
    NEAR(r.performance.breakdown.moe_host, 4.46976, 1e-9);

    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "attn,moe_preprocess");
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cuda_graph_modules"));
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "attn,mlp");
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cuda_graph_modules"));
    /* Megatron runs per-layer graphs with selective recompute only, and not moe_router graphs
     * with the whole MoE block recomputed. */
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "attn");
    in.checkpointing = CORE_CKPT_FULL;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cuda_graph_modules"));
    in.checkpointing = CORE_CKPT_SELECTIVE;
    snprintf(in.recompute_modules, sizeof in.recompute_modules, "%s", "moe");
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "moe_router");
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cuda_graph_modules"));
    in.checkpointing = CORE_CKPT_NONE;
    in.recompute_modules[0] = '\0';

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "moe_router");
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cuda_graph_modules"));
    snprintf(in.cuda_graph_modules, sizeof in.cuda_graph_modules, "%s", "attn");
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
}
END_TEST

/* Megatron-Core's rules for --overlap-moe-expert-parallel-comm (transformer_config.py): with
 * pp > 1 it needs virtual pipeline stages; it needs ep > 1; not with full recompute, nor with
 * the MoE block in recompute_modules. Checked under framework megatron only. */
START_TEST(test_overlap_rules)
{
    struct core_input in;
    struct core_result r;
    struct core_problems probs;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.gpu = core_gpu_find("h100-sxm");
    in.gpus = 16;
    in.pp = 2;
    in.ep = 8;
    in.etp = 1;
    in.zero_stage = 1;
    in.seq_len = 4096;
    in.global_batch = 512;
    in.flash_attention = CORE_FLAG_YES;
    in.moe_comm_overlap = true;
    in.framework = CORE_FW_MEGATRON;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_comm_overlap"));
    in.virtual_stages = 24; /* 48 layers over 2 x 24 one-layer chunks (MB-2511-Q30-H100) */
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
    in.checkpointing = CORE_CKPT_FULL;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_comm_overlap"));
    in.checkpointing = CORE_CKPT_SELECTIVE;
    snprintf(in.recompute_modules, sizeof in.recompute_modules, "%s", "moe");
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_comm_overlap"));
    in.checkpointing = CORE_CKPT_NONE;
    in.recompute_modules[0] = '\0';
    in.pp = 1;
    in.virtual_stages = 1;
    in.ep = 1;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "moe_comm_overlap"));
    /* the generic profile (DualPipe and the like) keeps the input free */
    in.framework = CORE_FW_GENERIC;
    in.ep = 8;
    in.pp = 2;
    memset(&probs, 0, sizeof probs);
    ck_assert_int_eq(core_evaluate(&in, &r, &probs), CORE_OK);
}
END_TEST

static Suite *cuda_graph_suite(void)
{
    Suite *s = suite_create("core_cuda_graph");
    TCase *tc = tcase_create("host");

    tcase_add_test(tc, test_graph_host_by_hand);
    tcase_add_test(tc, test_graph_only_moves_host);
    tcase_add_test(tc, test_deepep_over_nvl72);
    tcase_add_test(tc, test_nccl_over_nvl72);
    tcase_add_test(tc, test_overlap_window_has_host);
    tcase_add_test(tc, test_overlap_paired_share);
    tcase_add_test(tc, test_overlap_rules);
    tcase_add_test(tc, test_graph_rules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(cuda_graph_suite());
}
