/*
 * hfconfig.c - Hugging Face config.json -> struct core_arch (docs/architectures.md).
 *
 * One table row per model_type holds what the transformers class fixes: the key names of the
 * common sizes (GPT-2 says n_embd where Llama says hidden_size), the class defaults applied
 * when a key is absent, and the architectural facts no key states (Qwen2's q/k/v biases,
 * Gemma 2's four norms, GPT-2's learned positions). Family-specific keys - experts, multi-latent
 * attention, Falcon's attention layout, DBRX's nested configs - are read by one small hook per
 * family. Keys that do not change the count are ignored; a key of the wrong type, out of bounds
 * or contradicting another is an error naming config.<key>.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "api_internal.h"
#include "hfconfig.h"

#define MSG_MAX  200
#define KEY_MAX  64
#define FFN_MAX  (64LL * CORE_HIDDEN_MAX)
#define RANK_MAX CORE_HIDDEN_MAX

struct dec {
    const json_t *cfg;
    json_t *errors;
    bool ok;
};

static void fail(struct dec *d, const char *key, const char *fmt, ...)
{
    char field[KEY_MAX + 16], msg[MSG_MAX];
    va_list ap;
    int n = snprintf(field, sizeof field, "config%s%s", key[0] ? "." : "", key);

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->ok = false;
    api_errors_add(d->errors, field, n > 0 ? strnlen(field, sizeof field) : 0, msg);
}

/* A dotted path ("attn_config.kv_n_heads") inside the config; NULL when absent. */
static const json_t *lookup(const json_t *cfg, const char *path)
{
    char part[KEY_MAX];
    const json_t *v = cfg;

    while (v != NULL && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof part || !json_is_object(v))
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        v = json_object_get(v, part);
        path += n + (path[n] == '.');
    }
    return v;
}

/* Keys are "a" or aliases "a|b": the first present one gives the value, and any other present
 * one must agree with it. *name receives the key that gave the value. */
static const json_t *find(struct dec *d, const char *keys, char *name)
{
    const json_t *found = NULL;
    char key[KEY_MAX];

    name[0] = '\0';
    while (*keys) {
        size_t n = strcspn(keys, "|");
        const json_t *v;
        if (n >= sizeof key)
            return found;
        memcpy(key, keys, n);
        key[n] = '\0';
        keys += n + (keys[n] == '|');
        v = lookup(d->cfg, key);
        if (v == NULL || json_is_null(v))
            continue;
        if (found == NULL) {
            found = v;
            memcpy(name, key, n + 1);
        } else if (!json_equal(found, v)) {
            fail(d, key, "contradicts config.%s: they name the same setting", name);
        }
    }
    return found;
}

/* An integer key: absent -> absent_value, null -> null_value, else it must be a whole number in
 * [min, max] (15.0 is accepted as 15). */
static int64_t get_int(struct dec *d, const char *keys, int64_t absent_value, int64_t null_value,
                       int64_t min, int64_t max)
{
    char name[KEY_MAX];
    const json_t *v = find(d, keys, name);

    if (v == NULL) {
        /* absent, or every alias null: tell the two apart on the first key */
        const json_t *first;
        char key[KEY_MAX];
        size_t n = strcspn(keys, "|");
        if (n >= sizeof key)
            return absent_value;
        memcpy(key, keys, n);
        key[n] = '\0';
        first = lookup(d->cfg, key);
        return first != NULL && json_is_null(first) ? null_value : absent_value;
    }
    if (json_is_integer(v)) {
        if (json_integer_value(v) >= min && json_integer_value(v) <= max)
            return json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
               json_real_value(v) >= (double)min && json_real_value(v) <= (double)max) {
        return (int64_t)json_real_value(v);
    }
    fail(d, name, "must be a whole number from %lld to %lld", (long long)min, (long long)max);
    return absent_value;
}

static bool get_bool(struct dec *d, const char *keys, bool absent_value)
{
    char name[KEY_MAX];
    const json_t *v = find(d, keys, name);

    if (v == NULL)
        return absent_value;
    if (!json_is_boolean(v)) {
        fail(d, name, "must be true or false");
        return absent_value;
    }
    return json_is_true(v);
}

