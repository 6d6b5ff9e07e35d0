/*
 * test_core_serve_time.c - the serving time model (core/serve_time.c), derived by hand.
 *
 * Every expected figure below is worked out in its comment from the formula in docs/serving.md
 * ("Time") and the catalog's datasheet numbers, with the generation constants the comment names
 * (the first test pins those constants, so a change to the table fails there first and names the
 * tests whose arithmetic then needs redoing). Then properties over random workloads.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "core_test_util.h"
#include "serve_time.h"

/* Llama 2 7B: N = 32 (4 d^2 + 3 d f) + 2 V d + norms = 32 x 202,375,168 + 262,144,000 + 266,240
 * = 6,738,415,616; the input embedding V d = 131,072,000. bf16: 2 bytes each. */
#define LLAMA2_7B_N     6738415616.0
#define LLAMA2_7B_EMBED 131072000.0

/* One GPU of `gpu`, 16-bit GEMMs, the preset's architecture in bf16 weights, bf16 KV. */
static void dense_input(struct core_serve_time_input *in, const char *preset, const char *gpu)
{
    int p = core_preset_find(preset), g = core_gpu_find(gpu);
    const struct core_arch *a;
    struct core_arch_counts c;

    ck_assert_int_ge(p, 0);
    ck_assert_int_ge(g, 0);
    memset(in, 0, sizeof *in);
    in->arch = core_presets[p].arch;
    a = &in->arch;
    ck_assert(core_arch_count(a, &c));
    in->weight_bytes = 2.0 * (double)c.total;
    in->embedding_bytes = 2.0 * (double)c.embedding;
    in->expert_bytes = 2.0 * (double)c.experts;
    in->kv_bytes_per_token = 2.0 * (double)(a->layers * a->kv_heads * a->head_dim) * 2.0;
    in->gemm_tflops = core_gpus[g].bf16_tflops;
    in->attention_tflops = core_gpus[g].bf16_tflops;
    in->hbm_tbps = core_gpus[g].hbm_tbps;
    in->link_gbs = core_gpus[g].scale_up_gbs;
    in->math = CORE_SERVE_MATH_16;
    in->generation = core_gpus[g].generation;
    in->tp = in->pp = 1;
    in->cuda_graphs = true;
    in->input_len = in->output_len = in->concurrency = 1;
    in->usd_per_gpu_hour = -1;
}

/* The Hopper constants the hand derivations below use. */
START_TEST(hopper_constants_as_derived)
{
    const struct core_serve_gen *h = &core_serve_gens[CORE_GEN_HOPPER];
    ck_assert_double_eq(h->hbm, 0.80);
    ck_assert_double_eq(h->gemm, 0.65);
    ck_assert_double_eq(h->half_tokens, 96);
    ck_assert_double_eq(h->flash, 0.35);
    ck_assert_double_eq(h->layer_graph, 10e-6);
    ck_assert_double_eq(h->step_host, 0.5e-3);
}
END_TEST

/*
 * Batch-1 decode of Llama 2 7B in bf16 on one H100 SXM (3.35 TB/s, 989.4 TFLOP/s), context 1:
 *  weights read: 2 (N - V d) = 13,214,687,232 bytes at 0.80 x 3.35e12 = 2.68e12 B/s = 4.930853 ms
 *  (their FLOPs, the same 13.2e9 x 1 token at 643.11e12 x 1/97, take 1.99 ms: memory-bound);
 *  KV read: 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 bytes = 0.000196 ms;
 *  CUDA-graph gaps 32 x 10 us + host 0.5 ms = 0.82 ms. TPOT = 5.751049 ms; hbm-bound.
 */
START_TEST(batch1_decode_from_weight_bytes_and_hbm)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "llama2-7b", "h100-sxm");
    ASSERT_REL(in.weight_bytes, 2 * LLAMA2_7B_N, 1e-12);
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.decode.weights_hbm, 0.004930853, 1e-6);
    ASSERT_REL(t.tpot_seconds, 0.005751049, 1e-6);
    ck_assert_int_eq(t.bottleneck, CORE_SERVE_HBM);
    /* MBU: (13,214,687,232 + 524,288) bytes / (5.751049 ms x 3.35e12) = 0.6859. */
    ASSERT_REL(t.mbu, 0.6859, 1e-3);
    /* Twice the bandwidth halves the reads: 2.465427 ms + 0.000098 + 0.82 = 3.285525 ms. */
    in.hbm_tbps *= 2;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.tpot_seconds, 0.003285525, 1e-6);
}
END_TEST

