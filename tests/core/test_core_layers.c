/*
 * test_core_layers.c - attention layer types (core/layers.c; docs/architectures.md,
 * "Attention layer types"): which layers are full or sliding, what a window changes (keys
 * attended, KV positions), and the terms that use them - the attention FLOPs and the fused
 * attention time. Expected values are derived by hand in the comments.
 */
#include <check.h>

#include "check_main.h"
#include "core_test_util.h"
#include "perf.h"

static const struct core_arch *preset_arch(const char *id)
{
    int idx = core_preset_find(id);
    ck_assert_msg(idx >= 0, "preset %s missing", id);
    return &core_presets[idx].arch;
}

static struct core_layer_types types_range(const struct core_arch *a, int64_t first, int64_t count)
{
    struct core_layer_types t;
    core_arch_layer_types_range(a, first, count, &t);
    return t;
}

/* Gemma 3 27B: 62 layers, layer i full when (i + 1) mod 6 = 0, i.e. i = 5, 11, ..., 59: 10 full
 * and 52 sliding of window 1024. Two pipeline stages of 31: [0, 31) holds i = 5, 11, 17, 23, 29
 * (5 full, 26 sliding), [31, 62) holds 35, 41, 47, 53, 59 (5, 26). [6, 12) holds only 11. */
START_TEST(gemma3_pattern)
{
    const struct core_arch *a = preset_arch("gemma-3-27b");
    struct core_layer_types t;

    core_arch_layer_types(a, &t);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 10);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], 52);
    ASSERT_I64(t.layers[CORE_LAYER_LINEAR], 0);
    ASSERT_I64(t.window, 1024);
    t = types_range(a, 0, 31);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 5);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], 26);
    t = types_range(a, 31, 31);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 5);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], 26);
    t = types_range(a, 6, 6);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 1);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], 5);
    /* A range past the end counts only the layers that exist; an empty one counts none. */
    t = types_range(a, 60, 10);
    ASSERT_I64(t.layers[CORE_LAYER_FULL] + t.layers[CORE_LAYER_SLIDING], 2);
    t = types_range(a, 62, 5);
    ASSERT_I64(t.layers[CORE_LAYER_FULL] + t.layers[CORE_LAYER_SLIDING], 0);
    ASSERT_I64(t.window, 0);
    ck_assert(core_arch_layer_kind(a, 0) == CORE_LAYER_SLIDING);
    ck_assert(core_arch_layer_kind(a, 5) == CORE_LAYER_FULL);
    ck_assert(core_arch_layer_kind(a, 6) == CORE_LAYER_SLIDING);
    ck_assert(core_arch_layer_kind(a, 59) == CORE_LAYER_FULL);
    ck_assert(core_arch_layer_kind(a, 61) == CORE_LAYER_SLIDING);
}
END_TEST

/* KV positions of one sequence. Gemma 3 27B at T = 32768: 10 full layers keep 32768 each and 52
 * sliding ones 1024: 327,680 + 53,248 = 380,928 layer-positions. At T = 512 (inside the window)
 * every layer keeps 512: 31,744. Llama 2 7B (no window) at 4096: 32 x 4096 = 131,072. */
START_TEST(kv_positions)
{
    const struct core_arch *g = preset_arch("gemma-3-27b");

    ASSERT_I64(core_arch_kv_positions(g, CORE_LAYER_FULL, 32768), 32768);
    ASSERT_I64(core_arch_kv_positions(g, CORE_LAYER_SLIDING, 32768), 1024);
    ASSERT_I64(core_arch_kv_positions(g, CORE_LAYER_SLIDING, 512), 512);
    ASSERT_I64(core_arch_kv_positions(g, CORE_LAYER_LINEAR, 512), 0);
    ASSERT_I64(core_arch_kv_positions_total(g, 32768), 380928);
    ASSERT_I64(core_arch_kv_positions_total(g, 512), 31744);
    ASSERT_I64(core_arch_kv_positions_total(preset_arch("llama2-7b"), 4096), 131072);
}
END_TEST

