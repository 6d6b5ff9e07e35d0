/*
 * test_presets.c - the everyday presets (Llama 3.1/3.2, Qwen2.5, Qwen3, Qwen3-235B-A22B,
 * Qwen2-57B-A14B, Kimi K2, Phi-4, Mistral NeMo): each count derived by hand below, each row equal
 * to what its Hugging Face config.json decodes to, each published figure met, and none of them a
 * stand-in for a bare parameter count.
 *
 * Counting rules (docs/architectures.md): per layer, Q d*a*h_d, K and V d*k*h_d each, O a*h_d*d;
 * Qwen2.5 adds q/k/v biases (a + 2k)*h_d; Qwen3 adds QK-norm 2*h_d; gated MLP 3*d*f; two RMSNorms
 * 2*d. Then a final norm d, the input embedding V*d and an untied head V*d (none when tied).
 * Experts: router d*E, each expert 3*d*f_e; MLA (DeepSeek-V3, Kimi K2): q_a d*q_r + q norm q_r,
 * q_b q_r*a*(n + r), kv_a d*(c + r) + kv norm c, kv_b c*a*(n + v), o a*v*d; DeepSeek's
 * auxiliary-loss-free router adds E biases.
 *
 * Configs: the architecture keys of the published config.json files. Qwen3-8B, Qwen3-32B,
 * Qwen3-235B-A22B, Kimi-K2-Instruct, Meta-Llama-3.1-8B and -70B as stored in
 * ai-dynamo/aiconfigurator (aic-core/src/aiconfigurator_core/model_configs, commit 095f58a5, the
 * copy moe-measured.csv cites); Qwen2-57B-A14B as TensorRT-LLM's Qwen2-MoE unit test copies it;
 * the others' architecture keys as their Hugging Face repositories state them (this machine
 * cannot reach the Hub; each shape agrees with public copies of those configs).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "check_main.h"
#include "core.h"
#include "hfconfig.h"

#define ASSERT_I64(actual, expected)                                                               \
    ck_assert_msg((int64_t)(actual) == (int64_t)(expected), "%s = %lld, expected %lld", #actual,   \
                  (long long)(actual), (long long)(expected))

struct preset_case {
    const char *id;
    int64_t total;    /* derived by hand (comment above the row) */
    int64_t active;   /* = total for dense rows */
    double published; /* the source's active count (0 for dense rows) */
    int64_t context;
    const char *config;
};

