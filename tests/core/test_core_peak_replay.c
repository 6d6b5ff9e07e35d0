/*
 * test_core_peak_replay.c - the replayed training step (core/peak_replay.h) on shapes whose live
 * high-water mark is walked by hand below (the allocator's own rules are tested in
 * test_core_serve_alloc.c).
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

/* Refused: a loss the replay has no sequence for, no layers, more layers than it holds. */
START_TEST(refusals)
{
    struct core_step_shape s = {.tokens = 1024,
                                .layers = 2,
                                .hidden = 1024,
                                .q = 1024,
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
    tcase_add_test(t, refusals);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
