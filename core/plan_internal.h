/*
 * plan_internal.h - what the planner's source files share: the search state, one layout's
 * cached ledger pieces, the ranking structures (plan_rank.c) and the two time models' searches
 * (plan.c: an assumed MFU; plan_predict.c: the step-time model of perf.c).
 */
#ifndef MEMWALL_CORE_PLAN_INTERNAL_H
#define MEMWALL_CORE_PLAN_INTERNAL_H

#include "internal.h"
#include "perf.h"
#include "rules.h"

#define PLAN_BATCH_STEPS 21 /* micro-batches 1, 2, 4, ..., 2^20 (CORE_BATCH_MAX is 1e6) */

struct gpu_row {
    int index;
    double peak;        /* FLOP/s */
    double peak_tflops; /* the same peak as the resolved input carries it (TFLOP/s) */
    int64_t capacity;   /* bytes */
    double price;       /* $/GPU-hour, < 0 none */
};

struct search {
    const struct core_plan_input *in;
    struct core_resolved r; /* the base; the layout fields vary per candidate */
    struct core_bytes_per_param bpp;
    bool predicted;      /* time from core_perf_predict (mfu "predicted") */
    double gpu_flops[3]; /* F / (peak * eff) numerators per checkpointing mode: the run's F */
    double recompute[3]; /* model / hardware FLOPs per checkpointing mode */
    double gbt;          /* global batch, tokens */
    struct core_plan *plans, *pareto;
    int plans_max, pareto_max;
    struct core_plan_summary *out;
    /* For the reasons when nothing qualifies. */
    int64_t min_need;          /* smallest per-GPU bytes seen (b = 1) */
    int64_t batch_blocked;     /* fitting layouts whose b = 1 step exceeds the global batch */
    bool exact_batch;          /* global batch given: keep only m * b * dp equal to it */
    int64_t batch_indivisible; /* fitting candidates skipped: b * dp does not divide it */
    double min_days_fit;       /* fastest fitting configuration */
    double min_cost_fit;       /* cheapest fitting configuration (cost or GPU-hours) */
    double min_cost_in_time;   /* cheapest fitting configuration that meets the deadline */
    /* plan_pp_searched per pp, filled once (plan_pp_table): 1 searched, 0 not; its split. */
    signed char pp_ok[CORE_PLAN_PP_MAX + 1];
    int64_t pp_first[CORE_PLAN_PP_MAX + 1], pp_last[CORE_PLAN_PP_MAX + 1];
};

/* One sharding's cached ledger pieces: the model-parallel state per (tp, pp), activations per
 * (tp, pp, cp, checkpointing, micro-batch). */
struct layout {
    const struct gpu_row *g;
    int64_t tp, pp, cp, gpus, dp;
    int64_t ep, etp;     /* the experts' grid (1, tp for a dense model) */
    int64_t first, last; /* the uneven split (plan_uneven_split); 0, 0 for an even one */
    struct core_state mp;
    int64_t act[3][PLAN_BATCH_STEPS]; /* activations per checkpointing mode and micro-batch */
    int steps[3];                     /* micro-batches whose activations alone fit */
};

/* The experts' layouts searched for a model of E experts at tensor parallelism tp (plan.c):
 * ep a power of two dividing E, at most CORE_PLAN_EP_MAX; etp tp (Megatron-LM's default) and
 * 1 (Megatron-Bridge's MoE recipes). One (1, tp) for a dense model. Returns how many. */
#define PLAN_EXPERT_CHOICES 32
int plan_expert_choices(int64_t experts, int64_t tp, int64_t ep[], int64_t etp[]);
/* Does G GPUs hold the experts' grid etp x ep x pp as well (parallel_state.py)? */
bool plan_expert_grid_ok(const struct layout *L, int64_t gpus);

/* plan_rank.c: should this candidate of micro-batch `micro` tokens (b * seq * dp) and ZeRO stage
 * `zero` be skipped? A given global batch must be m * b * dp exactly (Megatron-LM's
 * num_microbatches_calculator.py asserts it divides); Megatron-LM's distributed optimizer has
 * no stage 2 (its gradients stay in one full buffer, so stage 2 is stage 1 there). */
bool plan_skip_candidate(struct search *s, double micro, int zero);

