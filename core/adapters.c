/*
 * adapters.c - fine-tuning with adapters: LoRA, QLoRA, DoRA (adapters.h; docs/model.md,
 * "Fine-tuning with adapters").
 *
 * What is read from which framework file:
 * - torchtune torchtune/modules/peft/lora.py (LoRALinear): the base weight frozen in the model
 *   dtype, or an NF4Tensor when quantize_base (to_nf4); lora_a (in -> r) and lora_b (r -> out)
 *   nn.Linear without bias in the model dtype; forward saves x for lora_a's weight gradient and
 *   lora_a's r-wide output for lora_b's. torchtune/modules/peft/dora.py (DoRALinear) adds a
 *   magnitude vector of out elements and keeps the base output and the adapter output for the
 *   magnitude's gradient. torchtune/models/llama3/_component_builders.py (lora_llama3): every
 *   decoder linear not wrapped becomes a FrozenNF4Linear under quantize_base; embeddings, norms
 *   and the output projection stay in the model dtype.
 * - torchao torchao/dtypes/nf4tensor.py (NF4Tensor.from_tensor, double_quantize_scalers): block
 *   64, two 4-bit codes per byte, one int8 scaler per block, one quantization factor in the
 *   input dtype (bf16) per 256 scalers, and the scalers' mean.
 * - bitsandbytes bitsandbytes/functional.py (quantize_4bit, QuantState): block 64, packed
 *   codes, one fp32 absmax per block; compress_statistics (double quantization) stores the absmax
 *   as uint8 codes of a second blockwise quantization with blocks of 256 (one fp32 absmax each)
 *   and its fp32 offset. bitsandbytes/nn/modules.py Int8Params: int8 weights and one fp32 scale
 *   per output row (SCB).
 * - PEFT src/peft/tuners/lora/layer.py (Linear): lora_A / lora_B created in fp32 unless
 *   autocast_adapter_dtype=False; forward casts x to the adapter dtype (_cast_input_dtype), and
 *   under autocast each adapter then runs on its own bf16 copy of its input. PEFT
 *   src/peft/utils/other.py (prepare_model_for_kbit_training): every parameter that is not
 *   4-bit (embeddings, norms, the output layer) is cast to fp32.
 * Pure like the rest of core; overflow-checked where a count could exceed int64.
 */
#include <math.h>
#include <string.h>

#include "adapters.h"
#include "internal.h"
#include "peak.h"
#include "perf.h"
#include "quant.h"

const char *const core_finetune_names[CORE_FT_COUNT] = {"full", "lora", "qlora", "dora"};
const char *const core_base_quant_names[CORE_BASEQ_COUNT] = {"none",    "nf4",        "nf4_torchao",
                                                             "nf4_bnb", "nf4_bnb_dq", "int8"};
const char *const core_state_dtype_names[2] = {"fp32", "bf16"};
const char *const core_module_names[CORE_MOD_COUNT] = {
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"};

/* Other spellings: PEFT's alias and torchtune's module names (lora_attn_modules takes q_proj,
 * k_proj, v_proj, output_proj; apply_lora_to_mlp wraps w1, w2, w3; apply_lora_to_output the
 * output projection `output`). */
static const struct {
    const char *name;
    unsigned mask;
} aliases[] = {
    {"all-linear", CORE_MOD_ALL_LINEAR},
    {"output_proj", CORE_MOD_BIT(CORE_MOD_O)},
    {"output", CORE_MOD_BIT(CORE_MOD_LM_HEAD)},
    {"w1", CORE_MOD_BIT(CORE_MOD_GATE)},
    {"w3", CORE_MOD_BIT(CORE_MOD_UP)},
    {"w2", CORE_MOD_BIT(CORE_MOD_DOWN)},
    {"mlp", CORE_MOD_BIT(CORE_MOD_GATE) | CORE_MOD_BIT(CORE_MOD_UP) | CORE_MOD_BIT(CORE_MOD_DOWN)},
};

static bool same(const char *s, uint64_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, (size_t)len) == 0;
}

