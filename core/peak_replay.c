/*
 * peak_replay.c - a training step's tensors through the caching allocator model (peak_replay.h
 * states what is replayed; caching_alloc.h the allocator's rules).
 *
 * The layer is the Hugging Face Llama/Mistral decoder layer (transformers 4.45-4.48,
 * modeling_llama.py / modeling_mistral.py: LlamaRMSNorm, flash_attention_2, LlamaMLP) with the
 * frozen base's linears, op by op in call order. Each op allocates its output; without autograd
 * (the checkpointed forward) a tensor is freed after its last consumer ran; with autograd (the
 * recompute) the tensors a backward node saves stay until that node has run. The backward walks
 * the ops in reverse: every op allocates its inputs' gradients (the residual add passes its
 * gradient on, no copy; a second gradient into the same tensor is added in place, or out of
 * place when that buffer is shared: autograd's InputBuffer), then releases its output's gradient
 * and the tensors it saved.
 */
#include "peak_replay.h"

#include <string.h>

#include "adapters.h"
#include "caching_alloc.h"

enum width { W_H, W_Q, W_KV, W_F, W_Q2, W_KV2 }; /* W_Q2, W_KV2: half the width */
enum dtype { D_F32, D_COMPUTE, D_STREAM, D_NORM, D_LINOUT };
/* K_UPCAST: a no-op when the stream is fp32; K_DOWNCAST: a no-op when the linears' outputs are
 * in the compute dtype already (both then stand for their input). */
enum kind { K_OP, K_ADD, K_UPCAST, K_DOWNCAST, K_LINEAR };
/* Whether autograd keeps an op's output: always; when an adapter that reads it directly (no
 * cast of its own) wraps one of its consumers; when no cast follows it (flash attention then
 * saves it, else the cast). */
enum save { S_NO, S_ALWAYS, S_LORA_INPUT, S_UNLESS_CAST };

/* The layer's ops, in call order. */
enum {
    X,
    N1_F32,
    N1_POW,
    N1_NORM,
    N1_CAST,
    N1_OUT,
    Q,
    K,
    V,
    Q_COS,
    Q_NEG,
    Q_CAT,
    Q_SIN,
    Q_ROPE,
    K_COS,
    K_NEG,
    K_CAT,
    K_SIN,
    K_ROPE,
    QC,
    KC,
    VC,
    ATTN,
    O,
    H1,
    N2_F32,
    N2_POW,
    N2_NORM,
    N2_CAST,
    N2_OUT,
    GATE,
    ACT,
    UP,
    PROD,
    DOWN,
    OUT,
    LAYER_OPS
};
#define OUT_OP OUT

struct op {
    enum width w;
    enum dtype d;
    enum kind k;
    int in[3];      /* inputs (op indices); -1: none */
    int dies;       /* without autograd: freed right after this op ran (-1: never, the output) */
    enum save save; /* with autograd: kept until its first consumer's backward ran */
    unsigned lora;  /* S_LORA_INPUT: the consumers' modules (mask of enum core_module) */
    int fan_in;     /* K_LINEAR: in_features of its weight (FAN_*) */
    enum core_module mod; /* K_LINEAR: which linear (an adapter may wrap it) */
};

#define NO                                                                                         \
    {                                                                                              \
        -1, -1, -1                                                                                 \
    }
#define IN1(a)                                                                                     \
    {                                                                                              \
        a, -1, -1                                                                                  \
    }
#define IN2(a, b)                                                                                  \
    {                                                                                              \
        a, b, -1                                                                                   \
    }
#define FAN_HIDDEN 0
#define FAN_QUERY  1
#define FAN_FFN    2
#define ATT_MODS   (CORE_MOD_BIT(CORE_MOD_Q) | CORE_MOD_BIT(CORE_MOD_K) | CORE_MOD_BIT(CORE_MOD_V))
#define MLP_MODS   (CORE_MOD_BIT(CORE_MOD_GATE) | CORE_MOD_BIT(CORE_MOD_UP))

