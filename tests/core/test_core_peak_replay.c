/*
 * test_core_peak_replay.c - the replayed training step (core/peak_replay.h) on shapes whose live
 * high-water mark is walked by hand below (the allocator's own rules are tested in
 * test_core_caching_alloc.c).
 */
#include "check_main.h"
#include "core_test_util.h"
#include "peak_replay.h"

#define MIB ((int64_t)1 << 20)

/* 1024 tokens, 2 layers, hidden 1024, q 1024, k/v 256, ffn 4096, vocab 32768, bf16 stream,
 * the shifted unfused loss. Every tensor of width h is 1024 x 1024 x 2 B = 2 MiB, the logits
 * 1024 x 32768 = 33,554,432 elements: 64 MiB in bf16, 128 MiB in fp32. The live peak is the
 * loss's forward at its log-softmax: the three checkpointed layer inputs (the embedding's output
 * and both layers' outputs, 3 x 2 MiB), the final norm's fp32 input (4 MiB) and bf16 output
 * (2 MiB), the bf16 logits, the .float() copy, the shifted copy and the log-softmax
 * (64 + 3 x 128 MiB): 6 + 4 + 2 + 64 + 384 = 460 MiB. Nothing else comes close: a layer's
 * forward holds at most its input, the second norm's output and three 8 MiB MLP tensors
 * (act, up, their product); the loss's backward holds the log-softmax and two fp32 gradients
 * (384 MiB) over the 12 MiB of checkpoints and the final norm's input. Every segment is a
 * multiple of 2 MiB (kRoundLarge, or 20 MiB for requests under 10 MiB), so is their sum. */
START_TEST(live_peak_is_the_loss_forward)
{
    struct core_step_shape s = {.tokens = 1024,
                                .layers = 2,
                                .hidden = 1024,
                                .q = 1024,
                                .heads = 8,
                                .kv = 256,
                                .ffn = 4096,
                                .vocab = 32768,
                                .stream = 2,
                                .norm_out = 2,
                                .compute = 2,
                                .loss = CORE_LOSS_UNFUSED_SHIFTED};
    struct core_step_replay out;

    ck_assert(core_step_replay(&s, &out));
    ASSERT_I64(out.peak_live, 460 * MIB);
    ck_assert(out.peak_reserved >= out.peak_live);
    ASSERT_I64(out.peak_reserved % (2 * MIB), 0);
    ck_assert(out.steps >= 2 && out.steps <= CORE_REPLAY_STEPS);
}
END_TEST

/* The segments by hand. 256 tokens, hidden 1024, ffn 2048: every layer tensor is at most 1 MiB
 * (256 x 2048 x 2 B; the fp32 norm inputs 256 x 1024 x 4 B; flash attention's fp32 dq_accum
 * 256 x 1024 x 4 B), so all go to the small pool and
 * open no large segment. The logits are 256 x 32768: 16 MiB in bf16, 32 MiB in fp32. The loss's
 * forward opens a segment for each of its four tensors (no free block holds them): 16 + 32 + 32
 * + 32 = 112 MiB (each over 10 MiB, rounded to 2 MiB: exact). Its copies and the bf16 logits are
 * freed (free blocks of 16, 32, 32 MiB, one per segment). Backward: nll's gradient takes the
 * .float() copy's 32 MiB block (best fit, lowest segment first), log_softmax_backward's the
 * shifted copy's; nll's and the log-softmax's are freed; the slice's gradient takes the first
 * 32 MiB segment again, the bf16 gradient the 16 MiB one exactly. Nothing new: 112 MiB
 * reserved, and the second step reuses every segment (the replay stops after it). Live at the
 * log-softmax: 112 MiB of logits and, in the small pool, the two checkpoints (2 x 0.5 MiB), the
 * final norm's fp32 input (1 MiB) and its output (0.5 MiB): 114.5 MiB. */
START_TEST(segments_by_hand)
{
    struct core_step_shape s = {.tokens = 256,
                                .layers = 1,
                                .hidden = 1024,
                                .q = 1024,
                                .heads = 8,
                                .kv = 256,
                                .ffn = 2048,
                                .vocab = 32768,
                                .stream = 2,
                                .norm_out = 2,
                                .compute = 2,
                                .loss = CORE_LOSS_UNFUSED_SHIFTED};
    struct core_step_replay out;

    ck_assert(core_step_replay(&s, &out));
    ASSERT_I64(out.peak_reserved, 112 * MIB);
    ASSERT_I64(out.peak_live, 112 * MIB + 5 * MIB / 2);
    ck_assert_int_eq(out.steps, 2);
}
END_TEST

