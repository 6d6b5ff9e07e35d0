/*
 * serve_size.c - the sizing pieces of core_serve() (serve.h): a rank's weights in their stored
 * formats, KV bytes per token, and the profiling forward pass. Formulas and sources:
 * docs/serving.md ("Weights", "KV cache", "Profiling peak").
 */
#include "internal.h"
#include "serve.h"
#include "serve_internal.h"

/* vLLM pads the vocabulary to a multiple of 64 before splitting it over the tensor-parallel
 * ranks (vllm/model_executor/layers/vocab_parallel_embedding.py, DEFAULT_VOCAB_PADDING_SIZE). */
#define VOCAB_PADDING 64

/* Weights and input channels of one kind of tensor, summed over the model (per rank). */
struct tensor_sum {
    int64_t n, c, tensors;
};

static void tensor_add(struct tensor_sum *t, int64_t count, int64_t in, int64_t out, bool *ok)
{
    int64_t n, c;

    if (!ck_mul(in, out, &n) || !ck_mul(n, count, &n) || !ck_mul(in, count, &c) ||
        !ck_add(t->n, n, &t->n) || !ck_add(t->c, c, &t->c))
        *ok = false;
    t->tensors += count;
}

/* One rank's linear layers over all L layers: `main` in the format's linear layout, `more` the
 * attn_v and ffn_down tensors of the use_more_bits layers (GGUF _M mixes), counted separately so
 * the caller can price them in the higher layout. Column-parallel tensors keep every input
 * channel, row-parallel ones take in / tp. */
struct linear_sums {
    struct tensor_sum main, more, unsplit; /* unsplit: MLA's replicated down-projections */
    struct tensor_sum experts;             /* the routed experts (but their more-bits down) */
    int64_t weights_tp1;                   /* every linear weight at tp = 1 (for the remainder) */
};

static void attention_linears(const struct core_arch *a, int64_t tp, int64_t more_layers,
                              struct linear_sums *s, bool *ok)
{
    int64_t L = a->layers, d = a->hidden, heads = a->heads / tp;

    if (a->kv_lora_rank > 0) {
        int64_t qk = a->qk_nope_head_dim + a->qk_rope_head_dim;

        if (a->q_lora_rank > 0) {
            tensor_add(&s->unsplit, L, d, a->q_lora_rank, ok);
            tensor_add(&s->main, L, a->q_lora_rank, heads * qk, ok);
        } else {
            tensor_add(&s->main, L, d, heads * qk, ok);
        }
        tensor_add(&s->unsplit, L, d, a->kv_lora_rank + a->qk_rope_head_dim, ok);
        tensor_add(&s->main, L, a->kv_lora_rank, heads * (a->qk_nope_head_dim + a->v_head_dim), ok);
        tensor_add(&s->main, L, heads * a->v_head_dim, d, ok);
        return;
    }
    int64_t kv = core_serve_kv_heads_per_rank(a->kv_heads, tp) * a->head_dim;

    tensor_add(&s->main, L, d, heads * a->head_dim, ok); /* q */
    tensor_add(&s->main, L, d, kv, ok);                  /* k */
    tensor_add(&s->main, L - more_layers, d, kv, ok);    /* v */
    tensor_add(&s->more, more_layers, d, kv, ok);        /* v, more bits */
    tensor_add(&s->main, L, heads * a->head_dim, d, ok); /* o */
}

/* MLP weights: dense layers' f, routed experts (ceil(E / ep) per rank, each split width / ep
 * ways over the MoE group of `width` ranks), shared experts. */
