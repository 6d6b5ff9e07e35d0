/*
 * bytes.c - bytes per parameter of the training state (lesson section 3): the optimizer's
 * moments by optimizer, and the weights, master copy and gradients by precision. A leaf: the
 * ledger (memory.c), the adapters (adapters.c), the peaks and the planner all read it.
 */
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

int core_moment_bytes(enum core_optimizer optimizer)
{
    unsigned o = (unsigned)optimizer;

    return o < sizeof moment_bytes / sizeof moment_bytes[0] ? moment_bytes[o] : 8;
}

void core_bytes_per_param(const struct core_resolved *r, struct core_bytes_per_param *b)
{
    bool fp32 = r->precision == CORE_PREC_FP32;

    /* fp8 keeps the bf16 ledger: the fp8 copies are transient casts. */
    b->weights = fp32 ? 4 : 2;
    b->master = r->master_weights ? 4 : 0;
    b->grads = r->grad_precision == CORE_PREC_FP32 ? 4 : 2;
    b->moments = core_moment_bytes(r->optimizer);
    /* optimizer_state_dtype bf16: two-byte moments (8-bit and factored states keep theirs). */
    if (r->adapters.optimizer_state_dtype == CORE_STATE_BF16 && r->optimizer != CORE_OPT_ADAMW_8BIT)
        b->moments /= 2;
    b->total = b->weights + b->master + b->moments + b->grads;
}
