/*
 * arch.c - exact parameter counts of an architecture: total, active per token, and the split
 * between routed experts and everything else.
 *
 * One layer is attention + norms + an MLP; the MLP is either the dense one (width f) or a
 * mixture of experts (routed experts, router, shared experts). Which layers are MoE follows the
 * dense_layers / moe_layer_freq / moe_layer_phase rule, counted in closed form. Multi-latent
 * attention (DeepSeek) replaces the Q, K, V, O block by its low-rank projections. All the
 * extra fields are zero/false for the original presets, and then every term below reduces to
 * the formula in docs/model.md. The rules per family are in docs/architectures.md. Every
 * product and sum is overflow-checked: fuzzed architectures can exceed int64.
 */
#include "internal.h"

/* a * b + c, overflow-checked, accumulated into *acc. */
static bool acc_mul(int64_t *acc, int64_t a, int64_t b)
{
    int64_t t;
    return ck_mul(a, b, &t) && ck_add(*acc, t, acc);
}

static bool acc_mul3(int64_t *acc, int64_t a, int64_t b, int64_t c)
{
    int64_t t;
    return ck_mul(a, b, &t) && acc_mul(acc, t, c);
}

/* Standard attention: Q and O of width a h_d, K and V of width k h_d, optional relative-position
 * projection, biases and QK-norm. */
static bool attention_std(const struct core_arch *a, int64_t *out)
{
    int64_t w, kw, n = 0;

    if (!ck_mul(a->heads, a->head_dim, &w) || !ck_mul(a->kv_heads, a->head_dim, &kw))
        return false;
    if (!acc_mul(&n, a->hidden, w) || !acc_mul(&n, a->hidden, w) || !acc_mul3(&n, 2, a->hidden, kw))
        return false;
    if (a->relative_position_projection && !acc_mul(&n, a->hidden, w))
        return false;
    /* The output gate doubles q_proj (and its bias, if any). */
    if (a->attention_output_gate &&
        (!acc_mul(&n, a->hidden, w) || (a->qkv_bias && !ck_add(n, w, &n))))
        return false;
    if (a->qkv_bias && (!ck_add(n, w, &n) || !acc_mul(&n, 2, kw)))
        return false;
    if (a->o_bias && !ck_add(n, a->hidden, &n))
        return false;
    if (a->qk_norm == CORE_QK_NORM_HEAD && !acc_mul(&n, 2, a->head_dim))
        return false;
    if (a->qk_norm == CORE_QK_NORM_WIDTH && (!ck_add(n, w, &n) || !ck_add(n, kw, &n)))
        return false;
    *out = n;
    return true;
}

/* Multi-latent attention (DeepSeek-V2 section 2.1). With q-LoRA: d -> r_q, a norm of r_q, then
 * r_q -> a (n + r); without: d -> a (n + r). Keys and values: d -> r_kv + r (the compressed
 * latent plus the shared rotary key), a norm of r_kv, r_kv -> a (n + v). Output: a v -> d.
 * attention_bias puts biases on q_a, kv_a and o only. */
static bool attention_mla(const struct core_arch *a, int64_t *out)
{
    int64_t qk = 0, kvb = 0, lat = 0, n = 0;

    if (!ck_add(a->qk_nope_head_dim, a->qk_rope_head_dim, &qk) ||
        !ck_add(a->qk_nope_head_dim, a->v_head_dim, &kvb) ||
        !ck_add(a->kv_lora_rank, a->qk_rope_head_dim, &lat))
        return false;
    if (a->q_lora_rank > 0) {
        if (!acc_mul(&n, a->hidden, a->q_lora_rank) || !ck_add(n, a->q_lora_rank, &n) ||
            !acc_mul3(&n, a->q_lora_rank, a->heads, qk))
            return false;
        if (a->qkv_bias && !ck_add(n, a->q_lora_rank, &n))
            return false;
    } else if (!acc_mul3(&n, a->hidden, a->heads, qk)) {
        return false;
    }
    if (!acc_mul(&n, a->hidden, lat) || !ck_add(n, a->kv_lora_rank, &n) ||
        !acc_mul3(&n, a->kv_lora_rank, a->heads, kvb) ||
        !acc_mul3(&n, a->heads, a->v_head_dim, a->hidden))
        return false;
    if (a->qkv_bias && !ck_add(n, lat, &n))
        return false;
    if (a->o_bias && !ck_add(n, a->hidden, &n))
        return false;
    *out = n;
    return true;
}

/* One MLP of width f: gated 3 d f (+ 2 f + d biases), else 2 d f (+ f + d). */
static bool mlp(const struct core_arch *a, int64_t f, int64_t *out)
{
    int64_t n = 0;

    if (!acc_mul3(&n, a->gated_mlp ? 3 : 2, a->hidden, f))
        return false;
    if (a->mlp_bias && (!acc_mul(&n, a->gated_mlp ? 2 : 1, f) || !ck_add(n, a->hidden, &n)))
        return false;
    *out = n;
    return true;
}

static bool is_mla(const struct core_arch *a)
{
    return a->kv_lora_rank > 0;
}