static void mlp_linears(const struct core_arch *a, int64_t tp, int64_t ep, int64_t width,
                        int64_t more_layers, struct linear_sums *s, bool *ok)
{
    int64_t d = a->hidden, moe = core_arch_moe_layers(a), dense = a->layers - moe;
    int64_t ups = a->gated_mlp ? 2 : 1;
    int64_t mf = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    int64_t sf = a->shared_ffn_hidden > 0 ? a->shared_ffn_hidden : mf;
    /* The more-bits layers' share of ffn_down among the dense and the MoE layers. */
    int64_t more_dense = a->layers > 0 ? more_layers * dense / a->layers : 0;
    int64_t more_moe = more_layers - more_dense;

    tensor_add(&s->main, dense * ups, d, a->ffn_hidden / tp, ok);
    tensor_add(&s->main, dense - more_dense, a->ffn_hidden / tp, d, ok);
    tensor_add(&s->more, more_dense, a->ffn_hidden / tp, d, ok);
    if (moe == 0)
        return;
    /* Routed experts: ceil(E / ep) whole experts per rank (vLLM's determine_expert_map gives the
     * first E mod ep ranks one more; SGLang and TensorRT-LLM need ep | E), each split width / ep
     * ways (the experts' tp: vLLM flattens tp over tp x dp without EP, SGLang's moe_tp_size =
     * tp_size / ep_size, TensorRT-LLM's moe_tp_size): ceil(E / ep) f ep / width columns. With
     * ep | E that is E f / width, whole experts or slices alike. */
    int64_t per = ceil_div(a->experts, ep) * mf * ep / width;

    tensor_add(&s->experts, moe * ups, d, per, ok);
    tensor_add(&s->experts, moe - more_moe, per, d, ok);
    tensor_add(&s->more, more_moe, per, d, ok);
    if (a->shared_experts > 0) {
        tensor_add(&s->main, moe * ups, d, a->shared_experts * sf / tp, ok);
        tensor_add(&s->main, moe, a->shared_experts * sf / tp, d, ok);
    }
}

static bool linear_sums(const struct core_arch *a, int64_t tp, int64_t ep, int64_t width,
                        bool mixed, struct linear_sums *s)
{
    struct linear_sums one = {0};
    int64_t more = mixed ? core_quant_more_bits_layers(a->layers) : 0;
    bool ok = true;

    *s = (struct linear_sums){0};
    attention_linears(a, tp, more, s, &ok);
    mlp_linears(a, tp, ep, width, more, s, &ok);
    attention_linears(a, 1, 0, &one, &ok);
    mlp_linears(a, 1, 1, 1, 0, &one, &ok);
    s->weights_tp1 = one.main.n + one.more.n + one.unsplit.n + one.experts.n;
    return ok;
}

static int64_t layout_bytes(const struct core_quant_layout *l, const struct tensor_sum *t,
                            int dtype_bytes)
{
    int64_t b;

    if (l == NULL) /* kept in the 16-bit dtype */
        return ck_mul(t->n, dtype_bytes, &b) ? b : -1;
    b = core_quant_bytes(l, t->n, t->c);
    /* A per-tensor scale (block 0) is paid once per tensor, not once per sum. */
    if (b > 0 && l->block == 0 && t->tensors > 1)
        b += (t->tensors - 1) * (l->scale_bits + l->zero_bits) / 8;
    return b;
}

/* Bytes of `n` weights (row length `c`) in layout l, or in the dtype when l is NULL. */
static int64_t plain_bytes(const struct core_quant_layout *l, int64_t n, int dtype_bytes)
{
    struct tensor_sum t = {n, 0, 1};

    return layout_bytes(l, &t, dtype_bytes);
}

int64_t core_serve_weight_bytes(const struct core_arch *a, enum core_quant q, int64_t group,
                                int dtype_bytes, int64_t tp, int64_t pp, int64_t ep)
{
    return core_serve_weight_bytes_moe(a, q, group, dtype_bytes, tp, pp, ep, ep > tp ? ep : tp);
}

