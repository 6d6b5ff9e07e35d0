/*
 * hfconfig.c - Hugging Face config.json -> struct core_arch (docs/architectures.md).
 *
 * One table row per model_type holds what the transformers class fixes: the key names of the
 * common sizes (GPT-2 says n_embd where Llama says hidden_size), the class defaults applied
 * when a key is absent, and the architectural facts no key states (Qwen2's q/k/v biases,
 * Gemma 2's four norms, GPT-2's learned positions). Family-specific keys - experts, multi-latent
 * attention, Falcon's attention layout, DBRX's nested configs - are read by one small hook per
 * family, and the attention layer types (sliding windows) by hfattn.c. Keys that do not change the
 * count are ignored; a key of the wrong type, out of bounds or contradicting another is an error
 * naming config.<key>.
 */
#include <math.h>
#include <string.h>

#include "hfconfig.h"
#include "hffamily.h"
#include "hfkeys.h"

#define K_GENERIC                                                                                  \
    {                                                                                              \
        "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",                   \
            "num_key_value_heads", "head_dim", "intermediate_size", "max_position_embeddings"      \
    }
#define K_NO_HEAD_DIM                                                                              \
    {                                                                                              \
        "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",                   \
            "num_key_value_heads", NULL, "intermediate_size", "max_position_embeddings"            \
    }
#define K_FALCON                                                                                   \
    {                                                                                              \
        "vocab_size", "hidden_size|n_embd", "num_hidden_layers|n_layer",                           \
            "num_attention_heads|n_head", NULL, NULL, "ffn_hidden_size", "max_position_embeddings" \
    }

