/*
 * moe_fixture.h - what the MoE step-time suites (test_core_moe_time.c, test_core_cuda_graph.c,
 * test_core_moe_recompute.c) share: one published layout, the prediction, and a relative check.
 */
#ifndef MEMWALL_TESTS_MOE_FIXTURE_H
#define MEMWALL_TESTS_MOE_FIXTURE_H

#include <math.h>
#include <string.h>

#include <check.h>

#include "perf.h"

#define NEAR(got, want, rel)                                                                       \
    ck_assert_msg(fabs((got) - (want)) <= (rel)*fabs(want), "%s = %.9f, expected %.9f", #got,      \
                  (double)(got), (double)(want))

/* Qwen3-30B-A3B as Megatron-Bridge ran it on 16 H100 (8 per node): d 2048, 48 MoE layers of 128
 * experts (width 768, one shared-width field of 768), top 8, one micro-batch of 4096 tokens,
 * global batch 1024 over dp 16 (64 micro-batches), tp 1, ep 16 (8 local experts), etp 1, bf16,
 * no recompute. */
static inline void moe_qwen3_30b(struct core_perf_input *in)
{
    memset(in, 0, sizeof *in);
    in->precision = CORE_PREC_BF16;
    core_perf_input_hardware(in, core_gpu_find("h100-sxm"), in->precision);
    in->layers = 48;
    in->hidden = 2048;
    in->heads = 32;
    in->kv_heads = 4;
    in->head_dim = 128;
    in->ffn_hidden = 6144;
    in->vocab = 151936;
    in->gated_mlp = true;
    in->params = 30.5e9;
    in->active_params = 3.3e9;
    in->expert_params = 28.99e9;
    in->experts = 128;
    in->experts_per_token = 8;
    in->moe_ffn_hidden = 768;
    in->shared_ffn_hidden = 768;
    in->moe_layers = 48;
    in->seq_len = 4096;
    in->micro_batch = 1;
    in->global_batch = 1024;
    in->gpus = 16;
    in->tp = in->pp = in->cp = in->virtual_stages = 1;
    in->dp = 16;
    in->ep = 16;
    in->etp = 1;
    in->zero_stage = 1;
    in->flash_attention = true;
    in->optimizer = CORE_OPT_ADAMW;
    in->master_weights = true;
    in->moe_load_imbalance = 1.0;
}

static inline struct core_perf moe_run(const struct core_perf_input *in)
{
    struct core_perf p;

    core_perf_predict(in, &p);
    return p;
}

#endif
