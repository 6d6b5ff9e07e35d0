/*
 * internal.h - private glue between the core/ source files.
 *
 * core.h is the contract with the api layer and the tests; this header holds what the pieces of
 * the model share among themselves: overflow-checked integer helpers, the problem and note
 * builders, and the per-step functions that core_evaluate() calls in order. Nothing here
 * allocates or keeps state, so everything stays reentrant like the public functions.
 */
#ifndef MEMWALL_CORE_INTERNAL_H
#define MEMWALL_CORE_INTERNAL_H

#include "core.h"

#if defined(__GNUC__)
#define CORE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CORE_PRINTF(fmt, args)
#endif

/* ---------------------------------------------------------------------------------------------
 * Overflow-checked int64 arithmetic: byte counts are exact, and an overflow must become
 * CORE_ERANGE rather than a silently wrapped number.
 * ------------------------------------------------------------------------------------------- */

static inline bool ck_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static inline bool ck_add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* *acc += a * b, overflow-checked. */
static inline bool ck_acc_mul(int64_t *acc, int64_t a, int64_t b)
{
    int64_t t;
    return ck_mul(a, b, &t) && ck_add(*acc, t, acc);
}

/* Ceiling division for a >= 0, b > 0 (never overflows). */
static inline int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* The experts' tensor-parallel size: as given, else tp (Megatron-LM's arguments.py default). */
static inline int64_t core_etp(const struct core_resolved *r)
{
    return r->etp > 0 ? r->etp : r->tp;
}

/* ---------------------------------------------------------------------------------------------
 * Problems and notes (notes.c)
 * ------------------------------------------------------------------------------------------- */

/* Append a problem; silently drops it once CORE_MAX_PROBLEMS are held (the first ones matter). */
void core_problem_add(struct core_problems *p, const char *field, const char *fmt, ...)
    CORE_PRINTF(3, 4);

/* Append a note to list (count in *n); returns it for adding changes, or NULL when full. */
struct core_note *core_note_add(struct core_note *list, int *n, const char *code, const char *fmt,
                                ...) CORE_PRINTF(4, 5);
void core_note_change_int(struct core_note *note, const char *input, int64_t value);
void core_note_change_string(struct core_note *note, const char *input, const char *value);
void core_note_change_bool(struct core_note *note, const char *input, bool value);
void core_note_change_real(struct core_note *note, const char *input, double value);

/* ---------------------------------------------------------------------------------------------
 * Steps of core_evaluate()
 * ------------------------------------------------------------------------------------------- */

/* evaluate.c: the catalog's and the request's hardware for GPU row `gpu` (memory, peak,
 * scale-up domain, link bandwidths) and the overlap defaults, which read r->tp and
 * r->sequence_parallel (set them first). The planner resolves each candidate GPU with it. */
void core_resolve_hardware(const struct core_input *in, int gpu, struct core_resolved *r);
/* memory_gb - reserve_gb in bytes: what the ledger and the peak are judged against. */
int64_t core_capacity_bytes(const struct core_resolved *r);

/* params.c: the architecture (preset, explicit, nearest preset or aspect rule) and N. */
enum core_status core_resolve_shape(const struct core_input *in, struct core_shape *shape,
                                    struct core_problems *p);
int64_t core_resolve_params(const struct core_input *in, const struct core_shape *shape);
bool core_params_mismatch(const struct core_input *in, const struct core_shape *shape, int64_t n);
/* Active parameters and routed-expert parameters within n (docs/model.md, "Mixture of
 * experts"): the architecture's counts, scaled to n when N was given. */
void core_resolve_moe_split(const struct core_shape *shape, int64_t n, int64_t *active,
                            int64_t *experts);

/* layout.c: the experts' grid (etp, edp), the pipeline split and the MTP layers' weights
 * (added to params, active_params and expert_params when N comes from the architecture), then
 * the heaviest rank (stage_layers). Needs tp, pp, virtual_stages, gpus, ep, framework, the shape
 * and N resolved. */
void core_layout_resolve(const struct core_input *in, bool shaped, struct core_resolved *r);
/* Megatron-Core's (or torchtitan's) rules for the split and the experts' layout. */
void core_layout_check(const struct core_input *in, const struct core_resolved *r, bool shaped,
                       struct core_problems *p);
/* Does r's GPU count hold its experts' grid (check_experts' rules: etp*ep*pp divides gpus; under
 * torchtitan ep divides dp*cp*tp)? True for a dense model. */
