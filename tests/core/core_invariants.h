/*
 * core_invariants.h - properties every core_evaluate() result must have, and a generator that
 * turns arbitrary bytes into a struct core_input the API could have produced (every field
 * within its field-table bounds, so core_evaluate() may still say EINVAL or ERANGE, but never
 * misbehave). Shared by the libFuzzer target (tests/fuzz/fuzz_core.c), which feeds it
 * libFuzzer's bytes, and the property suite (tests/core/test_core_properties.c), which feeds
 * it a fixed-seed PRNG's bytes.
 *
 * The properties (issue 5):
 *   - every double in the result is finite;
 *   - every memory segment >= 0;
 *   - conservation across ranks: each state segment (weights, gradients, optimizer) holds the
 *     model's N x bytes-per-param split as ZeRO's definition says (derivation at
 *     state_segment_ok below), so no byte of the state is lost or duplicated by sharding;
 *   - at ZeRO >= 1, doubling the GPUs never raises per-GPU state;
 *   - checkpointing (selective or full) never raises activations above none.
 * core_check() returns NULL when all hold, else a static description of the first that broke.
 *
 * Header-only with static functions: each includer is one test or fuzz translation unit.
 */
#ifndef MEMWALL_CORE_INVARIANTS_H
#define MEMWALL_CORE_INVARIANTS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

/* ---------------------------------------------------------------------------------------------
 * Bytes -> input
 * ------------------------------------------------------------------------------------------- */

struct core_gen {
    const uint8_t *p;
    size_t n;
};

static uint64_t gen_u64(struct core_gen *g)
{
    uint64_t v = 0;

    for (int i = 0; i < 8 && g->n > 0; i++, g->p++, g->n--)
        v = (v << 8) | *g->p;
    return v;
}

static unsigned gen_pick(struct core_gen *g, unsigned n)
{
    uint8_t b = 0;

    if (g->n > 0) {
        b = *g->p++;
        g->n--;
    }
    return b % n;
}

/* Uniform in [0, 1] from 53 bits. */
static double gen_unit(struct core_gen *g)
{
    return (double)(gen_u64(g) >> 11) / 9007199254740991.0;
}

/* Log-uniform in [lo, hi] (lo > 0): small and huge values are equally likely, which is where
 * the bugs are. */
static double gen_log(struct core_gen *g, double lo, double hi)
{
    return exp(log(lo) + gen_unit(g) * (log(hi) - log(lo)));
}

/* An integer in [lo, hi]: half the time a small one (the common shapes), else log-uniform. */
static int64_t gen_int(struct core_gen *g, int64_t lo, int64_t hi)
{
    int64_t v;

    if (gen_pick(g, 2) == 0)
        v = lo + (int64_t)gen_pick(g, 64);
    else
        v = (int64_t)llround(gen_log(g, (double)lo, (double)hi));
    return v < lo ? lo : v > hi ? hi : v;
}

/* 0 ("not given") one time in three, else an integer in [lo, hi]. */
static int64_t gen_opt_int(struct core_gen *g, int64_t lo, int64_t hi)
{
    return gen_pick(g, 3) == 0 ? 0 : gen_int(g, lo, hi);
}

