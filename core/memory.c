/*
 * memory.c - the per-GPU memory ledger (lesson sections 3-4; ZeRO section 5; Korthikanti et al.
 * 2022 Table 2).
 *
 * State is priced in whole bytes per parameter from a small table (precision x optimizer), then
 * split by model parallelism (tp*pp) and by ZeRO over the data-parallel ranks, each split a
 * ceiling division so no byte is lost. Activations follow Korthikanti's per-layer table with
 * integer arithmetic. Every multiplication is overflow-checked: fuzzed shapes can exceed int64,
 * and that must surface as CORE_ERANGE, never as a wrapped number.
 */
#include <math.h>

#include "internal.h"

/* Which ZeRO stage shards which piece (weights, grads, optimizer). */
static const bool zero_shards[4][3] = {
    {false, false, false}, /* 0: replicated */
    {false, false, true},  /* 1: optimizer state */
    {false, true, true},   /* 2: + gradients */
    {true, true, true},    /* 3 (FSDP): + weights */
};

/* *acc += a * b, overflow-checked. */
static bool acc_term(int64_t *acc, int64_t a, int64_t b)
{
    int64_t t;
    return ck_mul(a, b, &t) && ck_add(*acc, t, acc);
}

static bool piece(int64_t n, int bpp, int64_t mp, int64_t *out)
{
    int64_t total;

    if (!ck_mul(n, bpp, &total))
        return false;
    *out = ceil_div(total, mp);
    return true;
}

/* Megatron-Core's accounting for a mixture of experts (MoE parallel folding, parallel_state.py):
 * the routed experts' weights are split over etp x ep x pp ranks, everything else over tp x pp.
 * An uneven pipeline split prices the heaviest rank: its share of the layers (layout.c). */
bool core_state_model_parallel(const struct core_resolved *r, const struct core_bytes_per_param *b,
                               struct core_state *mp)
{
    int64_t ep = r->ep > 1 ? r->ep : 1, etp = core_etp(r), pp = r->pp, ways, ex_ways;
    int64_t experts = r->expert_params > 0 && r->expert_params <= r->params ? r->expert_params : 0;
    int64_t rest = r->params - experts, whole = core_tp_whole_params(r), w;

    /* Kept whole on every tp rank (MLA's down projections, the routers): over pp only. */
    whole = whole > 0 && whole <= rest ? whole : 0;
    rest -= whole;
    /* Uneven: N x (heaviest rank's layers / L) per tp rank, an exact rational in whole bytes. */
    if (r->split != CORE_SPLIT_EVEN && r->pp > 1 && r->stage_layers > 0 &&
        r->stage_layers * r->pp != r->shape.arch.layers) {
        int64_t L = r->shape.arch.layers + r->mtp_layers;
        if (!ck_mul(rest, r->stage_layers, &rest) || !ck_mul(experts, r->stage_layers, &experts) ||
            !ck_mul(whole, r->stage_layers, &whole))
            return false;
        pp = L;
    }
    mp->ep = ep;
    mp->ex_tp = r->tp;
    mp->ex_fold = etp * ep;
    ways = r->tp * pp;
    mp->off_weights = r->offload_params == CORE_OFFLOAD_CPU;
    mp->off_optimizer = r->offload_optimizer == CORE_OFFLOAD_CPU;
    mp->host_weights = mp->host_optimizer = 0;
    if (!ck_mul(etp * pp, ep, &ex_ways) || !piece(rest, b->weights, ways, &mp->weights) ||
        !piece(rest, b->grads, ways, &mp->grads) ||
        !piece(rest, b->master + b->moments, ways, &mp->optimizer))
        return false;
    if (whole > 0 && (!piece(whole, b->weights, pp, &w) || !ck_add(mp->weights, w, &mp->weights) ||
                      !piece(whole, b->grads, pp, &w) || !ck_add(mp->grads, w, &mp->grads) ||
                      !piece(whole, b->master + b->moments, pp, &w) ||
                      !ck_add(mp->optimizer, w, &mp->optimizer)))
        return false;
    return piece(experts, b->weights, ex_ways, &mp->ex_weights) &&
           piece(experts, b->grads, ex_ways, &mp->ex_grads) &&
           piece(experts, b->master + b->moments, ex_ways, &mp->ex_optimizer);
}

