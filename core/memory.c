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

/* Optimizer moment bytes per parameter, indexed by enum core_optimizer. */
static const int moment_bytes[] = {
    [CORE_OPT_ADAMW] = 8,        /* m and v in fp32 */
    [CORE_OPT_ADAM] = 8,         /* m and v in fp32 */
    [CORE_OPT_ADAMW_8BIT] = 2,   /* m and v quantized to one byte each */
    [CORE_OPT_SGD] = 0,          /* stateless */
    [CORE_OPT_SGD_MOMENTUM] = 4, /* one fp32 buffer */
    [CORE_OPT_LION] = 4,         /* one fp32 momentum */
    [CORE_OPT_ADAFACTOR] = 0,    /* factored rows/columns: O(d) per matrix, ~0 per parameter */
};

/* Which ZeRO stage shards which piece (weights, grads, optimizer). */
static const bool zero_shards[4][3] = {
    {false, false, false}, /* 0: replicated */
    {false, false, true},  /* 1: optimizer state */
    {false, true, true},   /* 2: + gradients */
    {true, true, true},    /* 3 (FSDP): + weights */
};

void core_bytes_per_param(const struct core_resolved *r, struct core_bytes_per_param *b)
{
    bool fp32 = r->precision == CORE_PREC_FP32;

    /* fp8 keeps the bf16 ledger: the fp8 copies are transient casts. */
    b->weights = fp32 ? 4 : 2;
    b->master = r->master_weights ? 4 : 0;
    b->grads = r->grad_precision == CORE_PREC_FP32 ? 4 : 2;
    b->moments = moment_bytes[r->optimizer];
    b->total = b->weights + b->master + b->moments + b->grads;
}

static bool piece(int64_t n, int bpp, int64_t mp, int64_t *out)
{
    int64_t total;

    if (!ck_mul(n, bpp, &total))
        return false;
    *out = ceil_div(total, mp);
    return true;
}

bool core_state_model_parallel(const struct core_resolved *r, const struct core_bytes_per_param *b,
                               struct core_state *mp)
{
    int64_t ways = r->tp * r->pp;

    return piece(r->params, b->weights, ways, &mp->weights) &&
           piece(r->params, b->grads, ways, &mp->grads) &&
           piece(r->params, b->master + b->moments, ways, &mp->optimizer);
}

bool core_state_shard(const struct core_state *mp, int stage, int64_t dp, struct core_state *out,
                      int64_t *sum)
{
    const bool *s = zero_shards[stage];

    out->weights = s[0] ? ceil_div(mp->weights, dp) : mp->weights;
    out->grads = s[1] ? ceil_div(mp->grads, dp) : mp->grads;
    out->optimizer = s[2] ? ceil_div(mp->optimizer, dp) : mp->optimizer;
    return ck_add(out->weights, out->grads, sum) && ck_add(*sum, out->optimizer, sum);
}

/* ---------------------------------------------------------------------------------------------
 * Activations (Korthikanti et al. 2022, Table 2): per layer, 2-byte activations
 *   sbd * 34 + 5 a s^2 b  split as 10 sbd (replicated without sequence parallelism) and the
 *   rest (divided by t). The 5 a s^2 b score term disappears with selective recompute or
 *   FlashAttention. Full checkpointing keeps 2 sbd for each of the L - 1 layers below the one
 *   being recomputed, plus that layer's whole working set.
 * ------------------------------------------------------------------------------------------- */

struct act_terms {
    int64_t sbd;    /* s*b*d */
    int64_t scores; /* 5*a*s^2*b, or 0 when not materialized */
    int64_t t;
    bool sp;
};

/* One layer's activations with nothing recomputed (or the score term dropped). */
static bool layer_working_set(const struct act_terms *x, bool scores, int64_t *out)
{
    int64_t att = scores ? x->scores : 0, whole, split, kept;

    if (x->t == 1 || x->sp) {
        if (!ck_mul(x->sbd, 34, &whole) || !ck_add(whole, att, &whole))
            return false;
        *out = ceil_div(whole, x->t);
        return true;
    }
    if (!ck_mul(x->sbd, 24, &split) || !ck_add(split, att, &split) || !ck_mul(x->sbd, 10, &kept))
        return false;
    return ck_add(kept, ceil_div(split, x->t), out);
}

