/*
 * test_attention_types.c - GPT-OSS, Gemma 2 and 3, Mistral: their configs to exact counts and
 * to their attention layer types (docs/architectures.md, "Attention layer types").
 *
 * (1) The real configs in attention-configs.json (PROVENANCE-attention.md) decode to the counts
 * derived by hand below, to the published figures, to the same architecture as their presets,
 * and to the published layer types (full / sliding layers and the window). (2) Each way a
 * config states the types - layer_types, sliding_window_pattern, a bare sliding_window, the
 * class defaults - on small configs. (3) Errors name config.<key>.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "check_main.h"
#include "core.h"
#include "hfconfig.h"

#ifndef ATTENTION_CONFIGS_PATH
#error "ATTENTION_CONFIGS_PATH must name tests/validation/attention-configs.json"
#endif

#define ASSERT_I64(actual, expected)                                                               \
    ck_assert_msg((int64_t)(actual) == (int64_t)(expected), "%s = %lld, expected %lld", #actual,   \
                  (long long)(actual), (long long)(expected))

static bool decode(const json_t *cfg, struct core_arch *a, json_t *errors)
{
    int64_t max_pos = 0;
    return api_hfconfig_decode(cfg, a, &max_pos, errors);
}

/* Decode JSON text that must succeed. */
static struct core_arch arch_of(const char *text)
{
    json_error_t jerr;
    json_t *cfg = json_loads(text, 0, &jerr), *errors = json_array();
    struct core_arch a;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", jerr.text);
    ck_assert_msg(decode(cfg, &a, errors), "decode failed: %s",
                  json_array_size(errors)
                      ? json_string_value(json_object_get(json_array_get(errors, 0), "message"))
                      : "(no error)");
    json_decref(cfg);
    json_decref(errors);
    return a;
}

/* Decode JSON text that must fail, the first error on `field`. */
static void assert_error(const char *text, const char *field)
{
    json_t *cfg = json_loads(text, 0, NULL), *errors = json_array();
    struct core_arch a;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", text);
    ck_assert_msg(!decode(cfg, &a, errors), "accepted: %s", text);
    const char *got = json_string_value(json_object_get(json_array_get(errors, 0), "field"));
    ck_assert_msg(got != NULL && strcmp(got, field) == 0, "field %s, expected %s for %s",
                  got ? got : "(null)", field, text);
    json_decref(cfg);
    json_decref(errors);
}

static void assert_kinds(const struct core_arch *a, int64_t full, int64_t sliding, int64_t linear,
                         int64_t window)
{
    struct core_layer_types t;

    core_arch_layer_types(a, &t);
    ASSERT_I64(t.layers[CORE_LAYER_FULL], full);
    ASSERT_I64(t.layers[CORE_LAYER_SLIDING], sliding);
    ASSERT_I64(t.layers[CORE_LAYER_LINEAR], linear);
    ASSERT_I64(t.window, window);
}

static void assert_types(const struct core_arch *a, int64_t full, int64_t sliding, int64_t window)
{
    assert_kinds(a, full, sliding, 0, window);
}

/* ---------------------------------------------------------------------------------------------
 * (1) The real configs
 * ------------------------------------------------------------------------------------------- */

