/*
 * hffamily.c - the family hooks of the config decoder (hffamily.h): the keys only some
 * model_types have - routed and shared experts, multi-latent attention, Falcon's attention
 * layout, DBRX's nested configs. Counting rules: docs/architectures.md.
 */
#include <string.h>

#include "hffamily.h"
#include "hfkeys.h"

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

void hf_hook_mixtral(struct dec *d, const struct family *f, struct core_arch *a)
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

void hf_hook_qwen2_moe(struct dec *d, const struct family *f, struct core_arch *a)
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

void hf_hook_qwen3_moe(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_experts", 128, "num_experts_per_tok", 8, "moe_intermediate_size", 768);
    if (a->experts > 0)
        qwen_sparse_step(d, a);
}

void hf_hook_olmoe(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_experts", 64, "num_experts_per_tok", 8, NULL, 0);
}

void hf_hook_gpt_neox(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    a->mlp_bias = true;
    a->parallel_residual = hf_bool(d, "use_parallel_residual", true);
}

/* FalconAttention: new_decoder_architecture uses num_kv_heads; otherwise multi_query means one
 * KV head whatever num_kv_heads says, and neither means full multi-head attention. Norms: two
 * LayerNorms without parallel attention, else num_ln_in_parallel_attn (2 under the new
 * architecture when null, else 1). bias puts biases on every linear. */
void hf_hook_falcon(struct dec *d, const struct family *f, struct core_arch *a)
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
        hf_check_kv(d, hf_lookup(d->cfg, "n_head_kv") ? "n_head_kv" : "num_kv_heads", a);
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
void hf_hook_deepseek(struct dec *d, const struct family *f, struct core_arch *a)
{
    bool v3 = strcmp(f->model_type, "deepseek_v3") == 0 || strcmp(f->model_type, "kimi_k2") == 0;
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
    /* Group-limited routing (DeepseekV3Config: n_group 8, topk_group 4; V2's
     * "group_limited_greedy" reads them too; V2's plain "greedy" ignores them). */
    bool grouped = v3 || topk_method == NULL || strcmp(topk_method, "greedy") != 0;
    a->router_groups = grouped ? hf_int(d, "n_group", v3 ? 8 : 0, 0, 0, a->experts) : 0;
    a->router_group_topk =
        grouped ? hf_int(d, "topk_group", v3 ? 4 : 0, 0, 0, CORE_EXPERTS_MAX) : 0;
    if (a->router_groups <= 1 || a->router_group_topk >= a->router_groups)
        a->router_groups = a->router_group_topk = 0; /* one group, or all of them: no limit */
}

void hf_hook_dbrx(struct dec *d, const struct family *f, struct core_arch *a)
{
    static const char *const nested[] = {"attn_config", "ffn_config"};

    for (size_t i = 0; i < 2; i++) {
        const json_t *v = hf_lookup(d->cfg, nested[i]);
        if (v != NULL && !json_is_null(v) && !json_is_object(v))
            hf_fail(d, nested[i], "must be an object");
    }
    a->kv_heads = hf_int(d, "attn_config.kv_n_heads", 1, 1, 1, CORE_HEADS_MAX);
    hf_check_kv(d, "attn_config.kv_n_heads", a);
    a->ffn_hidden =
        hf_int(d, "ffn_config.ffn_hidden_size", f->def[S_FFN], f->def[S_FFN], 1, FFN_MAX);
    experts(d, a, "ffn_config.moe_num_experts", 4, "ffn_config.moe_top_k", 1, NULL, 0);
}

/* GptOssMLP: num_local_experts (alias num_experts) gated experts of width intermediate_size with
 * biases on gate_up_proj and down_proj (2 f + d each); GptOssTopKRouter: a d x E weight and an E
 * bias; GptOssAttention: one sink logit per head. The config states top-k twice
 * (num_experts_per_tok and experts_per_token): they must agree. */
void hf_hook_gpt_oss(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    experts(d, a, "num_local_experts|num_experts", 128, "num_experts_per_tok|experts_per_token", 4,
            NULL, 0);
    a->mlp_bias = true;
    a->router_bias = a->experts > 0;
    a->attention_sinks = true;
}

/* Gemma3Config keeps the text model under text_config: it must be an object when present. */
void hf_hook_gemma3(struct dec *d, const struct family *f, struct core_arch *a)
{
    const json_t *v = hf_lookup(d->cfg, "text_config");

    (void)f, (void)a;
    if (v != NULL && !json_is_null(v) && !json_is_object(v))
        hf_fail(d, "text_config", "must be an object");
}

/* Qwen3NextConfig: num_experts (512) of moe_intermediate_size (512), top 10, a shared expert of
 * shared_expert_intermediate_size (512) behind a d -> 1 sigmoid gate, the Qwen2-MoE sparse-step
 * rule; attention layers with a sigmoid output gate (q_proj twice as wide); the Gated DeltaNet
 * sizes (linear_num_key_heads 16 x linear_key_head_dim 128, linear_num_value_heads 32 x
 * linear_value_head_dim 128, linear_conv_kernel_dim 4), used where hfattn.c puts linear layers. */
void hf_hook_qwen3_next(struct dec *d, const struct family *f, struct core_arch *a)
{
    (void)f;
    a->attention_output_gate = true;
    a->linear_key_heads = hf_int(d, "linear_num_key_heads", 16, 16, 1, CORE_HEADS_MAX);
    a->linear_key_dim = hf_int(d, "linear_key_head_dim", 128, 128, 1, CORE_HIDDEN_MAX);
    a->linear_value_heads = hf_int(d, "linear_num_value_heads", 32, 32, 1, CORE_HEADS_MAX);
    a->linear_value_dim = hf_int(d, "linear_value_head_dim", 128, 128, 1, CORE_HIDDEN_MAX);
    a->linear_conv_kernel = hf_int(d, "linear_conv_kernel_dim", 4, 4, 1, 1024);
    experts(d, a, "num_experts", 512, "num_experts_per_tok", 10, "moe_intermediate_size", 512);
    if (a->experts == 0)
        return;
    qwen_sparse_step(d, a);
    a->shared_ffn_hidden = hf_int(d, "shared_expert_intermediate_size", 512, 0, 0, FFN_MAX);
    a->shared_experts = a->shared_ffn_hidden > 0;
    a->shared_expert_gate = a->shared_experts > 0;
}