/* Mean keys per query. Causal, T = 8192, w = 4096: (1/8192)(4096^2/2 + 4096 x 4096) =
 * 4096 - 4096^2/16384 = 3072; T = 2048 <= w: T/2 = 1024; no window: 8192/2 = 4096. Not causal:
 * min(T, w) = 4096, and T without a window. */
START_TEST(mean_keys)
{
    ck_assert(core_attention_mean_keys(8192, 4096, true) == 3072.0);
    ck_assert(core_attention_mean_keys(2048, 4096, true) == 1024.0);
    ck_assert(core_attention_mean_keys(8192, 0, true) == 4096.0);
    ck_assert(core_attention_mean_keys(8192, 4096, false) == 4096.0);
    ck_assert(core_attention_mean_keys(8192, 0, false) == 8192.0);
    ck_assert(core_attention_mean_keys(0, 4096, true) == 0.0);
    /* GPT-OSS at T = 4096: 18 full layers x 2048 + 18 sliding x (128 - 128^2/8192 = 126). */
    ck_assert(core_arch_attended_keys(preset_arch("gpt-oss-120b"), 4096, true) ==
              18.0 * 2048.0 + 18.0 * 126.0);
}
END_TEST

/* The attention FLOP term, 12 x (a h_d) x keys summed over layers, per token.
 * Mistral 7B (32 layers, a h_d = 32 x 128 = 4096, window 4096) at T = 8192, causal:
 *   12 x 32 x 3072 x 4096 = 4,831,838,208 (full attention would be 12 x 32 x 4096 x 4096 =
 *   6,442,450,944, which is what a bare 7e9 - Mistral's size without its window - gives).
 *   Counted `full` (no causal halving): 12 x 32 x min(8192, 4096) x 4096 = 6,442,450,944.
 * At T = 4096 = w the window changes nothing: 12 x 32 x 2048 x 4096 = 3,221,225,472.
 * gpt-oss-120b at T = 4096, causal: a h_d = 64 x 64 = 4096, keys 18 x 2048 + 18 x 126 = 39,132:
 *   12 x 39,132 x 4096 = 1,923,416,064. */
START_TEST(attention_flops)
{
    struct core_input in;
    struct core_result out;

    core_input_init(&in);
    in.preset = core_preset_find("mistral-7b");
    in.seq_len = 8192;
    in.attention_flops = CORE_ATTN_CAUSAL;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 4831838208.0);
    in.attention_flops = CORE_ATTN_FULL;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 6442450944.0);
    in.attention_flops = CORE_ATTN_CAUSAL;
    in.seq_len = 4096;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 3221225472.0);

    core_input_init(&in);
    in.params = 7000000000; /* nearest preset mistral-7b: its size, every layer full */
    in.seq_len = 8192;
    in.attention_flops = CORE_ATTN_CAUSAL;
    EVAL_OK(in, out);
    ck_assert(out.resolved.shape.source == CORE_SHAPE_NEAREST);
    ck_assert(out.flops.per_token.attention == 6442450944.0);

    core_input_init(&in);
    in.preset = core_preset_find("gpt-oss-120b");
    in.seq_len = 4096;
    in.attention_flops = CORE_ATTN_CAUSAL;
    in.gpus = 64;
    in.ep = 8;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 1923416064.0);
}
END_TEST

/* The step-time model's fused attention processes, per layer, the keys each query attends: with
 * every layer sliding the attention time is proportional to the mean keys k(w) = w - w^2/(2s),
 * against s/2 without a window, and nothing else changes. At s = 8192: k(4096) = 3072 and
 * k(2048) = 1792, so the time the window saves is in the ratio (4096 - 1792) / (4096 - 3072) =
 * 2.25 between the two windows, whatever the efficiency constants. A window as long as the
 * sequence saves nothing, and materialized (unfused) attention computes the whole masked score
 * matrix, so there the window changes nothing either. */