/*
 * GPT-OSS by hand (GptOssAttention, GptOssTopKRouter, GptOssExperts in transformers'
 * modeling_gpt_oss.py): d 2880, 64 query heads and 8 KV heads of 64, f 2880, V 201088, untied.
 *   attention: q 2880 x 4096 = 11,796,480; k, v 2 x 2880 x 512 = 2,949,120; o 4096 x 2880 =
 *     11,796,480; biases 4096 + 2 x 512 + 2880 = 8,000; sinks 64 -> 26,550,144
 *   two RMSNorms 5,760 -> 26,555,904 per layer
 *   router 2880 x E + E; one expert 3 x 2880 x 2880 + 2 x 2880 + 2880 = 24,891,840
 *   embedding and head 2 x 201088 x 2880 = 1,158,266,880; final norm 2,880
 * gpt-oss-120b (36 layers, E 128, top 4):
 *   per layer 26,555,904 + 368,768 + 128 x 24,891,840 = 3,213,080,192
 *   total 36 x 3,213,080,192 + 1,158,266,880 + 2,880 = 116,829,156,672 (OpenAI: 116.83B)
 *   active: 36 x (26,555,904 + 368,768 + 4 x 24,891,840) + 1,158,269,760 = 5,711,982,912;
 *     without the input embedding (579,133,440, OpenAI's convention) 5,132,849,472 (5.13B)
 * gpt-oss-20b (24 layers, E 32, top 4):
 *   per layer 26,555,904 + 92,192 + 32 x 24,891,840 = 823,186,976
 *   total 24 x 823,186,976 + 1,158,269,760 = 20,914,757,184 (20.91B)
 *   active 24 x 126,215,456 + 1,158,269,760 = 4,187,440,704; less 579,133,440 = 3,608,307,264
 *   (3.61B)
 * Gemma 2 9B: 9,241,705,984 (test_hfconfig.c derives it); 27B: d 4608, 32 x 128 heads, 16 KV,
 *   f 36864, four norms: attention 3 x 4608 x 4096 = 56,623,104 + norms 18,432 + MLP
 *   3 x 4608 x 36864 = 509,607,936 -> 566,249,472 x 46 + 4,608 = 26,047,480,320 (Table 2) +
 *   256000 x 4608 = 27,227,128,320.
 * Qwen3-Next-80B-A3B (Qwen3NextAttention, Qwen3NextGatedDeltaNet, Qwen3NextSparseMoeBlock in
 *   transformers' modeling_qwen3_next.py): d 2048, 48 layers, V 151936 untied.
 *   12 gated attention layers (16 heads and 2 KV heads of 256): q_proj 2048 x 8192 (query and
 *     gate) = 16,777,216; k, v 2 x 2048 x 512 = 2,097,152; o 4096 x 2048 = 8,388,608; q/k norms
 *     512 -> 27,263,488
 *   36 Gated DeltaNet layers (16 key heads and 32 value heads of 128: k_w 2048, v_w 4096):
 *     in_proj_qkvz 2048 x 12288 = 25,165,824; in_proj_ba 2048 x 64 = 131,072; conv 8192 x 4 =
 *     32,768; dt_bias + A_log 64; norm 128; out_proj 4096 x 2048 = 8,388,608 -> 33,718,464
 *   every layer: two norms 4,096; MoE: 512 experts of 3 x 2048 x 512 = 3,145,728
 *     (1,610,612,736), router 1,048,576, shared expert 3,145,728, its gate 2,048
 *   total 12 x 27,263,488 + 36 x 33,718,464 + 48 x (4,096 + 1,610,612,736 + 1,048,576 +
 *     3,145,728 + 2,048) + 2 x 151936 x 2048 + 2,048 = 79,674,391,296 (Qwen: 80B)
 *   active: 10 experts of 512 -> total - 48 x 502 x 3,145,728 = 3,874,929,408
 * Gemma 3 27B (language model): d 5376, 32 x 128 heads, 16 KV, f 21504, QK-norm 2 x 128, four
 *   norms: attention 3 x 5376 x 4096 = 66,060,288 + 256 + 21,504 + MLP 346,816,512 =
 *   412,898,560 x 62 + 5,376 = 25,599,716,096 + 262208 x 5376 = 27,009,346,304.
 */
struct expected {
    const char *preset;
    int64_t total, active;
};

static const struct expected expected[] = {
    {"gpt-oss-20b", 20914757184, 4187440704},  {"gpt-oss-120b", 116829156672, 5711982912},
    {"gemma-2-9b", 9241705984, 9241705984},    {"gemma-2-27b", 27227128320, 27227128320},
    {"gemma-3-27b", 27009346304, 27009346304}, {"qwen3-next-80b-a3b", 79674391296, 3874929408},
};

static const struct expected *expected_for(const char *preset)
{
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (strcmp(expected[i].preset, preset) == 0)
            return &expected[i];
    return NULL;
}