/* With context parallelism each rank holds s/cp of the sequence (its queries, and the
 * activations of its tokens), while its score matrix spans its queries against all s keys. */
static bool act_terms_init(const struct core_resolved *r, int64_t batch, int64_t seq_len,
                           struct act_terms *x)
{
    const struct core_arch *a = &r->shape.arch;
    int64_t local = ceil_div(seq_len, r->cp), sb;

    x->t = r->tp;
    x->sp = r->sequence_parallel;
    return ck_mul(local, batch, &sb) && ck_mul(sb, a->hidden, &x->sbd) &&
           ck_mul(sb, seq_len, &x->scores) && ck_mul(x->scores, a->heads, &x->scores) &&
           ck_mul(x->scores, 5, &x->scores);
}

static bool layers_bytes(const struct core_resolved *r, const struct act_terms *x,
                         enum core_checkpointing ckpt, int64_t *out)
{
    int64_t layers = r->shape.arch.layers, one, kept;
    bool scores = ckpt == CORE_CKPT_NONE && !r->flash_attention;

    if (ckpt != CORE_CKPT_FULL)
        return layer_working_set(x, scores, &one) && ck_mul(one, layers, out);
    /* Full: each layer keeps its 2-byte input; the backward rebuilds one layer at a time. The
     * layer being rebuilt holds its own input inside its working set, so the peak is the
     * checkpoints of the L - 1 layers below it plus one full working set. With L = 1 that equals
     * no checkpointing, so checkpointing never raises activations. */
    if (!ck_mul(x->sbd, 2, &kept))
        return false;
    kept = x->sp ? ceil_div(kept, x->t) : kept;
    return ck_mul(kept, layers - 1, &kept) && layer_working_set(x, !r->flash_attention, &one) &&
           ck_add(kept, one, out);
}

bool core_activation_bytes(const struct core_resolved *r, int64_t batch, int64_t seq_len,
                           enum core_checkpointing ckpt, int64_t *layers, int64_t *logits)
{
    struct act_terms x;

    if (!act_terms_init(r, batch, seq_len, &x) || !layers_bytes(r, &x, ckpt, layers))
        return false;
    /* Table 2 assumes 2-byte activations; fp32 training stores 4. */
    if (r->precision == CORE_PREC_FP32 && !ck_mul(*layers, 2, layers))
        return false;
    *logits = 0;
    if (r->pp == 1) { /* fp32 logits for the loss, only on the last (= only) stage */
        int64_t v;
        if (!ck_mul(ceil_div(seq_len, r->cp), batch, &v) || !ck_mul(v, r->shape.arch.vocab, &v) ||
            !ck_mul(v, 4, &v))
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
    int64_t state, total;

    core_bytes_per_param(r, &m->bytes_per_param);
    if (!core_state_model_parallel(r, &m->bytes_per_param, mp) ||
        !core_state_shard(mp, r->zero_stage, r->dp * r->cp, &st, &state)) {
        core_problem_add(p, "params", "result out of range");
        return CORE_ERANGE;
    }
    if (!core_activation_bytes(r, r->batch, r->seq_len, r->checkpointing, &m->activation_layers,
                               &m->activation_logits)) {
        core_problem_add(p, activation_culprit(r), "result out of range");
        return CORE_ERANGE;
    }
    m->activations = m->activation_layers + m->activation_logits;
    if (!ck_add(state, m->activations, &total)) {
        core_problem_add(p, activation_culprit(r), "result out of range");
        return CORE_ERANGE;
    }
    m->params = st.weights;
    m->grads = st.grads;
    m->optimizer = st.optimizer;
    m->state = state;
    m->total = total;
    m->reserve = (int64_t)llround(r->reserve_gb * 1e9);
    return CORE_OK;
}
