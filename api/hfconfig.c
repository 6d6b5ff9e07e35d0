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
#include <string.h>

#include "hfconfig.h"
#include "hfkeys.h"

#define FFN_MAX  (64LL * CORE_HIDDEN_MAX)
#define RANK_MAX CORE_HIDDEN_MAX

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

/* Slots of the common sizes, in table order. */
enum { S_VOCAB, S_HIDDEN, S_LAYERS, S_HEADS, S_KV, S_HEAD_DIM, S_FFN, S_POS, S_COUNT };

struct family {
    const char *model_type;
    /* keys per slot (aliases with '|'); NULL = the class has no such key */
    const char *key[S_COUNT];
    /* class defaults per slot; kv 0 = heads, head_dim 0 = hidden / heads, ffn 0 = 4 hidden */
    int64_t def[S_COUNT];
    unsigned flags;
    int norms; /* per layer; 0 = 2 */
    family_hook hook;
};

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
    {"llama",
     K_GENERIC,
     {32000, 4096, 32, 32, 0, 0, 11008, 2048},
     F_GATED | F_ATTN_BIAS | F_MLP_BIAS,
     0,
     NULL},
    /* MistralConfig / MixtralConfig: kv 8, 4096 x 32 positions; bias-free, no bias keys */
    {"mistral", K_GENERIC, {32000, 4096, 32, 32, 8, 0, 14336, 131072}, F_GATED, 0, NULL},
    {"mixtral", K_GENERIC, {32000, 4096, 32, 32, 8, 0, 14336, 131072}, F_GATED, 0, hook_mixtral},
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
     hook_qwen2_moe},
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
     hook_qwen3_moe},
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
     hook_gpt_neox},
    /* FalconConfig and the older remote-code names: the head layout is in the hook */
    {"falcon",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    {"RefinedWebModel",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    {"RefinedWeb",
     K_FALCON,
     {65024, 4544, 32, 71, 0, 0, 0, 2048},
     F_NORM_BIAS | F_TIED,
     0,
     hook_falcon},
    /* DeepseekV2Config / DeepseekV3Config (transformers): MLA and experts in the hook */
    {"deepseek_v2",
     K_NO_HEAD_DIM,
     {32000, 4096, 32, 32, 0, 0, 11008, 2048},
     F_GATED | F_ATTN_BIAS,
     0,
     hook_deepseek},
    {"deepseek_v3",
     K_NO_HEAD_DIM,
     {129280, 7168, 61, 128, 0, 0, 18432, 4096},
     F_GATED | F_ATTN_BIAS,
     0,
     hook_deepseek},
    /* OlmoeConfig: intermediate_size is one expert's width */
    {"olmoe",
     K_NO_HEAD_DIM,
     {50304, 2048, 16, 16, 0, 0, 2048, 4096},
     F_GATED | F_ATTN_BIAS | F_QK_WIDTH,
     0,
     hook_olmoe},
    /* DbrxConfig: sizes at the top, heads and experts in attn_config / ffn_config */
    {"dbrx",
     {"vocab_size", "d_model", "n_layers", "n_heads", NULL, NULL, NULL, "max_seq_len"},
     {32000, 2048, 24, 16, 0, 0, 3584, 2048},
     F_GATED,
     0,
     hook_dbrx},
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
    a->experts = hf_int(d, e_key, e_def, 0, 0, CORE_EXPERTS_MAX);
    if (a->experts == 0)
        return;
    a->experts_per_token = hf_int(d, k_key, k_def, k_def, 1, CORE_EXPERTS_MAX);
    if (a->experts_per_token <= 0) {
        hf_fail(d, k_key, "required when the model has experts");
        a->experts_per_token = 1;
    }
    if (a->experts_per_token > a->experts) {
        hf_fail(d, k_key, "%lld experts per token exceeds the %lld experts",
                (long long)a->experts_per_token, (long long)a->experts);
        a->experts_per_token = a->experts;
    }
    if (f_key != NULL)
        a->moe_ffn_hidden = hf_int(d, f_key, f_def, f_def, 1, FFN_MAX);
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
    const json_t *only = hf_lookup(d->cfg, "mlp_only_layers");
    int64_t step = hf_int(d, "decoder_sparse_step", 1, 1, 1, CORE_LAYERS_MAX);

    a->moe_layer_freq = step;
    a->moe_layer_phase = step - 1;
    if (only != NULL && !json_is_null(only) && (!json_is_array(only) || json_array_size(only) != 0))
        hf_fail(d, "mlp_only_layers",
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
    a->shared_ffn_hidden = hf_int(d, "shared_expert_intermediate_size", 5632, 0, 0, FFN_MAX);
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
    a->parallel_residual = hf_bool(d, "use_parallel_residual", true);
}

/* FalconAttention: new_decoder_architecture uses num_kv_heads; otherwise multi_query means one
 * KV head whatever num_kv_heads says, and neither means full multi-head attention. Norms: two
 * LayerNorms without parallel attention, else num_ln_in_parallel_attn (2 under the new
 * architecture when null, else 1). bias puts biases on every linear. */
static void hook_falcon(struct dec *d, const struct family *f, struct core_arch *a)
{
    bool is_rw = strcmp(f->model_type, "RefinedWeb") == 0;
    bool new_arch = hf_bool(d, "new_decoder_architecture", is_rw);
    bool mq = hf_bool(d, "multi_query", true);
    bool parallel = hf_bool(d, "parallel_attn", true);
    bool bias = hf_bool(d, "bias", false);
    int64_t kv = hf_int(d, "num_kv_heads|n_head_kv", a->heads, a->heads, 1, CORE_HEADS_MAX);
    int64_t ln = hf_int(d, "num_ln_in_parallel_attn", 0, 0, 1, 2);

    if (new_arch) {
        a->kv_heads = kv;
        check_kv(d, hf_lookup(d->cfg, "n_head_kv") ? "n_head_kv" : "num_kv_heads", a);
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
    a->q_lora_rank = hf_int(d, "q_lora_rank", v3 ? 1536 : 0, 0, 0, RANK_MAX);
    a->kv_lora_rank = hf_int(d, "kv_lora_rank", 512, 512, 1, RANK_MAX);
    a->qk_nope_head_dim = hf_int(d, "qk_nope_head_dim", 128, 128, 0, CORE_HIDDEN_MAX);
    a->qk_rope_head_dim = hf_int(d, "qk_rope_head_dim", 64, 64, 0, CORE_HIDDEN_MAX);
    a->v_head_dim = hf_int(d, "v_head_dim", 128, 128, 1, CORE_HIDDEN_MAX);
    if (a->qk_nope_head_dim + a->qk_rope_head_dim <= 0)
        hf_fail(d, "qk_nope_head_dim", "qk_nope_head_dim + qk_rope_head_dim must be positive");
    a->head_dim = a->qk_nope_head_dim + a->qk_rope_head_dim > 0
                      ? a->qk_nope_head_dim + a->qk_rope_head_dim
                      : 1;
    a->kv_heads = a->heads; /* MLA has no K/V head groups: every head reads the latent */

    experts(d, a, "n_routed_experts", v3 ? 256 : 64, "num_experts_per_tok", v3 ? 8 : 0,
            "moe_intermediate_size", v3 ? 2048 : 1407);
    if (a->experts == 0)
        return;
    a->shared_experts = hf_int(d, "n_shared_experts", v3 ? 1 : 2, 0, 0, CORE_EXPERTS_MAX);
    a->dense_layers = hf_int(d, "first_k_dense_replace", v3 ? 3 : 0, 0, 0, a->layers);
    a->moe_layer_freq = hf_int(d, "moe_layer_freq", 1, 1, 1, CORE_LAYERS_MAX);
    topk_method = hf_string(d, "topk_method");
    /* The auxiliary-loss-free router keeps a per-expert score-correction bias. */
    a->router_bias = v3 || (topk_method != NULL && strcmp(topk_method, "noaux_tc") == 0);
}

static void hook_dbrx(struct dec *d, const struct family *f, struct core_arch *a)
{
    static const char *const nested[] = {"attn_config", "ffn_config"};

    for (size_t i = 0; i < 2; i++) {
        const json_t *v = hf_lookup(d->cfg, nested[i]);
        if (v != NULL && !json_is_null(v) && !json_is_object(v))
            hf_fail(d, nested[i], "must be an object");
    }
    a->kv_heads = hf_int(d, "attn_config.kv_n_heads", 1, 1, 1, CORE_HEADS_MAX);
    check_kv(d, "attn_config.kv_n_heads", a);
    a->ffn_hidden =
        hf_int(d, "ffn_config.ffn_hidden_size", f->def[S_FFN], f->def[S_FFN], 1, FFN_MAX);
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

static void check_kv(struct dec *d, const char *key, const struct core_arch *a)
{
    if (a->kv_heads > a->heads || a->heads % a->kv_heads != 0)
        hf_fail(d, key, "%lld key/value heads must divide the %lld attention heads",
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
        check_kv(d, first_key(f->key[S_KV], kk, sizeof kk), a);
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
    if (f->hook != NULL && d.ok)
        f->hook(&d, f, arch);
    if (!d.ok)
        return false;
    check_heads(&d, f, arch);
    if (d.ok && !core_arch_count(arch, &counts))
        hf_fail(&d, "", "the parameter count of this architecture does not fit in 64 bits");
    return d.ok;
}