int64_t core_serve_weight_bytes_moe(const struct core_arch *a, enum core_quant q, int64_t group,
                                    int dtype_bytes, int64_t tp, int64_t pp, int64_t ep,
                                    int64_t width)
{
    const struct core_quant_format *f = &core_quant_formats[q];
    struct core_quant_layout lin = core_quant_linear(q, group);
    struct core_arch_counts counts;
    struct linear_sums s;
    int64_t vocab, emb, out, rest, layers, stage_layers, total;

    if (q == CORE_QUANT_NONE)
        lin.data_bits = 8 * dtype_bytes;
    if (tp < 1 || pp < 1 || ep < 1 || width < ep || !core_arch_count(a, &counts) ||
        !linear_sums(a, tp, ep, width, f->more_bits != NULL, &s))
        return -1;
    /* Embedding and head: vocab-parallel rows of the padded vocabulary. */
    vocab = ceil_div(ceil_div(a->vocab, VOCAB_PADDING) * VOCAB_PADDING, tp);
    emb = plain_bytes(f->embedding, vocab * a->hidden, dtype_bytes);
    out = a->tied_embeddings ? 0 : plain_bytes(f->output, vocab * a->hidden, dtype_bytes);
    if (a->tied_embeddings && f->output != NULL) /* GGUF: token_embd doubles as the output */
        emb = plain_bytes(f->output, vocab * a->hidden, dtype_bytes);
    /* Norms, biases, routers, learned positions: the remainder of the count, unquantized. */
    rest = counts.total - s.weights_tp1 - a->vocab * a->hidden * (a->tied_embeddings ? 1 : 2);
    rest = rest > 0 ? rest : 0;
    rest = f->unquantized_bits == 32 ? rest * 4 : rest * dtype_bytes;
    /* MXFP4 quantizes the routed experts only: the other linears keep the 16-bit dtype. */
    const struct core_quant_layout *dense = f->experts_only ? NULL : &lin;
    layers = layout_bytes(dense, &s.main, dtype_bytes);
    int64_t more = layout_bytes(f->more_bits != NULL ? f->more_bits : &lin, &s.more, dtype_bytes);
    int64_t unsplit = layout_bytes(dense, &s.unsplit, dtype_bytes);
    int64_t experts = layout_bytes(&lin, &s.experts, dtype_bytes);
    if (layers < 0 || more < 0 || unsplit < 0 || experts < 0 || emb < 0 || out < 0 ||
        !ck_add(layers, more, &layers) || !ck_add(layers, unsplit, &layers) ||
        !ck_add(layers, experts, &layers) || !ck_add(layers, rest, &layers))
        return -1;
    if (pp == 1)
        return ck_add(layers, emb, &total) && ck_add(total, out, &total) ? total : -1;
    /* The worst pipeline stage: ceil(L / pp) layers' share plus the larger end. */
    stage_layers = ceil_div(a->layers, pp);
    total = (int64_t)((double)layers * (double)stage_layers / (double)a->layers);
    return total + (emb > out ? emb : out);
}

int64_t core_serve_input_embedding_bytes(const struct core_arch *a, enum core_quant q,
                                         int dtype_bytes, int64_t tp)
{
    int64_t vocab;

    if (tp < 1 || a->vocab < 1 || a->hidden < 1)
        return -1;
    vocab = ceil_div(ceil_div(a->vocab, VOCAB_PADDING) * VOCAB_PADDING, tp);
    return plain_bytes(core_quant_formats[q].embedding, vocab * a->hidden, dtype_bytes);
}

int64_t core_serve_kv_heads_per_rank(int64_t kv_heads, int64_t tp)
{
    int64_t per = kv_heads / tp;

    return per > 1 ? per : 1;
}

int64_t core_serve_kv_bytes_per_token(const struct core_arch *a, int64_t tp, int64_t layers,
                                      int kv_bytes)
{
    int64_t per_layer, b;

    if (a->kv_lora_rank > 0) /* MLA: one latent, the same on every rank */
        per_layer = (a->kv_lora_rank + a->qk_rope_head_dim) * kv_bytes;
    else
        per_layer = 2 * core_serve_kv_heads_per_rank(a->kv_heads, tp) * a->head_dim * kv_bytes;
    return ck_mul(per_layer, layers, &b) ? b : -1;
}

