/*
 * peak.c - the peak of a steady-state training step, per framework profile (peak.h;
 * docs/frameworks.md holds every formula and constant with the code it was read from).
 *
 * Three moments are priced on the first and the last pipeline stage: the end of the forward (every
 * in-flight micro-batch's saved activations, the loss's forward buffers), the backward (its start,
 * with the loss's gradient buffers, and its end, with every gradient alive), and the optimizer step
 * (state plus the step's temporaries). The largest is the allocated peak; the allocator's slack
 * and the device's fixed costs turn it into the reserved or device figure.
 *
 * Doubles throughout: the inputs are bounded (inputs.c), so every product stays far below
 * DBL_MAX, and the peak is an estimate whose constants are fractional anyway.
 */
#include <math.h>

#include "adapters.h"
#include "internal.h"
#include "peak.h"
#include "peak_replay.h"

const char *const core_peak_moment_names[CORE_MOMENT_COUNT] = {"forward_end", "backward",
                                                               "optimizer_step"};

#define GIB 1073741824.0

/* ---------------------------------------------------------------------------------------------
 * Profiles (docs/frameworks.md, "Profiles")
 * ------------------------------------------------------------------------------------------- */

struct profile {
    enum core_loss loss;      /* the loss the framework computes by default */
    bool fused_attention;     /* its default attention stores no scores (flash_attention) */
    bool korthikanti;         /* activations by Korthikanti's table (Megatron), else the PyTorch
                                 eager/compiled inventory of a Llama-style block */
    bool grads_persist;       /* one gradient buffer allocated at start-up and never freed */
    bool fp32_storage;        /* with master weights the stored parameters are fp32 (FSDP2's sharded
                                 parameters, autocast's fp32 model): no separate master copy */
    bool states_like_params;  /* PyTorch optimizers create their states like the parameter (bf16
                                 parameters get bf16 moments) */
    bool foreach_step;        /* torch.optim foreach step: one parameter-sized temporary */
    bool autocast_copies;     /* autocast's compute-dtype weight copies saved for the backward */
    bool ddp_bucket_copy;     /* DDP without gradient_as_bucket_view: buckets copy every gradient */
    bool pp_unsharded;        /* FSDP under pipeline parallelism keeps the stage unsharded */
    double zero_bucket;       /* DeepSpeed's reduce bucket, elements of the compute dtype */
    double reserved_eager;    /* reserved / allocated at the peak, eager blocks */
    double reserved_compiled; /* the same with compiled blocks (fewer odd-sized temporaries) */
};

/* A field left out is false (or 0): each row names what its framework does. */
/* clang-format off */
static const struct profile profiles[CORE_FW_COUNT] = {
    [CORE_FW_GENERIC] = {
        .loss = CORE_LOSS_FP32_LOGITS,
        .korthikanti = true, .grads_persist = true,
        .reserved_eager = 1.08, .reserved_compiled = 1.02,
    },
    /* Megatron-Core: transformer_impl "transformer_engine" and attention_backend auto by default
     * (megatron/core/transformer/transformer_config.py): Transformer Engine's DotProductAttention
     * picks its flash or fused (cuDNN) backend, neither of which stores the scores. */
    [CORE_FW_MEGATRON] = {
        .loss = CORE_LOSS_VOCAB_PARALLEL, .fused_attention = true,
        .korthikanti = true, .grads_persist = true,
        .reserved_eager = 1.06, .reserved_compiled = 1.06,
    },
    /* torchtitan: the models' attention is SDPA with the cuDNN / flash backends first
     * (torchtitan/models/common/attention.py ScaledDotProductAttention), FlexAttention in the
     * current registries (model_registry(attn_backend="flex")); neither stores the scores. */
    [CORE_FW_TORCHTITAN] = {
        .loss = CORE_LOSS_UNFUSED_FP32, .fused_attention = true,
        .fp32_storage = true, .states_like_params = true, .foreach_step = true,
        .pp_unsharded = true,
        .reserved_eager = 1.08, .reserved_compiled = 1.02,
    },
    [CORE_FW_TORCHTUNE] = {
        .loss = CORE_LOSS_CHUNKED,
        .fp32_storage = true, .states_like_params = true,
        .reserved_eager = 1.08, .reserved_compiled = 1.02,
    },
    [CORE_FW_DEEPSPEED] = {
        .loss = CORE_LOSS_UNFUSED_FP32,
        .grads_persist = true,
        .zero_bucket = 5e8,
        .reserved_eager = 1.08, .reserved_compiled = 1.02,
    },
    [CORE_FW_HF_TRAINER] = {
        .loss = CORE_LOSS_UNFUSED_FP32,
        .fp32_storage = true, .states_like_params = true, .foreach_step = true,
        .autocast_copies = true, .ddp_bucket_copy = true,
        .reserved_eager = 1.08, .reserved_compiled = 1.02,
    },
};
/* clang-format on */

/* Fixed device costs nvidia-smi adds to the allocator's reserved bytes (docs/frameworks.md):
 * the CUDA context with its kernels and cuBLAS/cuDNN workspaces, and, with more than one GPU,
 * the communicators' buffers. */
#define CONTEXT_GIB 0.75
#define COMM_GIB    0.75

enum core_loss core_peak_default_loss(enum core_framework framework)
{
    return (unsigned)framework < CORE_FW_COUNT ? profiles[framework].loss : CORE_LOSS_FP32_LOGITS;
}

bool core_peak_default_flash(enum core_framework framework)
{
    return (unsigned)framework < CORE_FW_COUNT && profiles[framework].fused_attention;
}

