/*
 * test_core_worked.c - worked examples: one step time and two framework peaks derived by hand,
 * every term in the comments from the formulas of docs/model.md ("Step time") and
 * docs/frameworks.md, never copied from the program's output.
 *
 * The step-time layout is small enough to follow with a calculator and has every parallel
 * dimension the model prices on one node: tp 2, pp 2, dp 2 on 8 A100-SXM-80GB GPUs.
 */
#include <check.h>
#include <math.h>

#include "check_main.h"
#include "core_test_util.h"
#include "peak.h"

/* A 4-layer GPT: d 1024, a = k = 8 heads of 128, f 4096 (plain GeLU MLP), V 32768, untied
 * embeddings, no biases. N (docs/architectures.md): per layer attention 2 d (a h_d) + 2 d (k h_d)
 * = 4,194,304, two norms 2048, MLP 2 d f = 8,388,608 -> 12,584,960; x 4 = 50,339,840; final
 * norm 1024; embedding and output V d = 33,554,432 each. N = 117,449,728. */
static void small_gpt(struct core_input *in)
{
    core_input_init(in);
    in->layers = 4;
    in->hidden = 1024;
    in->heads = 8;
    in->kv_heads = 8;
    in->ffn_hidden = 4096;
    in->vocab = 32768;
    in->gated_mlp = CORE_FLAG_NO;
    in->tied_embeddings = CORE_FLAG_NO;
    in->seq_len = 1024;
    in->batch = 1;
    in->flash_attention = CORE_FLAG_YES;
    in->checkpointing = CORE_CKPT_NONE;
    in->precision = CORE_PREC_BF16;
}

