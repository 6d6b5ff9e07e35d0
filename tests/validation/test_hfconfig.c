/*
 * test_hfconfig.c - Hugging Face configs to exact parameter counts (issue 13).
 *
 * Three kinds of check. (1) Every row of hf-configs.json (real config.json files with counts
 * read from the checkpoints; PROVENANCE-hf.md) decodes to its published total and, for the
 * mixtures of experts, its published active count, to the parameter. (2) Small configs whose
 * counts are derived by hand in the comments: multi-latent attention with q-LoRA and experts,
 * GPT-2's tied head and learned positions, Falcon's new decoder, the unknown-type fallback.
 * (3) Each mixture-of-experts preset is its config: the config text decodes to the same counts,
 * which land on the published total (1 %) and active count. Errors name config.<key>.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "check_main.h"
#include "core.h"
#include "hfconfig.h"

#ifndef HF_CONFIGS_PATH
#error "HF_CONFIGS_PATH must name tests/validation/hf-configs.json"
#endif

#define ASSERT_I64(actual, expected)                                                               \
    ck_assert_msg((int64_t)(actual) == (int64_t)(expected), "%s = %lld, expected %lld", #actual,   \
                  (long long)(actual), (long long)(expected))

/* Decode a config given as JSON text; require success and return its counts. */
static struct core_arch_counts counts_of(const char *text, struct core_arch *arch)
{
    json_error_t jerr;
    json_t *cfg = json_loads(text, 0, &jerr), *errors = json_array();
    struct core_arch a;
    struct core_arch_counts c;
    int64_t max_pos = 0;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", jerr.text);
    bool ok = api_hfconfig_decode(cfg, &a, &max_pos, errors);
    ck_assert_msg(ok, "decode failed: %s",
                  json_array_size(errors)
                      ? json_string_value(json_object_get(json_array_get(errors, 0), "message"))
                      : "(no error)");
    ck_assert(core_arch_count(&a, &c));
    ASSERT_I64(core_arch_params(&a), c.total);
    ASSERT_I64(core_arch_active_params(&a), c.active);
    ASSERT_I64(c.total, c.experts + c.non_experts);
    if (arch != NULL)
        *arch = a;
    json_decref(cfg);
    json_decref(errors);
    return c;
}

/* Decode a config that must fail; the first error must name `field`. */
static void assert_error(const char *text, const char *field)
{
    json_t *cfg = json_loads(text, JSON_DECODE_ANY, NULL), *errors = json_array();
    struct core_arch a;
    int64_t max_pos = 0;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", text);
    ck_assert_msg(!api_hfconfig_decode(cfg, &a, &max_pos, errors), "accepted: %s", text);
    ck_assert_uint_ge(json_array_size(errors), 1);
    const char *got = json_string_value(json_object_get(json_array_get(errors, 0), "field"));
    const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
    ck_assert_msg(got != NULL && strcmp(got, field) == 0, "field %s (%s), expected %s for %s",
                  got ? got : "(null)", msg ? msg : "", field, text);
    ck_assert(msg != NULL && msg[0] != '\0');
    json_decref(cfg);
    json_decref(errors);
}

/* ---------------------------------------------------------------------------------------------
 * (1) The data file
 * ------------------------------------------------------------------------------------------- */

START_TEST(every_row_to_the_parameter)
{
    json_error_t jerr;
    json_t *rows = json_load_file(HF_CONFIGS_PATH, 0, &jerr);
    size_t i;
    json_t *row;

    ck_assert_msg(rows != NULL, "%s: %s", HF_CONFIGS_PATH, jerr.text);
    ck_assert_uint_eq(json_array_size(rows), 13);
    json_array_foreach (rows, i, row) {
        const char *name = json_string_value(json_object_get(row, "name"));
        json_t *errors = json_array(), *active = json_object_get(row, "active_params");
        struct core_arch a;
        struct core_arch_counts c;
        int64_t max_pos = 0;
        bool ok = api_hfconfig_decode(json_object_get(row, "config"), &a, &max_pos, errors);

        ck_assert_msg(ok, "%s: %s", name,
                      json_string_value(json_object_get(json_array_get(errors, 0), "message")));
        ck_assert(core_arch_count(&a, &c));
        /* Every source here gives an exact integer (checkpoint metadata or a measured count). */
        ck_assert_msg(c.total == json_integer_value(json_object_get(row, "params")),
                      "%s: total %lld, published %lld", name, (long long)c.total,
                      (long long)json_integer_value(json_object_get(row, "params")));
        if (json_is_integer(active))
            ck_assert_msg(c.active == json_integer_value(active), "%s: active %lld, published %lld",
                          name, (long long)c.active, (long long)json_integer_value(active));
        else if (a.experts == 0)
            ASSERT_I64(c.active, c.total); /* dense: every weight is used by every token */
        ck_assert_int_gt(max_pos, 0);
        json_decref(errors);
    }
    json_decref(rows);
}
END_TEST

