/*
 * flops.c - training FLOPs (lesson section 1; PaLM Appendix B).
 *
 * Every weight matrix costs 2 FLOPs per parameter per token forward and 4 backward, so the
 * dense part is 6 N_active per token. Attention's score and value matmuls are not weights and
 * add 12 L T (a h_d) per token (a third forward, two thirds backward); causal masking halves
 * them if the caller counts that way, and a sliding-window layer counts the w keys it attends
 * instead of T. Recompute under checkpointing is reported separately so
 * that "model" FLOPs (what MFU counts) and "hardware" FLOPs (what the GPU executes) differ.
 */
#include "internal.h"

/* 12 x width x the keys each layer's queries attend, summed over the layers: L T without
 * windows (L T / 2 causal); a sliding-window layer attends min(t, w) keys, not t (layers.c). */
static double attention_per_token(const struct core_resolved *r)
{
    const struct core_arch *a = &r->shape.arch;
    double width = core_arch_attention_width(a); /* a h_d; MLA: a (h_qk + h_v) / 2 */
    bool causal = r->attention_flops == CORE_ATTN_CAUSAL;

    return 12.0 * core_arch_attended_keys(a, r->seq_len, causal) * width;
}

static double recompute_per_token(const struct core_resolved *r, double dense_fwd, double att)
{
    switch (r->checkpointing) {
    case CORE_CKPT_SELECTIVE:
        return att / 3.0; /* only the attention core's forward is re-run */
    case CORE_CKPT_FULL:
        return dense_fwd + att / 3.0; /* the whole forward is re-run */
    case CORE_CKPT_NONE:
    default:
        return 0.0;
    }
}

/* Fine-tuning with adapters: the frozen base's backward computes only input gradients (2 N
 * instead of 4 N per token); the adapters' A trainable weights cost 2 A forward and 4 A backward.
 * six_nd stays 6 N D (the convention); model and hardware count what runs. */
static void adapter_flops(const struct core_resolved *r, double att, struct core_flops *f)
{
    struct core_adapter_counts c;
    double n = (double)r->active_params, a, d = r->tokens;

    if (!core_adapters_count(r, &c))
        return;
    a = (double)c.trainable;
    f->per_token.forward = 2.0 * n + 2.0 * a + att / 3.0;
    f->per_token.backward = 2.0 * n + 4.0 * a + 2.0 * att / 3.0;
    if (r->checkpointing == CORE_CKPT_FULL)
        f->per_token.recompute = 2.0 * n + 2.0 * a + att / 3.0;
    f->model = d * (f->per_token.forward + f->per_token.backward);
    f->hardware = f->model + d * f->per_token.recompute;
    f->attention_fraction = att / (4.0 * n + 6.0 * a + att);
}

void core_flops_compute(const struct core_resolved *r, struct core_flops *f)
{
    double n = (double)r->active_params, d = r->tokens;
    double att = attention_per_token(r);

    f->per_token.attention = att;
    f->per_token.forward = 2.0 * n + att / 3.0;
    f->per_token.backward = 4.0 * n + 2.0 * att / 3.0;
    f->per_token.recompute = recompute_per_token(r, 2.0 * n, att);
    f->six_nd = 6.0 * n * d;
    f->model = d * (6.0 * n + att);
    f->hardware = f->model + d * f->per_token.recompute;
    f->attention_fraction = att / (6.0 * n + att);
    if (r->adapters.finetune != CORE_FT_FULL)
        adapter_flops(r, att, f);
}

double core_flops_per_token(const struct core_resolved *r, const struct core_flops *f)
{
    double n = (double)r->active_params;

    if (r->adapters.finetune != CORE_FT_FULL && r->count != CORE_COUNT_SIX_ND)
        return f->per_token.forward + f->per_token.backward +
               (r->count == CORE_COUNT_HARDWARE ? f->per_token.recompute : 0.0);
    switch (r->count) {
    case CORE_COUNT_MODEL:
        return 6.0 * n + f->per_token.attention;
    case CORE_COUNT_HARDWARE:
        return 6.0 * n + f->per_token.attention + f->per_token.recompute;
    case CORE_COUNT_SIX_ND:
    default:
        return 6.0 * n;
    }
}

double core_flops_counted(const struct core_flops *f, enum core_count count)
{
    switch (count) {
    case CORE_COUNT_MODEL:
        return f->model;
    case CORE_COUNT_HARDWARE:
        return f->hardware;
    case CORE_COUNT_SIX_ND:
    default:
        return f->six_nd;
    }
}