/* The decoder layer (modeling_llama.py 4.48; Mistral's is the same). LlamaRMSNorm: x.to(fp32)
 * (a no-op on an fp32 stream), pow(2).mean (the square dies at once), x * rsqrt(var + eps) (the
 * product saves x and the small rsqrt), .to(bf16), weight * that (a frozen weight: only it is
 * saved); the locals die when the norm returns. The q, k, v projections; apply_rotary_pos_emb:
 * q * cos, rotate_half (the negated half, its cat with the other), that * sin, the sum (the
 * multiplications save only cos and sin); q and k die when both are rotated. transformers'
 * flash_attention_forward casts fp32 q, k, v to the compute dtype; flash attention saves its
 * inputs and output. The residual adds; the MLP: gate, SiLU (saves its input), up, the product
 * (saves both), down. Frozen linears save nothing (no weight gradient); an adapter saves its
 * own input (the wrapped linear's, or its cast copy). */
/* clang-format off */
static const struct op layer_ops[LAYER_OPS] = {
    [X]      = {.w = W_H,   .d = D_STREAM,  .k = K_OP,       .in = NO,               .dies = -1},
    [N1_F32] = {.w = W_H,   .d = D_F32,     .k = K_UPCAST,   .in = IN1(X),           .dies = N1_NORM, .save = S_ALWAYS},
    [N1_POW] = {.w = W_H,   .d = D_F32,     .k = K_OP,       .in = IN1(N1_F32),      .dies = N1_POW},
    [N1_NORM]= {.w = W_H,   .d = D_F32,     .k = K_OP,       .in = IN1(N1_F32),      .dies = N1_OUT},
    [N1_CAST]= {.w = W_H,   .d = D_COMPUTE, .k = K_OP,       .in = IN1(N1_NORM),     .dies = N1_OUT},
    [N1_OUT] = {.w = W_H,   .d = D_NORM,    .k = K_OP,       .in = IN1(N1_CAST),     .dies = V,       .save = S_LORA_INPUT, .lora = ATT_MODS},
    [Q]      = {.w = W_Q,   .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(N1_OUT),      .dies = K_ROPE,  .fan_in = FAN_HIDDEN, .mod = CORE_MOD_Q},
    [K]      = {.w = W_KV,  .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(N1_OUT),      .dies = K_ROPE,  .fan_in = FAN_HIDDEN, .mod = CORE_MOD_K},
    [V]      = {.w = W_KV,  .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(N1_OUT),      .dies = VC,      .save = S_UNLESS_CAST, .fan_in = FAN_HIDDEN, .mod = CORE_MOD_V},
    [Q_COS]  = {.w = W_Q,   .d = D_LINOUT,  .k = K_OP,       .in = IN1(Q),           .dies = Q_ROPE},
    [Q_NEG]  = {.w = W_Q2,  .d = D_LINOUT,  .k = K_OP,       .in = IN1(Q),           .dies = Q_CAT},
    [Q_CAT]  = {.w = W_Q,   .d = D_LINOUT,  .k = K_ADD,      .in = IN2(Q_NEG, Q),    .dies = Q_SIN},
    [Q_SIN]  = {.w = W_Q,   .d = D_LINOUT,  .k = K_OP,       .in = IN1(Q_CAT),       .dies = Q_ROPE},
    [Q_ROPE] = {.w = W_Q,   .d = D_LINOUT,  .k = K_ADD,      .in = IN2(Q_COS, Q_SIN),.dies = QC,      .save = S_UNLESS_CAST},
    [K_COS]  = {.w = W_KV,  .d = D_LINOUT,  .k = K_OP,       .in = IN1(K),           .dies = K_ROPE},
    [K_NEG]  = {.w = W_KV2, .d = D_LINOUT,  .k = K_OP,       .in = IN1(K),           .dies = K_CAT},
    [K_CAT]  = {.w = W_KV,  .d = D_LINOUT,  .k = K_ADD,      .in = IN2(K_NEG, K),    .dies = K_SIN},
    [K_SIN]  = {.w = W_KV,  .d = D_LINOUT,  .k = K_OP,       .in = IN1(K_CAT),       .dies = K_ROPE},
    [K_ROPE] = {.w = W_KV,  .d = D_LINOUT,  .k = K_ADD,      .in = IN2(K_COS, K_SIN),.dies = KC,      .save = S_UNLESS_CAST},
    [QC]     = {.w = W_Q,   .d = D_COMPUTE, .k = K_DOWNCAST, .in = IN1(Q_ROPE),      .dies = ATTN,    .save = S_ALWAYS},
    [KC]     = {.w = W_KV,  .d = D_COMPUTE, .k = K_DOWNCAST, .in = IN1(K_ROPE),      .dies = ATTN,    .save = S_ALWAYS},
    [VC]     = {.w = W_KV,  .d = D_COMPUTE, .k = K_DOWNCAST, .in = IN1(V),           .dies = ATTN,    .save = S_ALWAYS},
    [ATTN]   = {.w = W_Q,   .d = D_COMPUTE, .k = K_OP,       .in = {QC, KC, VC},     .dies = O,       .save = S_ALWAYS},
    [O]      = {.w = W_H,   .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(ATTN),        .dies = H1,      .fan_in = FAN_QUERY, .mod = CORE_MOD_O},
    [H1]     = {.w = W_H,   .d = D_STREAM,  .k = K_ADD,      .in = IN2(X, O),        .dies = OUT},
    [N2_F32] = {.w = W_H,   .d = D_F32,     .k = K_UPCAST,   .in = IN1(H1),          .dies = N2_NORM, .save = S_ALWAYS},
    [N2_POW] = {.w = W_H,   .d = D_F32,     .k = K_OP,       .in = IN1(N2_F32),      .dies = N2_POW},
    [N2_NORM]= {.w = W_H,   .d = D_F32,     .k = K_OP,       .in = IN1(N2_F32),      .dies = N2_OUT},
    [N2_CAST]= {.w = W_H,   .d = D_COMPUTE, .k = K_OP,       .in = IN1(N2_NORM),     .dies = N2_OUT},
    [N2_OUT] = {.w = W_H,   .d = D_NORM,    .k = K_OP,       .in = IN1(N2_CAST),     .dies = UP,      .save = S_LORA_INPUT, .lora = MLP_MODS},
    [GATE]   = {.w = W_F,   .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(N2_OUT),      .dies = ACT,     .save = S_ALWAYS, .fan_in = FAN_HIDDEN, .mod = CORE_MOD_GATE},
    [ACT]    = {.w = W_F,   .d = D_LINOUT,  .k = K_OP,       .in = IN1(GATE),        .dies = PROD,    .save = S_ALWAYS},
    [UP]     = {.w = W_F,   .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(N2_OUT),      .dies = PROD,    .save = S_ALWAYS, .fan_in = FAN_HIDDEN, .mod = CORE_MOD_UP},
    [PROD]   = {.w = W_F,   .d = D_LINOUT,  .k = K_OP,       .in = IN2(ACT, UP),     .dies = DOWN,    .save = S_LORA_INPUT, .lora = CORE_MOD_BIT(CORE_MOD_DOWN)},
    [DOWN]   = {.w = W_H,   .d = D_LINOUT,  .k = K_LINEAR,   .in = IN1(PROD),        .dies = OUT,     .fan_in = FAN_FFN, .mod = CORE_MOD_DOWN},
    [OUT]    = {.w = W_H,   .d = D_STREAM,  .k = K_ADD,      .in = IN2(H1, DOWN),    .dies = -1},
};
/* clang-format on */