/* The expert data-parallel group (parallel_state.py: world / (etp ep pp)): of dp dense
 * data-parallel ranks (dp x cp), dp x tp / (etp x ep); at least 1 while a search tries a dp
 * the experts' grid does not divide. */
static int64_t expert_dp(const struct core_state *mp, int64_t dp)
{
    int64_t fold = mp->ex_fold > 1 ? mp->ex_fold : 1, tp = mp->ex_tp > 1 ? mp->ex_tp : 1, n;

    if (!ck_mul(dp, tp, &n))
        return dp;
    return n / fold > 0 ? n / fold : 1;
}

bool core_state_shard(const struct core_state *mp, int stage, int64_t dp, struct core_state *out,
                      int64_t *sum)
{
    const bool *s = zero_shards[stage];
    int64_t edp = expert_dp(mp, dp);

    out->ep = mp->ep;
    out->ex_tp = mp->ex_tp;
    out->ex_fold = mp->ex_fold;
    out->off_weights = mp->off_weights;
    out->off_optimizer = mp->off_optimizer;
    out->ex_weights = s[0] ? ceil_div(mp->ex_weights, edp) : mp->ex_weights;
    out->ex_grads = s[1] ? ceil_div(mp->ex_grads, edp) : mp->ex_grads;
    out->ex_optimizer = s[2] ? ceil_div(mp->ex_optimizer, edp) : mp->ex_optimizer;
    out->weights = s[0] ? ceil_div(mp->weights, dp) : mp->weights;
    out->grads = s[1] ? ceil_div(mp->grads, dp) : mp->grads;
    out->optimizer = s[2] ? ceil_div(mp->optimizer, dp) : mp->optimizer;
    if (!ck_add(out->weights, out->ex_weights, &out->weights) ||
        !ck_add(out->grads, out->ex_grads, &out->grads) ||
        !ck_add(out->optimizer, out->ex_optimizer, &out->optimizer))
        return false;
    /* Offloaded shards leave the GPU whole (the working copies ZeRO-Infinity gathers per layer
     * are transient, like ZeRO-3's, and not in the ledger). */
    out->host_weights = out->off_weights ? out->weights : 0;
    out->host_optimizer = out->off_optimizer ? out->optimizer : 0;
    out->weights -= out->host_weights;
    out->optimizer -= out->host_optimizer;
    return ck_add(out->weights, out->grads, sum) && ck_add(*sum, out->optimizer, sum);
}

/* ---------------------------------------------------------------------------------------------
 * Activations (Korthikanti et al. 2022, Table 2): per layer, 2-byte activations
 *   sbd * 34 + 5 a s^2 b  split as 10 sbd (replicated without sequence parallelism) and the
 *   rest (divided by t). The 5 a s^2 b score term disappears with selective recompute or
 *   FlashAttention. Full checkpointing keeps 2 sbd for each of the L - 1 layers below the one
 *   being recomputed, plus that layer's whole working set.
 * ------------------------------------------------------------------------------------------- */

/* Bytes per token of one layer, before the batch and sequence multiply them: the part kept
 * whole on every tensor-parallel rank without sequence parallelism (rep) and the part split by
 * tp (split), the score term aside. A standard layer is Korthikanti's 10 d + 24 d. */
struct layer_bytes {
    int64_t rep, split;
};

struct act_terms {
    int64_t sb;     /* (s/cp)*b: this rank's tokens */
    int64_t sbd;    /* s*b*d */
    int64_t scores; /* 5*a*s^2*b, or 0 when not materialized */
    int64_t t;
    bool sp;
    struct layer_bytes dense, moe; /* per-token bytes of a dense and of a MoE layer */
    int64_t layers;                /* layers' worth of activations held (L for an even split) */
    int64_t moe_layers;            /* of them, those with a routed MLP */
};

/* Multi-latent attention (DeepSeek-V2) keeps, instead of Korthikanti's 8 d split attention
 * bytes (Q, K, V and the projection input at 2 bytes each): queries and keys of a (n + r),
 * values and the projection input of a v, 2 bytes each, split by tp; and the compressed
 * latents every rank computes whole: the query latent r_q and the K/V latent r_kv plus the
 * shared rotary key r, 2 bytes each. Recomputing the up projections (mla_up_proj, an
 * output-discarding checkpoint) drops Q, K and V: the projection input stays. */