unsigned core_module_mask(const char *name, uint64_t len)
{
    for (int i = 0; i < CORE_MOD_COUNT; i++)
        if (same(name, len, core_module_names[i]))
            return CORE_MOD_BIT(i);
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (same(name, len, aliases[i].name))
            return aliases[i].mask;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Quantized layouts (docs/model.md, "Quantized base")
 * ------------------------------------------------------------------------------------------- */

/* The layouts themselves are core/quant.c's table (one derivation, shared with serving's
 * quantized formats): torchao's NF4Tensor, bitsandbytes' NF4 with and without double
 * quantization, and an int8 row-wise layout. What the training objects add per tensor is
 * counted here, from the same files: torchao keeps the scalers' mean (nf4tensor.py,
 * double_quantize_scalers: scalers - mean, one value in the input dtype) and its 16-entry NF4
 * table in the input dtype (bf16: 2 + 32 bytes); bitsandbytes' double quantization keeps the
 * fp32 offset it subtracted from the absmax before quantizing it (functional.py quantize_4bit,
 * compress_statistics: 4 bytes). */
static enum core_quant layout_of(enum core_base_quant q, int64_t *per_tensor)
{
    *per_tensor = 0;
    switch (q) {
    case CORE_BASEQ_NONE:
        return CORE_QUANT_NONE;
    case CORE_BASEQ_NF4: /* resolved away; priced as torchao's */
    case CORE_BASEQ_NF4_TORCHAO:
        *per_tensor = 2 + 2 * 16;
        return CORE_QUANT_TORCHAO_NF4;
    case CORE_BASEQ_NF4_BNB:
        return CORE_QUANT_BNB_NF4;
    case CORE_BASEQ_NF4_BNB_DQ:
        *per_tensor = 4;
        return CORE_QUANT_BNB_NF4_DQ;
    case CORE_BASEQ_INT8:
        return CORE_QUANT_INT8;
    }
    return CORE_QUANT_NONE;
}

/* Bytes of one tensor: quant.c's layout formula, the per-tensor objects above. bitsandbytes'
 * Int8Params (nn/modules.py) keeps one fp32 scale per output row (SCB): quant.c's int8 layout
 * with its block set to this tensor's row length, so the rows are exact. */
int64_t core_base_quant_tensor_bytes(enum core_base_quant q, int64_t n, int64_t out_rows)
{
    int64_t extra, b;
    enum core_quant f = layout_of(q, &extra);
    struct core_quant_layout l;

    if (f == CORE_QUANT_NONE || n <= 0)
        return 0;
    l = core_quant_formats[f].linear;
    if (f == CORE_QUANT_INT8 && out_rows > 0)
        l.block = ceil_div(n, out_rows);
    b = core_quant_bytes(&l, n, 0);
    return b < 0 ? b : b + extra;
}

/* The limit over a large tensor: one 4096 x 4096 weight (whole 64 x 256 groups and 4096-wide
 * rows), without the per-tensor objects. */
double core_base_quant_bytes_per_weight(enum core_base_quant q)
{
    const int64_t n = INT64_C(16777216);
    int64_t extra;
    enum core_quant f = layout_of(q, &extra);
    struct core_quant_layout l;

    if (f == CORE_QUANT_NONE)
        return 0;
    l = core_quant_formats[f].linear;
    if (f == CORE_QUANT_INT8)
        l.block = 4096;
    return core_quant_bits_per_weight(&l, n, 0) / 8.0;
}

/* ---------------------------------------------------------------------------------------------
 * Resolution and checks
 * ------------------------------------------------------------------------------------------- */

enum core_status core_adapters_resolve(const struct core_input *in, struct core_resolved *r,
                                       struct core_problems *p)
{
    struct core_adapters_cfg *c = &r->adapters;
    const struct core_arch *a = &r->shape.arch;
    int before = p->count;

    memset(c, 0, sizeof *c);
    c->finetune = in->finetune;
    c->rank = in->lora_rank;
    c->alpha = in->lora_alpha;
    c->targets = in->lora_targets > 0 ? (unsigned)in->lora_targets : CORE_MOD_DEFAULT;
    c->optimizer_state_dtype = in->optimizer_state_dtype;
    c->torchtune = in->framework == CORE_FW_TORCHTUNE;
    c->base_quant = in->base_quant >= 0             ? (enum core_base_quant)in->base_quant
                    : in->finetune == CORE_FT_QLORA ? CORE_BASEQ_NF4
                                                    : CORE_BASEQ_NONE;
    if (c->base_quant == CORE_BASEQ_NF4)
        c->base_quant = c->torchtune ? CORE_BASEQ_NF4_TORCHAO : CORE_BASEQ_NF4_BNB_DQ;
    if (c->finetune == CORE_FT_FULL) {
        if (in->base_quant > CORE_BASEQ_NONE)
            core_problem_add(p, "base_quant",
                             "a quantized base is frozen: it needs finetune lora, qlora or dora");
        return p->count > before ? CORE_EINVAL : CORE_OK;
    }
    if (c->finetune == CORE_FT_QLORA && c->base_quant == CORE_BASEQ_NONE)
        core_problem_add(p, "base_quant",
                         "finetune qlora trains LoRA on a quantized base; "
                         "use finetune lora for base_quant none");
    /* bitsandbytes' Linear4bit / Linear8bitLt and torchao's NF4Tensor compute in the
     * activations' 16- or 32-bit dtype (bnb_4bit_compute_dtype; NF4Tensor dequantizes to bf16):
     * no frozen quantized base runs fp8 GEMMs. */
    if (c->base_quant != CORE_BASEQ_NONE && r->precision == CORE_PREC_FP8)
        core_problem_add(p, "precision",
                         "a quantized base computes in a 16- or 32-bit dtype (bitsandbytes' "
                         "compute dtype, torchao's NF4Tensor: bf16); use bf16, fp16 or fp32");
    if (a->kv_lora_rank > 0)
        core_problem_add(p, "finetune",
                         "adapters on multi-latent attention (q_a_proj, "
                         "kv_a_proj...) are not modelled");
    if (!a->gated_mlp && (c->targets & CORE_MOD_BIT(CORE_MOD_GATE)))
        core_problem_add(p, "lora_targets",
                         "gate_proj: this MLP is not gated (up_proj and "
                         "down_proj only)");
    if (r->ep > 1)
        core_problem_add(p, "ep", "adapters with expert parallelism are not modelled");
    return p->count > before ? CORE_EINVAL : CORE_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Counts: the decoder's linears, the adapters and the frozen base
 * ------------------------------------------------------------------------------------------- */

struct linear {
    enum core_module mod;
    int64_t in, out, count; /* count: instances in the whole model */
};

/* Every linear of the model: per layer q, k, v, o, the MLP (per expert in MoE layers) and the
 * output layer. Returns how many rows it filled (at most 8). */
static int model_linears(const struct core_arch *a, struct linear *l)
{
    int64_t q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim, L = a->layers;
    int64_t moe = core_arch_moe_layers(a), dense = L - moe;
    int64_t fe = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    int64_t experts = a->experts + a->shared_experts, n = 0;
    /* A MoE model's MLP rows: every expert's width is fe (shared experts' width may differ;
     * priced at fe, an approximation noted in docs/model.md). */
    int64_t f = moe > 0 ? fe : a->ffn_hidden, mlp = moe > 0 ? dense + moe * experts : L;

    l[n++] = (struct linear){CORE_MOD_Q, a->hidden, q, L};
    l[n++] = (struct linear){CORE_MOD_K, a->hidden, kv, L};
    l[n++] = (struct linear){CORE_MOD_V, a->hidden, kv, L};
    l[n++] = (struct linear){CORE_MOD_O, q, a->hidden, L};
    if (a->gated_mlp)
        l[n++] = (struct linear){CORE_MOD_GATE, a->hidden, f, mlp};
    l[n++] = (struct linear){CORE_MOD_UP, a->hidden, f, mlp};
    l[n++] = (struct linear){CORE_MOD_DOWN, f, a->hidden, mlp};
    l[n++] = (struct linear){CORE_MOD_LM_HEAD, a->hidden, a->vocab, 1};
    return (int)n;
}

/* Bytes per element of the compute dtype. */
static int64_t compute_bytes(const struct core_resolved *r)
{
    return r->precision == CORE_PREC_FP32 ? 4 : 2;
}

/* The adapters' dtype: torchtune's the model's, PEFT's fp32. */
static int64_t adapter_bytes(const struct core_resolved *r)
{
    return r->adapters.torchtune ? compute_bytes(r) : 4;
}

/* Moment bytes per adapter parameter: the optimizer's fp32 table (memory.c), halved for bf16
 * states; the framework's rule otherwise: PyTorch optimizers create states like the parameter
 * (bf16 adapters get bf16 moments), the ledger and PEFT's fp32 adapters keep fp32. */
static int64_t adapter_moment_bytes(const struct core_resolved *r)
{
    struct core_bytes_per_param b;
    int64_t m;

    core_bytes_per_param(r, &b);
    m = b.moments;
    if (r->optimizer == CORE_OPT_ADAMW_8BIT || r->optimizer == CORE_OPT_ADAFACTOR)
        return m;
    if (r->adapters.optimizer_state_dtype >= 0) /* given: core_bytes_per_param applied it */
        return m;
    return m * adapter_bytes(r) / 4;
}

bool core_adapters_count(const struct core_resolved *r, struct core_adapter_counts *c)
{
    const struct core_adapters_cfg *cfg = &r->adapters;
    struct linear l[8];
    int n = model_linears(&r->shape.arch, l);
    int64_t rank = cfg->rank, plain_bytes = compute_bytes(r);
    bool quant = cfg->base_quant != CORE_BASEQ_NONE;

    memset(c, 0, sizeof *c);
    for (int i = 0; i < n; i++) {
        int64_t w, one, per;
        bool target = (cfg->targets & CORE_MOD_BIT(l[i].mod)) != 0;

        if (!ck_mul(l[i].in, l[i].out, &w))
            return false;
        if (target) { /* r (in + out), and DoRA's magnitude of out */
            per = rank * (l[i].in + l[i].out) + (cfg->finetune == CORE_FT_DORA ? l[i].out : 0);
            if (!ck_acc_mul(&c->trainable, per, l[i].count) || !ck_add(c->wrapped, 1, &c->wrapped))
                return false;
        }
        if (l[i].mod == CORE_MOD_LM_HEAD)
            continue; /* neither framework quantizes the output layer */
        if (!ck_acc_mul(&c->linear_weights, w, l[i].count))
            return false;
        if (w > c->largest)
            c->largest = w;
        one = core_base_quant_tensor_bytes(cfg->base_quant, w, l[i].out);
        if (quant && (one < 0 || !ck_acc_mul(&c->quantized_bytes, one, l[i].count)))
            return false;
    }
    /* Everything that is not a decoder linear: embeddings, output layer, norms, biases. */
    c->plain = r->params > c->linear_weights ? r->params - c->linear_weights : 0;
    if (!quant) {
        c->plain = r->params;
        c->linear_weights = 0;
    } else if (!cfg->torchtune) {
        plain_bytes = 4; /* prepare_model_for_kbit_training: every non-4-bit tensor in fp32 */
    }
    c->plain_bytes = plain_bytes;
    c->adapter_bytes = adapter_bytes(r);
    c->moment_bytes = adapter_moment_bytes(r);
    return ck_acc_mul(&c->frozen, c->plain, plain_bytes) &&
           ck_add(c->frozen, c->quantized_bytes, &c->frozen);
}

/* Model-parallel pieces (before ZeRO) in memory.c's struct: the frozen base and the adapters
 * are weights, the adapters alone have gradients and optimizer state (no master copy: PEFT's
 * adapters are fp32, torchtune's train in the model dtype). */
bool core_adapters_state(const struct core_resolved *r, struct core_state *mp,
                         struct core_adapter_counts *c)
{
    int64_t ways = r->tp * r->pp, aw, weights;

    memset(mp, 0, sizeof *mp);
    mp->ep = 1;
    mp->off_weights = r->offload_params == CORE_OFFLOAD_CPU;
    mp->off_optimizer = r->offload_optimizer == CORE_OFFLOAD_CPU;
    if (!core_adapters_count(r, c) || !ck_mul(c->trainable, c->adapter_bytes, &aw) ||
        !ck_add(c->frozen, aw, &weights) || !ck_mul(c->trainable, c->moment_bytes, &mp->optimizer))
        return false;
    mp->weights = ceil_div(weights, ways);
    mp->grads = ceil_div(aw, ways);
    mp->optimizer = ceil_div(mp->optimizer, ways);
    return true;
}

/* memory.adapters: the adapters' share of the sharded ledger (ZeRO as memory.c's table). */
void core_adapters_ledger(const struct core_resolved *r, const struct core_adapter_counts *c,
                          struct core_memory *m)
{
    int64_t ways = r->tp * r->pp, dp = r->dp * r->cp, stage = r->zero_stage;
    int64_t aw = ceil_div(c->trainable * c->adapter_bytes, ways);
    int64_t frozen = ceil_div(c->frozen, ways);

    m->adapters.trainable = c->trainable;
    m->adapters.params = stage >= 3 ? ceil_div(aw, dp) : aw;
    m->adapters.grads = m->grads;
    m->adapters.optimizer = m->optimizer;
    m->adapters.frozen = stage >= 3 ? ceil_div(frozen, dp) : frozen;
    if (r->offload_params == CORE_OFFLOAD_CPU)
        m->adapters.params = m->adapters.frozen = 0;
}

/* ---------------------------------------------------------------------------------------------
 * Activations with a frozen base (bytes per token of one layer, 2-byte activations)
 * ------------------------------------------------------------------------------------------- */

static bool has(const struct core_resolved *r, enum core_module m)
{
    return (r->adapters.targets & CORE_MOD_BIT(m)) != 0;
}

/* What the wrapped linears add to one layer: the r-wide intermediate each lora_b saves, DoRA's
 * base and adapter outputs (2 x out), and, when the adapters run in another dtype than the
 * model (PEFT's fp32 adapters under autocast), each adapter's own compute-dtype copy of its
 * input (else the input is the tensor the layer already keeps: counted by the caller). Widths
 * per GPU (t splits every projection). */
static double wrapped_bytes(const struct core_resolved *r, bool own_copies)
{
    const struct core_arch *a = &r->shape.arch;
    double t = (double)r->tp, d = (double)a->hidden, q = (double)(a->heads * a->head_dim) / t;
    double kv = (double)(a->kv_heads * a->head_dim) / t, f = (double)a->ffn_hidden / t;
    double ins[CORE_MOD_LM_HEAD] = {d, d, d, q, d, d, f};
    double outs[CORE_MOD_LM_HEAD] = {q, kv, kv, d, f, f, d};
    double sum = 0, rank = (double)r->adapters.rank;
    /* An adapter's own copy runs in the compute dtype under autocast (mixed precision: the
     * resolved master_weights), else in the adapters' fp32 (pure bf16 weights, no autocast:
     * lora_A then saves the fp32 cast of its input and its fp32 output). */
    double e = own_copies && !r->master_weights ? (double)adapter_bytes(r) : 2.0;

    for (int m = 0; m < CORE_MOD_LM_HEAD; m++) {
        if (!has(r, (enum core_module)m) || (m == CORE_MOD_GATE && !a->gated_mlp))
            continue;
        sum += e * rank;
        if (r->adapters.finetune == CORE_FT_DORA)
            sum += 4 * outs[m];
        if (own_copies)
            sum += e * ins[m];
    }
    return sum;
}

/* The frozen base's change to a PyTorch layer's saved bytes per token (peak.c's inventory): the
 * inputs only a weight gradient needed are not saved unless an adapter reads them: the
 * attention norm's output (q, k, v), the output projection's input (o), the MLP norm's output
 * (gate, up) and the down projection's input (down); the adapters add theirs. Under PEFT with
 * fp32 adapters every adapter keeps its own copy, so no shared input is kept for them. */
double core_adapters_pytorch_delta(const struct core_resolved *r)
{
    const struct core_arch *a = &r->shape.arch;
    double t = (double)r->tp, d = (double)a->hidden, q = (double)(a->heads * a->head_dim) / t;
    double f = (double)a->ffn_hidden / t;
    bool own = adapter_bytes(r) != compute_bytes(r), attn_in, mlp_in;
    double delta = 0;

    attn_in = !own && (has(r, CORE_MOD_Q) || has(r, CORE_MOD_K) || has(r, CORE_MOD_V));
    mlp_in = !own && (has(r, CORE_MOD_GATE) || has(r, CORE_MOD_UP));
    delta -= attn_in ? 0 : 2 * d;
    delta -= mlp_in ? 0 : 2 * d;
    delta -= (!own && has(r, CORE_MOD_O)) ? 0 : 2 * q;
    delta -= (!own && has(r, CORE_MOD_DOWN)) ? 0 : 2 * f;
    return delta + wrapped_bytes(r, own);
}

/* The same for Korthikanti's table (the generic ledger, memory.c): its QKV input (2d) and MLP
 * input (2d) are in the replicated part, the output projection's input (2d) and the second MLP
 * GEMM's input (8d: a 4d-wide tensor) in the split part. */
bool core_adapters_layer_bytes(const struct core_resolved *r, int64_t *rep, int64_t *split)
{
    int64_t d = r->shape.arch.hidden;
    double add = wrapped_bytes(r, false) * (double)r->tp; /* whole-layer bytes, split below */

    if (r->adapters.finetune == CORE_FT_FULL)
        return true;
    if (!has(r, CORE_MOD_Q) && !has(r, CORE_MOD_K) && !has(r, CORE_MOD_V))
        *rep -= 2 * d;
    if (!has(r, CORE_MOD_GATE) && !has(r, CORE_MOD_UP))
        *rep -= 2 * d;
    if (!has(r, CORE_MOD_O))
        *split -= 2 * d;
    if (!has(r, CORE_MOD_DOWN))
        *split -= 8 * d;
    if (!(add < 9e15))
        return false;
    return ck_add(*split, (int64_t)ceil(add), split);
}

/* The transient full-size weight a layer materializes in the compute dtype: the dequantized
 * NF4 / int8 weight (torchao linear_nf4, bitsandbytes MatMul4Bit dequantize it forward and
 * backward) and DoRA's adapted weight for its norm; the largest linear's. 0 for plain LoRA.
 * Under PEFT's fp32 stream, MatMul4Bit.forward's .to(A.dtype) turns the dequantized weight into
 * an fp32 copy (the e-byte one freed) and autocast's F.linear casts that back to e bytes while
 * the fp32 copy lives: 4 + e bytes per weight. */
double core_adapters_transient(const struct core_resolved *r)
{
    struct core_adapter_counts c;

    if (r->adapters.finetune == CORE_FT_FULL ||
        (r->adapters.base_quant == CORE_BASEQ_NONE && r->adapters.finetune != CORE_FT_DORA) ||
        !core_adapters_count(r, &c))
        return 0;
    double e = (double)compute_bytes(r);

    return (double)c.largest * (core_adapters_fp32_stream(r) ? 4.0 + e : e) / (double)r->tp;
}

/* PEFT's k-bit preparation makes the embeddings and norms fp32, so the residual stream (and
 * every checkpointed layer input) is fp32: twice the 2-byte figure. */
bool core_adapters_fp32_stream(const struct core_resolved *r)
{
    return r->adapters.finetune != CORE_FT_FULL && r->adapters.base_quant != CORE_BASEQ_NONE &&
           !r->adapters.torchtune && r->precision != CORE_PREC_FP32;
}

/* The frozen base and the adapters as a framework profile holds them, per GPU after tensor
 * parallelism, before the pipeline split and ZeRO (peak.c applies both). */
bool core_adapters_peak_state(const struct core_resolved *r, struct core_adapter_peak *o)
{
    struct core_adapter_counts c;
    double t = (double)r->tp, e = (double)compute_bytes(r);
    const struct core_arch *a = &r->shape.arch;

    memset(o, 0, sizeof *o);
    if (!core_adapters_count(r, &c))
        return false;
    o->adapter_params = (double)c.trainable / t;
    o->weights = ((double)c.frozen + (double)c.trainable * (double)c.adapter_bytes) / t;
    o->grads = (double)c.trainable * (double)c.adapter_bytes / t;
    o->optimizer = (double)c.trainable * (double)c.moment_bytes / t;
    o->adapter_bytes = (double)c.adapter_bytes;
    /* FSDP gathers the frozen layers in their stored layout (FSDP2 all-gathers NF4Tensor's
     * packed data; bitsandbytes' quant_storage): the base's bytes per parameter. */
    o->stored_bpp = r->params > 0 ? (double)c.frozen / (double)r->params : e;
    /* Autocast's compute-dtype copies: PEFT's fp32 adapters, and under k-bit preparation the
     * fp32 output layer the logits GEMM casts (the embedding lookup is not autocast). */
    if ((double)c.adapter_bytes > e)
        o->casts += (double)c.trainable * e / t;
    if (core_adapters_fp32_stream(r) && !a->tied_embeddings)
        o->casts += (double)a->vocab * (double)a->hidden * e / t;
    return true;
}

/* The dtypes an adapter's element-wise kernels run in (bytes per element): x the wrapped
 * linear's input, a the adapter's GEMMs, res the base layer's output, sum the adapter's result
 * after the add (PyTorch's type promotion: the wider of res and a). torchtune (lora.py
 * LoRALinear.forward) runs everything in the model dtype. PEFT (tuners/lora/layer.py
 * Linear.forward) without autocast casts x to the fp32 adapters (_cast_input_dtype), adds in
 * fp32 and casts the sum back to the base's dtype; under autocast the adapters' GEMMs run in the
 * compute dtype and no cast back is made. Its bnb Linear4bit (tuners/lora/bnb.py) clones the base
 * output (the "defensive clone") and, with PEFT's fp32 stream, sees an fp32 x and an fp32 base
 * output (bitsandbytes nn/modules.py Linear4bit.forward casts the matmul back to x's dtype). */
struct elt_dtypes {
    double x, a, res, sum;
    bool cast_in, cast_back, clone;
};

static void adapter_dtypes(const struct core_resolved *r, struct elt_dtypes *t)
{
    double e = (double)compute_bytes(r);
    bool autocast = r->master_weights; /* mixed precision: bf16 autocast over fp32 weights */
    bool stream = core_adapters_fp32_stream(r);

    memset(t, 0, sizeof *t);
    t->x = stream ? 4.0 : e;
    t->a = r->adapters.torchtune || autocast ? e : (double)adapter_bytes(r);
    t->res = stream ? t->x : e;
    t->sum = fmax(t->res, t->a);
    t->cast_in = !r->adapters.torchtune && !autocast && t->x != t->a;
    t->cast_back = t->cast_in && t->sum != t->res;
    t->clone = !r->adapters.torchtune && (r->adapters.base_quant == CORE_BASEQ_NF4_BNB ||
                                          r->adapters.base_quant == CORE_BASEQ_NF4_BNB_DQ);
}

void core_adapters_dtypes(const struct core_resolved *r, struct core_adapter_dtypes *o)
{
    struct elt_dtypes t;

    adapter_dtypes(r, &t);
    *o = (struct core_adapter_dtypes){.x = (int)t.x,
                                      .a = (int)t.a,
                                      .res = (int)t.res,
                                      .sum = (int)t.sum,
                                      .cast_in = t.cast_in,
                                      .cast_back = t.cast_back,
                                      .clone = t.clone};
}

/* Element-wise bytes per token of one wrapped linear of `in` and `out` features, forward (*f)
 * and backward (*b), from the kernels of the dtypes above (r = read, w = write):
 * forward per input element: the cast to the adapters' dtype (r x w a), lora_A reading it (r a);
 * forward per output element: lora_B's output (w a), the scaling (r a w a), the add
 * (r res r a w sum), the cast back (r sum w res), the clone of the base output (r res w res);
 * backward per output element: the cast back's gradient (r res w sum), the add's gradient to
 * the base output in its dtype (r sum w res) or to the branch (r sum w a) where they differ, the
 * scaling (r a w a), lora_B's two GEMMs reading the gradient (2 a); backward per input element:
 * lora_A's weight gradient reading its input and its input gradient (r a w a), the cast's
 * gradient (r a w x), the sum into the base's input gradient (r x r x w x). An autocast cast of
 * an fp32 input for lora_A (r x w a forward, r a w x backward) when the stream is wider. The
 * adapter's GEMM FLOPs are priced apart (perf.c frozen_micro). */
static void adapter_elt(const struct elt_dtypes *t, double in, double out, double *f, double *b)
{
    double cast = t->cast_in || t->x != t->a ? t->x + t->a : 0.0;

    *f = in * (cast + t->a) +
         out * (3.0 * t->a + t->res + t->a + t->sum + (t->cast_back ? t->sum + t->res : 0.0) +
                (t->clone ? 2.0 * t->res : 0.0));
    *b =
        in * (2.0 * t->a + cast + 3.0 * t->x) +
        out * ((t->cast_back ? t->res + t->sum : 0.0) + (t->sum != t->res ? t->sum + t->res : 0.0) +
               (t->sum != t->a ? t->sum + t->a : 0.0) + 4.0 * t->a);
}

/* PEFT's k-bit stream (core_adapters_fp32_stream): every quantized linear sees an fp32 input.
 * bitsandbytes' Linear4bit.set_compute_type then computes in fp32: autocast casts x to the
 * compute dtype per linear (r 4 w e), its output is cast back to fp32 (r e w 4), and both casts'
 * gradients run backward; the dequantized weight is cast to fp32 (.to(A.dtype) in
 * autograd/_functions.py MatMul4Bit.forward: r e w 4) and autocast casts it back (r 4 w e), each
 * forward (backward casts to the gradient's compute dtype: no copy). That is bitsandbytes up to
 * 0.4x (compute_type_is_set starts false, so the first fp32 input sets fp32; fms-acceleration's
 * runs); later versions keep a given bnb_4bit_compute_dtype, and with bf16 given the weight's
 * fp32 detour goes while the activation casts stay (not distinguished: no version input). The
 * norms, residual adds and MLP activation (perf.c's 11 d + f_in + f elements) run on 4 bytes
 * instead of e. Per token of one layer (per pass) and per weight (per forward). */
static void stream_elt(const struct core_resolved *r, double *per_token, double *per_weight)
{
    const struct core_arch *a = &r->shape.arch;
    double e = (double)compute_bytes(r), d = (double)a->hidden, f = (double)a->ffn_hidden;
    double q = (double)(a->heads * a->head_dim), kv = (double)(a->kv_heads * a->head_dim);
    double gate = a->gated_mlp ? d + f : 0.0, f_in = a->gated_mlp ? 2.0 * f : f;
    double io = (d + q) + 2.0 * (d + kv) + (q + d) + gate + (d + f) + (f + d);

    *per_token = *per_weight = 0.0;
    if (!core_adapters_fp32_stream(r))
        return;
    *per_token = (4.0 + e) * io + (4.0 - e) * (11.0 * d + f_in + f);
    *per_weight = 2.0 * (4.0 + e);
}

/* The step-time model's adapter fields (perf.h): the wrapped linears' widths in one layer, their
 * element-wise bytes per token forward and backward (adapter_elt, stream_elt), the dequantized
 * base, the step. */
void core_adapters_perf(const struct core_resolved *r, struct core_perf_input *in)
{
    const struct core_arch *a = &r->shape.arch;
    struct core_adapter_counts c;
    struct elt_dtypes dt;
    double d = (double)a->hidden, q = (double)(a->heads * a->head_dim);
    double kv = (double)(a->kv_heads * a->head_dim), f = (double)a->ffn_hidden;
    double ins[CORE_MOD_LM_HEAD] = {d, d, d, q, d, d, f};
    double outs[CORE_MOD_LM_HEAD] = {q, kv, kv, d, f, f, d};
    double stream, e = (double)compute_bytes(r);

    if (!core_adapters_count(r, &c))
        return;
    adapter_dtypes(r, &dt);
    in->frozen_base = true;
    in->lora_rank = (double)r->adapters.rank;
    for (int m = 0; m < CORE_MOD_LM_HEAD; m++) {
        double fw, bw;

        if (!has(r, (enum core_module)m) || (m == CORE_MOD_GATE && !a->gated_mlp))
            continue;
        in->lora_in += ins[m];
        in->lora_out += outs[m];
        if (r->adapters.finetune == CORE_FT_DORA)
            in->dora_weights += ins[m] * outs[m];
        adapter_elt(&dt, ins[m], outs[m], &fw, &bw);
        in->lora_fwd_bytes += fw;
        in->lora_bwd_bytes += bw;
    }
    stream_elt(r, &stream, &in->dequant_cast_bpw);
    in->lora_fwd_bytes += stream;
    in->lora_bwd_bytes += 2.0 * stream;
    in->lora_head = has(r, CORE_MOD_LM_HEAD) ? 1.0 : 0.0;
    in->adapter_params = (double)c.trainable;
    in->adapter_bytes = (double)c.adapter_bytes;
    in->adapter_moments = (double)c.moment_bytes;
    in->dequant_weights = (double)c.linear_weights;
    in->dequant_bpp =
        c.linear_weights > 0 ? (double)c.quantized_bytes / (double)c.linear_weights : 0;
    in->stored_bpp = r->params > 0 ? (double)c.frozen / (double)r->params : e;
    /* What the GEMMs run: the architecture's active weights (a given N may differ), the
     * adapters of one token's path (per layer r (sum in + sum out); the output layer's). */
    in->base_params = fmin((double)r->active_params, (double)core_arch_active_params(a));
    in->adapter_flops_params = in->lora_rank * (in->lora_in + in->lora_out) * (double)a->layers +
                               in->lora_head * in->lora_rank * (d + (double)a->vocab);
}