#define MAX_LAYERS 160
#define GRADS      (2 * MAX_LAYERS + 64) /* held layer-input gradients (FSDP1) and a layer's */

struct replay {
    struct core_alloc al;
    struct core_alloc gathers; /* FSDP's unshard stream: its blocks serve only that stream */
    const struct core_step_shape *s;
    int sv[LAYER_OPS][2]; /* a wrapped linear's saved adapter tensors: lora_A's, lora_B's input */
    int gh[GRADS];        /* gradient tensors: allocator handle */
    int refs[GRADS];
};

/* bytes of a*b*c, or -1 (the allocator then refuses it and marks the overflow). */
static int64_t product(int64_t a, int64_t b, int64_t c)
{
    if (a <= 0 || b <= 0 || c <= 0 || a > ((int64_t)1 << 40) / b)
        return -1;
    a *= b;
    return a > ((int64_t)1 << 56) / c ? -1 : a * c;
}

static int64_t width(const struct core_step_shape *s, enum width w)
{
    switch (w) {
    case W_H:
        return s->hidden;
    case W_Q:
        return s->q;
    case W_KV:
        return s->kv;
    case W_F:
        return s->ffn;
    case W_Q2:
        return (s->q + 1) / 2;
    case W_KV2:
        return (s->kv + 1) / 2;
    }
    return s->hidden;
}