static json_t *rows(void)
{
    json_error_t jerr;
    json_t *all = json_load_file(ATTENTION_CONFIGS_PATH, 0, &jerr);
    ck_assert_msg(json_is_array(all), "%s: %s", ATTENTION_CONFIGS_PATH, jerr.text);
    return all;
}

START_TEST(real_configs)
{
    json_t *all = rows(), *errors = json_array();
    json_t *row = json_array_get(all, (size_t)_i);
    const char *preset = json_string_value(json_object_get(row, "preset"));
    const struct expected *want = expected_for(preset);
    int idx = core_preset_find(preset);
    const json_t *layers = json_object_get(row, "layers");
    struct core_arch a;
    struct core_arch_counts c, p;

    ck_assert_msg(want != NULL && idx >= 0, "no expectation or preset for %s", preset);
    ck_assert_msg(decode(json_object_get(row, "config"), &a, errors), "%s does not decode", preset);
    ck_assert(core_arch_count(&a, &c));
    ASSERT_I64(c.total, want->total);
    ASSERT_I64(c.active, want->active);
    /* The published figures (rounded as published; active without the input embedding). */
    double published = json_real_value(json_object_get(row, "published_params"));
    ck_assert_msg(fabs((double)c.total / published - 1.0) <= 0.005, "%s total", preset);
    const json_t *pa = json_object_get(row, "published_active");
    if (json_is_number(pa))
        ck_assert_msg(fabs((double)(c.active - c.embedding) / json_number_value(pa) - 1.0) <= 0.005,
                      "%s active", preset);
    /* The preset is its config: same counts, same layer pattern. */
    ck_assert(core_arch_count(&core_presets[idx].arch, &p));
    ASSERT_I64(p.total, c.total);
    ASSERT_I64(p.active, c.active);
    ASSERT_I64(core_presets[idx].arch.sliding_window, a.sliding_window);
    ASSERT_I64(core_presets[idx].arch.layer_period, a.layer_period);
    ck_assert(core_presets[idx].arch.full_layers == a.full_layers);
    ck_assert(core_presets[idx].arch.attention_sinks == a.attention_sinks);
    ck_assert(core_presets[idx].arch.linear_layers == a.linear_layers);
    ASSERT_I64(core_arch_linear_state_elements(&core_presets[idx].arch),
               core_arch_linear_state_elements(&a));
    assert_kinds(&a, json_integer_value(json_object_get(layers, "full_attention")),
                 json_integer_value(json_object_get(layers, "sliding_attention")),
                 json_integer_value(json_object_get(layers, "linear_attention")),
                 json_integer_value(json_object_get(row, "window")));
    json_decref(errors);
    json_decref(all);
}
END_TEST

/* Mistral 7B v0.1 (hf-configs.json states sliding_window 4096): every one of its 32 layers is a
 * 4096-token window, as the mistral-7b preset says. */