static bool mla_bytes(const struct core_arch *a, bool up_proj, struct layer_bytes *l)
{
    int64_t qk = a->qk_nope_head_dim + a->qk_rope_head_dim, lat = 0, att = 0;

    if (up_proj
            ? !acc_term(&att, 2 * a->heads, a->v_head_dim)
            : (!acc_term(&att, 4 * a->heads, qk) || !acc_term(&att, 4 * a->heads, a->v_head_dim)))
        return false;
    if (!acc_term(&lat, 2, a->q_lora_rank + a->kv_lora_rank + a->qk_rope_head_dim))
        return false;
    return ck_add(l->rep, lat, &l->rep) && ck_add(l->split - 8 * a->hidden, att, &l->split);
}

/* A MoE layer replaces the dense MLP's 16 d split bytes (Korthikanti's two 4d-wide tensors)
 * with (Megatron-Core's dropless token dispatcher, transformer/moe/): each token's k routed
 * copies, each keeping its dispatched input (2 d, the grouped fc1's input), the expert output
 * that unpermute multiplies by the routing probability (2 d, saved for the probability's
 * gradient: moe_utils.unpermute), and the expert's hidden states, where an MLP of width f keeps
 * 4 f bytes (two f-wide tensors) or 6 f when gated (gate, up and their product); the shared
 * experts' hidden states; and, kept whole, the router's fp32 probabilities over E experts and
 * its k int64 choices. --recompute-modules (transformer_config.py) drops: moe_act the routed
 * experts' activation output (2 f per copy), shared_experts the shared experts' bytes, moe the
 * whole block (its input, the norm's output, is already counted). With expert tensor
 * parallelism (etp > 1) the alltoall dispatcher all-gathers the tokens it received over the
 * expert-TP group before the experts run (token_dispatcher.py, dispatch_postprocess:
 * gather_from_sequence_parallel_region over expt_tp; the flex dispatcher expands its routing
 * map over tp likewise), so each rank's grouped fc1 keeps the d-wide input of etp times the
 * copies its own tokens make, while the hidden states of each copy are f / etp wide: per
 * token of the rank, k (2 d etp + 2 d + c f) (etp = 1: the k (4 d + c f) above). */
static bool moe_bytes(const struct core_arch *a, unsigned modules, int64_t etp,
                      struct layer_bytes *l)
{
    int64_t f = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    int64_t fs = a->shared_ffn_hidden > 0 ? a->shared_ffn_hidden : f, c = a->gated_mlp ? 6 : 4;
    int64_t k = a->experts_per_token, routed = 0, router = 0, split = l->split - 16 * a->hidden;
    int64_t cs = c, shared = a->shared_experts;

    if (modules & CORE_RC_MOE) {
        l->split = split;
        return true;
    }
    if (modules & CORE_RC_MOE_ACT)
        c -= 2;
    if (modules & CORE_RC_SHARED_EXPERTS)
        shared = 0;
    if (!acc_term(&routed, 2 * etp, a->hidden) || !acc_term(&routed, 2, a->hidden) ||
        !acc_term(&routed, c, f) || !ck_mul(routed, k, &routed) || !ck_add(split, routed, &split) ||
        !acc_term(&split, cs * shared, fs) || !acc_term(&router, 4, a->experts) ||
        !acc_term(&router, 8, k))
        return false;
    l->split = split;
    return ck_add(l->rep, router, &l->rep);
}

/* Per-token bytes of a dense and of a MoE layer. Under selective recompute, Megatron-Core's
 * --recompute-modules (default core_attn: the score term, dropped by the caller) also drop:
 * layernorm the two norms' outputs (4 d of the replicated bytes, output-discarding), mlp a
 * dense layer's MLP (16 d), and the MLA and MoE pieces above. */