static int dtype_bytes(const struct core_step_shape *s, enum dtype d);

static int64_t op_bytes(const struct core_step_shape *s, const struct op *o)
{
    int64_t w = width(s, o->w);
    int d = o->d == D_F32       ? 4
            : o->d == D_COMPUTE ? s->compute
            : o->d == D_STREAM  ? s->stream
                                : s->norm_out;
    return product(s->tokens, w, d);
}

static int tensor(struct replay *p, int64_t bytes)
{
    if (bytes < 0) {
        p->al.overflow = true;
        return -1;
    }
    return core_alloc_malloc(&p->al, bytes);
}

/* A linear's dequantized weight around its matmul (bitsandbytes' MatMul4Bit, forward and
 * backward): dequantize_4bit's compute-dtype weight; under PEFT's fp32 stream its .to(A.dtype)
 * fp32 copy (the first freed) and autocast's cast back to the compute dtype while the fp32 one
 * lives (core_adapters_transient's 4 + e bytes per weight); backward's .to(grad_output.dtype) is
 * a no-op on the compute-dtype weight. d[0..1]: the handles to free after. */
static void dequant(struct replay *p, const struct op *o, bool backward, int d[2])
{
    const struct core_step_shape *s = p->s;
    int64_t fan = o->fan_in == FAN_HIDDEN ? s->hidden : o->fan_in == FAN_QUERY ? s->q : s->ffn;
    int64_t w = width(s, o->w);

    d[0] = d[1] = -1;
    if (o->k != K_LINEAR || s->dequant <= 0)
        return;
    d[0] = tensor(p, product(fan, w, s->compute));
    if (!backward && s->stream >= 4 && s->compute < 4) {
        d[1] = tensor(p, product(fan, w, 4));
        core_alloc_free(&p->al, d[0]);
        d[0] = tensor(p, product(fan, w, s->compute));
    }
}

static void dequant_free(struct replay *p, const int d[2])
{
    core_alloc_free(&p->al, d[0]);
    core_alloc_free(&p->al, d[1]);
}

/* bitsandbytes' Linear4bit returns out.to(inp_dtype): fp32 outputs under PEFT's k-bit stream. */
static bool fp32_linears(const struct core_step_shape *s)
{
    return s->dequant && s->stream >= 4 && s->compute < 4;
}

static bool aliased(const struct core_step_shape *s, int i)
{
    return (layer_ops[i].k == K_UPCAST && s->stream >= 4) ||
           (layer_ops[i].k == K_DOWNCAST && !fp32_linears(s));
}

/* The op whose tensor stands for op i (an upcast of an fp32 stream is its input). */
static int root(const struct core_step_shape *s, int i)
{
    while (i > 0 && aliased(s, i))
        i = layer_ops[i].in[0];
    return i;
}

/* The earliest consumer of op j's output that runs (the node whose backward releases it last;
 * a no-op cast's consumers are its input's). */
static int first_consumer(const struct core_step_shape *s, int j)
{
    for (int i = j + 1; i < LAYER_OPS; i++)
        for (int k = 0; k < 3; k++)
            if (!aliased(s, i) && layer_ops[i].in[k] >= 0 && root(s, layer_ops[i].in[k]) == j)
                return i;
    return -1;
}

static bool wrapped(const struct core_step_shape *s, const struct op *o)
{
    return o->k == K_LINEAR && s->rank > 0 && (s->wrapped & CORE_MOD_BIT(o->mod)) != 0;
}

static int64_t fan_width(const struct core_step_shape *s, const struct op *o)
{
    return o->fan_in == FAN_HIDDEN ? s->hidden : o->fan_in == FAN_QUERY ? s->q : s->ffn;
}

static int64_t out_width(const struct core_step_shape *s, const struct op *o)
{
    return width(s, o->w);
}

static int dtype_bytes(const struct core_step_shape *s, enum dtype d)
{
    if (d == D_LINOUT)
        return s->dequant && s->stream >= 4 ? 4 : s->compute;
    return d == D_F32 ? 4 : d == D_COMPUTE ? s->compute : d == D_STREAM ? s->stream : s->norm_out;
}