bool core_layout_experts_ok(const struct core_resolved *r);
/* Decoder layers on virtual stage g (0 .. pp*virtual_stages - 1, Megatron's interleaved order). */
int64_t core_stage_decoders(const struct core_resolved *r, int64_t g);
/* Decoder layers on pipeline rank `rank` (its virtual_stages chunks) and how many are MoE. */
void core_rank_layers(const struct core_resolved *r, int64_t rank, int64_t *layers, int64_t *moe);
/* Decoder layers of virtual stage g and how many are MoE. */
void core_chunk_layers(const struct core_resolved *r, int64_t g, int64_t *layers, int64_t *moe);
/* The most layers one pipeline rank holds (the last rank's MTP layers included). */
int64_t core_layout_heaviest(const struct core_resolved *r);
/* The last pipeline rank's decoder layers plus the MTP layers it holds (the rank that also runs
 * the output layer and the loss); the even count when the split is not walkable. */
int64_t core_layout_last(const struct core_resolved *r);
/* Weights of rank `rank`'s decoder layers: the routed experts' and the rest (doubles); *whole
 * (may be NULL): of the rest, those every tensor-parallel rank holds whole
 * (core_arch_counts.tp_whole). */
bool core_rank_params(const struct core_resolved *r, int64_t rank, double *dense, double *experts,
                      double *whole);
/* The model's weights kept whole on every tensor-parallel rank (core_arch_counts.tp_whole, the
 * MTP layers' included, scaled as a given params scales the rest); 0 at tp 1. */
int64_t core_tp_whole_params(const struct core_resolved *r);
/* Layers' worth of activations the ledger holds (L for an even split) and how many are MoE. */
void core_layout_activation_layers(const struct core_resolved *r, int64_t *layers, int64_t *moe);

/* layout.c: parse Megatron's flexible layout string (NULL, or why it is malformed). */
const char *core_layout_parse(const char *s, size_t len, struct core_layout *out);

/* recompute.c: the bits of a --recompute-modules list ("" = core_attn); false if a name is
 * unknown. */
bool core_recompute_parse(const char *s, size_t len, unsigned *bits);
/* The bits as a comma-separated list in Megatron's names. */
void core_recompute_text(unsigned bits, char out[CORE_TEXT_MAX]);
/* cuda_graph.c: the bits of a --cuda-graph-modules list ("" = no graphs); false if a name is
 * not one of core_cuda_graph_module_names. core_cuda_graph_text writes bits back as a list. */
bool core_cuda_graph_parse(const char *s, size_t len, unsigned *bits);
void core_cuda_graph_text(unsigned bits, char out[CORE_TEXT_MAX]);

/* flops.c */
void core_flops_compute(const struct core_resolved *r, struct core_flops *f);
/* FLOPs per token under the chosen `count` convention. */
double core_flops_per_token(const struct core_resolved *r, const struct core_flops *f);
/* The run's FLOPs under a counting convention: six_nd, model or hardware (the one switch). */
double core_flops_counted(const struct core_flops *f, enum core_count count);

/* memory.c: ledger pieces after model parallelism, before ZeRO. The routed experts' pieces
 * (divided by ep too) are sharded over the expert data-parallel group, dp / ep ranks; the
 * plain pieces hold everything else. A dense model has zero expert pieces and ep 1. */
struct core_state {
    int64_t weights, grads, optimizer;
    int64_t ex_weights, ex_grads, ex_optimizer;
    int64_t ep;
    /* MoE folding: the expert data-parallel group of a dp-rank group is dp * ex_tp / ex_fold
     * ranks (ex_tp = tp, ex_fold = etp * ep: edp = tp cp dp / (etp ep)). */
    int64_t ex_tp, ex_fold;
    /* Offload (ZeRO-Offload / Infinity): after sharding, these pieces live in host memory:
     * the shard moves to host_weights / host_optimizer and leaves 0 on the GPU. */
    bool off_weights, off_optimizer;
    int64_t host_weights, host_optimizer;
};

void core_bytes_per_param(const struct core_resolved *r, struct core_bytes_per_param *b);
/* Optimizer moment bytes per parameter (the one table; 8 for an unknown optimizer). */
int core_moment_bytes(enum core_optimizer optimizer);
bool core_state_model_parallel(const struct core_resolved *r, const struct core_bytes_per_param *b,
                               struct core_state *mp);
/* ZeRO stage `stage` over dp ranks (the experts' pieces over dp / ep): per-GPU pieces, each the
 * sum of its plain and expert parts; false if the sum overflows. */
bool core_state_shard(const struct core_state *mp, int stage, int64_t dp, struct core_state *out,
                      int64_t *sum);
/* Activation bytes per GPU for a micro-batch, sequence length and checkpointing mode. */
bool core_activation_bytes(const struct core_resolved *r, int64_t batch, int64_t seq_len,
                           enum core_checkpointing ckpt, int64_t *layers, int64_t *logits);
enum core_status core_memory_compute(const struct core_resolved *r, struct core_memory *m,
                                     struct core_state *mp, struct core_problems *p);
/* evaluate.c: the peak of ledger's configuration in `metric` (bytes), where it falls (moment and
 * stage), as /fit reports it; CORE_ERANGE past int64. The planner judges a framework profile's
 * candidates with it (plan_judge.c). */