/* The same under PEFT's k-bit preparation: an fp32 stream (4 MiB per checkpoint), the norms'
 * upcast a no-op (no fp32 copy of the final norm's input), its output fp32 (4 MiB): 3 x 4 + 4 +
 * 64 + 384 = 464 MiB. Dequantizing the linears adds nothing at that instant (each dequantized
 * weight dies with its matmul). */
START_TEST(fp32_stream_live_peak)
{
    struct core_step_shape s = {.tokens = 1024,
                                .layers = 2,
                                .hidden = 1024,
                                .q = 1024,
                                .heads = 8,
                                .kv = 256,
                                .ffn = 4096,
                                .vocab = 32768,
                                .stream = 4,
                                .norm_out = 4,
                                .compute = 2,
                                .dequant = true,
                                .loss = CORE_LOSS_UNFUSED_SHIFTED};
    struct core_step_replay out;

    ck_assert(core_step_replay(&s, &out));
    ASSERT_I64(out.peak_live, 464 * MIB);
}
END_TEST

/* FSDP1's hold (hold_inputs): 100 layers of 1024 tokens x 1024 hidden in bf16, a 1024-entry
 * vocabulary. With the hold every layer's checkpointed input (2 MiB) and its input gradient
 * (2 MiB, a buffer of its own: the residual gradient it starts from is shared, so the norm's
 * contribution is added out of place) stay to the backward's end: at least 100 x 4 MiB =
 * 400 MiB live. Without it the most live is under 300 MiB: the loss's forward holds the 101
 * checkpoints (202 MiB), the final norm's fp32 input and output (6 MiB) and 2 + 3 x 4 MiB of
 * logits (1024 x 1024 elements): 222 MiB; a layer's backward at most the 100 checkpoints
 * (200 MiB), its recompute's saved tensors (the norms' fp32 inputs 2 x 4 MiB, q after RoPE and
 * the attention output 2 x 2 MiB, k and v 2 x 0.5 MiB, gate, SiLU and up 3 x 8 MiB: 37 MiB), its
 * output (2 MiB) and a few gradients of at most 8 MiB each. */
START_TEST(fsdp1_hold_keeps_inputs_and_gradients)
{
    struct core_step_shape s = {.tokens = 1024,
                                .layers = 100,
                                .hidden = 1024,
                                .q = 1024,
                                .heads = 8,
                                .kv = 256,
                                .ffn = 4096,
                                .vocab = 1024,
                                .stream = 2,
                                .norm_out = 2,
                                .compute = 2,
                                .loss = CORE_LOSS_UNFUSED_SHIFTED};
    struct core_step_replay out;

    ck_assert(core_step_replay(&s, &out));
    ck_assert(out.peak_live >= 222 * MIB && out.peak_live < 300 * MIB);
    s.hold_inputs = true;
    ck_assert(core_step_replay(&s, &out));
    ck_assert(out.peak_live >= 400 * MIB);
}
END_TEST

/* Refused: a loss the replay has no sequence for, no layers, more layers than it holds. */
START_TEST(refusals)
{
    struct core_step_shape s = {.tokens = 1024,
                                .layers = 2,
                                .hidden = 1024,
                                .q = 1024,
                                .heads = 8,
                                .kv = 256,
                                .ffn = 4096,
                                .vocab = 32768,
                                .stream = 2,
                                .norm_out = 2,
                                .compute = 2,
                                .loss = CORE_LOSS_CHUNKED};
    struct core_step_replay out;

    ck_assert(!core_step_replay(&s, &out));
    s.loss = CORE_LOSS_UNFUSED_FP32;
    s.layers = 0;
    ck_assert(!core_step_replay(&s, &out));
    s.layers = 1000;
    ck_assert(!core_step_replay(&s, &out));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_peak_replay");
    TCase *t = tcase_create("replay");

    tcase_add_test(t, live_peak_is_the_loss_forward);
    tcase_add_test(t, fp32_stream_live_peak);
    tcase_add_test(t, segments_by_hand);
    tcase_add_test(t, fsdp1_hold_keeps_inputs_and_gradients);
    tcase_add_test(t, refusals);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