/* The bytes per element of op o's (first) input. */
static int in_bytes(const struct core_step_shape *s, const struct op *o)
{
    return dtype_bytes(s, layer_ops[root(s, o->in[0])].d);
}

/* Whether an adapter casts its input (PEFT's _cast_input_dtype, or autocast's cast for lora_A)
 * and so saves the copy instead of the input. */
static bool lora_casts(const struct core_step_shape *s, const struct op *o)
{
    return s->cast_in || in_bytes(s, o) != s->a;
}

/* Whether autograd keeps op j's output through the recompute (enum save). */
static bool is_saved(const struct core_step_shape *s, int j)
{
    const struct op *o = &layer_ops[j];

    switch (o->save) {
    case S_NO:
        return false;
    case S_ALWAYS:
        return true;
    case S_UNLESS_CAST:
        return !fp32_linears(s);
    case S_LORA_INPUT:
        for (int i = j + 1; i < LAYER_OPS; i++) {
            const struct op *c = &layer_ops[i];
            if (c->k == K_LINEAR && c->in[0] == j && wrapped(s, c) && !lora_casts(s, c))
                return true;
        }
        return false;
    }
    return false;
}

/* A wrapped linear's forward after its base output `res` (PEFT's Linear.forward; bnb.py's
 * Linear4bit): bnb's defensive clone of the base output, x cast to the adapters' dtype (kept:
 * lora_A's input), lora_A's rank-wide output (kept: lora_B's input), lora_B's output, its
 * scaling, the sum, its cast back. Without autograd the kept ones die at once. The output. */
static int adapter_forward(struct replay *p, int i, int res, bool grad)
{
    const struct core_step_shape *s = p->s;
    const struct op *o = &layer_ops[i];
    int64_t in = fan_width(s, o), out = out_width(s, o), T = s->tokens;
    int b, sc, sum;

    if (s->clone) {
        int c = tensor(p, product(T, out, s->res));
        core_alloc_free(&p->al, res);
        res = c;
    }
    p->sv[i][0] = lora_casts(s, o) ? tensor(p, product(T, in, s->a)) : -1;
    p->sv[i][1] = tensor(p, product(T, s->rank, s->a));
    b = tensor(p, product(T, out, s->a));
    sc = tensor(p, product(T, out, s->a));
    core_alloc_free(&p->al, b);
    sum = tensor(p, product(T, out, s->sum));
    core_alloc_free(&p->al, sc);
    core_alloc_free(&p->al, res);
    if (s->cast_back) {
        int c = tensor(p, product(T, out, s->res));
        core_alloc_free(&p->al, sum);
        sum = c;
    }
    if (!grad)
        for (int k = 0; k < 2; k++) {
            core_alloc_free(&p->al, p->sv[i][k]);
            p->sv[i][k] = -1;
        }
    return sum;
}

/* Op i's output: bitsandbytes' Linear4bit under the k-bit stream runs its matmul in the compute
 * dtype (autocast's copy of x, the bf16 output) and returns the fp32 cast; a wrapped linear adds
 * its adapter's tensors. */
static int run_op(struct replay *p, int i, bool grad)
{
    const struct core_step_shape *s = p->s;
    const struct op *o = &layer_ops[i];
    int d[2], xb = -1, ob = -1, out;

    if (o->k == K_LINEAR && fp32_linears(s))
        xb = tensor(p, product(s->tokens, fan_width(s, o), s->compute));
    dequant(p, o, false, d);
    if (xb >= 0) {
        ob = tensor(p, product(s->tokens, out_width(s, o), s->compute));
        core_alloc_free(&p->al, xb);
    }
    if (wrapped(s, o)) {
        int res = tensor(p, product(s->tokens, out_width(s, o), s->res));
        dequant_free(p, d);
        out = adapter_forward(p, i, res, grad);
    } else {
        out = tensor(p, op_bytes(s, o));
        dequant_free(p, d);
    }
    core_alloc_free(&p->al, ob);
    return out;
}