/* A string key; NULL when absent or null, an error when not a string. */
static const char *get_string(struct dec *d, const char *key)
{
    char name[KEY_MAX];
    const json_t *v = find(d, key, name);

    if (v != NULL && !json_is_string(v)) {
        fail(d, name, "must be a string");
        return NULL;
    }
    return v ? json_string_value(v) : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The family table
 * ------------------------------------------------------------------------------------------- */

enum {
    F_GATED = 1 << 0,       /* gate/up/down MLP (SwiGLU, GeGLU) */
    F_QKV_BIAS = 1 << 1,    /* q/k/v biases with no key (Qwen2) */
    F_ALL_BIAS = 1 << 2,    /* biases on every linear (GPT-2, GPT-NeoX's MLP) */
    F_NORM_BIAS = 1 << 3,   /* LayerNorm with a bias */
    F_ATTN_BIAS = 1 << 4,   /* attention_bias puts biases on q, k, v and o */
    F_MLP_BIAS = 1 << 5,    /* mlp_bias puts biases on the MLP */
    F_QK_HEAD = 1 << 6,     /* per-head QK-norm (Qwen3) */
    F_QK_WIDTH = 1 << 7,    /* full-width QK-norm (OLMoE) */
    F_LEARNED_POS = 1 << 8, /* learned position embeddings over max_positions (GPT-2) */
    F_TIED = 1 << 9,        /* tie_word_embeddings defaults to true */
    F_BIAS_ON = 1 << 10,    /* attention_bias defaults to true (GPT-NeoX) */
};

struct family;
typedef void (*family_hook)(struct dec *d, const struct family *f, struct core_arch *a);

struct family {
    const char *model_type;
    /* keys (aliases with '|'); NULL = the class has no such key */
    const char *vocab_key, *hidden_key, *layers_key, *heads_key, *kv_key, *head_dim_key, *ffn_key,
        *pos_key;
    /* class defaults; kv_heads 0 = heads, head_dim 0 = hidden / heads, ffn 0 = 4 hidden */
    int64_t vocab, hidden, layers, heads, kv_heads, head_dim, ffn, pos;
    unsigned flags;
    int norms; /* per layer; 0 = 2 */
    family_hook hook;
};

#define K_GENERIC                                                                                  \
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",                       \
        "num_key_value_heads", "head_dim", "intermediate_size", "max_position_embeddings"
#define K_NO_HEAD_DIM                                                                              \
    "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",                       \
        "num_key_value_heads", NULL, "intermediate_size", "max_position_embeddings"

static void check_kv(struct dec *d, const char *key, const struct core_arch *a);
static void hook_mixtral(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_qwen2_moe(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_qwen3_moe(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_olmoe(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_deepseek(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_dbrx(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_falcon(struct dec *d, const struct family *f, struct core_arch *a);
static void hook_gpt_neox(struct dec *d, const struct family *f, struct core_arch *a);

static const struct family families[] = {
    /* LlamaConfig */
    {"llama", K_GENERIC, 32000, 4096, 32, 32, 0, 0, 11008, 2048, F_GATED | F_ATTN_BIAS | F_MLP_BIAS,
     0, NULL},
    /* MistralConfig: kv 8, 4096 x 32 positions; no bias keys (bias-free model) */
    {"mistral", K_GENERIC, 32000, 4096, 32, 32, 8, 0, 14336, 131072, F_GATED, 0, NULL},
    {"mixtral", K_GENERIC, 32000, 4096, 32, 32, 8, 0, 14336, 131072, F_GATED, 0, hook_mixtral},
    /* Qwen2Config: q/k/v always carry biases; head size is always hidden / heads */
    {"qwen2", K_NO_HEAD_DIM, 151936, 4096, 32, 32, 32, 0, 22016, 32768, F_GATED | F_QKV_BIAS, 0,
     NULL},
    {"qwen2_moe", K_NO_HEAD_DIM, 151936, 2048, 24, 16, 16, 0, 5632, 32768, F_GATED | F_QKV_BIAS, 0,
     hook_qwen2_moe},
    /* Qwen3Config: head_dim 128; Qwen3MoeConfig has no head_dim default (hidden / heads) */
    {"qwen3", K_GENERIC, 151936, 4096, 32, 32, 32, 128, 22016, 32768,
     F_GATED | F_ATTN_BIAS | F_QK_HEAD, 0, NULL},
    {"qwen3_moe", K_GENERIC, 151936, 2048, 24, 32, 4, 0, 6144, 32768,
     F_GATED | F_ATTN_BIAS | F_QK_HEAD, 0, hook_qwen3_moe},
    /* GemmaConfig / Gemma2Config: head_dim 256, tied; Gemma 2 norms before and after both blocks */
    {"gemma", K_GENERIC, 256000, 3072, 28, 16, 16, 256, 24576, 8192, F_GATED | F_ATTN_BIAS | F_TIED,
     0, NULL},
    {"gemma2", K_GENERIC, 256000, 2304, 26, 8, 4, 256, 9216, 8192, F_GATED | F_ATTN_BIAS | F_TIED,
     4, NULL},
    /* Phi3Config: fused qkv and gate_up projections, no biases */
    {"phi3", K_NO_HEAD_DIM, 32064, 3072, 32, 32, 0, 0, 8192, 4096, F_GATED, 0, NULL},
    /* GPT2Config: n_inner null = 4 n_embd; hidden_size etc. are attribute_map aliases */
    {"gpt2",
     "vocab_size",
     "n_embd|hidden_size",
     "n_layer|num_hidden_layers",
     "n_head|num_attention_heads",
     NULL,
     NULL,
     "n_inner",
     "n_positions|max_position_embeddings",
     50257,
     768,
     12,
     12,
     0,
     0,
     0,
     1024,
     F_ALL_BIAS | F_NORM_BIAS | F_LEARNED_POS | F_TIED,
     0,
     NULL},
    /* GPTNeoXConfig: attention_bias defaults to true, the MLP always has biases */
    {"gpt_neox",
     "vocab_size",
     "hidden_size",
     "num_hidden_layers",
     "num_attention_heads",
     NULL,
     NULL,
     "intermediate_size",
     "max_position_embeddings",
     50432,
     6144,
     44,
     64,
     0,
     0,
     24576,
     2048,
     F_NORM_BIAS | F_ATTN_BIAS | F_BIAS_ON,
     0,
     hook_gpt_neox},
    /* FalconConfig (and the RefinedWeb remote-code names): the head layout is in the hook */
    {"falcon",
     "vocab_size",
     "hidden_size|n_embd",
     "num_hidden_layers|n_layer",
     "num_attention_heads|n_head",
     NULL,
     NULL,
     "ffn_hidden_size",
     "max_position_embeddings",
     65024,
     4544,
     32,
     71,
     0,
     0,
     0,
     2048,
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    {"RefinedWebModel",
     "vocab_size",
     "hidden_size|n_embd",
     "num_hidden_layers|n_layer",
     "num_attention_heads|n_head",
     NULL,
     NULL,
     "ffn_hidden_size",
     "max_position_embeddings",
     65024,
     4544,
     32,
     71,
     0,
     0,
     0,
     2048,
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    {"RefinedWeb",
     "vocab_size",
     "hidden_size|n_embd",
     "num_hidden_layers|n_layer",
     "num_attention_heads|n_head",
     NULL,
     NULL,
     "ffn_hidden_size",
     "max_position_embeddings",
     65024,
     4544,
     32,
     71,
     0,
     0,
     0,
     2048,
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    /* DeepseekV2Config / DeepseekV3Config (transformers): MLA and experts in the hook */
    {"deepseek_v2", K_NO_HEAD_DIM, 32000, 4096, 32, 32, 0, 0, 11008, 2048, F_GATED | F_ATTN_BIAS, 0,
     hook_deepseek},
    {"deepseek_v3", K_NO_HEAD_DIM, 129280, 7168, 61, 128, 0, 0, 18432, 4096, F_GATED | F_ATTN_BIAS,
     0, hook_deepseek},
    /* OlmoeConfig: intermediate_size is one expert's width */
    {"olmoe", K_NO_HEAD_DIM, 50304, 2048, 16, 16, 0, 0, 2048, 4096,
     F_GATED | F_ATTN_BIAS | F_QK_WIDTH, 0, hook_olmoe},
    /* DbrxConfig: sizes at the top, heads and experts in attn_config / ffn_config */
    {"dbrx", "vocab_size",  "d_model", "n_layers", "n_heads", NULL,     NULL,
     NULL,   "max_seq_len", 32000,     2048,       24,        16,       0,
     0,      3584,          2048,      F_GATED,    0,         hook_dbrx},
};

#define FAMILY_COUNT (sizeof families / sizeof families[0])
#define LLAMA        (&families[0])

/* ---------------------------------------------------------------------------------------------
 * Hooks
 * ------------------------------------------------------------------------------------------- */

/* Routed experts: count, top-k and one expert's width, with top-k <= count. */
static void experts(struct dec *d, struct core_arch *a, const char *e_key, int64_t e_def,
                    const char *k_key, int64_t k_def, const char *f_key, int64_t f_def)
{
    a->experts = get_int(d, e_key, e_def, 0, 0, CORE_EXPERTS_MAX);
    if (a->experts == 0)
        return;
    a->experts_per_token = get_int(d, k_key, k_def, k_def, 1, CORE_EXPERTS_MAX);
    if (a->experts_per_token <= 0) {
        fail(d, k_key, "required when the model has experts");
        a->experts_per_token = 1;
    }
    if (a->experts_per_token > a->experts) {
        fail(d, k_key, "%lld experts per token exceeds the %lld experts",
             (long long)a->experts_per_token, (long long)a->experts);
        a->experts_per_token = a->experts;
    }
    if (f_key != NULL)
        a->moe_ffn_hidden = get_int(d, f_key, f_def, f_def, 1, FFN_MAX);
}

static void hook_mixtral(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_local_experts", 8, "num_experts_per_tok", 2, NULL, 0);
}

/* Qwen2-MoE layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not listed in
 * mlp_only_layers; the shared expert has its own width and a d -> 1 sigmoid gate. */
static void qwen_sparse_step(struct dec *d, struct core_arch *a)
{
    const json_t *only = lookup(d->cfg, "mlp_only_layers");
    int64_t step = get_int(d, "decoder_sparse_step", 1, 1, 1, CORE_LAYERS_MAX);

    a->moe_layer_freq = step;
    a->moe_layer_phase = step - 1;
    if (only != NULL && !json_is_null(only) && (!json_is_array(only) || json_array_size(only) != 0))
        fail(d, "mlp_only_layers",
             "only an empty list is supported; give the dense layers as "
             "leading ones instead");
}

static void hook_qwen2_moe(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_experts", 60, "num_experts_per_tok", 4, "moe_intermediate_size", 1408);
    if (a->experts == 0)
        return;
    qwen_sparse_step(d, a);
    a->shared_ffn_hidden = get_int(d, "shared_expert_intermediate_size", 5632, 0, 0, FFN_MAX);
    a->shared_experts = a->shared_ffn_hidden > 0;
    a->shared_expert_gate = a->shared_experts > 0;
}

static void hook_qwen3_moe(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_experts", 128, "num_experts_per_tok", 8, "moe_intermediate_size", 768);
    if (a->experts > 0)
        qwen_sparse_step(d, a);
}

static void hook_olmoe(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_experts", 64, "num_experts_per_tok", 8, NULL, 0);
}

static void hook_gpt_neox(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    a->mlp_bias = true;
    a->parallel_residual = get_bool(d, "use_parallel_residual", true);
}

/* FalconAttention: new_decoder_architecture uses num_kv_heads; otherwise multi_query means one
 * KV head whatever num_kv_heads says, and neither means full multi-head attention. Norms: two
 * LayerNorms without parallel attention, else num_ln_in_parallel_attn (2 under the new
 * architecture when null, else 1). bias puts biases on every linear. */
static void hook_falcon(struct dec *d, const struct family *f, struct core_arch *a)
{
    bool is_rw = strcmp(f->model_type, "RefinedWeb") == 0;
    bool new_arch = get_bool(d, "new_decoder_architecture", is_rw);
    bool mq = get_bool(d, "multi_query", true);
    bool parallel = get_bool(d, "parallel_attn", true);
    bool bias = get_bool(d, "bias", false);
    int64_t kv = get_int(d, "num_kv_heads|n_head_kv", a->heads, a->heads, 1, CORE_HEADS_MAX);
    int64_t ln = get_int(d, "num_ln_in_parallel_attn", 0, 0, 1, 2);

    if (new_arch) {
        a->kv_heads = kv;
        check_kv(d, lookup(d->cfg, "n_head_kv") ? "n_head_kv" : "num_kv_heads", a);
    } else {
        a->kv_heads = mq ? 1 : a->heads;
    }
    a->qkv_bias = a->o_bias = a->mlp_bias = bias;
    a->parallel_residual = parallel;
    if (!parallel)
        a->norms_per_layer = 2;
    else
        a->norms_per_layer = ln > 0 ? ln : new_arch ? 2 : 1;
}

/* DeepSeek MLA + MoE. Layer i has routed experts when i >= first_k_dense_replace and
 * i % moe_layer_freq == 0; the n_shared_experts shared experts each have the routed width. */
static void hook_deepseek(struct dec *d, const struct family *f, struct core_arch *a)
{
    bool v3 = strcmp(f->model_type, "deepseek_v3") == 0;
    const char *topk_method;

    /* DeepSeek-V2-Lite ships without q-LoRA and states it by leaving q_lora_rank out (or null),
     * so absence means none for V2; V3 keeps the class default of 1536. */
    a->q_lora_rank = get_int(d, "q_lora_rank", v3 ? 1536 : 0, 0, 0, RANK_MAX);
    a->kv_lora_rank = get_int(d, "kv_lora_rank", 512, 512, 1, RANK_MAX);
    a->qk_nope_head_dim = get_int(d, "qk_nope_head_dim", 128, 128, 0, CORE_HIDDEN_MAX);
    a->qk_rope_head_dim = get_int(d, "qk_rope_head_dim", 64, 64, 0, CORE_HIDDEN_MAX);
    a->v_head_dim = get_int(d, "v_head_dim", 128, 128, 1, CORE_HIDDEN_MAX);
    if (a->qk_nope_head_dim + a->qk_rope_head_dim <= 0)
        fail(d, "qk_nope_head_dim", "qk_nope_head_dim + qk_rope_head_dim must be positive");
    a->head_dim = a->qk_nope_head_dim + a->qk_rope_head_dim > 0
                      ? a->qk_nope_head_dim + a->qk_rope_head_dim
                      : 1;
    a->kv_heads = a->heads; /* MLA has no K/V head groups: every head reads the latent */

    experts(d, a, "n_routed_experts", v3 ? 256 : 64, "num_experts_per_tok", v3 ? 8 : 0,
            "moe_intermediate_size", v3 ? 2048 : 1407);
    if (a->experts == 0)
        return;
    a->shared_experts = get_int(d, "n_shared_experts", v3 ? 1 : 2, 0, 0, CORE_EXPERTS_MAX);
    a->dense_layers = get_int(d, "first_k_dense_replace", v3 ? 3 : 0, 0, 0, a->layers);
    a->moe_layer_freq = get_int(d, "moe_layer_freq", 1, 1, 1, CORE_LAYERS_MAX);
    topk_method = get_string(d, "topk_method");
    /* The auxiliary-loss-free router keeps a per-expert score-correction bias. */
    a->router_bias = v3 || (topk_method != NULL && strcmp(topk_method, "noaux_tc") == 0);
}

static void hook_dbrx(struct dec *d, const struct family *f, struct core_arch *a)
{
    static const char *const nested[] = {"attn_config", "ffn_config"};

    for (size_t i = 0; i < 2; i++) {
        const json_t *v = lookup(d->cfg, nested[i]);
        if (v != NULL && !json_is_null(v) && !json_is_object(v))
            fail(d, nested[i], "must be an object");
    }
    a->kv_heads = get_int(d, "attn_config.kv_n_heads", 1, 1, 1, CORE_HEADS_MAX);
    check_kv(d, "attn_config.kv_n_heads", a);
    a->ffn_hidden = get_int(d, "ffn_config.ffn_hidden_size", f->ffn, f->ffn, 1, FFN_MAX);
    experts(d, a, "ffn_config.moe_num_experts", 4, "ffn_config.moe_top_k", 1, NULL, 0);
}

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
                fail(d, "model_type",
                     "missing, and config.%s too: give a model_type this "
                     "service knows or the generic Llama-style keys",
                     keys[i]);
            else
                fail(d, "model_type",
                     "'%.40s' is not a known model_type and config.%s is "
                     "missing, so it cannot be read as Llama-like",
                     model_type, keys[i]);
            return false;
        }
    }
    return true;
}

static void read_common(struct dec *d, const struct family *f, struct core_arch *a,
                        int64_t *max_positions)
{
    bool attn_bias;

    *a = (struct core_arch){0};
    a->vocab = get_int(d, f->vocab_key, f->vocab, f->vocab, 1, CORE_VOCAB_MAX);
    a->hidden = get_int(d, f->hidden_key, f->hidden, f->hidden, 1, CORE_HIDDEN_MAX);
    a->layers = get_int(d, f->layers_key, f->layers, f->layers, 1, CORE_LAYERS_MAX);
    a->heads = get_int(d, f->heads_key, f->heads, f->heads, 1, CORE_HEADS_MAX);
    a->kv_heads = f->kv_key ? get_int(d, f->kv_key, f->kv_heads, 0, 1, CORE_HEADS_MAX) : 0;
    a->kv_heads = a->kv_heads > 0 ? a->kv_heads : a->heads;
    a->head_dim = f->head_dim_key ? get_int(d, f->head_dim_key, f->head_dim, 0, 1, CORE_HIDDEN_MAX)
                                  : f->head_dim;
    a->ffn_hidden = f->ffn_key ? get_int(d, f->ffn_key, f->ffn, 0, 1, FFN_MAX) : f->ffn;
    if (a->ffn_hidden == 0)
        a->ffn_hidden = 4 * a->hidden;
    *max_positions =
        f->pos_key ? get_int(d, f->pos_key, f->pos, f->pos, 1, CORE_SEQ_LEN_MAX) : f->pos;
    a->gated_mlp = (f->flags & F_GATED) != 0;
    a->tied_embeddings = get_bool(d, "tie_word_embeddings", (f->flags & F_TIED) != 0);
    a->learned_positions = (f->flags & F_LEARNED_POS) ? *max_positions : 0;
    a->norm_bias = (f->flags & F_NORM_BIAS) != 0;
    a->norms_per_layer = f->norms;
    attn_bias = (f->flags & F_ATTN_BIAS) && get_bool(d, "attention_bias", f->flags & F_BIAS_ON);
    a->qkv_bias = (f->flags & (F_QKV_BIAS | F_ALL_BIAS)) || attn_bias;
    a->o_bias = (f->flags & F_ALL_BIAS) || attn_bias;
    a->mlp_bias =
        (f->flags & F_ALL_BIAS) || ((f->flags & F_MLP_BIAS) && get_bool(d, "mlp_bias", false));
    a->qk_norm = (f->flags & F_QK_HEAD)    ? CORE_QK_NORM_HEAD
                 : (f->flags & F_QK_WIDTH) ? CORE_QK_NORM_WIDTH
                                           : CORE_QK_NORM_NONE;
}

static void check_kv(struct dec *d, const char *key, const struct core_arch *a)
{
    if (a->kv_heads > a->heads || a->heads % a->kv_heads != 0)
        fail(d, key, "%lld key/value heads must divide the %lld attention heads",
             (long long)a->kv_heads, (long long)a->heads);
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
    char hk[KEY_MAX], kk[KEY_MAX];

    first_key(f->heads_key, hk, sizeof hk);
    if (a->head_dim == 0) { /* derived: hidden / heads must be exact */
        if (a->hidden % a->heads != 0)
            fail(d, hk, "hidden size %lld is not divisible by %lld heads", (long long)a->hidden,
                 (long long)a->heads);
        a->head_dim = a->hidden / a->heads > 0 ? a->hidden / a->heads : 1;
    }
    /* Families without a kv key either fix k = a (GPT-2, GPT-NeoX, DeepSeek) or check it in
     * their hook under the key they read (Falcon, DBRX). */
    if (f->kv_key != NULL)
        check_kv(d, first_key(f->kv_key, kk, sizeof kk), a);
}

bool api_hfconfig_decode(const json_t *config, struct core_arch *arch, int64_t *max_positions,
                         json_t *errors)
{
    struct dec d = {config, errors, true};
    const struct family *f;
    const char *model_type;
    struct core_arch_counts counts;

    if (!json_is_object(config)) {
        fail(&d, "", "must be a Hugging Face config.json object");
        return false;
    }
    model_type = get_string(&d, "model_type");
    if (!d.ok)
        return false;
    f = model_type ? family_find(model_type) : NULL;
    if (f == NULL) {
        if (!generic_keys_present(&d, model_type))
            return false;
        f = LLAMA;
    }
    read_common(&d, f, arch, max_positions);
    if (f->hook != NULL && d.ok)
        f->hook(&d, f, arch);
    if (!d.ok)
        return false;
    check_heads(&d, f, arch);
    if (d.ok && !core_arch_count(arch, &counts))
        fail(&d, "", "the parameter count of this architecture does not fit in 64 bits");
    return d.ok;
}