START_TEST(fused_attention_time)
{
    struct core_input in;
    struct core_result out;
    struct core_perf_input pin;
    struct core_perf full, w4096, w2048, same;

    core_input_init(&in);
    in.preset = core_preset_find("mistral-7b");
    in.seq_len = 8192;
    in.flash_attention = CORE_FLAG_YES;
    in.mfu = CORE_MFU_PREDICTED;
    EVAL_OK(in, out);
    core_perf_input_resolved(&pin, &out.resolved);
    ASSERT_I64(pin.sliding_layers, 32);
    ASSERT_I64(pin.sliding_window, 4096);
    core_perf_predict(&pin, &w4096);
    pin.sliding_window = 2048;
    core_perf_predict(&pin, &w2048);
    pin.sliding_window = 8192;
    core_perf_predict(&pin, &same);
    pin.sliding_layers = 0, pin.sliding_window = 0;
    core_perf_predict(&pin, &full);

    ck_assert(w4096.breakdown.compute < full.breakdown.compute);
    ASSERT_REL((full.breakdown.compute - w2048.breakdown.compute) /
                   (full.breakdown.compute - w4096.breakdown.compute),
               2.25, 1e-9);
    ck_assert(same.breakdown.compute == full.breakdown.compute);
    ck_assert(w4096.breakdown.memory_bound == full.breakdown.memory_bound);
    ck_assert(w4096.breakdown.tp_comm == full.breakdown.tp_comm);

    pin.flash_attention = false;
    core_perf_predict(&pin, &full);
    pin.sliding_layers = 32, pin.sliding_window = 4096;
    core_perf_predict(&pin, &w4096);
    ck_assert(w4096.step_seconds == full.step_seconds);
}
END_TEST

/* Zero fields are every layer full: the functions reduce to L and L x T. Invalid patterns (a
 * period above 64, a full bit at or above the period) are rejected by the count. */
START_TEST(zero_and_invalid)
{
    struct core_arch a = *preset_arch("llama2-7b");
    struct core_layer_types t;

    core_arch_layer_types(&a, &t);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 32);
    ASSERT_I64(t.window, 0);
    ck_assert(core_arch_attended_keys(&a, 4096, false) == 32.0 * 4096.0);
    ck_assert(core_arch_attended_keys(&a, 4096, true) == 32.0 * 2048.0);
    a.sliding_window = 128;
    a.layer_period = 65;
    ck_assert(!core_arch_layer_types_valid(&a));
    ASSERT_I64(core_arch_params(&a), -1);
    a.layer_period = 2;
    a.full_layers = 0x4;
    ck_assert(!core_arch_layer_types_valid(&a));
    ASSERT_I64(core_arch_params(&a), -1);
    a.full_layers = 0x2;
    ck_assert(core_arch_layer_types_valid(&a));
    a.sliding_window = -1;
    ck_assert(!core_arch_layer_types_valid(&a));
}
END_TEST

/* The `sliding_window` input. On Mistral 7B at T 8192 (causal), 0 removes the window: 12 x 32 x
 * 4096 x 4096 = 6,442,450,944 per token; 2048 replaces it: k = 2048 - 2048^2/16384 = 1792 keys,
 * 12 x 32 x 1792 x 4096 = 2,818,572,288. On a bare 7e9 (every layer full), 4096 makes every layer
 * slide (no pattern): 4,831,838,208 as Mistral's own. On Gemma 2 9B the pattern stays: 21 full
 * and 21 sliding layers of the new window. The parameter count never changes. */