static void core_gen_input(struct core_gen *g, struct core_input *in)
{
    core_input_init(in);
    in->preset = gen_pick(g, 3) == 0 ? (int)gen_pick(g, (unsigned)core_preset_count) : -1;
    in->params = gen_opt_int(g, 1, (int64_t)CORE_PARAMS_MAX);
    in->active_params = gen_pick(g, 4) == 0 ? gen_int(g, 1, (int64_t)CORE_PARAMS_MAX) : 0;
    in->layers = gen_opt_int(g, 1, CORE_LAYERS_MAX);
    in->hidden = gen_opt_int(g, 1, CORE_HIDDEN_MAX);
    /* Arbitrary heads and kv_heads are almost always refused (hidden % heads, heads % kv_heads),
     * so they come one time in four and kv_heads is usually a power-of-two divisor of heads. */
    in->heads = gen_pick(g, 4) ? 0 : gen_int(g, 1, CORE_HEADS_MAX);
    in->kv_heads = gen_pick(g, 4) ? 0 : gen_int(g, 1, CORE_HEADS_MAX);
    if (in->heads > 0 && in->kv_heads > 0 && gen_pick(g, 4) != 0) {
        int shift = (int)gen_pick(g, 4);

        in->kv_heads = in->heads % (1 << shift) == 0 ? in->heads >> shift : in->heads;
    }
    in->head_dim = gen_pick(g, 2) ? 0 : gen_int(g, 1, CORE_HIDDEN_MAX);
    in->ffn_hidden = gen_pick(g, 2) ? 0 : gen_int(g, 1, 4 * (int64_t)CORE_HIDDEN_MAX);
    in->vocab = gen_pick(g, 2) ? 0 : gen_int(g, 1, CORE_VOCAB_MAX);
    in->gated_mlp = (enum core_flag)gen_pick(g, 3);
    in->tied_embeddings = (enum core_flag)gen_pick(g, 3);
    in->batch = gen_int(g, 1, CORE_BATCH_MAX);
    in->seq_len = gen_int(g, 1, CORE_SEQ_LEN_MAX);
    in->tokens = gen_log(g, 1, CORE_TOKENS_MAX);
    in->precision = (enum core_precision)gen_pick(g, 4);
    in->grad_precision = (int)gen_pick(g, 4) - 1; /* -1 (as weights), bf16, fp16, fp32 */
    in->master_weights = (enum core_flag)gen_pick(g, 3);
    in->optimizer = (enum core_optimizer)gen_pick(g, 7);
    in->checkpointing = (enum core_checkpointing)gen_pick(g, 3);
    in->flash_attention = (gen_pick(g, 2) == 1) ? CORE_FLAG_YES : CORE_FLAG_NO;
    in->attention_flops = (enum core_attention_flops)gen_pick(g, 2);
    in->gpus = gen_int(g, 1, CORE_GPUS_MAX);
    in->gpu = (int)gen_pick(g, (unsigned)core_gpu_count);
    in->zero_stage = (int)gen_pick(g, 4);
    in->tp = gen_pick(g, 2) ? 1 : gen_int(g, 1, CORE_PARALLEL_MAX);
    in->pp = gen_pick(g, 2) ? 1 : gen_int(g, 1, CORE_PARALLEL_MAX);
    if (gen_pick(g, 4) != 0) /* usually make gpus a multiple of tp*pp, or most inputs are 422 */
        in->gpus = in->tp * in->pp * (1 + (int64_t)gen_pick(g, 16));
    in->sequence_parallel = (enum core_flag)gen_pick(g, 3);
    in->memory_gb = gen_pick(g, 2) ? 0 : gen_log(g, 1e-9, CORE_MEMORY_GB_MAX);
    in->peak_tflops = gen_pick(g, 2) ? 0 : gen_log(g, CORE_PEAK_TFLOPS_MIN, CORE_PEAK_TFLOPS_MAX);
    in->reserve_gb = gen_pick(g, 4) ? 0 : gen_log(g, 1e-9, CORE_MEMORY_GB_MAX);
    in->mfu = gen_log(g, CORE_MFU_MIN, 1);
    in->count = (enum core_count)gen_pick(g, 3);
    in->usd_per_gpu_hour = gen_pick(g, 2) ? -1 : gen_unit(g) * CORE_USD_MAX;
    in->tokens_per_second = gen_pick(g, 3) ? 0 : gen_log(g, 1e-9, CORE_TPS_MAX);
    in->global_batch_tokens = gen_pick(g, 3) ? 0 : gen_log(g, 1, CORE_TOKENS_MAX);
    in->sliding_window = gen_pick(g, 3) ? -1 : gen_int(g, 0, CORE_SEQ_LEN_MAX);
    in->sliding_window_pattern = gen_pick(g, 3) ? -1 : gen_int(g, 0, CORE_LAYER_PERIOD_MAX);
    /* Fine-tuning with adapters (last, so older seeds keep their meaning): a quarter of the
     * inputs fine-tune, with any rank, target mask, base layout and moment dtype. */
    in->finetune = gen_pick(g, 4) == 0 ? (enum core_finetune)(1 + gen_pick(g, 3)) : CORE_FT_FULL;
    in->lora_rank = gen_pick(g, 2) ? 8 : gen_int(g, 1, CORE_LORA_RANK_MAX);
    in->lora_targets = gen_pick(g, 2) ? -1 : (int)(1 + gen_pick(g, CORE_MOD_MASK_MAX));
    /* A layout only for a fine-tune (with full training it is a 422, kept rare). */
    in->base_quant =
        gen_pick(g, 2) || in->finetune == CORE_FT_FULL ? -1 : (int)gen_pick(g, CORE_BASEQ_COUNT);
    in->optimizer_state_dtype = (int)gen_pick(g, 3) - 1;
}