/* Mixtral 8x7B by hand: attention 2 * 4096^2 + 2 * 4096 * 1024 = 41,943,040, norms 8,192, router
 * 4096 * 8 = 32,768 per layer: x 32 = 1,343,488,000; + final norm 4,096 + 2 * 32000 * 4096 =
 * 262,144,000 -> 1,605,636,096 non-expert (1.606e9). One expert 3 * 4096 * 14336 = 176,160,768;
 * 8 x 32 of them = 45,097,156,608 (45.10e9). Active: non-expert + 2 x 32 experts = 12,879,925,248
 * (Mistral's 12.9B, input embedding included). */
START_TEST(mixtral_split)
{
    const struct core_preset *p = &core_presets[core_preset_find("mixtral-8x7b")];
    struct core_arch_counts c;

    ck_assert(core_arch_count(&p->arch, &c));
    ASSERT_I64(c.non_experts, 1605636096);
    ASSERT_I64(c.experts, 45097156608);
    ASSERT_I64(c.total, 46702792704);
    ASSERT_I64(c.active, 12879925248);
    ASSERT_I64(c.moe_layers, 32);
    ASSERT_I64(c.embedding, 131072000);
    ASSERT_I64(c.output, 131072000);
    ck_assert(core_arch_forward_flops(&p->arch) == 2.0 * 12879925248.0);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * (2) Hand-derived small configs
 * ------------------------------------------------------------------------------------------- */

/* The positions vLLM admits from a config with RoPE scaling (vllm/config/model.py,
 * _get_and_verify_max_len; qa4): Qwen2.5's 128k recipe adds rope_scaling {yarn, factor 4,
 * original 32768} to a 32768-position config: 32768 x 4 = 131072, where memwall refused
 * max_model_len 131072 ("exceeds the model's 32768 positions"). A linear factor 4 over 16384
 * (deepseek-coder-6.7b, K06's config) is 65536; Llama 3.1's llama3 type and longrope keep
 * max_position_embeddings; a factor that is not a positive number, or a yarn without its
 * original length, is named. */
static int64_t positions_of(const char *text)
{
    json_t *cfg = json_loads(text, 0, NULL), *errors = json_array();
    struct core_arch a;
    int64_t max_pos = 0;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", text);
    ck_assert_msg(api_hfconfig_decode(cfg, &a, &max_pos, errors), "decode failed: %s", text);
    json_decref(cfg);
    json_decref(errors);
    return max_pos;
}

#define QWEN25_14B                                                                                 \
    "\"model_type\":\"qwen2\",\"hidden_size\":5120,\"intermediate_size\":13824,"                   \
    "\"num_hidden_layers\":48,\"num_attention_heads\":40,\"num_key_value_heads\":8,"               \
    "\"vocab_size\":152064,\"tie_word_embeddings\":false"

START_TEST(rope_scaling_positions)
{
    ASSERT_I64(positions_of("{" QWEN25_14B ",\"max_position_embeddings\":32768}"), 32768);
    ASSERT_I64(positions_of("{" QWEN25_14B ",\"max_position_embeddings\":32768,\"rope_scaling\":"
                            "{\"type\":\"yarn\",\"factor\":4.0,"
                            "\"original_max_position_embeddings\":32768}}"),
               131072);
    ASSERT_I64(positions_of("{" QWEN25_14B ",\"max_position_embeddings\":16384,\"rope_scaling\":"
                            "{\"type\":\"linear\",\"factor\":4.0}}"),
               65536);
    ASSERT_I64(positions_of("{" QWEN25_14B ",\"max_position_embeddings\":131072,\"rope_scaling\":"
                            "{\"rope_type\":\"llama3\",\"factor\":8.0,"
                            "\"original_max_position_embeddings\":8192}}"),
               131072);
    ASSERT_I64(positions_of("{" QWEN25_14B ",\"max_position_embeddings\":131072,\"rope_scaling\":"
                            "{\"type\":\"longrope\",\"long_factor\":[1.0]}}"),
               131072);
    assert_error("{" QWEN25_14B ",\"max_position_embeddings\":32768,\"rope_scaling\":"
                 "{\"type\":\"linear\",\"factor\":\"4\"}}",
                 "config.rope_scaling.factor");
    assert_error("{" QWEN25_14B ",\"max_position_embeddings\":32768,\"rope_scaling\":"
                 "{\"type\":\"yarn\",\"factor\":4.0}}",
                 "config.rope_scaling.original_max_position_embeddings");
}
END_TEST

/*
 * Multi-latent attention, q-LoRA, one dense layer then experts (deepseek_v3 rules): d 16, a 2,
 * nope 4, rope 2, v 3, r_q 6, r_kv 5, L 3, f 20, expert width 8, 4 routed (top 2), 1 shared, V 10.
 *   q:  16*6 + 6 (q_a norm) + 6*2*(4+2)        =  96 + 6 + 72  = 174
 *   kv: 16*(5+2) + 5 (kv_a norm) + 5*2*(4+3)   = 112 + 5 + 70  = 187
 *   o:  2*3*16                                 =  96  -> attention 457, + norms 32 = 489/layer
 *   layer 0 dense MLP 3*16*20 = 960
 *   layers 1-2: expert 3*16*8 = 384; 4 routed 1,536; router 16*4 = 64 + score bias 4; shared 384
 *   total  = 3*489 + 960 + 2*(1536 + 64 + 4 + 384) + 16 + 2*160 = 1467 + 960 + 3976 + 336 = 6739
 *   active = 1467 + 960 + 2*(2*384 + 452) + 336 = 5203; experts 2*1536 = 3072
 * Attention width for the FLOP term: a (h_qk + h_v)/2 = 2 * (6 + 3) / 2 = 9.
 */
START_TEST(mla_by_hand)
{
    struct core_arch a;
    struct core_arch_counts c = counts_of(
        "{\"model_type\":\"deepseek_v3\",\"vocab_size\":10,\"hidden_size\":16,"
        "\"intermediate_size\":20,\"moe_intermediate_size\":8,\"num_hidden_layers\":3,"
        "\"num_attention_heads\":2,\"num_key_value_heads\":2,\"n_shared_experts\":1,"
        "\"n_routed_experts\":4,\"num_experts_per_tok\":2,\"first_k_dense_replace\":1,"
        "\"q_lora_rank\":6,\"kv_lora_rank\":5,\"qk_nope_head_dim\":4,\"qk_rope_head_dim\":2,"
        "\"v_head_dim\":3,\"tie_word_embeddings\":false,\"num_nextn_predict_layers\":1}",
        &a);

    ASSERT_I64(c.total, 6739);
    ASSERT_I64(c.active, 5203);
    ASSERT_I64(c.experts, 3072);
    ASSERT_I64(c.moe_layers, 2);
    ck_assert(core_arch_attention_width(&a) == 9.0);

    /* Without q-LoRA (q_lora_rank null): q becomes 16*2*6 = 192 instead of 174, +18 per layer. */
    c = counts_of("{\"model_type\":\"deepseek_v3\",\"vocab_size\":10,\"hidden_size\":16,"
                  "\"intermediate_size\":20,\"moe_intermediate_size\":8,\"num_hidden_layers\":3,"
                  "\"num_attention_heads\":2,\"n_shared_experts\":1,"
                  "\"n_routed_experts\":4,\"num_experts_per_tok\":2,\"first_k_dense_replace\":1,"
                  "\"q_lora_rank\":null,\"kv_lora_rank\":5,\"qk_nope_head_dim\":4,"
                  "\"qk_rope_head_dim\":2,\"v_head_dim\":3}",
                  NULL);
    ASSERT_I64(c.total, 6739 + 3 * 18);
}
END_TEST

/*
 * GPT-2 with n_embd 8, 2 layers, 2 heads, 16 positions, vocabulary 20, biases everywhere:
 *   ln_1 2*8 = 16; c_attn 8*24 + 24 = 216; c_proj 8*8 + 8 = 72; ln_2 16;
 *   c_fc 8*32 + 32 = 288; c_proj 32*8 + 8 = 264  -> 872 per layer, 1,744 for two
 *   ln_f 16; wte 20*8 = 160; wpe 16*8 = 128; the head is tied -> 2,048
 * Untied it gains another 160.
 */
START_TEST(gpt2_tied_learned_positions)
{
    struct core_arch a;
    struct core_arch_counts c =
        counts_of("{\"model_type\":\"gpt2\",\"n_embd\":8,\"n_layer\":2,\"n_head\":2,"
                  "\"n_positions\":16,\"vocab_size\":20}",
                  &a);

    ASSERT_I64(c.total, 2048);
    ASSERT_I64(c.embedding, 160 + 128);
    ASSERT_I64(c.output, 0);
    ASSERT_I64(a.learned_positions, 16);
    c = counts_of("{\"model_type\":\"gpt2\",\"n_embd\":8,\"n_layer\":2,\"n_head\":2,"
                  "\"n_positions\":16,\"vocab_size\":20,\"tie_word_embeddings\":false}",
                  NULL);
    ASSERT_I64(c.total, 2208);
    /* hidden_size is GPT-2's alias of n_embd: agreeing is fine. */
    c = counts_of("{\"model_type\":\"gpt2\",\"n_embd\":8,\"hidden_size\":8,\"n_layer\":2,"
                  "\"n_head\":2,\"n_positions\":16,\"vocab_size\":20}",
                  NULL);
    ASSERT_I64(c.total, 2048);
}
END_TEST

/*
 * Falcon's new decoder (40B style): d 16, 4 heads of 4, 2 KV heads, 1 layer, V 10, tied.
 *   query_key_value 16 * (4 + 2*2) * 4 = 512; dense 16*16 = 256; MLP 2 * 16 * 64 = 2,048;
 *   two LayerNorms (ln_attn, ln_mlp) with biases 4*16 = 64 -> 2,880; ln_f 32; embedding 160
 *   -> 3,072. multi_query is ignored under the new architecture.
 * The old architecture with multi_query: one KV head whatever num_kv_heads says:
 *   qkv 16 * (16 + 2*4) = 384; one LayerNorm 32 -> 384 + 256 + 2048 + 32 = 2,720; + 32 + 160.
 */
START_TEST(falcon_layouts)
{
    struct core_arch_counts c =
        counts_of("{\"model_type\":\"falcon\",\"hidden_size\":16,\"num_attention_heads\":4,"
                  "\"num_kv_heads\":2,\"num_hidden_layers\":1,\"vocab_size\":10,"
                  "\"new_decoder_architecture\":true,\"multi_query\":true}",
                  NULL);
    ASSERT_I64(c.total, 3072);
    c = counts_of("{\"model_type\":\"falcon\",\"hidden_size\":16,\"num_attention_heads\":4,"
                  "\"num_kv_heads\":4,\"num_hidden_layers\":1,\"vocab_size\":10,"
                  "\"multi_query\":true}",
                  NULL);
    ASSERT_I64(c.total, 2720 + 32 + 160);
}
END_TEST

/*
 * An unknown model_type with the generic keys reads as Llama: d 64, L 2, a 4, f 128, V 100:
 *   4 * 64^2 = 16,384 + 3 * 64 * 128 = 24,576 + norms 128 = 41,088 per layer; x 2 = 82,176;
 *   + 64 + 2 * 6,400 = 95,040.
 */
START_TEST(unknown_type_is_llama_like)
{
    struct core_arch_counts c =
        counts_of("{\"model_type\":\"my_new_model\",\"hidden_size\":64,\"num_hidden_layers\":2,"
                  "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                  "\"rope_theta\":10000.0,\"hidden_act\":\"silu\"}",
                  NULL);
    ASSERT_I64(c.total, 95040);
}
END_TEST

/*
 * Qwen3-8B: d 4096, 36 layers, 32 heads of 128, 8 KV heads, f 12288, V 151936, untied.
 *   attention 4096*4096*2 + 2*4096*1024 = 41,943,040 + QK-norm 2*128 = 41,943,296; norms 8,192;
 *   MLP 3*4096*12288 = 150,994,944 -> 192,946,432/layer; x 36 + 4,096 = 6,946,075,648
 *   non-embedding (Qwen publishes 6.95B) ; + 2 * 151936 * 4096 -> 8,190,735,360 (8.2B).
 * Gemma 2 9B: d 3584, 42 layers, 16 heads of 256, 8 KV, f 14336, four norms per layer, tied.
 *   attention 3 * 3584 * 4096 = 44,040,192; norms 4 * 3584; MLP 154,140,672 -> 198,195,200/layer
 *   x 42 + 3,584 = 8,324,201,984, exactly the non-embedding count of the Gemma 2 report
 *   (Table 2); + 256000 * 3584 -> 9,241,705,984.
 */
START_TEST(qwen3_and_gemma2_by_hand)
{
    struct core_arch_counts c = counts_of(
        "{\"model_type\":\"qwen3\",\"hidden_size\":4096,\"num_hidden_layers\":36,"
        "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"head_dim\":128,"
        "\"intermediate_size\":12288,\"vocab_size\":151936,\"tie_word_embeddings\":false}",
        NULL);
    ASSERT_I64(c.total - c.embedding - c.output, 6946075648);
    ASSERT_I64(c.total, 8190735360);
    c = counts_of("{\"model_type\":\"gemma2\",\"hidden_size\":3584,\"num_hidden_layers\":42,"
                  "\"num_attention_heads\":16,\"num_key_value_heads\":8,\"head_dim\":256,"
                  "\"intermediate_size\":14336,\"vocab_size\":256000}",
                  NULL);
    ASSERT_I64(c.total - c.embedding, 8324201984);
    ASSERT_I64(c.total, 9241705984);
}
END_TEST

/* Which layers hold experts. Qwen2-MoE: layer i when (i + 1) % step == 0, so step 3 over 7
 * layers gives i = 2 and 5. DeepSeek: i >= first_k_dense_replace and i % moe_layer_freq == 0,
 * so first 1, freq 2 over 6 layers gives i = 2 and 4. Core rejects top-k above the experts. */
START_TEST(moe_layer_rules)
{
    struct core_arch a;
    struct core_arch_counts c = counts_of("{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":7,"
                                          "\"decoder_sparse_step\":3}",
                                          &a);
    ASSERT_I64(c.moe_layers, 2);
    ASSERT_I64(core_arch_moe_layers(&a), 2);
    c = counts_of("{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":6,"
                  "\"first_k_dense_replace\":1,\"moe_layer_freq\":2,\"num_experts_per_tok\":6}",
                  NULL);
    ASSERT_I64(c.moe_layers, 2);
    /* DeepseekV3Config's routing groups: n_group 8, topk_group 4 by default, as given; V2's
     * plain "greedy" top-k ignores them; one group is no limit. */
    counts_of("{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":4}", &a);
    ASSERT_I64(a.router_groups, 8);
    ASSERT_I64(a.router_group_topk, 4);
    counts_of("{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":4,\"num_experts_per_tok\":6,"
              "\"topk_method\":\"greedy\",\"n_group\":8,\"topk_group\":3}",
              &a);
    ASSERT_I64(a.router_groups, 0);
    counts_of("{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":4,\"num_experts_per_tok\":6,"
              "\"topk_method\":\"group_limited_greedy\",\"n_group\":8,\"topk_group\":3}",
              &a);
    ASSERT_I64(a.router_groups, 8);
    ASSERT_I64(a.router_group_topk, 3);
    counts_of("{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":4,\"n_group\":1,"
              "\"topk_group\":1}",
              &a);
    ASSERT_I64(a.router_groups, 0);
    counts_of("{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":7,\"decoder_sparse_step\":3}",
              &a);
    a.experts_per_token = a.experts + 1;
    ck_assert(!core_arch_count(&a, &c));
    ASSERT_I64(core_arch_params(&a), -1);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * (3) The mixture-of-experts presets are their configs
 * ------------------------------------------------------------------------------------------- */

struct preset_config {
    const char *id;
    double published_active; /* the source's active count, rounded as it prints it */
    const char *config;
};

static const struct preset_config preset_configs[] = {
    {"mixtral-8x7b", 12.9e9,
     "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":14336,"
     "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
     "\"vocab_size\":32000,\"num_local_experts\":8,\"num_experts_per_tok\":2}"},
    {"mixtral-8x22b", 39e9,
     "{\"model_type\":\"mixtral\",\"hidden_size\":6144,\"intermediate_size\":16384,"
     "\"num_hidden_layers\":56,\"num_attention_heads\":48,\"num_key_value_heads\":8,"
     "\"vocab_size\":32768,\"num_local_experts\":8,\"num_experts_per_tok\":2,"
     "\"max_position_embeddings\":65536}"},
    {"qwen1.5-moe-a2.7b", 2.7e9,
     "{\"model_type\":\"qwen2_moe\",\"hidden_size\":2048,\"intermediate_size\":5632,"
     "\"num_hidden_layers\":24,\"num_attention_heads\":16,\"num_key_value_heads\":16,"
     "\"vocab_size\":151936,\"num_experts\":60,\"num_experts_per_tok\":4,"
     "\"moe_intermediate_size\":1408,\"shared_expert_intermediate_size\":5632,"
     "\"decoder_sparse_step\":1,\"tie_word_embeddings\":false}"},
    {"qwen3-30b-a3b", 3.3e9,
     "{\"model_type\":\"qwen3_moe\",\"hidden_size\":2048,\"intermediate_size\":6144,"
     "\"num_hidden_layers\":48,\"num_attention_heads\":32,\"num_key_value_heads\":4,"
     "\"head_dim\":128,\"vocab_size\":151936,\"num_experts\":128,\"num_experts_per_tok\":8,"
     "\"moe_intermediate_size\":768,\"decoder_sparse_step\":1,\"mlp_only_layers\":[],"
     "\"tie_word_embeddings\":false,\"max_position_embeddings\":40960}"},
    {"olmoe-1b-7b", 1.3e9,
     "{\"model_type\":\"olmoe\",\"hidden_size\":2048,\"intermediate_size\":1024,"
     "\"num_hidden_layers\":16,\"num_attention_heads\":16,\"num_key_value_heads\":16,"
     "\"vocab_size\":50304,\"num_experts\":64,\"num_experts_per_tok\":8,\"clip_qkv\":null,"
     "\"tie_word_embeddings\":false}"},
    {"dbrx", 36e9,
     "{\"model_type\":\"dbrx\",\"d_model\":6144,\"n_heads\":48,\"n_layers\":40,"
     "\"max_seq_len\":32768,\"vocab_size\":100352,\"attn_config\":{\"clip_qkv\":8,"
     "\"kv_n_heads\":8,\"rope_theta\":500000},\"ffn_config\":{\"ffn_hidden_size\":10752,"
     "\"moe_num_experts\":16,\"moe_top_k\":4}}"},
    {"deepseek-v2-lite", 2.4e9,
     "{\"model_type\":\"deepseek_v2\",\"hidden_size\":2048,\"intermediate_size\":10944,"
     "\"kv_lora_rank\":512,\"q_lora_rank\":null,\"moe_intermediate_size\":1408,"
     "\"moe_layer_freq\":1,\"n_routed_experts\":64,\"n_shared_experts\":2,"
     "\"num_attention_heads\":16,\"num_experts_per_tok\":6,\"num_hidden_layers\":27,"
     "\"first_k_dense_replace\":1,\"qk_nope_head_dim\":128,\"qk_rope_head_dim\":64,"
     "\"v_head_dim\":128,\"vocab_size\":102400,\"topk_method\":\"greedy\"}"},
    {"deepseek-v2", 21e9,
     "{\"model_type\":\"deepseek_v2\",\"hidden_size\":5120,\"intermediate_size\":12288,"
     "\"kv_lora_rank\":512,\"q_lora_rank\":1536,\"moe_intermediate_size\":1536,"
     "\"moe_layer_freq\":1,\"n_routed_experts\":160,\"n_shared_experts\":2,"
     "\"num_attention_heads\":128,\"num_key_value_heads\":128,\"num_experts_per_tok\":6,"
     "\"num_hidden_layers\":60,\"first_k_dense_replace\":1,\"qk_nope_head_dim\":128,"
     "\"qk_rope_head_dim\":64,\"v_head_dim\":128,\"vocab_size\":102400,"
     "\"topk_method\":\"group_limited_greedy\"}"},
    {"deepseek-v3", 37e9,
     "{\"model_type\":\"deepseek_v3\",\"hidden_size\":7168,\"intermediate_size\":18432,"
     "\"kv_lora_rank\":512,\"q_lora_rank\":1536,\"moe_intermediate_size\":2048,"
     "\"moe_layer_freq\":1,\"n_routed_experts\":256,\"n_shared_experts\":1,"
     "\"num_attention_heads\":128,\"num_key_value_heads\":128,\"num_experts_per_tok\":8,"
     "\"num_hidden_layers\":61,\"first_k_dense_replace\":3,\"qk_nope_head_dim\":128,"
     "\"qk_rope_head_dim\":64,\"v_head_dim\":128,\"vocab_size\":129280,"
     "\"topk_method\":\"noaux_tc\",\"num_nextn_predict_layers\":1,"
     "\"max_position_embeddings\":163840}"},
};

START_TEST(moe_presets_are_their_configs)
{
    const struct preset_config *pc = &preset_configs[_i];
    int idx = core_preset_find(pc->id);
    struct core_arch from_config;
    struct core_arch_counts want, got;

    ck_assert_msg(idx >= 0, "preset %s missing", pc->id);
    got = counts_of(pc->config, &from_config);
    ck_assert(core_arch_count(&core_presets[idx].arch, &want));
    ASSERT_I64(got.total, want.total);
    ASSERT_I64(got.active, want.active);
    ASSERT_I64(got.experts, want.experts);
    ASSERT_I64(got.moe_layers, want.moe_layers);
    ck_assert(core_arch_attention_width(&from_config) ==
              core_arch_attention_width(&core_presets[idx].arch));
    /* The routing groups too (deepseek-v3: n_group 8, topk_group 4; the others none). */
    ASSERT_I64(from_config.router_groups, core_presets[idx].arch.router_groups);
    ASSERT_I64(from_config.router_group_topk, core_presets[idx].arch.router_group_topk);
    /* Totals within 1 % of the published figure, as for every preset (test_core_papers).
     * Active counts: memwall counts the input embedding (Mistral's convention for Mixtral's
     * 12.9B); DeepSeek leaves it out (V2-Lite: 2.66B with it, 2.45B without, published 2.4B).
     * Either reading must land within 2.5 % of the figure, which sources round to two digits. */
    ck_assert_msg(fabs((double)want.total / core_presets[idx].published_params - 1.0) <= 0.01,
                  "%s: total %lld vs %.4g", pc->id, (long long)want.total,
                  core_presets[idx].published_params);
    double with = fabs((double)want.active / pc->published_active - 1.0);
    double without = fabs((double)(want.active - want.embedding) / pc->published_active - 1.0);
    ck_assert_msg(with <= 0.025 || without <= 0.025,
                  "%s: active %lld (%lld without the input "
                  "embedding) vs %.4g",
                  pc->id, (long long)want.active, (long long)(want.active - want.embedding),
                  pc->published_active);
}
END_TEST

/* DeepSeek-V3 exactly: 671,026,419,200 total and 37,552,297,472 active (docs/architectures.md
 * works both out term by term). */
START_TEST(deepseek_v3_exact)
{
    struct core_arch_counts c;
    ck_assert(core_arch_count(&core_presets[core_preset_find("deepseek-v3")].arch, &c));
    ASSERT_I64(c.total, 671026419200);
    ASSERT_I64(c.active, 37552297472);
    ASSERT_I64(c.moe_layers, 58);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Errors name config.<key>
 * ------------------------------------------------------------------------------------------- */

START_TEST(errors_name_the_key)
{
    assert_error("[1,2]", "config");
    assert_error("{\"hidden_size\":64}", "config.model_type");
    assert_error("{\"model_type\":5}", "config.model_type");
    assert_error("{\"model_type\":\"brand_new\",\"hidden_size\":64,\"num_hidden_layers\":2,"
                 "\"num_attention_heads\":4,\"vocab_size\":100}",
                 "config.model_type");
    assert_error("{\"model_type\":\"gpt2\",\"n_embd\":768,\"hidden_size\":1024}",
                 "config.hidden_size");
    assert_error("{\"model_type\":\"mixtral\",\"num_local_experts\":8,\"num_experts_per_tok\":9}",
                 "config.num_experts_per_tok");
    assert_error("{\"model_type\":\"llama\",\"hidden_size\":100,\"num_attention_heads\":3}",
                 "config.num_attention_heads");
    assert_error("{\"model_type\":\"llama\",\"num_attention_heads\":32,\"num_key_value_heads\":5}",
                 "config.num_key_value_heads");
    assert_error("{\"model_type\":\"llama\",\"vocab_size\":\"big\"}", "config.vocab_size");
    assert_error("{\"model_type\":\"llama\",\"vocab_size\":-1}", "config.vocab_size");
    assert_error("{\"model_type\":\"llama\",\"hidden_size\":4096.5}", "config.hidden_size");
    assert_error("{\"model_type\":\"llama\",\"tie_word_embeddings\":\"yes\"}",
                 "config.tie_word_embeddings");
    assert_error("{\"model_type\":\"dbrx\",\"attn_config\":5}", "config.attn_config");
    assert_error("{\"model_type\":\"dbrx\",\"n_heads\":16,\"attn_config\":{\"kv_n_heads\":3}}",
                 "config.attn_config.kv_n_heads");
    assert_error("{\"model_type\":\"deepseek_v2\",\"n_routed_experts\":64}",
                 "config.num_experts_per_tok");
    assert_error("{\"model_type\":\"deepseek_v3\",\"first_k_dense_replace\":99}",
                 "config.first_k_dense_replace");
    assert_error("{\"model_type\":\"qwen2_moe\",\"mlp_only_layers\":[0]}",
                 "config.mlp_only_layers");
    assert_error("{\"model_type\":\"falcon\",\"new_decoder_architecture\":true,"
                 "\"num_attention_heads\":71,\"num_kv_heads\":8}",
                 "config.num_kv_heads");
    /* 100,000 layers of 3 * 1e6 * 64e6 weights overflow int64. */
    assert_error("{\"model_type\":\"llama\",\"num_hidden_layers\":100000,\"hidden_size\":1000000,"
                 "\"num_attention_heads\":1000,\"intermediate_size\":64000000}",
                 "config");
}
END_TEST

/* Keys that do not change the count are ignored, whatever their value. */
START_TEST(irrelevant_keys_ignored)
{
    struct core_arch_counts a = counts_of("{\"model_type\":\"mistral\"}", NULL);
    struct core_arch_counts b =
        counts_of("{\"model_type\":\"mistral\",\"rope_theta\":\"x\",\"sliding_window\":null,"
                  "\"torch_dtype\":[1],\"architectures\":{\"a\":1},\"rms_norm_eps\":true}",
                  NULL);
    /* MistralConfig defaults are Mistral 7B's: 7,241,732,096. */
    ASSERT_I64(a.total, 7241732096);
    ASSERT_I64(b.total, a.total);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hfconfig");
    TCase *tc = tcase_create("counts");

    tcase_add_test(tc, every_row_to_the_parameter);
    tcase_add_test(tc, mixtral_split);
    tcase_add_test(tc, mla_by_hand);
    tcase_add_test(tc, rope_scaling_positions);
    tcase_add_test(tc, gpt2_tied_learned_positions);
    tcase_add_test(tc, falcon_layouts);
    tcase_add_test(tc, unknown_type_is_llama_like);
    tcase_add_test(tc, qwen3_and_gemma2_by_hand);
    tcase_add_test(tc, moe_layer_rules);
    tcase_add_loop_test(tc, moe_presets_are_their_configs, 0,
                        (int)(sizeof preset_configs / sizeof preset_configs[0]));
    tcase_add_test(tc, deepseek_v3_exact);
    tcase_add_test(tc, errors_name_the_key);
    tcase_add_test(tc, irrelevant_keys_ignored);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