static const struct family families[] = {
    /* LlamaConfig */
    {"llama",
     K_GENERIC,
     {32000, 4096, 32, 32, 0, 0, 11008, 2048},
     F_GATED | F_ATTN_BIAS | F_MLP_BIAS,
     0,
     NULL},
    /* MistralConfig / MixtralConfig: kv 8, 4096 x 32 positions; bias-free, no bias keys */
    {"mistral", K_GENERIC, {32000, 4096, 32, 32, 8, 0, 14336, 131072}, F_GATED, 0, NULL},
    {"mixtral", K_GENERIC, {32000, 4096, 32, 32, 8, 0, 14336, 131072}, F_GATED, 0, hf_hook_mixtral},
    /* Qwen2Config / Qwen2MoeConfig: q/k/v always carry biases; head size always hidden / heads */
    {"qwen2",
     K_NO_HEAD_DIM,
     {151936, 4096, 32, 32, 32, 0, 22016, 32768},
     F_GATED | F_QKV_BIAS,
     0,
     NULL},
    {"qwen2_moe",
     K_NO_HEAD_DIM,
     {151936, 2048, 24, 16, 16, 0, 5632, 32768},
     F_GATED | F_QKV_BIAS,
     0,
     hf_hook_qwen2_moe},
    /* Qwen3Config: head_dim 128; Qwen3MoeConfig has no head_dim default (hidden / heads) */
    {"qwen3",
     K_GENERIC,
     {151936, 4096, 32, 32, 32, 128, 22016, 32768},
     F_GATED | F_ATTN_BIAS | F_QK_HEAD,
     0,
     NULL},
    {"qwen3_moe",
     K_GENERIC,
     {151936, 2048, 24, 32, 4, 0, 6144, 32768},
     F_GATED | F_ATTN_BIAS | F_QK_HEAD,
     0,
     hf_hook_qwen3_moe},
    /* GemmaConfig / Gemma2Config: head_dim 256, tied; Gemma 2 norms before and after both blocks */
    {"gemma",
     K_GENERIC,
     {256000, 3072, 28, 16, 16, 256, 24576, 8192},
     F_GATED | F_ATTN_BIAS | F_TIED,
     0,
     NULL},
    {"gemma2",
     K_GENERIC,
     {256000, 2304, 26, 8, 4, 256, 9216, 8192},
     F_GATED | F_ATTN_BIAS | F_TIED,
     4,
     NULL},
    /* Gemma3TextConfig: head_dim 256, tied, four norms, QK-norm over the head size; the
     * multimodal Gemma3Config nests the same keys under text_config (the vision tower is not
     * counted). Attention layer types: hfattn.c */
    {"gemma3_text",
     K_GENERIC,
     {262208, 2304, 26, 8, 4, 256, 9216, 131072},
     F_GATED | F_ATTN_BIAS | F_TIED | F_QK_HEAD,
     4,
     NULL},
    {"gemma3",
     {"text_config.vocab_size", "text_config.hidden_size", "text_config.num_hidden_layers",
      "text_config.num_attention_heads", "text_config.num_key_value_heads", "text_config.head_dim",
      "text_config.intermediate_size", "text_config.max_position_embeddings"},
     {262208, 2304, 26, 8, 4, 256, 9216, 131072},
     F_GATED | F_ATTN_BIAS | F_TIED | F_QK_HEAD,
     4,
     hf_hook_gemma3},
    /* GptOssConfig: attention_bias true, untied; experts, router bias and sinks in the hook */
    {"gpt_oss",
     K_GENERIC,
     {201088, 2880, 36, 64, 8, 64, 2880, 131072},
     F_GATED | F_ATTN_BIAS | F_BIAS_ON,
     0,
     hf_hook_gpt_oss},
    /* Qwen3NextConfig: hybrid - Gated DeltaNet layers between gated full-attention layers
     * (hfattn.c), experts with a gated shared expert, QK-norm over the head size */
    {"qwen3_next",
     K_GENERIC,
     {151936, 2048, 48, 16, 2, 256, 5632, 32768},
     F_GATED | F_ATTN_BIAS | F_QK_HEAD,
     0,
     hf_hook_qwen3_next},
    /* Phi3Config: fused qkv and gate_up projections, no biases */
    {"phi3", K_NO_HEAD_DIM, {32064, 3072, 32, 32, 0, 0, 8192, 4096}, F_GATED, 0, NULL},
    /* GPT2Config: n_inner null = 4 n_embd; hidden_size etc. are attribute_map aliases */
    {"gpt2",
     {"vocab_size", "n_embd|hidden_size", "n_layer|num_hidden_layers", "n_head|num_attention_heads",
      NULL, NULL, "n_inner", "n_positions|max_position_embeddings"},
     {50257, 768, 12, 12, 0, 0, 0, 1024},
     F_ALL_BIAS | F_NORM_BIAS | F_LEARNED_POS | F_TIED,
     0,
     NULL},
    /* GPTNeoXConfig: attention_bias defaults to true, the MLP always has biases */
    {"gpt_neox",
     {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", NULL, NULL,
      "intermediate_size", "max_position_embeddings"},
     {50432, 6144, 44, 64, 0, 0, 24576, 2048},
     F_NORM_BIAS | F_ATTN_BIAS | F_BIAS_ON,
     0,
     hf_hook_gpt_neox},
    /* FalconConfig and the older remote-code names: the head layout is in the hook */
    {"falcon",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hf_hook_falcon},
    {"RefinedWebModel",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hf_hook_falcon},
    {"RefinedWeb",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hf_hook_falcon},
    /* DeepseekV2Config / DeepseekV3Config (transformers): MLA and experts in the hook */
    {"deepseek_v2",
     K_NO_HEAD_DIM,
     {32000, 4096, 32, 32, 0, 0, 11008, 2048},
     F_GATED | F_ATTN_BIAS,
     0,
     hf_hook_deepseek},
    {"deepseek_v3",
     K_NO_HEAD_DIM,
     {129280, 7168, 61, 128, 0, 0, 18432, 4096},
     F_GATED | F_ATTN_BIAS,
     0,
     hf_hook_deepseek},
    /* Kimi K2 ships DeepseekV3Config as remote code (auto_map) under model_type kimi_k2: the
     * same classes, so the same defaults */
    {"kimi_k2",
     K_NO_HEAD_DIM,
     {129280, 7168, 61, 128, 0, 0, 18432, 4096},
     F_GATED | F_ATTN_BIAS,
     0,
     hf_hook_deepseek},
    /* OlmoeConfig: intermediate_size is one expert's width */
    {"olmoe",
     K_NO_HEAD_DIM,
     {50304, 2048, 16, 16, 0, 0, 2048, 4096},
     F_GATED | F_ATTN_BIAS | F_QK_WIDTH,
     0,
     hf_hook_olmoe},
    /* DbrxConfig: sizes at the top, heads and experts in attn_config / ffn_config */
    {"dbrx",
     {"vocab_size", "d_model", "n_layers", "n_heads", NULL, NULL, NULL, "max_seq_len"},
     {32000, 2048, 24, 16, 0, 0, 3584, 2048},
     F_GATED,
     0,
     hf_hook_dbrx},
};