/* ---------------------------------------------------------------------------------------------
 * Properties
 * ------------------------------------------------------------------------------------------- */

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* ceil(a / b) for a >= 0, b > 0. */
static int64_t inv_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/*
 * One state segment of `bpp` bytes per parameter, as one GPU holds it (Rajbhandari et al. 2020,
 * ZeRO; Shoeybi et al. 2019 for tp; pp likewise splits the layers):
 *   - tensor and pipeline parallelism split the model's N * bpp bytes over w = tp * pp ranks, a
 *     whole byte per rank rounded up: ceil(N bpp / w);
 *   - a segment the ZeRO stage shards (optimizer at 1, + gradients at 2, + weights at 3) is
 *     split once more over the dp data-parallel ranks. Two roundings up give
 *     ceil(ceil(N bpp / w) / dp), which is at least ceil(N bpp / (w dp)) (the w * dp GPUs
 *     together hold every byte) and below N bpp / (w dp) + 2, so at most one byte above that
 *     lower bound: ceil(x / w) < x / w + 1, then ceil(y / dp) < y / dp + 1 <= x / (w dp) + 2.
 * N <= 1e15 and bpp <= 16, so N * bpp < 2^63.
 * A mixture of experts is two such segments (Megatron-Core's MoE parallel folding,
 * parallel_state.py): the routed experts' E_x bytes over etp * pp * ep ranks (etp = tp unless
 * given), sharded over the expert data-parallel group edp = dp * tp / (etp * ep), and the other
 * (N - E_x) over w and dp; each is rounded on its own, so the sum is within two bytes of the sum
 * of lower bounds.
 * An uneven pipeline split holds the heaviest rank's share: pp is replaced by L / l_max (the
 * model's L layers, MTP included, over the heaviest rank's l_max), i.e. N bpp l_max / (L tp).
 * At tp > 1 the weights every tp rank keeps whole (resolved.tp_whole_params: MLA's down
 * projections, the routers; Megatron-Core's "duplicated" linears and TopKRouter) are a third
 * segment, over pp only, rounded on its own; ZeRO then divides the two non-expert pieces
 * together (ceil((A + B) / dp) >= ceil(A / dp) + ceil(B / dp) - 1), so a sharded segment lies
 * between one byte below the sum of lower bounds and three above it.
 */
static bool state_segment_ok(int64_t got, const struct core_result *r, int bpp, bool sharded)
{
    const struct core_resolved *in = &r->resolved;
    int64_t ex = in->expert_params * (int64_t)bpp, ep = in->ep > 1 ? in->ep : 1;
    int64_t whole = in->params * (int64_t)bpp - ex, pp = in->pp;
    int64_t etp = in->etp > 0 ? in->etp : in->tp, w, xw, edp;
    int64_t rep = in->tp > 1 ? in->tp_whole_params * (int64_t)bpp : 0;

    whole -= rep;
    if (in->split != CORE_SPLIT_EVEN && in->pp > 1 &&
        in->stage_layers * in->pp != in->shape.arch.layers) {
        whole *= in->stage_layers; /* the ledger formed these products overflow-checked */
        ex *= in->stage_layers;
        rep *= in->stage_layers;
        pp = in->shape.arch.layers + in->mtp_layers;
    }
    w = in->tp * pp;
    xw = etp * pp * ep;
    if (!sharded)
        return got == inv_ceil_div(whole, w) + inv_ceil_div(ex, xw) + inv_ceil_div(rep, pp);
    edp = in->dp * in->tp / (etp * ep) > 0 ? in->dp * in->tp / (etp * ep) : 1;
    int64_t lo = inv_ceil_div(whole, w * in->dp) + inv_ceil_div(ex, xw * edp) +
                 inv_ceil_div(rep, pp * in->dp);
    return got >= lo - (rep > 0) && got <= lo + 3;
}