/*
 * The step: tp t = 2, pp p = 2, dp = 2 (G 8, one node), b 1, s 1024, global batch 8 -> m =
 * 8 / (b dp) = 4 micro-batches, v 1, ZeRO 1, AdamW with fp32 master weights, e = 2 bytes.
 * Sequence parallelism (default with tp > 1) and TP overlap (default: SP on a scale-up link) on;
 * dp_comm_overlap on (default).
 *
 * Ampere constants (docs/model.md, "Constants"): gemm 0.80, h 64, flash 0.45, hbm 0.80, up 0.78,
 * base 10 us, hop_up 1 us, overlap 0.5, tp_hide 0.5, launch 40 us. A100 SXM: 312 TFLOP/s bf16,
 * 2.039 TB/s, NVLink 300 GB/s per direction. So rate = 0.80 * 312e12 = 249.6e12 FLOP/s,
 * HBM 0.8 * 2.039e12 = 1.6312e12 B/s, bus 0.78 * 300e9 = 234e9 B/s; sigma(x) = x / (x + 64).
 *
 * One layer forward, rows r = b s / c = 1024, GEMM 2 M N K / (rate sigma(M) sigma(N) sigma(K)):
 *   QKV   M 1024, N (a + 2k) h_d / t = 1536, K 1024: 3,221,225,472 FLOP / (249.6e12 * 16/17 *
 *         24/25 * 16/17) = 15.1762051 us
 *   out   M 1024, N 1024, K a h_d / t = 512: 1,073,741,824 / (249.6e12 * 16/17 * 16/17 * 8/9)
 *         = 5.4634338 us
 *   MLP   in M 1024, N f / t = 2048, K 1024 and out M 1024, N 1024, K 2048: 4,294,967,296 /
 *         (249.6e12 * 16/17 * 16/17 * 32/33) = 20.0325908 us each
 *   sum 60.7048205 us
 *   attention (fused, causal half): 4 (b a / t) s s h_d / 2 / (312e12 * 0.45) = 4 * 4 * 1024^2
 *         * 128 / 2 / 140.4e12 = 7.6477338 us
 *   element-wise: e (11 d / t + (f + f) / t) = 2 (5632 + 4096) = 19,456 B per token; 1024
 *         tokens / 1.6312e12 + 40 us launch = 52.2136734 us
 *   TP all-reduce of r d e = 2,097,152 B over 2 ranks: min(n - 1, 2 log2 n) = 1 step:
 *         10 + 2 * 1 us + 2 (1/2) 2,097,152 / 234e9 = 20.9621880 us; two per layer forward, half
 *         hidden: tp_f = 2 * 20.9621880 * (1 - 0.5) = 20.9621880 us
 * A stage holds L / p = 2 layers: forward compute 2 (60.7048205 + 7.6477338) = 136.7051086 us.
 * The last stage's logits GEMM M 1024, N V / t = 16384, K 1024: 34,359,738,368 / (249.6e12 *
 * 16/17 * 256/257 * 16/17) = 156.0113887 us, three times (forward and backward).
 * Per micro-batch (forward + backward = 3 x forward):
 *   compute 3 * 136.7051086 + 3 * 156.0113887 = 878.1494920 us
 *   memory  3 * 2 * 52.2136734 + 1024 * 16384 * 12 B / 1.6312e12 = 436.7044237 us
 *   tp      3 * 2 * 20.9621880 = 125.7731282 us
 * The step, m = 4:
 *   compute       4 * 878.1494920 = 3512.5979679 us
 *   memory_bound  4 * 436.7044237 = 1746.8176949 us
 *   tp_comm       4 * 125.7731282 = 503.0925128 us
 *   pp_bubble     (p - 1) / v = 1 micro-batch time: 878.1494920 + 436.7044237 + 125.7731282 =
 *                 1440.6270439 us
 *   pp_comm       neighbouring stages t c dp = 4 ranks apart, < 8: NVLink. One send: 10 + 1 us +
 *                 r d e / t = 1,048,576 B / 234e9 = 15.4810940 us; m 2 v = 8 of them:
 *                 123.8487521 us
 *   dp_comm       ZeRO 1: reduce-scatter + all-gather = one all-reduce of N / (t p) e =
 *                 58,724,864 B over 2 ranks (2 apart, in the node): 10 + 2 + 58,724,864 / 234e9
 *                 = 262.9609573 us; the last backward, 2 x 136.7051086 = 273.4102172 us, can hide
 *                 half of it: 131.4804786 us exposed
 *   optimizer     N / (t p dp) = 14,681,216 parameters x (2 + 2 + 2 (4 + 8)) = 28 B / 1.6312e12 =
 *                 252.0071408 us
 *   recompute, cp_comm, ep_comm, offload: 0
 * step_seconds = 7710.4715911 us. Tokens per second per GPU 8 * 1024 / step / 8 =
 * 132,806.40333; model FLOPs per token 6 N + 12 L s a h_d = 704,698,368 + 50,331,648 =
 * 755,030,016; MFU = 132,806.40333 * 755,030,016 / 312e12 = 0.3213872.
 */
START_TEST(step_time_worked_example)
{
    struct core_input in;
    struct core_result r;
    const struct core_perf_breakdown *b = &r.performance.breakdown;

    small_gpt(&in);
    in.gpu = core_gpu_find("a100-sxm-80gb");
    in.gpus = 8;
    in.tp = 2;
    in.pp = 2;
    in.zero_stage = 1;
    in.global_batch = 8;
    in.mfu = CORE_MFU_PREDICTED;
    EVAL_OK(in, r);
    ck_assert_int_eq(r.resolved.params, 117449728);
    ck_assert(r.resolved.micro_batches == 4.0);
    ASSERT_REL(b->compute, 3512.5979679e-6, 1e-9);
    ASSERT_REL(b->memory_bound, 1746.8176949e-6, 1e-9);
    ASSERT_REL(b->tp_comm, 503.0925128e-6, 1e-9);
    ASSERT_REL(b->pp_bubble, 1440.6270439e-6, 1e-9);
    ASSERT_REL(b->pp_comm, 123.8487521e-6, 1e-9);
    ASSERT_REL(b->dp_comm, 131.4804786e-6, 1e-9);
    ASSERT_REL(b->optimizer, 252.0071408e-6, 1e-9);
    ck_assert(b->recompute == 0 && b->cp_comm == 0 && b->ep_comm == 0 && b->offload == 0);
    ASSERT_REL(r.performance.step_seconds, 7710.4715911e-6, 1e-9);
    ASSERT_REL(r.performance.tokens_per_second_per_gpu, 132806.40333, 1e-9);
    ASSERT_REL(r.performance.mfu, 0.3213872, 1e-6);
    ck_assert_str_eq(r.performance.bottleneck, "memory_bound");
    /* With mfu "predicted" the run takes ceil(D / tokens per step) steps of that: D 1.4e12 /
     * 8192 = 170,898,437.5 -> 170,898,438 steps x 7710.4715911 us = 1,317,707.55 s. */
    ck_assert(r.runtime.steps == 170898438.0);
    ASSERT_REL(r.runtime.seconds, 170898438.0 * 7710.4715911e-6, 1e-9);
    /* m = 1 < p (global batch 2), which plain 1F1B runs (core/rules.c): a step of m micro-batches
     * on p stages takes m + p - 1 = 2 stage times, so the bubble is still (p - 1) = 1 micro-batch
     * time, 1440.6270439 us, beside 1 x 878.1494920 us of compute. */
    in.global_batch = 2;
    EVAL_OK(in, r);
    ck_assert(r.resolved.micro_batches == 1.0);
    ASSERT_REL(b->pp_bubble, 1440.6270439e-6, 1e-9);
    ASSERT_REL(b->compute, 878.1494920e-6, 1e-9);
    ASSERT_REL(b->compute + b->memory_bound + b->tp_comm + b->pp_bubble, 2 * 1440.6270439e-6, 1e-9);
}
END_TEST