/* plan_rank.c: the order of plans, the bounded heap of the best and the Pareto front. */
double plan_rank_value(const struct search *s, const struct core_plan *p);
int plan_cmp(const struct search *s, const struct core_plan *a, const struct core_plan *b);
void plan_offer_top(struct search *s, const struct core_plan *c);
void plan_sort_top(const struct search *s);
void plan_offer_pareto(struct search *s, const struct core_plan *c);
bool plan_better_in_layout(const struct core_plan *c, const struct core_plan *best);
bool plan_meets(const struct search *s, const struct core_plan *p);
void plan_note_fitting(struct search *s, const struct core_plan *p);
/* A priced candidate that fits: its memory figures filled in, counted, and kept as the layout's
 * best when it meets the constraints and beats the best so far. */
void plan_consider(struct search *s, struct core_plan *c, const struct core_state *st,
                   int64_t activations, int64_t total, struct core_plan *best, bool *have);
/* A layout's best goes to the front and, when it beats *group, into *group. */
void plan_offer_layout_best(struct search *s, const struct core_plan *best, struct core_plan *group,
                            bool *have_group);

/* plan_judge.c: does candidate c (its layout, batch, ZeRO stage, checkpointing and global batch
 * set; ledger_total its ledger bytes) fit as /fit would judge its config? Sets c->judged: the
 * ledger total under the generic profile, the device peak under a framework profile, against
 * c->capacity (the row's: memory_gb, or the driver's usable bytes under a framework, less
 * reserve_gb). */
bool plan_judge(const struct search *s, struct core_plan *c, int64_t ledger_total);

/* plan_judge.c: the resolved inputs of plan p's configuration, as core_evaluate() would
 * resolve them. */
void plan_resolve(const struct search *s, const struct core_plan *p, struct core_resolved *r);

/* plan_skips.c: the layout rules that ruled out a tp, pp or cp the search would otherwise have
 * tried, as reasons written to out[0..room); returns how many. */
int plan_skip_reasons(const struct search *s, struct core_plan_reason *out, int room);

/* plan_table.c: Megatron-LM's uneven split of the model's layers over pp ranks that pp does not
 * divide (decoder_first/last_pipeline_num_layers; transformer_config.py, "Uneven PP"): of every
 * (first, last) that layout.c's check accepts, the one whose busiest rank holds the fewest
 * layers (the MTP layers on the last rank counted: the pace core_layout_heaviest gives), then
 * the lightest last rank (the output layer and loss sit there), then the lightest first rank
 * (the embedding), then the fewest counts set. Only for pp a power of two, the frameworks that
 * take Megatron's inputs (megatron, generic), and a best split whose busiest rank holds
 * ceil((L + mtp) / pp) layers, the fewest any split can; false otherwise. */
bool plan_uneven_split(const struct core_resolved *r, int64_t pp, int64_t *first, int64_t *last);
/* Sets r's pipeline split to the even one (first = last = 0) or to first/last (FIRST_LAST), and
 * its heaviest rank's layers, as core_layout_resolve would for those inputs. */
void plan_set_split(struct core_resolved *r, int64_t first, int64_t last);
/* The pp values a search tries: the divisors of L, and under plan_uneven_split the powers of
 * two that do not divide it, where /fit's layout check (core_layout_check) passes their split
 * for the base inputs in; *first, *last the split (0, 0 even). */
bool plan_pp_searched(const struct core_input *in, const struct core_resolved *r, int64_t pp,
                      int64_t *first, int64_t *last);
/* plan_pp_searched for every pp of 1 .. min(L, CORE_PLAN_PP_MAX) into s->pp_ok and the split
 * arrays: the searches read them per (tp, pp). */
void plan_pp_table(struct search *s);

/* plan_table.c: activations of every checkpointing mode and micro-batch for s->r's tp, pp and
 * cp. */
void plan_activation_table(struct search *s, struct layout *L);

/* plan_predict.c: the search of one GPU type under the step-time model, and the performance
 * of a finished plan (its layout through core_perf_input_resolved, as /runtime prices it). */
void plan_search_predicted(struct search *s, const struct gpu_row *g);
void plan_performance(const struct search *s, struct core_plan *p);

#endif