#define FAMILY_COUNT (sizeof families / sizeof families[0])
#define LLAMA        (&families[0])

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */

static const struct family *family_find(const char *model_type)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++)
        if (strcmp(families[i].model_type, model_type) == 0)
            return &families[i];
    return NULL;
}

/* An unknown (or absent) model_type is read as Llama when the five generic keys are there. */
static bool generic_keys_present(struct dec *d, const char *model_type)
{
    static const char *const keys[] = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                       "intermediate_size", "vocab_size"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(d->cfg, keys[i]);
        if (v == NULL || json_is_null(v)) {
            if (model_type == NULL)
                hf_fail(d, "model_type",
                        "missing, and config.%s too: give a model_type this "
                        "service knows or the generic Llama-style keys",
                        keys[i]);
            else
                hf_fail(d, "model_type",
                        "'%.40s' is not a known model_type and config.%s is "
                        "missing, so it cannot be read as Llama-like",
                        model_type, keys[i]);
            return false;
        }
    }
    return true;
}

/* One common size: its key (with aliases) if the class has one, else the class's fixed value. */
static int64_t slot(struct dec *d, const struct family *f, int s, int64_t null_value, int64_t min,
                    int64_t max)
{
    return f->key[s] ? hf_int(d, f->key[s], f->def[s], null_value, min, max) : f->def[s];
}

static void read_common(struct dec *d, const struct family *f, struct core_arch *a,
                        int64_t *max_positions)
{
    bool attn_bias;

    *a = (struct core_arch){0};
    a->vocab = slot(d, f, S_VOCAB, f->def[S_VOCAB], 1, CORE_VOCAB_MAX);
    a->hidden = slot(d, f, S_HIDDEN, f->def[S_HIDDEN], 1, CORE_HIDDEN_MAX);
    a->layers = slot(d, f, S_LAYERS, f->def[S_LAYERS], 1, CORE_LAYERS_MAX);
    a->heads = slot(d, f, S_HEADS, f->def[S_HEADS], 1, CORE_HEADS_MAX);
    /* null means "derive it" for these three, as in the transformers classes */
    a->kv_heads = slot(d, f, S_KV, 0, 1, CORE_HEADS_MAX);
    a->kv_heads = a->kv_heads > 0 ? a->kv_heads : a->heads;
    a->head_dim = slot(d, f, S_HEAD_DIM, 0, 1, CORE_HIDDEN_MAX);
    a->ffn_hidden = slot(d, f, S_FFN, 0, 1, FFN_MAX);
    a->ffn_hidden = a->ffn_hidden > 0 ? a->ffn_hidden : 4 * a->hidden;
    *max_positions = slot(d, f, S_POS, f->def[S_POS], 1, CORE_SEQ_LEN_MAX);
    a->gated_mlp = (f->flags & F_GATED) != 0;
    a->tied_embeddings = hf_bool(d, "tie_word_embeddings", (f->flags & F_TIED) != 0);
    a->learned_positions = (f->flags & F_LEARNED_POS) ? *max_positions : 0;
    a->norm_bias = (f->flags & F_NORM_BIAS) != 0;
    a->norms_per_layer = f->norms;
    attn_bias = (f->flags & F_ATTN_BIAS) && hf_bool(d, "attention_bias", f->flags & F_BIAS_ON);
    a->qkv_bias = (f->flags & (F_QKV_BIAS | F_ALL_BIAS)) || attn_bias;
    a->o_bias = (f->flags & F_ALL_BIAS) || attn_bias;
    a->mlp_bias =
        (f->flags & F_ALL_BIAS) || ((f->flags & F_MLP_BIAS) && hf_bool(d, "mlp_bias", false));
    a->qk_norm = (f->flags & F_QK_HEAD)    ? CORE_QK_NORM_HEAD
                 : (f->flags & F_QK_WIDTH) ? CORE_QK_NORM_WIDTH
                                           : CORE_QK_NORM_NONE;
}

/* The first alias of a key list, for naming it in a message. */
static const char *first_key(const char *keys, char *buf, size_t size)
{
    size_t n = strcspn(keys, "|");
    n = n < size ? n : size - 1;
    memcpy(buf, keys, n);
    buf[n] = '\0';
    return buf;
}