static bool layer_bytes_init(const struct core_arch *a, unsigned modules, int64_t etp,
                             struct act_terms *x)
{
    x->dense.rep = 10 * a->hidden; /* d <= 1e6: no overflow */
    x->dense.split = 24 * a->hidden;
    if (modules & CORE_RC_LAYERNORM)
        x->dense.rep -= 4 * a->hidden;
    if (a->kv_lora_rank > 0 && !mla_bytes(a, (modules & CORE_RC_MLA_UP_PROJ) != 0, &x->dense))
        return false;
    x->moe = x->dense;
    if (modules & CORE_RC_MLP)
        x->dense.split -= 16 * a->hidden;
    return core_arch_moe_layers(a) == 0 || moe_bytes(a, modules, etp, &x->moe);
}

/* One layer's activations with nothing recomputed (or the score term dropped). */
static bool layer_working_set(const struct act_terms *x, const struct layer_bytes *l, bool scores,
                              int64_t *out)
{
    int64_t att = scores ? x->scores : 0, whole, split, kept;

    if (x->t == 1 || x->sp) {
        if (!ck_add(l->rep, l->split, &whole) || !ck_mul(x->sb, whole, &whole) ||
            !ck_add(whole, att, &whole))
            return false;
        *out = ceil_div(whole, x->t);
        return true;
    }
    if (!ck_mul(x->sb, l->split, &split) || !ck_add(split, att, &split) ||
        !ck_mul(x->sb, l->rep, &kept))
        return false;
    return ck_add(kept, ceil_div(split, x->t), out);
}

/* With context parallelism each rank holds s/cp of the sequence (its queries, and the
 * activations of its tokens), while its score matrix spans its queries against all s keys. */
static bool act_terms_init(const struct core_resolved *r, int64_t batch, int64_t seq_len,
                           enum core_checkpointing ckpt, struct act_terms *x)
{
    unsigned modules = ckpt == CORE_CKPT_SELECTIVE ? r->recompute_modules : 0;
    const struct core_arch *a = &r->shape.arch;
    int64_t local = ceil_div(seq_len, r->cp);

    x->t = r->tp;
    x->sp = r->sequence_parallel;
    core_layout_activation_layers(r, &x->layers, &x->moe_layers);
    return layer_bytes_init(a, modules, core_etp(r), x) &&
           core_adapters_layer_bytes(r, &x->dense.rep, &x->dense.split) &&
           core_adapters_layer_bytes(r, &x->moe.rep, &x->moe.split) &&
           ck_mul(local, batch, &x->sb) && ck_mul(x->sb, a->hidden, &x->sbd) &&
           ck_mul(x->sb, seq_len, &x->scores) && ck_mul(x->scores, a->heads, &x->scores) &&
           ck_mul(x->scores, 5, &x->scores);
}

static bool layers_bytes(const struct core_resolved *r, const struct act_terms *x,
                         enum core_checkpointing ckpt, int64_t *out)
{
    int64_t layers = x->layers, one, moe_one = 0, kept, dense = layers - x->moe_layers;
    bool scores = ckpt == CORE_CKPT_NONE && !r->flash_attention;
    const struct layer_bytes *widest = x->moe_layers > 0 ? &x->moe : &x->dense;

    if (ckpt != CORE_CKPT_FULL)
        return layer_working_set(x, &x->dense, scores, &one) && ck_mul(one, dense, out) &&
               (x->moe_layers == 0 ||
                (layer_working_set(x, &x->moe, scores, &moe_one) &&
                 ck_mul(moe_one, x->moe_layers, &moe_one) && ck_add(*out, moe_one, out)));
    /* Full: each layer keeps its 2-byte input; the backward rebuilds one layer at a time. The
     * layer being rebuilt holds its own input inside its working set, so the peak is the
     * checkpoints of the L - 1 layers below it plus one full working set (a MoE layer's when
     * there is one: the larger). With L = 1 that equals no checkpointing, so checkpointing never
     * raises activations. */
    if (!ck_mul(x->sbd, 2, &kept))
        return false;
    kept = x->sp ? ceil_div(kept, x->t) : kept;
    return ck_mul(kept, layers - 1, &kept) &&
           layer_working_set(x, widest, !r->flash_attention, &one) && ck_add(kept, one, out);
}

bool core_activation_bytes(const struct core_resolved *r, int64_t batch, int64_t seq_len,
                           enum core_checkpointing ckpt, int64_t *layers, int64_t *logits)
{
    struct act_terms x;