/* The peak of one stage under the options the resolved inputs give (as core_evaluate runs it). */
static void peak_of(const struct core_input *in, struct core_result *r, struct core_peak *pk)
{
    struct core_peak_options o;

    EVAL_OK(*in, *r);
    core_peak_options_resolved(&r->resolved, &o);
    core_peak_compute(&r->resolved, &o, pk);
}

/*
 * Megatron-LM, the small GPT on one A100 at s 4096, b 1, no checkpointing, flash attention,
 * allocated bytes (docs/frameworks.md, "Megatron-LM"). N = 117,449,728.
 *   state: bf16 weights 2 + gradient buffer 4 (persistent, fp32: Megatron-LM accumulates bf16
 *          runs' gradients in fp32, arguments.py) + fp32 master 4 + Adam moments 8 =
 *          18 B/param = 2,114,095,104 (one GPU: nothing to shard)
 *   activations: Korthikanti's 34 s b d per layer with fused attention (no 5 a s^2 b term) =
 *          34 * 4096 * 1024 = 142,606,336; 4 layers, one micro-batch in flight: 570,425,344
 *   logits: s b V / t = 134,217,728, the vocab-parallel loss holds the bf16 logits and their fp32
 *          upcast, 6 B each: 805,306,368
 *   forward_end = 2,114,095,104 + 570,425,344 + 805,306,368 = 3,489,826,816
 *   backward: its first instant (loss backward: the fp32 buffer becomes the gradient, still 6 B
 *          per logit, every saved tensor) equals forward_end; the top layer (logits' bf16
 *          gradient, 2 B: 2,952,955,904) and the end (one layer's tensors: 2,256,701,440) hold
 *          less
 *   optimizer_step: state alone (the gradients are fp32 already: no upcast for the master
 *          step): 18 N = 2,114,095,104
 * The peak is forward_end, 3,489,826,816 allocated; the device figure adds the allocator's
 * 1.06 and the 0.75 GiB CUDA context (one GPU: no communicator): 3,489,826,816 * 1.06 +
 * 805,306,368 = 4,504,522,792.96.
 */
START_TEST(megatron_peak_worked_example)
{
    struct core_input in;
    struct core_result r;
    struct core_peak pk;

    small_gpt(&in);
    in.gpu = core_gpu_find("a100-sxm-80gb");
    in.seq_len = 4096;
    in.framework = CORE_FW_MEGATRON;
    peak_of(&in, &r, &pk);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].weights, 2.0 * 117449728, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].activations, 570425344.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].logits, 805306368.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].total, 3489826816.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_BACKWARD].total, 3489826816.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_OPTIMIZER].total, 2114095104.0, 1e-12);
    ck_assert_int_eq(pk.at, CORE_MOMENT_FORWARD_END);
    ck_assert_str_eq(r.memory.peak.stage, "only");
    ck_assert_int_eq(r.memory.peak.bytes, 3489826816);
    ASSERT_REL((double)r.memory.peak.device, 4504522792.96, 1e-9);
}
END_TEST