/*
 * The roofline knee of the same GEMMs: B tokens' FLOPs B x 13,214,687,232 at 643.11e12 x
 * B / (B + 96) equal the read 13,214,687,232 / 2.68e12 when B + 96 = 643.11 / 2.68 = 239.966:
 * B = 143.97. Below it the weights' read binds, above it their FLOPs.
 */
START_TEST(knee_batch)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "llama2-7b", "h100-sxm");
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.knee_batch, 143.966, 1e-5);
    in.concurrency = 143;
    core_serve_time_compute(&in, NULL, &t);
    ck_assert(t.decode.weights_hbm > 0);
    in.concurrency = 145;
    core_serve_time_compute(&in, NULL, &t);
    ck_assert(t.decode.weights_hbm == 0 && t.decode.compute > 0);
}
END_TEST

/*
 * Prefill of one 2048-token prompt of Llama 2 7B on one H100 SXM (static batch 1):
 *  GEMMs 2048 x 13,214,687,232 = 2.70637e13 FLOPs at 643.11e12 x 2048 / 2144 = 614.32e12:
 *  44.055122 ms (the weights' 4.93 ms read is hidden);
 *  attention, causal: 2 s^2 h_d per head per layer = 32 x 4096 x 2 x 2048^2 = 1.0995e12 FLOPs at
 *  0.35 x 989.4e12 = 346.29e12: 3.175118 ms (the 2048 x 524,288 bytes of cache written, 0.40 ms,
 *  hidden); gaps and host 0.82 ms. TTFT = 48.050240 ms.
 */
START_TEST(prefill_from_flops_and_peak)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "llama2-7b", "h100-sxm");
    in.input_len = 2048;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.ttft_seconds, 0.048050240, 1e-6);
    ck_assert(t.prefill.weights_hbm == 0);
}
END_TEST

/*
 * Mixtral 8x7B in bf16 on one H200 (4.8 TB/s): routed experts 32 x 8 x 3 x 4096 x 14336 =
 * 45,097,156,608 weights, the rest 1,605,636,096 (of it the embedding 131,072,000).
 *  Batch 1: each token touches k = 2 of E = 8 experts: 8 (1 - (1 - 2/8)^1) = 2; batch 2:
 *  8 (1 - 0.75^2) = 3.5; batch 64: 8 (1 - 0.75^64) = 8 - 1.6e-7.
 *  Batch-1 read: 2 (1,605,636,096 - 131,072,000) + 2 x 45,097,156,608 x 2/8 = 25,497,706,496 bytes
 *  at 0.80 x 4.8e12 = 3.84e12 B/s: 6.640028 ms. Each touched expert's GEMM has 1 x 2 / 2 = 1 row,
 *  like the dense ones: their FLOPs (2 x 12.75e9 at 643.11e12 / 97) take 3.85 ms, so the read
 * binds.
 */
START_TEST(moe_decode_reads_the_experts_it_touches)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    ASSERT_REL(core_serve_experts_touched(8, 2, 1), 2.0, 1e-12);
    ASSERT_REL(core_serve_experts_touched(8, 2, 2), 3.5, 1e-12);
    ASSERT_REL(core_serve_experts_touched(8, 2, 64), 8.0, 1e-6);
    dense_input(&in, "mixtral-8x7b", "h200-sxm");
    ASSERT_REL(in.expert_bytes, 2 * 45097156608.0, 1e-12);
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.experts_touched, 2.0, 1e-12);
    ASSERT_REL(t.decode.weights_hbm, 0.006640028, 1e-6);
}
END_TEST