START_TEST(mistral_every_layer)
{
    struct core_arch a = arch_of("{\"model_type\":\"mistral\",\"sliding_window\":4096}");
    assert_types(&a, 0, 32, 4096);
    a = core_presets[core_preset_find("mistral-7b")].arch;
    assert_types(&a, 0, 32, 4096);
    /* v0.2 and later say null: no window. */
    a = arch_of("{\"model_type\":\"mistral\",\"sliding_window\":null}");
    assert_types(&a, 32, 0, 0);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * (2) Each way of stating the types
 * ------------------------------------------------------------------------------------------- */

START_TEST(ways_of_stating)
{
    /* GptOssConfig defaults: sliding 128 on layers 0, 2, 4, ... of 36 (layer_types absent). */
    struct core_arch a = arch_of("{\"model_type\":\"gpt_oss\"}");
    assert_types(&a, 18, 18, 128);
    ck_assert(core_arch_layer_kind(&a, 0) == CORE_LAYER_SLIDING);
    ck_assert(core_arch_layer_kind(&a, 1) == CORE_LAYER_FULL);
    /* Gemma 2's class default: window 4096, alternating, on its 26 default layers. */
    a = arch_of("{\"model_type\":\"gemma2\"}");
    assert_types(&a, 13, 13, 4096);
    /* Gemma 3: sliding_window_pattern 4 over 10 layers: full at i = 3, 7 (i + 1 divisible by 4). */
    a = arch_of("{\"model_type\":\"gemma3_text\",\"num_hidden_layers\":10,"
                "\"sliding_window\":512,\"sliding_window_pattern\":4}");
    assert_types(&a, 2, 8, 512);
    ck_assert(core_arch_layer_kind(&a, 3) == CORE_LAYER_FULL);
    ck_assert(core_arch_layer_kind(&a, 4) == CORE_LAYER_SLIDING);
    /* Pattern 1: every layer full (transformers: (i + 1) % 1 == 0), so no window at all. */
    a = arch_of("{\"model_type\":\"gemma3_text\",\"sliding_window_pattern\":1}");
    assert_types(&a, 26, 0, 0);
    /* An explicit list beats the pattern key; a list of only full layers has no window. A
     * generic (Llama-read) config with layer_types reads the window too. */
    a = arch_of("{\"model_type\":\"gemma3_text\",\"num_hidden_layers\":3,\"sliding_window\":64,"
                "\"sliding_window_pattern\":6,\"layer_types\":[\"full_attention\","
                "\"sliding_attention\",\"sliding_attention\"]}");
    assert_types(&a, 1, 2, 64);
    ck_assert(core_arch_layer_kind(&a, 0) == CORE_LAYER_FULL);
    a = arch_of("{\"model_type\":\"qwen3\",\"num_hidden_layers\":2,\"sliding_window\":4096,"
                "\"layer_types\":[\"full_attention\",\"full_attention\"]}");
    assert_types(&a, 2, 0, 0);
    a = arch_of("{\"model_type\":\"llama\",\"num_hidden_layers\":4,\"sliding_window\":256,"
                "\"layer_types\":[\"sliding_attention\",\"sliding_attention\","
                "\"sliding_attention\",\"full_attention\"]}");
    assert_types(&a, 1, 3, 256);
    /* A family without a window of its own ignores sliding_window without layer_types (Qwen2's
     * sliding_window is inert unless use_sliding_window: its configs state 131072 or 32768). */
    a = arch_of("{\"model_type\":\"qwen2\",\"sliding_window\":4096,\"use_sliding_window\":false}");
    assert_types(&a, 32, 0, 0);
    /* Mixtral says null by default: full attention. */
    a = arch_of("{\"model_type\":\"mixtral\"}");
    assert_types(&a, 32, 0, 0);
    /* A long list folds to its period: 100 layers of (sliding, sliding, full) + 1. */
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"model_type\":\"llama\",\"num_hidden_layers\":100,"
                                "\"sliding_window\":32,\"layer_types\":[");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s\"%s\"", i ? "," : "",
                              i % 3 == 2 ? "full_attention" : "sliding_attention");
    snprintf(text + n, sizeof text - n, "]}");
    a = arch_of(text);
    ASSERT_I64(a.layer_period, 3);
    assert_types(&a, 33, 67, 32); /* full at 2, 5, ..., 98: 33 layers */
}
END_TEST

/* Qwen3-Next: full_attention_interval P puts full attention at (i + 1) mod P = 0 and Gated
 * DeltaNet layers elsewhere (class default 4); an explicit layer_types list may say
 * "linear_attention"; the family has no sliding window (sliding_window is inert). One linear
 * layer keeps (2 x 16 x 128 + 32 x 128) x (4 - 1) = 24,576 convolution inputs and
 * 32 x 128 x 128 = 524,288 state elements: 548,864 per sequence. Another family cannot say
 * "linear_attention". */