void core_peak_options_resolved(const struct core_resolved *r, struct core_peak_options *o)
{
    o->framework = r->framework;
    o->loss = (int)r->loss;
    o->compile = r->compile;
    o->optimizer_in_backward = r->optimizer_in_backward;
    o->activation_offload = r->activation_offload;
    o->metric = r->memory_metric;
    o->first_step = false;
    o->ledger = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Loss: bytes per local logit (tokens x V / tp) held at the end of the forward and at the start
 * of the backward (docs/frameworks.md, "Loss").
 * ------------------------------------------------------------------------------------------- */

static void loss_bytes(enum core_loss loss, bool compiled, bool loss_parallel, double *fwd,
                       double *bwd)
{
    /* PyTorch's loss_parallel (tensor/parallel/loss.py), the DTensor cross-entropy on vocabulary
     * shards: forward, the bf16 logits, their fp32 copy, the shifted copy, its exp and the
     * log-softmax (the exp freed only after its sum): 14; backward, the saved log-softmax, a
     * zeros_like gradient, exp(x), their sum and its product with the output gradient: 16. */
    if (loss == CORE_LOSS_UNFUSED_FP32 && loss_parallel) {
        *fwd = 14, *bwd = 16;
        return;
    }
    switch (loss) {
    case CORE_LOSS_FP32_LOGITS: /* the ledger's one fp32 copy */
        *fwd = 4, *bwd = 4;
        return;
    case CORE_LOSS_VOCAB_PARALLEL: /* bf16 logits + the fp32 upcast the softmax runs in place on;
                                      backward: that fp32 buffer becomes the gradient, cast to bf16
                                    */
        *fwd = 6, *bwd = 6;
        return;
    case CORE_LOSS_UNFUSED_FP32: /* forward: bf16 logits, fp32 copy, fp32 log-softmax; backward:
                                    log-softmax, its gradient and the input's gradient, all fp32 */
        *fwd = 10, *bwd = 12;
        return;
    case CORE_LOSS_UNFUSED_SHIFTED: /* transformers 4.46-4.48 ForCausalLMLoss: the model's
                                       forward keeps its bf16 logits while the loss makes the fp32
                                       copy, the shifted .contiguous() copy and the log-softmax;
                                       backward as unfused_fp32 (the slice's fp32 zeros come after
                                       the log-softmax's buffers are freed) */
        *fwd = 14, *bwd = 12;
        return;
    case CORE_LOSS_COMPILED: /* bf16 logits saved, a bf16 gradient written next to them */
        *fwd = 2, *bwd = 4;
        return;
    case CORE_LOSS_CHUNKED: /* 8 chunks: compiled, bf16 logits + one chunk's bf16 gradient;
                               eager, each chunk saves its fp32 log-softmax */
        if (compiled)
            *fwd = 2, *bwd = 2 + 2.0 / 8;
        else
            *fwd = 6, *bwd = 4 + 10.0 / 8;
        return;
    }
    *fwd = 4, *bwd = 4;
}

/* ---------------------------------------------------------------------------------------------
 * Activations per layer and micro-batch (docs/frameworks.md, "Activations")
 * ------------------------------------------------------------------------------------------- */

struct layer_acts {
    double saved;   /* kept from the forward until the layer's backward */
    double working; /* extra while the layer's backward runs (recomputed or attention scores) */
};

/* Megatron: Korthikanti's table through the ledger's own function, one layer at a time: a dense
 * layer, or (moe) one with a routed MLP. */
static void korthikanti_layer(const struct core_resolved *r, bool moe, struct layer_acts *out)
{
    struct core_resolved one = *r;
    int64_t none, sel, logits;
    double ckpt, tokens = ceil((double)r->seq_len / (double)r->cp) * (double)r->batch;
    double fp32 = r->precision == CORE_PREC_FP32 ? 2 : 1;

    one.shape.arch.layers = 1;
    one.shape.arch.dense_layers = 0;
    one.shape.arch.moe_layer_freq = one.shape.arch.moe_layer_phase = 0;
    if (!moe)
        one.shape.arch.experts = one.shape.arch.experts_per_token = 0;
    one.split = CORE_SPLIT_EVEN;
    one.mtp_layers = 0;
    one.pp = 2; /* no logits: they are priced by the loss */
    if (!core_activation_bytes(&one, r->batch, r->seq_len, CORE_CKPT_NONE, &none, &logits) ||
        !core_activation_bytes(&one, r->batch, r->seq_len, CORE_CKPT_SELECTIVE, &sel, &logits)) {
        out->saved = out->working = 0; /* unreachable for validated inputs: the ledger ran */
        return;
    }
    ckpt = 2 * tokens * (double)r->shape.arch.hidden * fp32 /
           (r->sequence_parallel ? (double)r->tp : 1.0);
    out->saved = (double)none, out->working = 0;
    switch (r->checkpointing) {
    case CORE_CKPT_NONE:
        break;
    case CORE_CKPT_SELECTIVE:
        out->saved = (double)sel, out->working = (double)(none - sel);
        break;
    case CORE_CKPT_FULL:
        out->saved = ckpt, out->working = (double)none;
        break;
    }
}

/* PyTorch frameworks: what autograd saves in a Llama-style block, bytes per token. Widths are
 * per GPU (tensor parallelism splits q, kv and f; h only with sequence parallelism). */
static void pytorch_layer(const struct core_resolved *r, bool compiled, struct layer_acts *out)
{
    const struct core_arch *a = &r->shape.arch;
    double t = (double)r->tp, hsplit = r->sequence_parallel ? t : 1.0;
    double h = (double)a->hidden / hsplit, hd = (double)a->head_dim;
    double q = (double)a->heads * hd / t, kv = (double)a->kv_heads * hd / t;
    double f = (double)a->ffn_hidden / t;
    double tokens = ceil((double)r->seq_len / (double)r->cp) * (double)r->batch;
    double scale = (r->precision == CORE_PREC_FP32 ? 2.0 : 1.0) * tokens;
    double mlp = a->gated_mlp ? 6 * f : 4 * f;
    /* Norm inputs and outputs; attention: q, k and v (k and v repeated to every query head for
     * SDPA), its output and the contiguous copy the output projection saves; the MLP. With
     * sequence parallelism the norms run on sequence shards, but the projections after them
     * save their input as the all-gathered full sequence: the norm outputs count at full h. */
    double none = 4 * h + 4 * (double)a->hidden + 10 * q + mlp;
    /* Per-op selective checkpointing (torchtitan): the layer input, the attention output and
     * every other matmul output (wq, wv, w1, w2 in call order). */
    double sac = 2 * h + 4 * q + 2 * kv + 2 * f + (a->gated_mlp ? 2 * h : 0);

    if (!compiled) /* eager RMSNorm saves its fp32 upcast, eager RoPE its fp32 q and k */
        none += 8 * h + 4 * q + 4 * kv;
    if (!r->flash_attention) /* eager attention: bf16 scores and softmax, s keys per token */
        none += 4 * (double)a->heads / t * (double)r->seq_len;
    if (r->adapters.finetune != CORE_FT_FULL) /* a frozen base (adapters.c) */
        none += core_adapters_pytorch_delta(r) + (core_adapters_fp32_stream(r) ? 4 * h : 0);
    out->saved = none, out->working = 0;
    switch (r->checkpointing) {
    case CORE_CKPT_NONE:
        break;
    case CORE_CKPT_SELECTIVE:
        out->saved = sac, out->working = none - sac;
        break;
    case CORE_CKPT_FULL: /* the layer input; fp32 under PEFT's k-bit preparation */
        out->saved = (core_adapters_fp32_stream(r) ? 4 : 2) * h, out->working = none;
        break;
    }
    out->saved *= scale;
    out->working *= scale;
}

/* ---------------------------------------------------------------------------------------------
 * The peak
 * ------------------------------------------------------------------------------------------- */

struct stage_shape {
    double params;  /* parameters held by one GPU of this stage (after tp; experts after etp ep) */
    double experts; /* of them, the routed experts' (sharded over the expert data-parallel group) */
    double layer;   /* one layer's parameters per GPU */
    double output;  /* the output layer's parameters per GPU (last stage) */
    double embedding;  /* the input embedding's parameters per GPU (first stage) */
    double layers;     /* layers on the stage (the last stage's MTP layers included) */
    double moe_layers; /* of them, layers with a routed MLP */
    double in_flight;  /* micro-batches whose activations it holds */
    double flight_dense, flight_moe; /* layer-micro-batches in flight: dense and MoE layers */
    bool last;
};

/* The stage's layers and their weights per GPU (layout.c: the split, MTP on the last rank). The
 * routed experts are split over etp x ep, the rest over tp (Megatron-Core's MoE parallel
 * folding); a given N scales the architecture's counts. */
static void stage_layers(const struct core_resolved *r, int64_t i, double scale, double *dense,
                         double *experts, double *whole, struct stage_shape *s)
{
    int64_t n = r->shape.arch.layers, moe = core_arch_moe_layers(&r->shape.arch);
    bool last = i == r->pp - 1;
    double d, x, w;

    if (r->pp > 1)
        core_rank_layers(r, i, &n, &moe);
    if (!core_rank_params(r, r->pp > 1 ? i : 0, &d, &x, &w) || r->pp == 1) {
        struct core_arch_counts c;
        d = x = w = 0;
        if (core_arch_count(&r->shape.arch, &c))
            d = (double)(c.non_experts - c.embedding - c.output) / (double)r->pp,
            x = (double)c.experts / (double)r->pp, w = (double)c.tp_whole / (double)r->pp;
    }
    d *= scale, x *= scale, w *= scale;
    *whole = r->tp > 1 ? w : 0;
    s->layers = (double)n, s->moe_layers = (double)moe;
    if (last && r->mtp_layers > 0) { /* the MTP layers' weights are exact (layout.c) */
        int64_t per = r->mtp_params, ex = r->expert_params;
        struct core_arch_counts c;
        double mtp_ex =
            core_arch_count(&r->shape.arch, &c) && ex > c.experts ? (double)(ex - c.experts) : 0;
        struct core_arch more = r->shape.arch;
        struct core_arch_counts c1;
        more.layers += 1;
        d += (double)per - mtp_ex, x += mtp_ex;
        if (r->tp > 1 && per > 0 &&
            core_arch_count(&more, &c1)) /* each depth's down-proj, router */
            *whole += (double)r->mtp_layers * (double)(c1.tp_whole - c.tp_whole);
        s->layers += (double)r->mtp_layers;
        s->moe_layers +=
            moe > 0 || core_arch_moe_layers(&r->shape.arch) > 0 ? (double)r->mtp_layers : 0;
    }
    *dense = d, *experts = x;
}

/* Uneven interleaved chunks: which chunks the in-flight forwards ran. Megatron's interleaved
 * schedule (pipeline_parallel/schedules.py, get_model_chunk_id) runs forward k on chunk
 * (k mod pp v) div pp, so of the first K forwards chunk c ran n_c; the layers in flight are
 * sum_c n_c x layers(c), the MTP layers riding on the last rank's last chunk. */
static void flight_chunks(const struct core_resolved *r, int64_t i, double forwards,
                          struct stage_shape *s)
{
    int64_t pp = r->pp, v = r->virtual_stages, K = (int64_t)llround(forwards), group = pp * v;
    int64_t mtp_moe = r->mtp_layers > 0 && core_arch_moe_layers(&r->shape.arch) > 0;

    s->flight_dense = s->flight_moe = 0;
    for (int64_t c = 0; c < v; c++) {
        /* forwards k < K with (k mod group) in [c pp, c pp + pp) */
        int64_t n = K / group * pp, rest = K % group - c * pp, layers, moe;
        n += rest <= 0 ? 0 : rest < pp ? rest : pp;
        core_chunk_layers(r, c * pp + i, &layers, &moe);
        if (i == pp - 1 && c == v - 1)
            layers += r->mtp_layers, moe += mtp_moe * r->mtp_layers;
        s->flight_moe += (double)(n * moe);
        s->flight_dense += (double)(n * (layers - moe));
    }
}

/* Parameters per GPU of stage i: its share of the layers, the embedding on the first stage, the
 * output layer on the last (a second copy of a tied embedding when they differ). */
static void stage_shape(const struct core_resolved *r, int64_t i, struct stage_shape *s)
{
    const struct core_arch *a = &r->shape.arch;
    struct core_arch_counts c;
    double pp = (double)r->pp, t = (double)r->tp, total, scale, dense, experts, whole;
    double out_layer, m = r->micro_batches >= 1 ? r->micro_batches : 1;
    double v = (double)r->virtual_stages, xt = (double)(core_etp(r) * (r->ep > 1 ? r->ep : 1));

    if (!core_arch_count(a, &c) || c.total <= 0) {
        c.total = r->params, c.embedding = 0, c.output = 0;
    }
    total = (double)c.total;
    scale = (double)(r->params - r->mtp_params) / total;
    out_layer = c.output > 0 ? (double)c.output : (double)a->vocab * (double)a->hidden;
    s->last = i == r->pp - 1;
    stage_layers(r, i, scale, &dense, &experts, &whole, s);
    /* The weights kept whole on every tp rank are not divided by t (core_tp_whole_params). */
    s->layer = s->layers > 0 ? ((dense - whole) / t + whole + experts / xt) / s->layers : 0;
    s->output = out_layer * scale / t;
    s->embedding = (double)c.embedding * scale / t;
    if (r->pp == 1) {
        dense += ((double)c.embedding + (double)c.output) * scale;
    } else {
        if (i == 0)
            dense += (double)c.embedding * scale;
        if (s->last)
            dense += out_layer * scale;
        /* The MTP layers embed the shifted tokens on their own rank: Megatron-Core's GPTModel
         * builds the embedding there too (gpt_model.py: pre_process or mtp_process). */
        if (s->last && r->mtp_layers > 0)
            dense += (double)c.embedding * scale;
    }
    s->experts = experts / xt;
    s->params = (dense - whole) / t + whole + s->experts;
    if (r->pp == 1) {
        s->in_flight = 1;
    } else if (r->virtual_stages <= 1) {
        s->in_flight = fmin(pp - (double)i, m);
    } else { /* Megatron's interleaved warm-up: (pp - i - 1) * 2 + (v - 1) * pp + 1 chunks */
        double chunks = (pp - (double)i - 1) * 2 + (v - 1) * pp + 1;
        s->in_flight = fmin(chunks, m * v) / v;
    }
    s->flight_moe = s->in_flight * s->moe_layers;
    s->flight_dense = s->in_flight * s->layers - s->flight_moe;
    if (r->virtual_stages > 1 && r->split != CORE_SPLIT_EVEN && r->pp > 1)
        flight_chunks(r, i, s->in_flight * v, s);
}

/* Stored bytes per parameter of the profile: weights, gradients, optimizer (master + moments). */
struct state_bytes {
    double weights, grads, optimizer, compute; /* compute: the dtype layers run in */
};

static void state_bytes(const struct core_resolved *r, const struct profile *pf, bool first_step,
                        struct state_bytes *sb)
{
    struct core_bytes_per_param b;
    double moments;

    core_bytes_per_param(r, &b);
    sb->compute = r->precision == CORE_PREC_FP32 ? 4 : 2;
    moments = b.moments;
    if (pf->fp32_storage && r->master_weights) {
        sb->weights = 4, sb->grads = 4, sb->optimizer = 0;
    } else if (pf->fp32_storage) { /* pure low-precision training */
        sb->weights = b.weights, sb->grads = b.grads, sb->optimizer = 0;
    } else {
        sb->weights = b.weights, sb->grads = b.grads, sb->optimizer = b.master;
    }
    /* torch.optim's Adam, SGD momentum and Lion states are zeros_like(param). */
    if (pf->states_like_params && r->adapters.optimizer_state_dtype < 0 &&
        (r->optimizer == CORE_OPT_ADAM || r->optimizer == CORE_OPT_ADAMW ||
         r->optimizer == CORE_OPT_SGD_MOMENTUM || r->optimizer == CORE_OPT_LION))
        moments = moments * sb->weights / 4;
    if (!first_step)
        sb->optimizer += moments;
}

/* One state piece of the stage per GPU: the dense part over dpc ranks and the experts' over edp
 * when the stage shards it, else whole. */
static double sharded(const struct stage_shape *s, double bytes, bool shard, double dpc, double edp)
{
    if (!shard)
        return s->params * bytes;
    return ((s->params - s->experts) / dpc + s->experts / edp) * bytes;
}

static void add_total(struct core_peak_moment_bytes *m)
{
    m->total = m->weights + m->grads + m->optimizer + m->activations + m->logits + m->buffers;
}

/* What one stage holds, term by term, before the moments are summed (profile_stage). */
struct stage_terms {
    struct stage_shape s;
    struct state_bytes sb;
    struct layer_acts la;
    double dpc, logits, lf, lb, w, g, opt, gather;
    double saved, grads_start, grads_end, grads_fwd, mb_saved, fixed, casts, step_temp;
    double unsharded_grads, accum;
    double edp;         /* the experts' data-parallel ranks (MoE parallel folding) */
    double dense_saved; /* a dense layer's saved bytes (Megatron: MoE layers' are la.saved) */
    bool zero3;
    bool frozen; /* fine-tuning with adapters: adapter_terms replaced the state */
};

/* State, saved activations and the gradients alive at each instant. */
static void stage_state(const struct core_resolved *r, const struct core_peak_options *o,
                        const struct profile *pf, struct stage_terms *x)
{
    /* State: ZeRO shards optimizer (stage >= 1), gradients (>= 2) and weights (3) over the
     * data- and context-parallel ranks. Under megatron stage 1 is the distributed optimizer,
     * whose gradient buffer stays whole (param_and_grad_buffer.py), and stages 2 and 3 are
     * Megatron-FSDP's optim_grads and optim_grads_params (--use-megatron-fsdp
     * --data-parallel-sharding-strategy), which shard the gradient buffer. */
    /* The routed experts' share is sharded over the expert data-parallel group instead
     * (Megatron-Core's distributed optimizer keeps a separate expert-parallel buffer). */
    x->w = sharded(&x->s, x->sb.weights, x->zero3, x->dpc, x->edp);
    x->g = sharded(&x->s, x->sb.grads, r->zero_stage >= 2, x->dpc, x->edp);
    x->opt = sharded(&x->s, x->sb.optimizer, r->zero_stage >= 1, x->dpc, x->edp);

    /* Activations: every in-flight micro-batch's saved tensors, each layer-micro-batch at its
     * own bytes (the chunks of an uneven split); offloading keeps one layer's. */
    if (pf->korthikanti) {
        x->mb_saved =
            x->dense_saved * (x->s.layers - x->s.moe_layers) + x->la.saved * x->s.moe_layers;
        x->saved = x->dense_saved * x->s.flight_dense + x->la.saved * x->s.flight_moe;
    } else {
        x->mb_saved = x->la.saved * x->s.layers;
        x->saved = x->la.saved * (x->s.flight_dense + x->s.flight_moe);
    }
    x->saved = o->activation_offload ? x->la.saved : x->saved;

    /* Gradients alive: a persistent buffer always; otherwise (set_to_none) none at the first
     * forward, the output layer's at the start of the backward, all at its end, and all during
     * later forwards once one micro-batch's backward has run (gradient accumulation). */
    /* With the step in the backward each gradient is freed once applied: one layer's at a
     * time, plus a tied embedding's, which accumulates from the output at the start of the
     * backward to the embedding at its end. */
    x->grads_end = x->g;
    if (o->optimizer_in_backward)
        x->grads_end = fmin(
            x->g, x->s.layer * x->sb.grads +
                      (r->shape.arch.tied_embeddings && x->s.last ? x->s.output * x->sb.grads : 0));
    x->grads_fwd = (pf->grads_persist || r->micro_batches > x->s.in_flight) ? x->grads_end : 0;
    x->grads_start = x->grads_fwd > 0 ? x->grads_fwd
                     : x->s.last      ? fmin(x->s.output * x->sb.grads, x->grads_end)
                                      : 0;
}

/* The loss's logits and the framework's buffers. */
static void stage_buffers(const struct core_resolved *r, const struct core_peak_options *o,
                          const struct profile *pf, enum core_loss loss, int64_t i,
                          struct stage_terms *x)
{
    if (x->s.last) {
        /* torchtitan computes the loss under loss_parallel when tensor parallelism shards the
         * output layer's vocabulary. */
        loss_bytes(loss, o->compile, o->framework == CORE_FW_TORCHTITAN && r->tp > 1, &x->lf,
                   &x->lb);
        /* Each MTP depth runs the shared output layer and its own loss on the same tokens
         * (multi_token_prediction.py, process_mtp_loss): its logits next to the model's. */
        x->logits = ceil((double)r->seq_len / (double)r->cp) * (double)r->batch *
                    (double)r->shape.arch.vocab / (double)r->tp * (double)(1 + r->mtp_layers);
    } else {
        x->lf = x->lb = 0;
    }

    /* Buffers: FSDP gathers two layers in the compute dtype (the current one and the prefetched
     * next), and the output layer at the loss; the backward adds one layer's unsharded gradient
     * (compute dtype, then fp32 for the reduce-scatter). Under pipeline parallelism torchtitan
     * keeps the whole stage unsharded instead. */
    if (x->zero3 && x->dpc > 1) {
        if (pf->pp_unsharded && r->pp > 1)
            x->gather = x->s.params * x->sb.compute;
        else /* torchtitan's root unit (embedding, final norm, output) is never resharded */
            x->gather = 2 * x->s.layer * x->sb.compute +
                        (x->s.last ? x->s.output * x->sb.compute : 0) +
                        (pf->pp_unsharded && i == 0 ? x->s.embedding * x->sb.compute : 0);
    }
    /* FSDP under pipeline parallelism (torchtitan) disables the gradient sync until the last
     * micro-batch: FSDP2 accumulates each parameter's unsharded gradient across micro-batches
     * in the reduce dtype (FSDPParam.to_accumulated_grad_if_needed: fp32 with an fp32 reduce
     * policy), the whole stage's, until the last backward reduce-scatters it. */
    if (x->zero3 && x->dpc > 1 && pf->pp_unsharded && r->pp > 1)
        x->unsharded_grads = x->s.params * (x->sb.weights >= 4 ? 4 : x->sb.compute);
    /* DeepSpeed's gradient reduce bucket; DDP's bucket copy of every gradient. */
    x->fixed = pf->zero_bucket * x->sb.compute;
    if (pf->ddp_bucket_copy && x->dpc > 1 && r->zero_stage == 0)
        x->fixed += x->s.params * x->sb.grads;
    /* Autocast's compute-dtype copies of fp32 weights, saved by the layers for their
     * backward: all of them at the end of the forward, none at the end of the backward (FSDP's
     * mixed precision gathers compute-dtype layers instead). */
    x->casts = pf->autocast_copies && x->sb.weights > x->sb.compute && !x->zero3
                   ? x->s.params * x->sb.compute
                   : 0;
    /* 8-bit optimizers (torchao's AdamW8bit) dequantize one tensor's two moments to fp32 for
     * its update: 8 bytes x the largest tensor (embedding or output layer). */
    x->step_temp = r->optimizer == CORE_OPT_ADAMW_8BIT && !pf->korthikanti
                       ? 8 * fmax(x->s.output, x->s.layer / 4)
                       : 0;

    /* Accumulated unsharded gradients exist during a forward or a loss only once an earlier
     * micro-batch's backward has run on this stage. */
    x->accum = r->micro_batches > x->s.in_flight ? x->unsharded_grads : 0;
}

static void backward_moment(const struct core_peak_options *o, enum core_loss loss,
                            const struct stage_terms *x, struct core_peak_moment_bytes *mo)
{
    /* Backward: the largest of three instants. The loss's backward (its gradient buffers, every
     * saved tensor); the top layer's backward (its working set, the logits' bf16 gradient
     * just consumed); the end (every gradient, the first layer's tensors and working set, and
     * with the step in the backward the last update's temporaries). With a frozen output layer
     * (adapters) the logits' gradient is not there at the top layer: autograd runs the loss's
     * nodes, then the output layer's backward, which consumes that gradient (only an input
     * gradient: no weight gradient to accumulate), then the final norm's, and only then the top
     * layer's recompute; the output layer's own instant (saved tensors + 2 bytes per logit) is
     * below the loss's (every loss here holds at least 2 bytes per logit there). Full training
     * keeps the combined instant: there the output layer's weight gradient is being
     * accumulated at that point (torchtune's chunked output adds each chunk's contribution to
     * the accumulated one, autograd's InputBuffer), which it stands in for. */
    {
        double bw_gather = x->zero3 && x->dpc > 1 && !x->frozen
                               ? x->gather + x->s.layer * (x->sb.compute + 4)
                               : x->gather;
        double bw_end_saved =
            o->activation_offload ? x->la.saved : x->saved - x->mb_saved + x->la.saved;
        struct core_peak_moment_bytes at[3] = {
            {.weights = x->w,
             .grads = x->grads_fwd + x->accum,
             .optimizer = x->opt,
             .activations = x->saved,
             .logits = x->logits * x->lb,
             .buffers = x->gather + x->fixed + x->casts},
            {.weights = x->w,
             .grads = x->grads_start + x->accum,
             .optimizer = x->opt,
             .activations = x->saved + x->la.working,
             .logits = x->logits * (x->s.last && !x->frozen ? 2 : 0),
             .buffers = bw_gather + x->fixed + x->casts},
            {.weights = x->w,
             .grads = x->grads_end + x->unsharded_grads,
             .optimizer = x->opt,
             .activations = bw_end_saved + x->la.working,
             .logits = 0,
             .buffers = bw_gather + x->fixed + (o->optimizer_in_backward ? x->step_temp : 0)},
        };
        int best = 0;

        for (int k = 0; k < 3; k++) {
            add_total(&at[k]);
            if (at[k].total > at[best].total)
                best = k;
        }
        mo[CORE_MOMENT_BACKWARD] = at[best];
        /* An eager loss frees the bf16 logits just before its fp32 gradients are allocated: the
         * freed block is too small for them, so it stays reserved through the peak. */
        if (best == 0 && (loss == CORE_LOSS_UNFUSED_FP32 || loss == CORE_LOSS_UNFUSED_SHIFTED))
            mo[CORE_MOMENT_BACKWARD].stranded = x->logits * 2;
    }
}

static void optimizer_moment(const struct core_resolved *r, const struct core_peak_options *o,
                             const struct profile *pf, const struct stage_terms *x,
                             struct core_peak_moment_bytes *mo)
{
    /* Optimizer step: state, every gradient, and the step's temporaries: foreach AdamW one
     * parameter-sized buffer; a low-precision gradient is upcast to fp32 for the master step. */
    double temp = x->fixed;
    if (x->frozen) { /* adapters: one adapter-sized foreach temporary, no master upcast */
        temp += pf->foreach_step && !o->optimizer_in_backward ? x->g : 0;
    } else if (!o->optimizer_in_backward) {
        temp += x->step_temp;
        if (pf->foreach_step)
            temp += x->s.params * x->sb.weights / (r->zero_stage >= 1 ? x->dpc : 1);
        if (x->sb.optimizer >= 4 && x->sb.grads < 4 && !pf->fp32_storage)
            temp += x->s.params * 4 / (r->zero_stage >= 1 ? x->dpc : 1);
    }
    mo[CORE_MOMENT_OPTIMIZER] = (struct core_peak_moment_bytes){
        .weights = x->w,
        .grads = x->grads_end,
        .optimizer = x->opt,
        .buffers = temp,
    };
    add_total(&mo[CORE_MOMENT_OPTIMIZER]);

    /* FSDP's sharded gradients are freed by zero_grad(set_to_none) and re-created by the next
     * backward; their blocks (a layer's shard, a few MB) are smaller than the activations the
     * forward allocates in between, so the allocator keeps them reserved. */
    if (!pf->grads_persist && x->zero3 && x->dpc > 1)
        for (int k = 0; k < CORE_MOMENT_COUNT; k++)
            mo[k].stranded += fmax(0, x->g - mo[k].grads);
}

/* Fine-tuning with adapters (adapters.c): the stage's share of the frozen base and the adapters
 * (ZeRO shards them as the full-training state), gradients alive as full training's rule says
 * but none for a frozen output layer, the layer's transient dequantized weight, FSDP's gathers in
 * the base's stored layout, DDP's bucket copy and the autocast copies of the adapters' size. */
static void adapter_terms(const struct core_resolved *r, const struct profile *pf,
                          struct stage_terms *x)
{
    struct core_adapter_peak ap;
    double whole = (double)r->params / (double)r->tp;
    double frac = whole > 0 ? x->s.params / whole : 1;

    if (!core_adapters_peak_state(r, &ap))
        return; /* unreachable for validated inputs: the ledger ran */
    x->frozen = true;
    x->w = ap.weights * frac / (x->zero3 ? x->dpc : 1);
    x->g = ap.grads * frac / (r->zero_stage >= 2 ? x->dpc : 1);
    x->opt = ap.optimizer * frac / (r->zero_stage >= 1 ? x->dpc : 1);
    x->la.working += core_adapters_transient(r);
    x->grads_end = x->g;
    x->grads_fwd = (pf->grads_persist || r->micro_batches > x->s.in_flight) ? x->g : 0;
    x->grads_start = x->grads_fwd;
    x->gather *= ap.stored_bpp / x->sb.compute;
    x->unsharded_grads = x->accum = x->step_temp = 0;
    x->fixed = pf->zero_bucket * x->sb.compute +
               (pf->ddp_bucket_copy && x->dpc > 1 && r->zero_stage == 0 ? x->g : 0);
    x->casts = pf->autocast_copies ? ap.casts * frac : 0;
}

/* Every moment of stage i under a framework profile. */
static void profile_stage(const struct core_resolved *r, const struct core_peak_options *o,
                          enum core_loss loss, int64_t i, struct core_peak_moment_bytes *mo,
                          double *in_flight)
{
    const struct profile *pf = &profiles[o->framework];
    struct stage_terms t = {.dpc = (double)(r->dp * r->cp), .zero3 = r->zero_stage >= 3};
    struct stage_terms *x = &t;

    x->edp =
        fmax(1, floor(x->dpc * (double)r->tp / (double)(core_etp(r) * (r->ep > 1 ? r->ep : 1))));
    stage_shape(r, i, &x->s);
    *in_flight = x->s.in_flight;
    state_bytes(r, pf, o->first_step, &x->sb);
    if (pf->korthikanti) { /* dense and MoE layers each at their own bytes */
        struct layer_acts dense;
        korthikanti_layer(r, false, &dense);
        x->la = dense;
        x->dense_saved = dense.saved;
        if (x->s.moe_layers > 0)
            korthikanti_layer(r, true, &x->la);
    } else {
        pytorch_layer(r, o->compile, &x->la);
    }
    stage_state(r, o, pf, x);
    stage_buffers(r, o, pf, loss, i, x);
    if (r->adapters.finetune != CORE_FT_FULL)
        adapter_terms(r, pf, x);
    mo[CORE_MOMENT_FORWARD_END] = (struct core_peak_moment_bytes){
        .weights = x->w,
        .grads = x->grads_fwd + x->accum,
        .optimizer = x->opt,
        .activations = x->saved,
        .logits = x->logits * x->lf,
        .buffers = x->gather + x->fixed + x->casts,
    };
    add_total(&mo[CORE_MOMENT_FORWARD_END]);
    backward_moment(o, loss, x, mo);
    optimizer_moment(r, o, pf, x, mo);
}

/* Under an uneven split a middle rank can hold more than the first (torchtitan gives the early
 * middle stages the extra layers; Megatron's first/last counts may be small): the second rank,
 * which has the most in flight and the most layers of the middle ones, replaces the first in
 * *first_mo when its peak is higher. Returns the rank that stands in stages[0]. */
static int64_t middle_stage(const struct core_resolved *r, const struct core_peak_options *o,
                            enum core_loss loss, struct core_peak_moment_bytes *first_mo,
                            double *first_in_flight)
{
    struct core_peak_moment_bytes mid[CORE_MOMENT_COUNT];
    double in_flight, a = 0, b = 0;

    if (r->split == CORE_SPLIT_EVEN || r->pp <= 2)
        return 0;
    profile_stage(r, o, loss, 1, mid, &in_flight);
    for (int k = 0; k < CORE_MOMENT_COUNT; k++) {
        a = fmax(a, first_mo[k].total);
        b = fmax(b, mid[k].total);
    }
    if (b <= a)
        return 0;
    for (int k = 0; k < CORE_MOMENT_COUNT; k++)
        first_mo[k] = mid[k];
    *first_in_flight = in_flight;
    return 1;
}

/* Generic: the ledger itself, one moment (the end of the forward) on the only/first stage. */
static bool generic_stage(const struct core_resolved *r, const struct core_peak_options *o,
                          struct core_peak_moment_bytes *mo)
{
    struct core_bytes_per_param b;
    struct core_state mp, st;
    int64_t state, layers, logits;

    if (o->ledger != NULL && !o->first_step) {
        st.weights = o->ledger->params;
        st.grads = o->ledger->grads;
        st.optimizer = o->ledger->optimizer;
        layers = o->ledger->activation_layers;
        logits = o->ledger->activation_logits;
    } else {
        core_bytes_per_param(r, &b);
        if (o->first_step)
            b.moments = 0;
        if (!core_state_model_parallel(r, &b, &mp) ||
            !core_state_shard(&mp, r->zero_stage, r->dp * r->cp, &st, &state) ||
            !core_activation_bytes(r, r->batch, r->seq_len, r->checkpointing, &layers, &logits))
            return false;
    }
    for (int k = 0; k < CORE_MOMENT_COUNT; k++)
        mo[k] = (struct core_peak_moment_bytes){0};
    mo[CORE_MOMENT_FORWARD_END] = (struct core_peak_moment_bytes){
        .weights = (double)st.weights,
        .grads = (double)st.grads,
        .optimizer = (double)st.optimizer,
        .activations = (double)layers,
        .logits = (double)logits,
    };
    add_total(&mo[CORE_MOMENT_FORWARD_END]);
    mo[CORE_MOMENT_OPTIMIZER] = (struct core_peak_moment_bytes){
        .weights = (double)st.weights,
        .grads = (double)st.grads,
        .optimizer = (double)st.optimizer,
    };
    add_total(&mo[CORE_MOMENT_OPTIMIZER]);
    mo[CORE_MOMENT_BACKWARD] = mo[CORE_MOMENT_FORWARD_END];
    return true;
}

/* peak.h: the replayed step of a frozen base under Hugging Face's Trainer (peak_replay.h). */
bool core_peak_replay(const struct core_resolved *r, const struct core_peak_options *o,
                      struct core_step_replay *out)
{
    enum core_loss loss = o->loss >= 0 && o->loss < CORE_LOSS_COUNT
                              ? (enum core_loss)o->loss
                              : profiles[CORE_FW_HF_TRAINER].loss;
    const struct core_arch *a = &r->shape.arch;
    struct stage_shape sh;
    struct core_adapter_peak ap;
    bool stream = core_adapters_fp32_stream(r);
    int e = r->precision == CORE_PREC_FP32 ? 4 : 2;
    double tokens = ceil((double)r->seq_len / (double)r->cp) * (double)r->batch;
    enum core_base_quant bq = r->adapters.base_quant;

    /* LoRA / QLoRA only: DoRA's weight-norm temporaries and the int8 or torchao layouts' kernels
     * are not in the replay. */
    if (o->framework != CORE_FW_HF_TRAINER ||
        (r->adapters.finetune != CORE_FT_LORA && r->adapters.finetune != CORE_FT_QLORA) ||
        (bq != CORE_BASEQ_NONE && bq != CORE_BASEQ_NF4_BNB && bq != CORE_BASEQ_NF4_BNB_DQ) ||
        r->checkpointing != CORE_CKPT_FULL || r->pp != 1 || o->compile || o->activation_offload ||
        !r->flash_attention || !a->gated_mlp || a->experts > 0 || r->sequence_parallel ||
        !core_adapters_peak_state(r, &ap) || !(tokens < 1e12))
        return false;
    stage_shape(r, 0, &sh);
    struct core_step_shape s = {
        .tokens = (int64_t)tokens,
        .layers = (int64_t)sh.layers,
        .hidden = a->hidden,
        .q = a->heads * a->head_dim / r->tp,
        .kv = a->kv_heads * a->head_dim / r->tp,
        .heads = a->heads / r->tp,
        .ffn = a->ffn_hidden / r->tp,
        .vocab = a->vocab / r->tp,
        .stream = stream ? 4 : e,
        .norm_out = stream ? 4 : e,
        .compute = e,
        .dequant = r->adapters.base_quant == CORE_BASEQ_NF4_BNB ||
                   r->adapters.base_quant == CORE_BASEQ_NF4_BNB_DQ,
        .gather = r->zero_stage >= 3 && r->dp * r->cp > 1 ? (int64_t)(sh.layer * ap.stored_bpp) : 0,
        /* .hold_inputs stays false: the allocated peak does not price FSDP1's end-of-backward
         * hold yet (PROVENANCE-peft.md, "the FSDP term"), and the replay follows it. */
        .loss = loss,
        .rank = r->adapters.rank,
        .wrapped = r->adapters.targets,
    };
    struct core_adapter_dtypes dt;
    core_adapters_dtypes(r, &dt);
    s.a = dt.a, s.res = dt.res, s.sum = dt.sum;
    s.cast_in = dt.cast_in, s.cast_back = dt.cast_back, s.clone = dt.clone;
    return core_step_replay(&s, out);
}

/* The statistic asked for. Reserved adds the caching allocator's slack, capped where the
 * allocator would free its cache and retry rather than fail (the capacity less the context);
 * device adds the CUDA context and, with more than one GPU, the communicators' buffers. */
static double metric_bytes(const struct core_resolved *r, const struct profile *pf, bool compiled,
                           enum core_memory_metric metric, double allocated, double stranded,
                           const double *slack)
{
    double fixed = CONTEXT_GIB * GIB + (r->gpus > 1 ? COMM_GIB * GIB : 0);
    double reserved = slack != NULL ? allocated + *slack
                                    : (allocated + stranded) *
                                          (compiled ? pf->reserved_compiled : pf->reserved_eager);
    double cap = (double)r->usable_bytes - fixed;

    if (reserved > cap)
        reserved = allocated > cap ? allocated : cap;
    switch (metric) {
    case CORE_METRIC_ALLOCATED:
    case CORE_METRIC_ACTIVE:
        return allocated;
    case CORE_METRIC_RESERVED:
        return reserved;
    case CORE_METRIC_DEVICE:
        return reserved + fixed;
    }
    return allocated;
}

void core_peak_compute(const struct core_resolved *r, const struct core_peak_options *o,
                       struct core_peak *out)
{
    enum core_framework fw =
        (unsigned)o->framework < CORE_FW_COUNT ? o->framework : CORE_FW_GENERIC;
    enum core_loss loss =
        o->loss >= 0 && o->loss < CORE_LOSS_COUNT ? (enum core_loss)o->loss : profiles[fw].loss;
    struct core_peak_options opt = *o;
    double in_flight[2] = {1, 1}, best = -1;
    int64_t first = 0; /* the rank priced in stages[0]: 0, or 1 when a middle rank is heavier */

    opt.framework = fw;
    *out = (struct core_peak){0};
    out->framework = fw;
    out->loss = loss;
    out->metric = o->metric;
    if (fw == CORE_FW_GENERIC) {
        if (!generic_stage(r, &opt, out->stages[0]))
            return;
        for (int k = 0; k < CORE_MOMENT_COUNT; k++)
            out->stages[1][k] = out->stages[0][k];
    } else {
        profile_stage(r, &opt, loss, 0, out->stages[0], &in_flight[0]);
        profile_stage(r, &opt, loss, r->pp - 1, out->stages[1], &in_flight[1]);
        first = middle_stage(r, &opt, loss, out->stages[0], &in_flight[0]);
    }
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < CORE_MOMENT_COUNT; k++)
            if (out->stages[s][k].total > best) {
                best = out->stages[s][k].total;
                out->at = (enum core_peak_moment)k;
                out->stage = s == 0 ? (int)first : (int)(r->pp - 1);
                out->in_flight = in_flight[s];
            }
    out->stage_name = r->pp == 1                ? "only"
                      : out->stage == 0         ? "first"
                      : out->stage == r->pp - 1 ? "last"
                                                : "middle";
    out->allocated = best;
    out->held = best + out->stages[out->stage == 0 ? 0 : 1][out->at].stranded;
    /* Where the step can be replayed (core_peak_replay), its slack replaces the profile's
     * factor: the segments' high-water mark less the live one, never below zero (the small
     * pool's blocks count live, not reserved). */
    struct core_step_replay rp;
    double slack = 0;
    bool replayed = (o->metric == CORE_METRIC_RESERVED || o->metric == CORE_METRIC_DEVICE) &&
                    core_peak_replay(r, &opt, &rp);
    if (replayed)
        slack = fmax(0, (double)(rp.peak_reserved - rp.peak_live));
    out->bytes = metric_bytes(r, &profiles[fw], o->compile, o->metric, best, out->held - best,
                              replayed ? &slack : NULL);
    out->gb = out->bytes / 1e9;
    out->gib = out->bytes / GIB;
}