/*
 * Expert parallelism wider than tp, as vLLM and SGLang lay it out: the EP group is tp x dp ranks
 * (vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make: ep_size =
 * tp_size x dp_size, the experts' own tp 1), each rank holds E / ep whole experts, and every
 * attention (dp) group's tokens are dispatched to the ranks holding their experts. Qwen3-30B-A3B,
 * bf16, on H100s: E = 128 experts of 3 x d 2048 x f_e 768 = 4,718,592 weights a layer, x 48
 * layers = 226,492,416 weights an expert; top k = 8. tp 1 x dp 8, ep 8, a static decode batch
 * of B = 16 sequences on every dp rank (input and output length 1: context 1, no KV read since
 * kv_bytes_per_token is 0 here).
 *  Per GPU: 128 / 8 = 16 experts = 16 x 226,492,416 x 2 B = 7,247,757,312 bytes.
 *  Tokens dispatched to the EP group: 8 groups x 16 = 128, so the experts touched per layer are
 *  128 (1 - (1 - 8/128)^128) = 128 (1 - 0.9375^128) = 128 (1 - 2.5842e-4) = 127.966922, and each
 *  GPU reads that fraction of its 16: 7,247,757,312 x 0.99974158 = 7,245,884,358 bytes (uniform
 *  routing). Counting only the rank's own 16 tokens would touch 128 (1 - 0.9375^16) = 82.4225 and
 *  read 4,667,018,429.
 *  FLOPs per GPU: 128 tokens x 8 picks / 8 ranks = 128 token-expert pairs, x 2 x 226,492,416 =
 *  57,982,058,496: what one GPU holding every expert does for its own 16 tokens (16 x 8 x 2 x
 *  226,492,416), so the step's FLOPs equal those at ep 1. At tp 2 x dp 4 (ep 8): 64 tokens touch
 *  128 (1 - 0.9375^64) = 125.942349 experts; the GPU still holds 16 and reads 7,131,246,741 bytes.
 */
START_TEST(moe_decode_under_expert_parallelism_wider_than_tp)
{
    struct core_serve_time_input in;
    struct core_serve_time t8, t1, t2;
    struct core_arch_counts c;
    double experts = 16 * 226492416.0 * 2, rest;

    dense_input(&in, "qwen3-30b-a3b", "h100-sxm");
    ck_assert(core_arch_count(&in.arch, &c));
    ASSERT_I64(c.experts, 128 * 226492416LL);
    in.kv_bytes_per_token = 0;
    in.concurrency = 16;
    in.expert_bytes = experts;
    in.weight_bytes = 2.0 * (double)(c.total - c.experts) + experts;
    rest = in.weight_bytes - in.embedding_bytes - experts;
    in.ep = 8;
    core_serve_time_compute(&in, NULL, &t8);
    ASSERT_REL(t8.experts_touched, 127.966922, 1e-6);
    ASSERT_REL(t8.decode.bytes, rest + 7245884358.0, 1e-9);
    /* The FLOPs: dense 2 (active - embedding) per token (the k = 8 active experts included), plus
     * attention 4 x 32 heads x 128 x 48 layers x 1 position per sequence. */
    ASSERT_REL(t8.decode.flops, 16 * 2.0 * (double)(c.active - c.embedding) + 16 * 4.0 * 4096 * 48,
               1e-12);
    in.ep = 1; /* the same GPU holding only its own tokens' experts: the same FLOPs */
    core_serve_time_compute(&in, NULL, &t1);
    ASSERT_REL(t1.decode.flops, t8.decode.flops, 1e-12);
    ASSERT_REL(t1.experts_touched, 82.422511, 1e-6);
    in.ep = 8;
    in.tp = 2;
    in.weight_bytes = 2.0 * (double)(c.total - c.experts) / 2 + experts;
    in.embedding_bytes /= 2;
    rest = in.weight_bytes - in.embedding_bytes - experts;
    core_serve_time_compute(&in, NULL, &t2);
    ASSERT_REL(t2.experts_touched, 125.942349, 1e-6);
    ASSERT_REL(t2.decode.bytes, rest + 7131246741.0, 1e-9);
}
END_TEST