static const struct preset_case cases[] = {
    /* Llama 3.2 1B (L16 d2048 a32 k8 h_d64 f8192 V128256 tied): Q,O 2*2048*2048 = 8,388,608;
     * K,V 2*2048*512 = 2,097,152; MLP 3*2048*8192 = 50,331,648; norms 4,096; per layer
     * 60,821,504; x16 = 973,144,064; + 2,048 + 128256*2048 (262,668,288) = 1,235,814,400. */
    {"llama3.2-1b", INT64_C(1235814400), INT64_C(1235814400), 0, 131072,
     "{\"model_type\":\"llama\",\"hidden_size\":2048,\"intermediate_size\":8192,"
     "\"num_hidden_layers\":16,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
     "\"head_dim\":64,\"vocab_size\":128256,\"tie_word_embeddings\":true,"
     "\"max_position_embeddings\":131072}"},
    /* Llama 3.2 3B (L28 d3072 a24 k8 h_d128 f8192 tied): Q,O 2*3072*3072 = 18,874,368; K,V
     * 2*3072*1024 = 6,291,456; MLP 3*3072*8192 = 75,497,472; norms 6,144; per layer
     * 100,669,440; x28 = 2,818,744,320; + 3,072 + 128256*3072 (394,002,432) = 3,212,749,824. */
    {"llama3.2-3b", INT64_C(3212749824), INT64_C(3212749824), 0, 131072,
     "{\"model_type\":\"llama\",\"hidden_size\":3072,\"intermediate_size\":8192,"
     "\"num_hidden_layers\":28,\"num_attention_heads\":24,\"num_key_value_heads\":8,"
     "\"head_dim\":128,\"vocab_size\":128256,\"tie_word_embeddings\":true,"
     "\"max_position_embeddings\":131072}"},
    /* Llama 3.1 8B: llama3-8b's 218,112,000 per layer x32 + 4,096 + 2*128256*4096 =
     * 8,030,261,248 (test_core_papers works the layer out). */
    {"llama3.1-8b", INT64_C(8030261248), INT64_C(8030261248), 0, 131072,
     "{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":14336,"
     "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
     "\"vocab_size\":128256,\"tie_word_embeddings\":false,\"mlp_bias\":false,"
     "\"attention_bias\":false,\"max_position_embeddings\":131072}"},
    /* Llama 3.1 70B (L80 d8192 a64 k8 f28672): Q,O 2*8192^2 = 134,217,728; K,V 2*8192*1024 =
     * 16,777,216; MLP 3*8192*28672 = 704,643,072; norms 16,384; per layer 855,654,400; x80 =
     * 68,452,352,000; + 8,192 + 2*128256*8192 (2,101,346,304) = 70,553,706,496. */
    {"llama3.1-70b", INT64_C(70553706496), INT64_C(70553706496), 0, 131072,
     "{\"model_type\":\"llama\",\"hidden_size\":8192,\"intermediate_size\":28672,"
     "\"num_hidden_layers\":80,\"num_attention_heads\":64,\"num_key_value_heads\":8,"
     "\"vocab_size\":128256,\"tie_word_embeddings\":false,\"mlp_bias\":false,"
     "\"attention_bias\":false,\"max_position_embeddings\":131072}"},
    /* Qwen2.5-7B (L28 d3584 a28 k4 h_d128 f18944 V152064): Q,O 2*3584^2 = 25,690,112; K,V
     * 2*3584*512 = 3,670,016; biases (28 + 8)*128 = 4,608; MLP 3*3584*18944 = 203,685,888;
     * norms 7,168; per layer 233,057,792; x28 = 6,525,618,176; + 3,584 + 2*152064*3584
     * (1,089,994,752) = 7,615,616,512. */
    {"qwen2.5-7b", INT64_C(7615616512), INT64_C(7615616512), 0, 32768,
     "{\"model_type\":\"qwen2\",\"hidden_size\":3584,\"intermediate_size\":18944,"
     "\"num_hidden_layers\":28,\"num_attention_heads\":28,\"num_key_value_heads\":4,"
     "\"vocab_size\":152064,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768}"},
    /* Qwen2.5-14B (L48 d5120 a40 k8 f13824): Q,O 2*5120^2 = 52,428,800; K,V 2*5120*1024 =
     * 10,485,760; biases (40 + 16)*128 = 7,168; MLP 3*5120*13824 = 212,336,640; norms 10,240;
     * per layer 275,268,608; x48 = 13,212,893,184; + 5,120 + 2*152064*5120 (1,557,135,360) =
     * 14,770,033,664. */
    {"qwen2.5-14b", INT64_C(14770033664), INT64_C(14770033664), 0, 32768,
     "{\"model_type\":\"qwen2\",\"hidden_size\":5120,\"intermediate_size\":13824,"
     "\"num_hidden_layers\":48,\"num_attention_heads\":40,\"num_key_value_heads\":8,"
     "\"vocab_size\":152064,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768}"},
    /* Qwen2.5-32B: 14B's attention (62,921,728 with biases) + MLP 3*5120*27648 = 424,673,280 +
     * norms 10,240 = 487,605,248 per layer; x64 = 31,206,735,872; + 5,120 + 1,557,135,360 =
     * 32,763,876,352. */
    {"qwen2.5-32b", INT64_C(32763876352), INT64_C(32763876352), 0, 32768,
     "{\"model_type\":\"qwen2\",\"hidden_size\":5120,\"intermediate_size\":27648,"
     "\"num_hidden_layers\":64,\"num_attention_heads\":40,\"num_key_value_heads\":8,"
     "\"vocab_size\":152064,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768}"},
    /* Qwen2.5-72B (L80 d8192 a64 k8 f29568): Q,O 134,217,728; K,V 16,777,216; biases
     * (64 + 16)*128 = 10,240; MLP 3*8192*29568 = 726,663,168; norms 16,384; per layer
     * 877,684,736; x80 = 70,214,778,880; + 8,192 + 2*152064*8192 (2,491,416,576) =
     * 72,706,203,648. */
    {"qwen2.5-72b", INT64_C(72706203648), INT64_C(72706203648), 0, 32768,
     "{\"model_type\":\"qwen2\",\"hidden_size\":8192,\"intermediate_size\":29568,"
     "\"num_hidden_layers\":80,\"num_attention_heads\":64,\"num_key_value_heads\":8,"
     "\"vocab_size\":152064,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768}"},
    /* Qwen3-8B (L36 d4096 a32 k8 h_d128 f12288 V151936): Q,O 2*4096*4096 = 33,554,432; K,V
     * 2*4096*1024 = 8,388,608; QK-norm 256; MLP 3*4096*12288 = 150,994,944; norms 8,192; per
     * layer 192,946,432; x36 = 6,946,071,552; + 4,096 + 2*151936*4096 (1,244,659,712) =
     * 8,190,735,360. */
    {"qwen3-8b", INT64_C(8190735360), INT64_C(8190735360), 0, 32768,
     "{\"model_type\":\"qwen3\",\"head_dim\":128,\"hidden_size\":4096,"
     "\"intermediate_size\":12288,\"num_hidden_layers\":36,\"num_attention_heads\":32,"
     "\"num_key_value_heads\":8,\"vocab_size\":151936,\"tie_word_embeddings\":false,"
     "\"attention_bias\":false,\"max_position_embeddings\":40960}"},
    /* Qwen3-14B (L40 d5120 a40 k8 f17408): Q,O 2*5120*5120 = 52,428,800; K,V 2*5120*1024 =
     * 10,485,760; QK-norm 256; MLP 3*5120*17408 = 267,386,880; norms 10,240; per layer
     * 330,311,936; x40 = 13,212,477,440; + 5,120 + 2*151936*5120 (1,555,824,640) =
     * 14,768,307,200. */
    {"qwen3-14b", INT64_C(14768307200), INT64_C(14768307200), 0, 32768,
     "{\"model_type\":\"qwen3\",\"head_dim\":128,\"hidden_size\":5120,"
     "\"intermediate_size\":17408,\"num_hidden_layers\":40,\"num_attention_heads\":40,"
     "\"num_key_value_heads\":8,\"vocab_size\":151936,\"tie_word_embeddings\":false,"
     "\"attention_bias\":false,\"max_position_embeddings\":40960}"},
    /* Qwen3-32B (L64 d5120 a64 k8 h_d128, a*h_d = 8192 != d; f25600): Q,O 2*5120*8192 =
     * 83,886,080; K,V 10,485,760; QK-norm 256; MLP 3*5120*25600 = 393,216,000; norms 10,240;
     * per layer 487,598,336; x64 = 31,206,293,504; + 5,120 + 1,555,824,640 = 32,762,123,264. */
    {"qwen3-32b", INT64_C(32762123264), INT64_C(32762123264), 0, 32768,
     "{\"model_type\":\"qwen3\",\"head_dim\":128,\"hidden_size\":5120,"
     "\"intermediate_size\":25600,\"num_hidden_layers\":64,\"num_attention_heads\":64,"
     "\"num_key_value_heads\":8,\"vocab_size\":151936,\"tie_word_embeddings\":false,"
     "\"attention_bias\":false,\"max_position_embeddings\":40960}"},
    /* Qwen3-235B-A22B (L94 d4096 a64 k4 h_d128, 128 experts of 1536, top 8, V151936):
     * attention Q,O 2*4096*8192 = 67,108,864 + K,V 2*4096*512 = 4,194,304 + QK-norm 256 =
     * 71,303,424; router 4096*128 = 524,288; one expert 3*4096*1536 = 18,874,368; norms 8,192.
     * Per layer 71,303,424 + 524,288 + 128*18,874,368 (2,415,919,104) + 8,192 = 2,487,755,008;
     * x94 = 233,848,970,752; + 4,096 + 2*151936*4096 (1,244,659,712) = 235,093,634,560.
     * Active: 8 experts (150,994,944) per layer: 222,830,848 x94 = 20,946,099,712 + 1,244,663,808 =
     * 22,190,763,520. */
    {"qwen3-235b-a22b", INT64_C(235093634560), INT64_C(22190763520), 22e9, 32768,
     "{\"model_type\":\"qwen3_moe\",\"decoder_sparse_step\":1,\"head_dim\":128,"
     "\"hidden_size\":4096,\"intermediate_size\":12288,\"max_position_embeddings\":40960,"
     "\"mlp_only_layers\":[],\"moe_intermediate_size\":1536,\"num_attention_heads\":64,"
     "\"num_experts\":128,\"num_experts_per_tok\":8,\"num_hidden_layers\":94,"
     "\"num_key_value_heads\":4,\"tie_word_embeddings\":false,\"vocab_size\":151936}"},
    /* Qwen2-57B-A14B (L28 d3584 a28 k4 h_d128, 64 experts of 2560, top 8, shared expert 20480
     * with a d -> 1 gate, q/k/v biases, V151936): attention Q,O 2*3584^2 = 25,690,112 + K,V
     * 2*3584*512 = 3,670,016 + biases (28 + 8)*128 = 4,608 = 29,364,736; router 3584*64 =
     * 229,376; one expert 3*3584*2560 = 27,525,120; shared 3*3584*20480 + 3,584 = 220,204,544;
     * norms 7,168. Per layer 29,364,736 + 229,376 + 64*27,525,120 (1,761,607,680) +
     * 220,204,544 + 7,168 = 2,011,413,504; x28 = 56,319,578,112; + 3,584 + 2*151936*3584
     * (1,089,077,248) = 57,408,658,944. Active per layer with 8 experts (220,200,960):
     * 470,006,784 x28 = 13,160,189,952; + 1,089,080,832 = 14,249,270,784. */
    {"qwen2-57b-a14b", INT64_C(57408658944), INT64_C(14249270784), 14e9, 65536,
     "{\"model_type\":\"qwen2_moe\",\"decoder_sparse_step\":1,\"hidden_size\":3584,"
     "\"intermediate_size\":18944,\"max_position_embeddings\":131072,"
     "\"moe_intermediate_size\":2560,\"num_attention_heads\":28,\"num_experts\":64,"
     "\"num_experts_per_tok\":8,\"num_hidden_layers\":28,\"num_key_value_heads\":4,"
     "\"shared_expert_intermediate_size\":20480,\"tie_word_embeddings\":false,"
     "\"vocab_size\":151936}"},
    /* Kimi K2 (DeepSeek-V3 layout: L61 d7168 a64, q_r 1536, c 512, n 128, r 64, v 128; layer 0
     * dense f18432, then 384 experts of 2048, top 8, 1 shared; V163840). Attention: q_a
     * 7168*1536 = 11,010,048 + 1,536; q_b 1536*64*192 = 18,874,368; kv_a 7168*576 = 4,128,768
     * + 512; kv_b 512*64*256 = 8,388,608; o 64*128*7168 = 58,720,256; sum 101,124,096. Dense
     * layer: + 3*7168*18432 (396,361,728) + norms 14,336 = 497,500,160. One expert 3*7168*2048
     * = 44,040,192. MoE layer: 101,124,096 + router 7168*384 + 384 (2,752,896) + 385 experts
     * (16,955,473,920) + 14,336 = 17,059,365,248; x60 = 1,023,561,914,880. Total 497,500,160 +
     * 1,023,561,914,880 + 7,168 + 2*163840*7168 (2,348,810,240) = 1,026,408,232,448. Active:
     * 9 experts (396,361,728) per MoE layer: 500,253,056 x60 = 30,015,183,360; + 497,500,160 +
     * 2,348,817,408 = 32,861,500,928 (31,687,095,808 without the input embedding). */
    {"kimi-k2", INT64_C(1026408232448), INT64_C(32861500928), 32e9, 131072,
     "{\"model_type\":\"kimi_k2\",\"first_k_dense_replace\":1,\"hidden_size\":7168,"
     "\"intermediate_size\":18432,\"kv_lora_rank\":512,\"max_position_embeddings\":131072,"
     "\"moe_intermediate_size\":2048,\"moe_layer_freq\":1,\"n_group\":1,"
     "\"n_routed_experts\":384,\"n_shared_experts\":1,\"num_attention_heads\":64,"
     "\"num_experts_per_tok\":8,\"num_hidden_layers\":61,\"num_key_value_heads\":64,"
     "\"num_nextn_predict_layers\":0,\"q_lora_rank\":1536,\"qk_nope_head_dim\":128,"
     "\"qk_rope_head_dim\":64,\"tie_word_embeddings\":false,\"topk_method\":\"noaux_tc\","
     "\"v_head_dim\":128,\"vocab_size\":163840}"},
    /* Phi-4 (L40 d5120 a40 k10 h_d128 f17920 V100352): Q,O 52,428,800; K,V 2*5120*1280 =
     * 13,107,200; MLP 3*5120*17920 = 275,251,200; norms 10,240; per layer 340,797,440; x40 =
     * 13,631,897,600; + 5,120 + 2*100352*5120 (1,027,604,480) = 14,659,507,200. */
    {"phi-4", INT64_C(14659507200), INT64_C(14659507200), 0, 16384,
     "{\"model_type\":\"phi3\",\"hidden_size\":5120,\"intermediate_size\":17920,"
     "\"num_hidden_layers\":40,\"num_attention_heads\":40,\"num_key_value_heads\":10,"
     "\"vocab_size\":100352,\"tie_word_embeddings\":false,\"max_position_embeddings\":16384}"},
    /* Mistral NeMo 12B (L40 d5120 a32 k8 h_d128 f14336 V131072): Q,O 2*5120*4096 = 41,943,040;
     * K,V 2*5120*1024 = 10,485,760; MLP 3*5120*14336 = 220,200,960; norms 10,240; per layer
     * 272,640,000; x40 = 10,905,600,000; + 5,120 + 2*131072*5120 (1,342,177,280) =
     * 12,247,782,400. */
    {"mistral-nemo-12b", INT64_C(12247782400), INT64_C(12247782400), 0, 128000,
     "{\"model_type\":\"mistral\",\"head_dim\":128,\"hidden_size\":5120,"
     "\"intermediate_size\":14336,\"num_hidden_layers\":40,\"num_attention_heads\":32,"
     "\"num_key_value_heads\":8,\"vocab_size\":131072,\"tie_word_embeddings\":false,"
     "\"max_position_embeddings\":128000,\"sliding_window\":null}"},
};