static bool arch_valid(const struct core_arch *a)
{
    bool base = a->layers > 0 && a->hidden > 0 && a->heads > 0 && a->kv_heads > 0 &&
                a->head_dim > 0 && a->ffn_hidden > 0 && a->vocab > 0 && a->learned_positions >= 0;
    bool extra = a->norms_per_layer >= 0 && a->qk_norm >= CORE_QK_NORM_NONE &&
                 a->qk_norm <= CORE_QK_NORM_WIDTH && a->experts >= 0 &&
                 a->experts <= CORE_EXPERTS_MAX && a->experts_per_token >= 0 &&
                 a->experts_per_token <= a->experts && a->moe_ffn_hidden >= 0 &&
                 a->shared_experts >= 0 && a->shared_experts <= CORE_EXPERTS_MAX &&
                 a->shared_ffn_hidden >= 0 && a->dense_layers >= 0 && a->moe_layer_freq >= 0 &&
                 a->moe_layer_phase >= 0 && a->router_groups >= 0 && a->router_group_topk >= 0 &&
                 a->moe_layer_phase < (a->moe_layer_freq > 1 ? a->moe_layer_freq : 1);
    bool mla = a->q_lora_rank >= 0 && a->kv_lora_rank >= 0 &&
               (a->kv_lora_rank == 0 ||
                (a->qk_nope_head_dim >= 0 && a->qk_rope_head_dim >= 0 &&
                 a->qk_nope_head_dim + a->qk_rope_head_dim > 0 && a->v_head_dim > 0));
    return base && extra && mla && (a->experts == 0 || a->experts_per_token > 0) &&
           core_arch_layer_types_valid(a);
}

/* Layers i in [0, n) with i % freq == phase. */
static int64_t count_below(int64_t n, int64_t freq, int64_t phase)
{
    return n / freq + (n % freq > phase);
}

int64_t core_arch_moe_layers_below(const struct core_arch *a, int64_t n)
{
    int64_t freq, first;

    if (a == NULL || a->experts <= 0 || n <= 0)
        return 0;
    freq = a->moe_layer_freq > 1 ? a->moe_layer_freq : 1;
    first = a->dense_layers < n ? a->dense_layers : n;
    if (first < 0 || a->moe_layer_phase < 0 || a->moe_layer_phase >= freq)
        return 0;
    return count_below(n, freq, a->moe_layer_phase) - count_below(first, freq, a->moe_layer_phase);
}

int64_t core_arch_moe_layers(const struct core_arch *a)
{
    return a == NULL ? 0 : core_arch_moe_layers_below(a, a->layers);
}

/* The routed MoE block of one layer: all experts, the experts one token uses, and the rest
 * (router, shared experts, shared-expert gate) which every token uses. */
struct moe_block {
    int64_t routed_all, routed_active, always;
};

static bool moe_block(const struct core_arch *a, struct moe_block *b)
{
    int64_t expert, shared, width = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    int64_t shared_width = a->shared_ffn_hidden > 0 ? a->shared_ffn_hidden : width;

    b->always = 0;
    if (!mlp(a, width, &expert) || !ck_mul(expert, a->experts, &b->routed_all) ||
        !ck_mul(expert, a->experts_per_token, &b->routed_active))
        return false;
    if (!acc_mul(&b->always, a->hidden, a->experts) || !mlp(a, shared_width, &shared) ||
        !acc_mul(&b->always, shared, a->shared_experts))
        return false;
    if (a->router_bias && !ck_add(b->always, a->experts, &b->always))
        return false;
    return !a->shared_expert_gate || ck_add(b->always, a->hidden, &b->always);
}

/* Gated DeltaNet (Qwen3NextGatedDeltaNet): with key width k_w = H_k d_k and value width
 * v_w = H_v d_v, in_proj_qkvz d (2 k_w + 2 v_w), in_proj_ba d 2 H_v, a depthwise convolution
 * of K taps over 2 k_w + v_w channels (no bias), dt_bias and A_log (H_v each), a gated norm
 * of d_v, out_proj v_w d. */
static bool linear_mixer(const struct core_arch *a, int64_t *out)
{
    int64_t kw, vw, conv, n = 0;

    if (!ck_mul(a->linear_key_heads, a->linear_key_dim, &kw) ||
        !ck_mul(a->linear_value_heads, a->linear_value_dim, &vw) || !ck_mul(kw, 2, &conv) ||
        !ck_add(conv, vw, &conv))
        return false;
    if (!acc_mul3(&n, a->hidden, 2, kw) || !acc_mul3(&n, a->hidden, 2, vw) ||
        !acc_mul3(&n, a->hidden, 2, a->linear_value_heads) ||
        !acc_mul(&n, conv, a->linear_conv_kernel) || !acc_mul(&n, 2, a->linear_value_heads) ||
        !ck_add(n, a->linear_value_dim, &n) || !acc_mul(&n, vw, a->hidden))
        return false;
    *out = n;
    return true;
}