static void check_heads(struct dec *d, const struct family *f, struct core_arch *a)
{
    char hk[HF_KEY_MAX], kk[HF_KEY_MAX];

    first_key(f->key[S_HEADS], hk, sizeof hk);
    if (a->head_dim == 0) { /* derived: hidden / heads must be exact */
        if (a->hidden % a->heads != 0)
            hf_fail(d, hk, "hidden size %lld is not divisible by %lld heads", (long long)a->hidden,
                    (long long)a->heads);
        a->head_dim = a->hidden / a->heads > 0 ? a->hidden / a->heads : 1;
    }
    /* Families without a kv key either fix k = a (GPT-2, GPT-NeoX, DeepSeek) or check it in
     * their hook under the key they read (Falcon, DBRX). */
    if (f->key[S_KV] != NULL)
        hf_check_kv(d, first_key(f->key[S_KV], kk, sizeof kk), a);
}

/* The positions a serving engine admits from a config with RoPE scaling, as vLLM derives
 * max_model_len (vllm/config/model.py, _get_and_verify_max_len): a rope_scaling (or
 * rope_parameters) object whose type ("rope_type", else the older "type") is not su, longrope or
 * llama3 multiplies max_position_embeddings by its factor (1 when absent), yarn's base being its
 * original_max_position_embeddings; Gemma 3's configs state the scaled length already (skipped).
 * Qwen2.5's 128k recipe (yarn, factor 4 over 32768) reads 131072; Llama 3.1's llama3 type and
 * Phi-3.5's longrope keep max_position_embeddings. Truncated as vLLM's int(). */
static void scaled_positions(struct dec *d, const char *model_type, int64_t *positions)
{
    const json_t *rs = json_object_get(d->cfg, "rope_scaling"), *t, *v;
    const char *type;
    double factor = 1, base = (double)*positions, scaled;

    if (rs == NULL || json_is_null(rs))
        rs = json_object_get(d->cfg, "rope_parameters");
    if (!json_is_object(rs) || (model_type != NULL && strstr(model_type, "gemma3") != NULL))
        return;
    t = json_object_get(rs, "rope_type");
    if (!json_is_string(t))
        t = json_object_get(rs, "type");
    type = json_is_string(t) ? json_string_value(t) : "default";
    if (strcmp(type, "su") == 0 || strcmp(type, "longrope") == 0 || strcmp(type, "llama3") == 0)
        return;
    v = json_object_get(rs, "factor");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_number(v) || !(json_number_value(v) > 0 && json_number_value(v) <= 1e6)) {
            hf_fail(d, "rope_scaling.factor", "must be a number in (0, 1e6]");
            return;
        }
        factor = json_number_value(v);
    }
    if (strcmp(type, "yarn") == 0) {
        v = json_object_get(rs, "original_max_position_embeddings");
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > CORE_SEQ_LEN_MAX) {
            hf_fail(d, "rope_scaling.original_max_position_embeddings",
                    "yarn needs a whole number of positions in [1, %d]", CORE_SEQ_LEN_MAX);
            return;
        }
        base = (double)json_integer_value(v);
    }
    scaled = floor(base * factor);
    if (!(scaled >= 1 && scaled <= CORE_SEQ_LEN_MAX)) {
        hf_fail(d, "rope_scaling.factor", "scales the positions to %.0f, outside [1, %d]", scaled,
                CORE_SEQ_LEN_MAX);
        return;
    }
    *positions = (int64_t)scaled;
}

bool api_hfconfig_decode(const json_t *config, struct core_arch *arch, int64_t *max_positions,
                         json_t *errors)
{
    struct dec d = {config, errors, true};
    const struct family *f;
    const char *model_type;
    struct core_arch_counts counts;

    if (!json_is_object(config)) {
        hf_fail(&d, "", "must be a Hugging Face config.json object");
        return false;
    }
    model_type = hf_string(&d, "model_type");
    if (!d.ok)
        return false;
    f = model_type ? family_find(model_type) : NULL;
    if (f == NULL) {
        if (!generic_keys_present(&d, model_type))
            return false;
        f = LLAMA;
    }
    read_common(&d, f, arch, max_positions);
    if (d.ok)
        scaled_positions(&d, model_type, max_positions);
    if (f->hook != NULL && d.ok)
        f->hook(&d, f, arch);
    if (d.ok)
        hf_attention_types(&d, f == LLAMA ? NULL : f->model_type, arch);
    if (!d.ok)
        return false;
    check_heads(&d, f, arch);
    if (d.ok && !core_arch_count(arch, &counts))
        hf_fail(&d, "", "the parameter count of this architecture does not fit in 64 bits");
    return d.ok;
}