/*
 * torchtitan, the same GPT on two A100s with FSDP (ZeRO 3, dp 2), s 4096, b 1, eager, no
 * checkpointing, flash attention, reserved bytes (docs/frameworks.md, "torchtitan").
 *   state: FSDP2's fp32 sharded parameters 4, fp32 gradients 4, AdamW moments like the fp32
 *          parameters 8, over 2 ranks: weights 234,899,456, gradients 234,899,456, optimizer
 *          469,798,912
 *   activations per token of a layer (t 1): norms 4 h + 4 d = 8192, q, k, v, output, copy 10 q
 *          = 10,240, MLP 4 f = 16,384; eager RMSNorm and RoPE fp32 copies 8 h + 4 q + 4 kv =
 *          16,384: 51,200 B x 4096 tokens = 209,715,200 per layer, 838,860,800 for 4
 *   logits 134,217,728; the unfused fp32 loss: 10 B each forward, 12 backward
 *   FSDP buffers: two bf16 layers gathered, N_layer = (N - 2 V d) / 4 = 12,585,216 (the final
 *          norm spread over the layers), 2 * 2 * 12,585,216 = 50,340,864, and the root unit
 *          (embedding and output, never resharded) 2 * 2 * 33,554,432 = 134,217,728: 184,558,592
 *   one micro-batch (m = 1): no gradient before the backward
 *   forward_end = 234,899,456 + 469,798,912 + 838,860,800 + 1,342,177,280 + 184,558,592 =
 *          3,070,295,040
 *   backward, loss instant: the same with 12 B per logit: 3,338,730,496 (the top-layer instant,
 *          2,206,282,240, and the end, 1,409,382,912, hold less)
 *   optimizer_step: weights, gradients, moments and foreach AdamW's one parameter-sized fp32
 *          temporary over 2 ranks: 234,899,456 + 234,899,456 + 469,798,912 +
 *          234,899,456 = 1,174,497,280
 * Peak: backward, 3,338,730,496 allocated. Held besides: the bf16 logits freed just before the
 * fp32 gradients (2 B each, 268,435,456) and the sharded gradients FSDP frees between steps
 * (234,899,456): 3,842,065,408; reserved = 1.08 (eager) x 3,842,065,408 = 4,149,430,640.64.
 * Device: + 0.75 GiB context + 0.75 GiB communicators = 5,760,043,376.64.
 */
START_TEST(torchtitan_peak_worked_example)
{
    struct core_input in;
    struct core_result r;
    struct core_peak pk;

    small_gpt(&in);
    in.gpu = core_gpu_find("a100-sxm-80gb");
    in.seq_len = 4096;
    in.gpus = 2;
    in.zero_stage = 3;
    in.framework = CORE_FW_TORCHTITAN;
    in.memory_metric = CORE_METRIC_RESERVED;
    peak_of(&in, &r, &pk);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].activations, 838860800.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].buffers, 184558592.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].total, 3070295040.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_BACKWARD].total, 3338730496.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_OPTIMIZER].total, 1174497280.0, 1e-12);
    ck_assert_int_eq(pk.at, CORE_MOMENT_BACKWARD);
    ASSERT_REL(pk.allocated, 3338730496.0, 1e-12);
    ASSERT_REL(pk.held, 3842065408.0, 1e-12);
    ASSERT_REL((double)r.memory.peak.bytes, 4149430640.64, 1e-9);
    ck_assert_str_eq(r.memory.peak.at, "backward");
    ASSERT_REL((double)r.memory.peak.device, 5760043376.64, 1e-9);
}
END_TEST

static Suite *worked_suite(void)
{
    Suite *s = suite_create("core_worked");
    TCase *t = tcase_create("worked");

    tcase_add_test(t, step_time_worked_example);
    tcase_add_test(t, megatron_peak_worked_example);
    tcase_add_test(t, torchtitan_peak_worked_example);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(worked_suite());
}