/* The token mixers of all layers into *acc: attention in every layer but the linear ones. */
static bool acc_mixers(const struct core_arch *a, int64_t attn, int64_t *acc)
{
    struct core_layer_types t;
    int64_t lin;

    core_arch_layer_types(a, &t);
    if (!acc_mul(acc, attn, a->layers - t.layers[CORE_LAYER_LINEAR]))
        return false;
    return t.layers[CORE_LAYER_LINEAR] == 0 ||
           (linear_mixer(a, &lin) && acc_mul(acc, lin, t.layers[CORE_LAYER_LINEAR]));
}

/* The weights every tensor-parallel rank holds whole (core.h, core_arch_counts.tp_whole): per
 * MLA layer q_a (d r_q) and its norm (r_q) when queries are compressed, kv_a (d (r_kv + rope))
 * and its norm (r_kv), with their biases; per MoE layer the router's E d, its bias E and a
 * shared-expert gate d. */
static bool tp_whole(const struct core_arch *a, int64_t moe, int64_t *out)
{
    int64_t attn = 0, router = 0, lat = a->kv_lora_rank + a->qk_rope_head_dim;

    *out = 0;
    if (is_mla(a)) {
        if (a->q_lora_rank > 0 &&
            (!acc_mul(&attn, a->hidden, a->q_lora_rank) || !ck_add(attn, a->q_lora_rank, &attn) ||
             (a->qkv_bias && !ck_add(attn, a->q_lora_rank, &attn))))
            return false;
        if (!acc_mul(&attn, a->hidden, lat) || !ck_add(attn, a->kv_lora_rank, &attn) ||
            (a->qkv_bias && !ck_add(attn, lat, &attn)) || !acc_mul(out, attn, a->layers))
            return false;
    }
    if (moe > 0 && (!acc_mul(&router, a->hidden, a->experts) ||
                    (a->router_bias && !ck_add(router, a->experts, &router)) ||
                    (a->shared_expert_gate && !ck_add(router, a->hidden, &router))))
        return false;
    return acc_mul(out, router, moe);
}

bool core_arch_count(const struct core_arch *a, struct core_arch_counts *out)
{
    int64_t attn, norm, norms, dense_mlp, per_layer, moe, dense, t, act;
    struct moe_block b = {0, 0, 0};

    if (a == NULL || out == NULL || !arch_valid(a))
        return false;
    if (!(is_mla(a) ? attention_mla(a, &attn) : attention_std(a, &attn)))
        return false;
    if (!ck_mul(a->hidden, a->norm_bias ? 2 : 1, &norm) ||
        !ck_mul(norm, a->norms_per_layer > 0 ? a->norms_per_layer : 2, &norms))
        return false;
    /* Attention sinks (GPT-OSS): one learned logit per head, in every attention layer. */
    if (!mlp(a, a->ffn_hidden, &dense_mlp) ||
        (a->attention_sinks && !ck_add(attn, a->heads, &attn)))
        return false;
    per_layer = norms;
    moe = core_arch_moe_layers(a);
    dense = a->layers - moe;
    if (moe > 0 && !moe_block(a, &b))
        return false;

    /* Everything but the routed experts: shared by total and active. */
    t = norm; /* final norm */
    if (!acc_mul(&t, per_layer, a->layers) || !acc_mixers(a, attn, &t) ||
        !acc_mul(&t, dense_mlp, dense) || !acc_mul(&t, b.always, moe))
        return false;
    out->embedding = 0;
    out->output = 0;
    if (!acc_mul(&out->embedding, a->vocab, a->hidden) ||
        !acc_mul(&out->embedding, a->learned_positions, a->hidden) ||
        (!a->tied_embeddings && !acc_mul(&out->output, a->vocab, a->hidden)))
        return false;
    if (!ck_add(t, out->embedding, &t) || !ck_add(t, out->output, &t))
        return false;
    out->non_experts = t;
    out->experts = 0;
    act = t;
    if (!acc_mul(&out->experts, b.routed_all, moe) || !acc_mul(&act, b.routed_active, moe) ||
        !ck_add(t, out->experts, &out->total))
        return false;
    out->active = act;
    out->moe_layers = moe;
    return tp_whole(a, moe, &out->tp_whole);
}

int64_t core_arch_params(const struct core_arch *arch)
{
    struct core_arch_counts c;
    return core_arch_count(arch, &c) ? c.total : -1;
}

int64_t core_arch_active_params(const struct core_arch *arch)
{
    struct core_arch_counts c;
    return core_arch_count(arch, &c) ? c.active : -1;
}

double core_arch_forward_flops(const struct core_arch *arch)
{
    int64_t active = core_arch_active_params(arch);
    return active > 0 ? 2.0 * (double)active : 0.0;
}

/* QK^T runs over the query/key head size and score.V over the value head size; the FLOP term
 * 12 L T (a h_d) assumes both equal h_d, so MLA uses their mean. */
double core_arch_attention_width(const struct core_arch *a)
{
    if (a == NULL)
        return 0.0;
    if (is_mla(a))
        return (double)a->heads *
               (double)(a->qk_nope_head_dim + a->qk_rope_head_dim + a->v_head_dim) / 2.0;
    return (double)a->heads * (double)a->head_dim;
}