/* One layer's forward on input handle h[0]; with autograd, saved tensors are kept in h. */
static void layer_forward(struct replay *p, int *h, bool grad)
{
    const struct core_step_shape *s = p->s;

    for (int i = 1; i < LAYER_OPS; i++) {
        h[i] = aliased(s, i) ? -1 : run_op(p, i, grad);
        for (int j = 1; j < i + 1; j++)
            if (layer_ops[j].dies == i && h[j] >= 0 && !(grad && is_saved(s, j))) {
                core_alloc_free(&p->al, h[j]);
                h[j] = -1;
            }
    }
}

static int grad_new(struct replay *p, int64_t bytes)
{
    for (int g = 0; g < GRADS; g++)
        if (p->refs[g] == 0) {
            p->gh[g] = tensor(p, bytes);
            p->refs[g] = 1;
            return g;
        }
    p->al.overflow = true;
    return -1;
}

static void grad_release(struct replay *p, int g)
{
    if (g >= 0 && --p->refs[g] == 0)
        core_alloc_free(&p->al, p->gh[g]);
}

/* A gradient already allocated (handle) flowing into op k's tensor: it becomes that tensor's
 * gradient, or is added in place into the one there and freed. */
static void grad_take(struct replay *p, int *gr, int k, int handle)
{
    k = root(p->s, k);
    if (gr[k] >= 0) {
        core_alloc_free(&p->al, handle);
        return;
    }
    for (int g = 0; g < GRADS; g++)
        if (p->refs[g] == 0) {
            p->gh[g] = handle;
            p->refs[g] = 1;
            gr[k] = g;
            return;
        }
    p->al.overflow = true;
}

/* The gradient flowing into op k's tensor: a new one (or the residual add's own, handed on);
 * a second one is added into the first, in place when that buffer is not shared, else out of
 * place into a new buffer (autograd's InputBuffer::accumulate). */
static void grad_into(struct replay *p, int *gr, int k, int pass)
{
    const struct core_step_shape *s = p->s;
    int64_t bytes;

    k = root(s, k);
    bytes = op_bytes(s, &layer_ops[k]);
    if (gr[k] < 0) {
        if (pass >= 0) {
            gr[k] = pass;
            p->refs[pass]++;
        } else {
            gr[k] = grad_new(p, bytes);
        }
        return;
    }
    int incoming = pass >= 0 ? -1 : tensor(p, bytes); /* the new contribution */
    if (p->refs[gr[k]] > 1) {
        int sum = grad_new(p, bytes);
        grad_release(p, gr[k]);
        gr[k] = sum;
    }
    core_alloc_free(&p->al, incoming);
}

/* A wrapped linear's backward, before its base's (autograd runs the later-created adapter
 * branch first): the cast back's gradient (in the sum's dtype), the add's gradients to the base
 * output and to the branch where their dtypes differ from the sum's, the scaling's, lora_B's
 * input gradient (rank-wide), lora_A's input gradient, the cast's gradient into x's dtype,
 * added into the input's gradient; the saved adapter tensors are released as their nodes run.
 * Returns the base branch's gradient (-1: the output's own, handed on). */
static int adapter_backward(struct replay *p, int *gr, int i)
{
    const struct core_step_shape *s = p->s;
    const struct op *o = &layer_ops[i];
    int64_t in = fan_width(s, o), out = out_width(s, o), T = s->tokens;
    int g_sum = s->cast_back ? tensor(p, product(T, out, s->sum)) : -1;
    int g_res = s->sum != s->res ? tensor(p, product(T, out, s->res)) : -1;
    int g_sc = s->sum != s->a ? tensor(p, product(T, out, s->a)) : -1;
    int g_b, g_a, g_x;

    core_alloc_free(&p->al, g_sum);
    g_b = tensor(p, product(T, out, s->a));
    core_alloc_free(&p->al, g_sc);
    g_a = tensor(p, product(T, s->rank, s->a));
    core_alloc_free(&p->al, g_b);
    core_alloc_free(&p->al, p->sv[i][1]);
    g_x = tensor(p, product(T, in, s->a));
    core_alloc_free(&p->al, g_a);
    if (p->sv[i][0] >= 0) {
        int c = tensor(p, product(T, in, in_bytes(s, o)));
        core_alloc_free(&p->al, g_x);
        core_alloc_free(&p->al, p->sv[i][0]);
        g_x = c;
    }
    p->sv[i][0] = p->sv[i][1] = -1;
    grad_take(p, gr, o->in[0], g_x);
    return g_res;
}