/*
 * Mixtral 8x7B prefill of one 4096-token prompt on one H200 (989.4 TFLOP/s bf16):
 *  active N = 46,702,792,704 - 6/8 x 45,097,156,608 = 12,879,925,248; routed share per token
 *  2/8 x 45,097,156,608 = 11,274,289,152; the rest less the embedding 1,474,564,096.
 *  Dense GEMMs 2 x 1,474,564,096 x 4096 FLOPs at 643.11e12 x 4096/4192: 19.223376 ms; each expert
 *  touched (8 (1 - 0.75^4096) = 8 of them) sees 4096 x 2 / 8 = 1024 tokens: 2 x 11,274,289,152 x
 * 4096 at 643.11e12 x 1024/1120: 157.076753 ms; (every expert's weights read, 24.26 ms, hidden).
 * Attention 32 x 4096 x 2 x 4096^2 at 346.29e12: 12.700472 ms. Gaps and host 0.82 ms. TTFT =
 * 189.820602 ms.
 */
START_TEST(moe_prefill_from_flops_and_peak)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "mixtral-8x7b", "h200-sxm");
    in.input_len = 4096;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.ttft_seconds, 0.189820602, 1e-6);
}
END_TEST

/*
 * Tensor parallelism at batch 1 is latency-bound: Llama 2 7B at tp 2 on H100 runs 2 all-reduces
 * per layer x 32 layers, each 20 us + 2 (1/2) x 4096 x 2 bytes / (0.80 x 450e9) = 20.0228 us:
 * 1.281456 ms.
 */
START_TEST(tp_all_reduces_latency_bound)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "llama2-7b", "h100-sxm");
    in.tp = 2;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.decode.tp_comm, 0.001281456, 1e-6);
}
END_TEST

/*
 * Sliding-window attention (Mistral 7B v0.1: every layer attends the last 4096 positions): a
 * decode step at context 8193 reads 4096 cached positions per layer, not 8193. KV per layer per
 * token 2 x 8 heads x 128 x 2 bytes = 4096; 32 layers x 4096 positions x 4096 bytes =
 * 536,870,912 bytes at 2.68e12 B/s: 0.200325 ms (its FLOPs, 4 x 4096 (a h_d) x 32 layers x 4096
 * positions = 2.1e9 at 346e12, 6 us, are hidden). Without the window: 8193 positions, 0.400699 ms.
 */
START_TEST(sliding_window_reads_the_window)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "mistral-7b", "h100-sxm");
    ck_assert_int_eq(in.arch.sliding_window, 4096);
    in.input_len = 8193;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.decode.kv_hbm, 536870912.0 / 2.68e12, 1e-9);
    in.arch.sliding_window = 0;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.decode.kv_hbm, 32.0 * 8193 * 4096 / 2.68e12, 1e-9);
}
END_TEST

/* $/M output tokens: 2 GPUs at $3/h serving 1000 tokens/s: 6 / 3600 / 1000 x 1e6 = $1.6667. */
START_TEST(cost_per_million_tokens)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    dense_input(&in, "llama2-7b", "h100-sxm");
    in.tp = 2;
    in.usd_per_gpu_hour = 3.0;
    core_serve_time_compute(&in, NULL, &t);
    ASSERT_REL(t.usd_per_million_output_tokens, 6.0 / 3600.0 / t.output_tokens_per_second * 1e6,
               1e-12);
    in.usd_per_gpu_hour = -1;
    core_serve_time_compute(&in, NULL, &t);
    ck_assert(t.usd_per_million_output_tokens < 0);
}
END_TEST