enum core_status core_peak_in(const struct core_resolved *r, const struct core_memory *ledger,
                              enum core_memory_metric metric, int64_t *bytes, const char **at,
                              const char **stage, struct core_problems *p);

/* fit.c */
int64_t core_min_gpus(const struct core_resolved *r, const struct core_state *mp, int stage,
                      int64_t activations, int64_t capacity);
/* Does r fit as /fit judges it (the ledger total under the generic profile, the device peak
 * under a framework profile), its ledger and peak recomputed? r's batch fields must agree. */
bool core_config_fits(const struct core_resolved *r, int64_t capacity);
/* The same, judged as /fit judges: the ledger (core_min_gpus) under the generic profile, the
 * device peak of the config at each G under a framework profile. */
int64_t core_min_gpus_judged(const struct core_resolved *r, const struct core_state *mp, int stage,
                             int64_t activations, int64_t capacity);
int64_t core_max_batch(const struct core_resolved *r, int64_t state, int64_t capacity,
                       enum core_checkpointing ckpt);
int64_t core_max_seq_len(const struct core_resolved *r, int64_t state, int64_t capacity);
void core_fit_compute(const struct core_resolved *r, const struct core_memory *m,
                      const struct core_state *mp, int64_t capacity, struct core_fit *fit);

/* runtime.c */
double core_catalog_peak_tflops(int gpu, enum core_precision precision);
double core_measured_mfu(const struct core_resolved *r, const struct core_flops *f, double tps);
/* The runtime under the assumed, measured or predicted MFU, and the step-time model's
 * prediction (perf) beside it. */
void core_runtime_compute(const struct core_resolved *r, const struct core_flops *f,
                          struct core_runtime *rt, struct core_perf *perf);

/* adapters.c: fine-tuning with adapters (finetune != full; docs/model.md). */
struct core_adapter_counts {
    int64_t trainable;       /* adapter parameters: LoRA A and B, DoRA's magnitudes */
    int64_t wrapped;         /* kinds of linear wrapped */
    int64_t linear_weights;  /* decoder linear weights stored quantized (0 when not) */
    int64_t quantized_bytes; /* their bytes in the layout */
    int64_t largest;         /* elements of the largest decoder linear */
    int64_t plain;           /* weights stored unquantized, plain_bytes each */
    int64_t plain_bytes, adapter_bytes, moment_bytes;
    int64_t frozen; /* resident bytes of the frozen base */
};
enum core_status core_adapters_resolve(const struct core_input *in, struct core_resolved *r,
                                       struct core_problems *p);
bool core_adapters_count(const struct core_resolved *r, struct core_adapter_counts *c);
bool core_adapters_state(const struct core_resolved *r, struct core_state *mp,
                         struct core_adapter_counts *c);
void core_adapters_ledger(const struct core_resolved *r, const struct core_adapter_counts *c,
                          struct core_memory *m);
bool core_adapters_layer_bytes(const struct core_resolved *r, int64_t *rep, int64_t *split);
double core_adapters_pytorch_delta(const struct core_resolved *r);
double core_adapters_transient(const struct core_resolved *r);
bool core_adapters_fp32_stream(const struct core_resolved *r);
struct core_adapter_peak {
    double weights, grads, optimizer; /* per GPU after tp, whole model, before ZeRO */
    double adapter_params;            /* trainable parameters per GPU after tp */
    double adapter_bytes;             /* bytes per adapter parameter */
    double stored_bpp;                /* the frozen base's stored bytes per parameter */
    double casts;                     /* autocast copies alive through the forward */
};
bool core_adapters_peak_state(const struct core_resolved *r, struct core_adapter_peak *o);
/* The dtypes a wrapped linear's adapter tensors take (bytes per element; adapters.c
 * adapter_dtypes): x its input, a the adapter's GEMMs, res the base output, sum after the add;
 * PEFT's cast of x to the adapters' dtype, the sum's cast back, bnb's defensive clone. */
struct core_adapter_dtypes {
    int x, a, res, sum;
    bool cast_in, cast_back, clone;
};
void core_adapters_dtypes(const struct core_resolved *r, struct core_adapter_dtypes *o);
struct core_perf_input;
void core_adapters_perf(const struct core_resolved *r, struct core_perf_input *in);
/* Advice that knows adapters: an NF4 base when the weights do not fit, a smaller rank when the
 * adapters' state matters (notes.c calls it first). */
void core_adapters_advice(struct core_result *res);
/* A fine-tune's runtime under the six_nd count (which assumes the base's weight gradients); the
 * lora_* inputs a full fine-tune ignores; adapters under a framework with no LoRA of its own. */
void core_adapters_warnings(const struct core_input *in, struct core_result *res, unsigned parts);

/* notes.c */
/* parts: what core_evaluate_parts computed (a warning about the runtime needs it). */
void core_warnings(const struct core_input *in, struct core_result *res, unsigned parts);
void core_advice(const struct core_memory *m, const struct core_state *mp, struct core_result *res);

#endif