/* flash attention's backward (csrc/flash_attn/flash_api.cpp, mha_bwd) after FlashAttnFunc's
 * empty dq, dk, dv: softmax_d (fp32, one per head and token), dq_accum (fp32, the queries'
 * width), and under GQA dk_expanded and dv_expanded at the queries' width (summed into dk, dv
 * afterwards); all freed when it returns. */
static void flash_scratch(struct replay *p)
{
    const struct core_step_shape *s = p->s;
    int h[4] = {tensor(p, product(s->tokens, s->heads, 4)), tensor(p, product(s->tokens, s->q, 4)),
                -1, -1};

    if (s->kv != s->q) {
        h[2] = tensor(p, product(s->tokens, s->q, s->compute));
        h[3] = tensor(p, product(s->tokens, s->q, s->compute));
    }
    for (int k = 0; k < 4; k++)
        core_alloc_free(&p->al, h[k]);
}

/* The layer's backward after its recompute (h from layer_forward with autograd); g_out is the
 * gradient of its output. Returns the gradient of its input. */
static int layer_backward(struct replay *p, int *h, int g_out)
{
    const struct core_step_shape *s = p->s;
    int gr[LAYER_OPS];

    for (int i = 0; i < LAYER_OPS; i++)
        gr[i] = -1;
    gr[OUT_OP] = g_out;
    for (int i = OUT_OP; i >= 1; i--) {
        const struct op *o = &layer_ops[i];
        if (aliased(s, i))
            continue;
        int g_res = wrapped(s, o) ? adapter_backward(p, gr, i) : -1;
        int d[2];
        dequant(p, o, true, d);
        for (int k = 0; k < 3 && o->in[k] >= 0; k++)
            grad_into(p, gr, o->in[k], o->k == K_ADD ? gr[i] : -1);
        dequant_free(p, d);
        if (i == ATTN)
            flash_scratch(p);
        core_alloc_free(&p->al, g_res);
        grad_release(p, gr[i]);
        gr[i] = -1;
        if (i != OUT_OP) /* the saved tensors this node held */
            for (int j = 1; j < i; j++)
                if (h[j] >= 0 && first_consumer(s, j) == i) {
                    core_alloc_free(&p->al, h[j]);
                    h[j] = -1;
                }
    }
    if (h[OUT_OP] >= 0)
        core_alloc_free(&p->al, h[OUT_OP]);
    return gr[0];
}

/* The loss's tensors, bytes per logit, in allocation order, and the order they are freed in.
 * transformers 4.46-4.48 ForCausalLMLoss (unfused_fp32_shifted): the model's bf16 logits, the
 * loss's .float() copy, the shifted .contiguous() copy, cross_entropy's log-softmax; the two
 * copies die when the loss function returns, the bf16 logits when the trainer's compute_loss
 * does. Its backward: nll_loss's gradient (zeros, scattered), log_softmax_backward's output, then
 * the slice's fp32 zeros, the cast to bf16. The unshifted fp32 loss (cross_entropy(logits.float()))
 * lacks the shifted copy and the slice's gradient. */
static void loss_replay(struct replay *p, int64_t logits, int final_out)
{
    bool shifted = p->s->loss == CORE_LOSS_UNFUSED_SHIFTED;
    int bf16 = tensor(p, product(logits, 2, 1));
    int f32 = tensor(p, product(logits, 4, 1));
    int shift = shifted ? tensor(p, product(logits, 4, 1)) : -1;
    int lsm = tensor(p, product(logits, 4, 1));
    int g1, g2, g3 = -1, g4;

    core_alloc_free(&p->al, f32);
    core_alloc_free(&p->al, shift);
    core_alloc_free(&p->al, final_out);
    core_alloc_free(&p->al, bf16);
    g1 = tensor(p, product(logits, 4, 1));
    g2 = tensor(p, product(logits, 4, 1));
    core_alloc_free(&p->al, g1);
    core_alloc_free(&p->al, lsm);
    if (shifted) {
        g3 = tensor(p, product(logits, 4, 1));
        core_alloc_free(&p->al, g2);
        g2 = g3;
    }
    g4 = tensor(p, product(logits, 2, 1));
    core_alloc_free(&p->al, g2);
    core_alloc_free(&p->al, g4); /* after the output layer's input gradient (step_replay) */
}