/* ---- Properties over random workloads ---------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t pick(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1));
}

static void random_input(struct core_serve_time_input *in)
{
    static const char *const presets[] = {"llama2-7b", "llama3-70b", "mixtral-8x7b",
                                          "qwen1.5-moe-a2.7b", "gpt3-175b"};
    const char *gpu = core_gpus[rng() % core_gpu_count].id;

    dense_input(in, presets[rng() % 5], gpu);
    if (in->gemm_tflops <= 0)
        in->gemm_tflops = in->attention_tflops = 100;
    in->tp = (int64_t)1 << pick(0, 3);
    in->pp = pick(1, 2);
    in->weight_bytes /= (double)(in->tp * in->pp);
    in->embedding_bytes /= (double)(in->tp * in->pp);
    in->expert_bytes /= (double)(in->tp * in->pp);
    in->kv_bytes_per_token /= (double)(in->tp * in->pp);
    in->cuda_graphs = rng() & 1;
    in->continuous = rng() & 1;
    in->input_len = pick(1, 32768);
    in->output_len = pick(1, 4096);
    in->concurrency = pick(1, 512);
    in->usd_per_gpu_hour = (double)pick(0, 10);
}

static bool finite_nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

START_TEST(properties_over_random_workloads)
{
    for (int i = 0; i < 2000; i++) {
        struct core_serve_time_input in;
        struct core_serve_time a, b;

        random_input(&in);
        core_serve_time_compute(&in, NULL, &a);
        ck_assert(finite_nonneg(a.ttft_seconds) && finite_nonneg(a.tpot_seconds));
        ck_assert(finite_nonneg(a.e2e_seconds) && finite_nonneg(a.output_tokens_per_second));
        ck_assert(finite_nonneg(a.requests_per_second) && finite_nonneg(a.mbu));
        ck_assert(finite_nonneg(a.mfu) && finite_nonneg(a.usd_per_million_output_tokens));
        ck_assert(a.tpot_seconds > 0 && a.ttft_seconds > 0);
        /* TPOT never falls as concurrency grows. */
        in.concurrency += pick(1, 256);
        core_serve_time_compute(&in, NULL, &b);
        ck_assert_msg(b.tpot_seconds >= a.tpot_seconds * (1 - 1e-12), "tpot %g -> %g",
                      a.tpot_seconds, b.tpot_seconds);
        /* Twice the HBM bandwidth never slows a step. */
        in.hbm_tbps *= 2;
        core_serve_time_compute(&in, NULL, &a);
        ck_assert(a.tpot_seconds <= b.tpot_seconds && a.ttft_seconds <= b.ttft_seconds);
    }
}
END_TEST

/* Throughput grows with the batch up to the knee (continuous and static batches). */
START_TEST(throughput_non_decreasing_to_the_knee)
{
    for (int i = 0; i < 300; i++) {
        struct core_serve_time_input in;
        struct core_serve_time t;
        double last = 0;

        random_input(&in);
        in.concurrency = 1;
        core_serve_time_compute(&in, NULL, &t);
        double knee = t.knee_batch * (double)in.pp;
        for (int64_t b = 1; (double)b <= knee && b <= 4096; b = b * 2) {
            in.concurrency = b;
            core_serve_time_compute(&in, NULL, &t);
            ck_assert_msg(t.output_tokens_per_second >= last * (1 - 1e-12), "b %lld: %g < %g",
                          (long long)b, t.output_tokens_per_second, last);
            last = t.output_tokens_per_second;
        }
    }
}
END_TEST

/* Hostile numbers in the struct (the API bounds them; core must still stay finite). */
START_TEST(degenerate_inputs_stay_finite)
{
    struct core_serve_time_input in;
    struct core_serve_time t;

    memset(&in, 0, sizeof in);
    in.usd_per_gpu_hour = -1;
    core_serve_time_compute(&in, NULL, &t);
    ck_assert(isfinite(t.tpot_seconds) && isfinite(t.output_tokens_per_second));
    ck_assert(isfinite(t.mbu) && isfinite(t.mfu) && t.tpot_seconds > 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_serve_time");
    TCase *tc = tcase_create("serve_time");

    tcase_add_test(tc, hopper_constants_as_derived);
    tcase_add_test(tc, batch1_decode_from_weight_bytes_and_hbm);
    tcase_add_test(tc, knee_batch);
    tcase_add_test(tc, prefill_from_flops_and_peak);
    tcase_add_test(tc, moe_decode_reads_the_experts_it_touches);
    tcase_add_test(tc, moe_decode_under_expert_parallelism_wider_than_tp);
    tcase_add_test(tc, moe_prefill_from_flops_and_peak);
    tcase_add_test(tc, tp_all_reduces_latency_bound);
    tcase_add_test(tc, cost_per_million_tokens);
    tcase_add_test(tc, sliding_window_reads_the_window);
    tcase_add_test(tc, properties_over_random_workloads);
    tcase_add_test(tc, throughput_non_decreasing_to_the_knee);
    tcase_add_test(tc, degenerate_inputs_stay_finite);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