START_TEST(qwen3_next_layers)
{
    struct core_arch a = arch_of("{\"model_type\":\"qwen3_next\",\"sliding_window\":4096}");
    assert_kinds(&a, 12, 0, 36, 0);
    ck_assert(core_arch_layer_kind(&a, 0) == CORE_LAYER_LINEAR);
    ck_assert(core_arch_layer_kind(&a, 3) == CORE_LAYER_FULL);
    ASSERT_I64(core_arch_linear_state_elements(&a), 548864);
    ASSERT_I64(core_arch_kv_positions_total(&a, 1000), 12 * 1000);
    a = arch_of("{\"model_type\":\"qwen3_next\",\"num_hidden_layers\":6,"
                "\"full_attention_interval\":3}");
    assert_kinds(&a, 2, 0, 4, 0);
    a = arch_of("{\"model_type\":\"qwen3_next\",\"num_hidden_layers\":4,\"layer_types\":"
                "[\"full_attention\",\"linear_attention\",\"linear_attention\","
                "\"full_attention\"]}");
    assert_kinds(&a, 2, 0, 2, 0);
    a = arch_of("{\"model_type\":\"qwen3_next\",\"full_attention_interval\":1}");
    assert_kinds(&a, 48, 0, 0, 0);
    assert_error("{\"model_type\":\"llama\",\"num_hidden_layers\":2,\"layer_types\":"
                 "[\"linear_attention\",\"full_attention\"]}",
                 "config.layer_types");
    assert_error("{\"model_type\":\"qwen3_next\",\"linear_num_value_heads\":0}",
                 "config.linear_num_value_heads");
}
END_TEST

/* The GPT-OSS hook: attribute_map alias num_experts, and top-k stated twice must agree (the
 * error names the alias that disagrees). */
START_TEST(gpt_oss_keys)
{
    struct core_arch a = arch_of("{\"model_type\":\"gpt_oss\",\"num_experts\":16}");
    ASSERT_I64(a.experts, 16);
    ck_assert(a.attention_sinks && a.router_bias && a.mlp_bias && a.qkv_bias && a.o_bias);
    ck_assert(!a.tied_embeddings);
    assert_error("{\"model_type\":\"gpt_oss\",\"num_experts_per_tok\":4,\"experts_per_token\":2}",
                 "config.experts_per_token");
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * (3) Errors
 * ------------------------------------------------------------------------------------------- */

START_TEST(errors_name_the_key)
{
    assert_error("{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
                 "\"layer_types\":[\"sliding_attention\"]}",
                 "config.layer_types");
    assert_error("{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
                 "\"layer_types\":[\"sliding_attention\",\"chunked_attention\"]}",
                 "config.layer_types");
    assert_error("{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,\"layer_types\":\"full\"}",
                 "config.layer_types");
    assert_error("{\"model_type\":\"gpt_oss\",\"sliding_window\":0}", "config.sliding_window");
    assert_error("{\"model_type\":\"gpt_oss\",\"sliding_window\":\"128\"}",
                 "config.sliding_window");
    assert_error("{\"model_type\":\"gemma3_text\",\"sliding_window_pattern\":65}",
                 "config.sliding_window_pattern");
    assert_error("{\"model_type\":\"gemma3\",\"text_config\":{\"sliding_window\":-1}}",
                 "config.text_config.sliding_window");
    assert_error("{\"model_type\":\"gemma3\",\"text_config\":7}", "config.text_config");
}
END_TEST

/* A pattern that does not repeat within 64 layers cannot be kept: 130 layers, the last one
 * different. */
START_TEST(aperiodic_list)
{
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"model_type\":\"llama\",\"num_hidden_layers\":130,"
                                "\"sliding_window\":32,\"layer_types\":[");
    for (int i = 0; i < 130; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s\"%s\"", i ? "," : "",
                              i == 129 ? "full_attention" : "sliding_attention");
    snprintf(text + n, sizeof text - n, "]}");
    assert_error(text, "config.layer_types");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("attention_types");
    TCase *tc = tcase_create("configs");
    json_t *all = json_load_file(ATTENTION_CONFIGS_PATH, 0, NULL);
    int n = json_is_array(all) ? (int)json_array_size(all) : 1;

    json_decref(all);
    tcase_add_loop_test(tc, real_configs, 0, n);
    tcase_add_test(tc, mistral_every_layer);
    tcase_add_test(tc, ways_of_stating);
    tcase_add_test(tc, gpt_oss_keys);
    tcase_add_test(tc, qwen3_next_layers);
    tcase_add_test(tc, errors_name_the_key);
    tcase_add_test(tc, aperiodic_list);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