/* FSDP's gathered layer: the next one is gathered before the current one is freed (prefetch).
 * FSDP1 all-gathers on its unshard stream (torch/distributed/fsdp/_runtime_utils.py, _unshard
 * under state._unshard_stream), and the caching allocator serves a request only from blocks
 * of the stream it runs on (get_free_block's key carries the stream): the gathers form a pool
 * of their own, modelled as a second allocator. */
static int gather_next(struct replay *p, int current)
{
    int next = p->s->gather > 0 ? core_alloc_malloc(&p->gathers, p->s->gather) : -1;

    core_alloc_free(&p->gathers, current);
    return next;
}

static void step_replay(struct replay *p)
{
    const struct core_step_shape *s = p->s;
    int ck[MAX_LAYERS + 1], held[MAX_LAYERS], h[LAYER_OPS], g, gat = -1;
    int64_t hb = product(s->tokens, s->hidden, s->stream);

    ck[0] = tensor(p, hb); /* the embedding's output */
    for (int64_t l = 0; l < s->layers; l++) {
        gat = gather_next(p, gat);
        h[0] = ck[l];
        layer_forward(p, h, false);
        ck[l + 1] = h[OUT_OP];
    }
    /* The final norm (with autograd: its fp32 input kept) and the output layer. */
    int fin32 = s->stream >= 4 ? -1 : tensor(p, product(s->tokens, s->hidden, 4));
    int fin = tensor(p, product(s->tokens, s->hidden, s->norm_out));
    loss_replay(p, product(s->tokens, s->vocab, 1), fin);
    g = grad_new(p, product(s->tokens, s->hidden, s->norm_out)); /* the output layer's dX */
    int gx = grad_new(p, hb);                                    /* the final norm's */
    grad_release(p, g);
    core_alloc_free(&p->al, fin32);
    core_alloc_free(&p->al, ck[s->layers]);
    g = gx;
    for (int64_t l = s->layers - 1; l >= 0; l--) {
        gat = gather_next(p, gat);
        h[0] = ck[l];
        layer_forward(p, h, true);
        int gin = layer_backward(p, h, g);
        held[l] = gin;
        if (s->hold_inputs && gin >= 0)
            p->refs[gin]++;
        else
            core_alloc_free(&p->al, ck[l]); /* the checkpoint's saved input */
        g = gin;
    }
    grad_release(p, g);
    if (s->hold_inputs) /* FSDP1's post-backward final callback */
        for (int64_t l = 0; l < s->layers; l++) {
            grad_release(p, held[l]);
            core_alloc_free(&p->al, ck[l]);
        }
    core_alloc_free(&p->gathers, gat);
}

bool core_step_replay(const struct core_step_shape *s, struct core_step_replay *out)
{
    struct replay p; /* about 11 KB: the allocator model's fixed arrays */
    int64_t last = -1;

    memset(out, 0, sizeof *out);
    if (s->layers < 1 || s->layers > MAX_LAYERS ||
        (s->loss != CORE_LOSS_UNFUSED_SHIFTED && s->loss != CORE_LOSS_UNFUSED_FP32))
        return false;
    memset(&p, 0, sizeof p);
    core_alloc_init(&p.al);
    core_alloc_init(&p.gathers);
    for (int i = 0; i < LAYER_OPS; i++)
        p.sv[i][0] = p.sv[i][1] = -1;
    p.s = s;
    for (int k = 0; k < CORE_REPLAY_STEPS; k++) {
        step_replay(&p);
        out->steps = k + 1;
        if (p.al.overflow || p.gathers.overflow)
            return false;
        if (p.al.peak_reserved + p.gathers.peak_reserved == last)
            break;
        last = p.al.peak_reserved + p.gathers.peak_reserved;
    }
    /* Segments are never released, so the two pools' high-water marks add; their live peaks
     * are added too (the gathers' live bytes are two layers throughout). */
    out->peak_reserved = p.al.peak_reserved + p.gathers.peak_reserved;
    out->peak_live = p.al.peak_live + p.gathers.peak_live;
    return true;
}