    if (!act_terms_init(r, batch, seq_len, ckpt, &x) || !layers_bytes(r, &x, ckpt, layers))
        return false;
    /* Table 2 assumes 2-byte activations; fp32 training stores 4. */
    if (r->precision == CORE_PREC_FP32 && !ck_mul(*layers, 2, layers))
        return false;
    *logits = 0;
    if (r->pp == 1) { /* fp32 logits for the loss, only on the last (= only) stage */
        int64_t v;
        /* One set per MTP depth too (multi_token_prediction.py: each runs the output layer). */
        if (!ck_mul(ceil_div(seq_len, r->cp), batch, &v) || !ck_mul(v, r->shape.arch.vocab, &v) ||
            !ck_mul(v, 4, &v) || !ck_mul(v, 1 + r->mtp_layers, &v))
            return false;
        *logits = ceil_div(v, r->tp);
    }
    return ck_add(*layers, *logits, &(int64_t){0});
}

/* ---------------------------------------------------------------------------------------------
 * The ledger
 * ------------------------------------------------------------------------------------------- */

/* Name the input most likely responsible for an activation overflow. */
static const char *activation_culprit(const struct core_resolved *r)
{
    int64_t l, g;

    if (r->batch > 1 && core_activation_bytes(r, 1, r->seq_len, r->checkpointing, &l, &g))
        return "batch";
    return "seq_len";
}

enum core_status core_memory_compute(const struct core_resolved *r, struct core_memory *m,
                                     struct core_state *mp, struct core_problems *p)
{
    struct core_state st;
    int64_t state, total, node;

    struct core_adapter_counts ac;
    bool adapters = r->adapters.finetune != CORE_FT_FULL;

    core_bytes_per_param(r, &m->bytes_per_param);
    if (adapters) /* a frozen base: its weights only; the adapters' state (adapters.c) */
        m->bytes_per_param = (struct core_bytes_per_param){.weights = m->bytes_per_param.weights,
                                                           .total = m->bytes_per_param.weights};
    if (!(adapters ? core_adapters_state(r, mp, &ac)
                   : core_state_model_parallel(r, &m->bytes_per_param, mp)) ||
        !core_state_shard(mp, r->zero_stage, r->dp * r->cp, &st, &state)) {
        core_problem_add(p, "params", "result out of range");
        return CORE_ERANGE;
    }
    if (!core_activation_bytes(r, r->batch, r->seq_len, r->checkpointing, &m->activation_layers,
                               &m->activation_logits)) {
        core_problem_add(p, activation_culprit(r), "result out of range");
        return CORE_ERANGE;
    }
    /* A quantized or DoRA layer's transient full-size weight (adapters.c; < 2^53). */
    m->activation_layers += (int64_t)core_adapters_transient(r);
    m->activations = m->activation_layers + m->activation_logits;
    if (!ck_add(state, m->activations, &total)) {
        core_problem_add(p, activation_culprit(r), "result out of range");
        return CORE_ERANGE;
    }
    m->params = st.weights;
    m->grads = st.grads;
    m->optimizer = st.optimizer;
    /* The experts' share of what stays on the GPU (an offloaded piece stays 0 here too). */
    m->expert_params = st.off_weights ? 0 : st.ex_weights;
    m->expert_grads = st.ex_grads;
    m->expert_optimizer = st.off_optimizer ? 0 : st.ex_optimizer;
    m->host.params = st.host_weights;
    m->host.grads = 0;
    m->host.optimizer = st.host_optimizer;
    node = r->gpus_per_node < r->gpus ? r->gpus_per_node : r->gpus;
    m->host_node.grads = 0;
    if (!ck_add(st.host_weights, st.host_optimizer, &m->host.total) ||
        !ck_mul(m->host.params, node, &m->host_node.params) ||
        !ck_mul(m->host.optimizer, node, &m->host_node.optimizer) ||
        !ck_mul(m->host.total, node, &m->host_node.total)) {
        core_problem_add(p, "params", "result out of range");
        return CORE_ERANGE;
    }
    if (adapters)
        core_adapters_ledger(r, &ac, m);
    m->state = state;
    m->total = total;
    m->reserve = (int64_t)llround(r->reserve_gb * 1e9);
    return CORE_OK;
}