/* Properties of one result on its own. */
static const char *core_check_result(const struct core_result *r)
{
    const struct core_memory *m = &r->memory;
    const struct core_bytes_per_param *b = &m->bytes_per_param;
    const struct core_fit *f = &r->fit;
    const struct core_runtime *t = &r->runtime;
    const double doubles[] = {r->flops.six_nd,
                              r->flops.model,
                              r->flops.hardware,
                              r->flops.per_token.forward,
                              r->flops.per_token.backward,
                              r->flops.per_token.recompute,
                              r->flops.per_token.attention,
                              r->flops.attention_fraction,
                              f->utilization,
                              t->flops,
                              t->seconds,
                              t->hours,
                              t->days,
                              t->gpu_hours,
                              t->tokens_per_second,
                              t->tokens_per_second_per_gpu,
                              t->mfu,
                              t->peak_flops_per_gpu,
                              t->global_batch_tokens,
                              t->steps,
                              t->step_seconds,
                              t->cost_usd};

    if (!all_finite(doubles, sizeof doubles / sizeof doubles[0]))
        return "a result is not finite";
    if (m->params < 0 || m->grads < 0 || m->optimizer < 0 || m->activations < 0 ||
        m->activation_layers < 0 || m->activation_logits < 0)
        return "a negative memory segment";
    /* The identities total = state + activations, state = params + grads + optimizer,
     * activations = layers + logits, fits <=> total <= capacity and headroom = capacity - total
     * are how core/memory.c and core/fit.c assign those fields, so checking them here could not
     * fail; the hand-derived ledgers in test_core_lesson.c, test_core_ledger.c and the reply
     * tests pin each of those figures instead. What sharding does to the state is checked
     * against ZeRO's definition: */
    /* With adapters the state is the frozen base and the adapters (test_core_adapters.c pins
     * it): the adapters' share stays inside per_gpu, and the base has no gradient. */
    if (r->resolved.adapters.finetune != CORE_FT_FULL) {
        if (m->adapters.params > m->params || m->adapters.grads != m->grads ||
            m->adapters.optimizer != m->optimizer || m->adapters.trainable <= 0)
            return "the adapters' share is not inside per_gpu";
    } else if (!state_segment_ok(m->params, r, b->weights, r->resolved.zero_stage >= 3) ||
               !state_segment_ok(m->grads, r, b->grads, r->resolved.zero_stage >= 2) ||
               !state_segment_ok(m->optimizer, r, b->master + b->moments,
                                 r->resolved.zero_stage >= 1))
        return "a state segment is not the model's N x bytes split over tp*pp (and dp when "
               "sharded)";
    if (f->min_gpus < 0 || f->min_gpus_state_only < 0 || f->max_batch < 0)
        return "a negative search result";
    if (t->seconds <= 0 || r->flops.six_nd <= 0)
        return "a non-positive time or FLOP count";
    return NULL;
}

/* Every property for in, including the ones that compare it with neighbouring inputs. Inputs
 * that core_evaluate() refuses are fine (refusing is allowed); refusing them consistently is
 * checked through the neighbours only when both sides are accepted. */
static const char *core_check(const struct core_input *in)
{
    struct core_result r, r2;
    struct core_problems probs;
    struct core_input in2;
    const char *why;

    memset(&probs, 0, sizeof probs);
    if (core_evaluate(in, &r, &probs) != CORE_OK) {
        if (probs.count < 1 || probs.items[0].field == NULL)
            return "a refusal without a problem naming a field";
        return NULL;
    }
    why = core_check_result(&r);
    if (why != NULL)
        return why;

    /* ZeRO >= 1: twice the data-parallel ranks never raises per-GPU state. */
    in2 = *in;
    in2.gpus = r.resolved.gpus * 2;
    if (r.resolved.zero_stage >= 1 && in2.gpus <= CORE_GPUS_MAX &&
        core_evaluate(&in2, &r2, &probs) == CORE_OK && r2.memory.state > r.memory.state)
        return "more GPUs raised per-GPU state at ZeRO >= 1";

    /* Checkpointing never raises activations above none. */
    if (in->checkpointing != CORE_CKPT_NONE) {
        in2 = *in;
        in2.checkpointing = CORE_CKPT_NONE;
        if (core_evaluate(&in2, &r2, &probs) == CORE_OK &&
            r.memory.activations > r2.memory.activations)
            return "checkpointing raised activations";
    }
    return NULL;
}

#endif