/*
 * The profiling forward pass (docs/serving.md, "Profiling peak"): T tokens through one layer at
 * a time, then the sampler over S sequences. Per rank, b bytes per activation:
 *   hidden   2 T d b                      (hidden states and the residual stream)
 *   layer    max(attention, MLP) transients:
 *            attention T (2 a/tp + 2 k_r) h_d b (q, k, v and the output)
 *            MLP       T (gated ? 3 : 2) f/tp b (gate_up and the activation), plus T d b when
 *                      the pass runs eager and gated (below)
 *            MoE       T top_k ((gated ? 3 : 2) f_e/etp + d) b (fused_moe's three caches; etp
 *                      the experts' split, moe_width / ep: 1, f_e whole, under vLLM's EP)
 *   sampler  S V 26 (bf16 logits 2, fp32 logits 4, probabilities 4, log-probabilities 4, the
 *            top-p/top-k sort's fp32 values 4 and int64 indices 8)
 * Eager (vLLM V0's prefill, V1 under enforce_eager): the models' gated MLP forward
 * (vllm/model_executor/models/llama.py, LlamaMLP.forward: `gate_up, _ = self.gate_up_proj(x);
 * x = self.act_fn(gate_up); x, _ = self.down_proj(x); return x`) keeps its local gate_up alive
 * until it returns, so gate_up, the activation and down_proj's T x d output are live together.
 * Under torch.compile (V1's default) Inductor frees gate_up after its last use, before down_proj:
 * the peak is then gate_up and the activation alone.
 */
#define SAMPLER_BYTES_PER_LOGIT 26

int64_t core_serve_profile_bytes(const struct core_arch *a, int64_t tp, int64_t etp, int64_t tokens,
                                 int64_t seqs, int act_bytes, bool eager)
{
    double T = (double)tokens, b = act_bytes, d = (double)a->hidden;
    double kr = (double)core_serve_kv_heads_per_rank(a->kv_heads, tp);
    double heads = (double)a->heads / (double)tp, hd = (double)a->head_dim, ups;
    double attn, mlp, hidden, sampler, layer;

    if (a->kv_lora_rank > 0) { /* MLA: the expanded per-head q, k, v of the prefill path */
        hd = (double)(a->qk_nope_head_dim + a->qk_rope_head_dim);
        kr = heads;
    }
    ups = a->gated_mlp ? 3.0 : 2.0;
    hidden = 2.0 * T * d * b;
    attn = T * (2.0 * heads + 2.0 * kr) * hd * b;
    mlp = 0.0;
    if (core_arch_moe_layers(a) < a->layers) /* dense MLP layers: gate_up (+ down_proj eager) */
        mlp =
            T * (ups * (double)a->ffn_hidden / (double)tp + (eager && a->gated_mlp ? d : 0.0)) * b;
    if (a->experts > 0) {
        double mf = (double)(a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden);
        /* etp: the experts' tensor split - 1 under vLLM's expert parallelism (the experts whole
         * on each rank, fused_moe/config.py FusedMoEParallelConfig), moe_width / ep in general
         * (SGLang's moe_tp_size) - and fused_experts' caches are sized M x top_k x w1's width
         * on the rank for every token (the expert map masks the others). */
        double moe = T * (double)a->experts_per_token * (ups * mf / (double)etp + d) * b;

        mlp = moe > mlp ? moe : mlp;
    }
    layer = attn > mlp ? attn : mlp;
    sampler = (double)seqs * (double)a->vocab * SAMPLER_BYTES_PER_LOGIT;
    if (!(hidden + layer + sampler < 4e18)) /* beyond any device: the caller's CORE_ERANGE */
        return -1;
    return (int64_t)(hidden + layer + sampler);
}