/* Decode a config given as JSON text; require success. */
static struct core_arch decode(const char *text)
{
    json_error_t jerr;
    json_t *cfg = json_loads(text, 0, &jerr), *errors = json_array();
    struct core_arch a;
    int64_t max_pos = 0;

    ck_assert_msg(cfg != NULL, "bad test JSON: %s", jerr.text);
    ck_assert_msg(api_hfconfig_decode(cfg, &a, &max_pos, errors), "decode failed for %s", text);
    json_decref(cfg);
    json_decref(errors);
    return a;
}

START_TEST(preset_by_hand_and_from_config)
{
    const struct preset_case *pc = &cases[_i];
    int idx = core_preset_find(pc->id);
    struct core_arch_counts want, got;

    ck_assert_msg(idx >= 0, "preset %s missing", pc->id);
    const struct core_preset *p = &core_presets[idx];
    ck_assert(core_arch_count(&p->arch, &want));
    ASSERT_I64(want.total, pc->total);
    ASSERT_I64(want.active, pc->active);
    ASSERT_I64(p->context, pc->context);

    struct core_arch from_config = decode(pc->config);
    ck_assert(core_arch_count(&from_config, &got));
    ASSERT_I64(got.total, want.total);
    ASSERT_I64(got.active, want.active);
    ASSERT_I64(got.experts, want.experts);
    ASSERT_I64(got.moe_layers, want.moe_layers);
    ck_assert(core_arch_attention_width(&from_config) == core_arch_attention_width(&p->arch));

    /* A bare N borrows only the original dense presets' shapes (params.c). */
    ck_assert_int_ge(idx, CORE_PRESET_STAND_INS);
    /* Active counts: with the input embedding or without (the sources differ), within 2.5 %
     * of the figure the source prints. */
    if (pc->published > 0) {
        double with = fabs((double)want.active / pc->published - 1.0);
        double without = fabs((double)(want.active - want.embedding) / pc->published - 1.0);
        ck_assert_msg(with <= 0.025 || without <= 0.025, "%s: active %lld vs %.4g", pc->id,
                      (long long)want.active, pc->published);
    }
}
END_TEST

static Suite *presets_suite(void)
{
    Suite *s = suite_create("validation_presets");
    TCase *tc = tcase_create("presets");
    tcase_add_loop_test(tc, preset_by_hand_and_from_config, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(presets_suite());
}