START_TEST(window_input)
{
    struct core_input in;
    struct core_result out;

    core_input_init(&in);
    ck_assert(in.sliding_window == -1);
    in.preset = core_preset_find("mistral-7b");
    in.seq_len = 8192;
    in.attention_flops = CORE_ATTN_CAUSAL;
    in.sliding_window = 0;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 6442450944.0);
    in.sliding_window = 2048;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 2818572288.0);
    ASSERT_I64(out.resolved.params, 7241732096);

    core_input_init(&in);
    in.params = 7000000000;
    in.seq_len = 8192;
    in.attention_flops = CORE_ATTN_CAUSAL;
    in.sliding_window = 4096;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 4831838208.0);

    /* With sliding_window_pattern 2 the bare 7e9 alternates (sliding first): 16 full layers of
     * 4096 keys and 16 sliding of 3072, 12 x 4096 x (65,536 + 49,152) = 5,637,144,576; pattern 1
     * makes every layer full again (6,442,450,944). */
    in.sliding_window_pattern = 2;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 5637144576.0);
    ASSERT_I64(core_arch_layer_kind(&out.resolved.shape.arch, 0), CORE_LAYER_SLIDING);
    in.sliding_window_pattern = 1;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 6442450944.0);

    /* A hybrid's pattern is its own: a 422 naming the input. */
    core_input_init(&in);
    in.preset = core_preset_find("qwen3-next-80b-a3b");
    in.sliding_window_pattern = 2;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "sliding_window_pattern"));

    core_input_init(&in);
    in.preset = core_preset_find("gemma-2-9b");
    in.sliding_window = 1024;
    EVAL_OK(in, out);
    struct core_layer_types t;
    core_arch_layer_types(&out.resolved.shape.arch, &t);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], 21);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], 21);
    ASSERT_I64(t.window, 1024);
}
END_TEST

/* Qwen3-Next-80B-A3B: 12 full-attention layers of 48, the rest Gated DeltaNet with no quadratic
 * term. Attention FLOPs at T 4096 (a h_d = 16 x 256 = 4096), causal: 12 x 4096 x 12 x 2048 =
 * 1,207,959,552 per token. In the step-time model the attention time of the non-linear layers
 * is what changes with their number: removing 36 linear layers' worth of attention saves 36/24 =
 * 1.5 times what removing 24 saves, fused or materialized. KV positions: 12 x T. */
START_TEST(hybrid_linear)
{
    struct core_input in;
    struct core_result out;
    struct core_perf_input pin;
    struct core_perf none, l24, l36;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-next-80b-a3b");
    in.seq_len = 4096;
    in.attention_flops = CORE_ATTN_CAUSAL;
    in.gpus = 64;
    in.ep = 64;
    in.mfu = CORE_MFU_PREDICTED;
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 1207959552.0);
    in.sliding_window = 0; /* no window to remove: the hybrid pattern stays */
    EVAL_OK(in, out);
    ck_assert(out.flops.per_token.attention == 1207959552.0);
    in.sliding_window = -1;
    ASSERT_I64(core_arch_kv_positions_total(&out.resolved.shape.arch, 4096), 12 * 4096);
    for (int flash = 1; flash >= 0; flash--) {
        in.flash_attention = flash ? CORE_FLAG_YES : CORE_FLAG_NO;
        EVAL_OK(in, out);
        core_perf_input_resolved(&pin, &out.resolved);
        ASSERT_I64(pin.linear_layers, 36);
        core_perf_predict(&pin, &l36);
        pin.linear_layers = 24;
        core_perf_predict(&pin, &l24);
        pin.linear_layers = 0;
        core_perf_predict(&pin, &none);
        ASSERT_REL((none.breakdown.compute - l36.breakdown.compute) /
                       (none.breakdown.compute - l24.breakdown.compute),
                   1.5, 1e-9);
        if (!flash)
            ASSERT_REL((none.breakdown.memory_bound - l36.breakdown.memory_bound) /
                           (none.breakdown.memory_bound - l24.breakdown.memory_bound),
                       1.5, 1e-9);
    }
}
END_TEST

/* Attention sinks: one logit per head per layer. gpt-oss-20b with them off loses 24 x 64. */
START_TEST(sinks_counted)
{
    struct core_arch a = *preset_arch("gpt-oss-20b");
    int64_t with = core_arch_params(&a);

    a.attention_sinks = false;
    ASSERT_I64(with - core_arch_params(&a), 24 * 64);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_layers");
    TCase *tc = tcase_create("layers");

    tcase_add_test(tc, gemma3_pattern);
    tcase_add_test(tc, kv_positions);
    tcase_add_test(tc, mean_keys);
    tcase_add_test(tc, attention_flops);
    tcase_add_test(tc, fused_attention_time);
    tcase_add_test(tc, zero_and_invalid);
    tcase_add_test(tc, sinks_counted);
    tcase_add_test(tc, window_input);
    tcase_add_test(tc, hybrid_linear);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
