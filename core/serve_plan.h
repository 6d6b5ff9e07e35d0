/*
 * serve_plan.h - the serving planner: the cheapest deployments that meet a load and its SLOs.
 *
 * Given a model, a workload (input and output lengths), a load (requests per second, or
 * sequences in flight) and SLOs on the time to first token and the time per output token, search
 * GPU type x tensor parallelism x weight quantization x KV-cache dtype x replicas. Each candidate
 * replica is sized by core_serve() (does it start? how many sequences does its KV pool hold?) and
 * timed by core_serve_timing() in the continuous-batching steady state, the functions /inference
 * uses: re-asking /inference with a plan's inputs gives the plan's figures. Plans are ranked by
 * cost per hour (GPUs when no price is given), a Pareto front of cost against TPOT is kept, and
 * when nothing qualifies the reasons name the constraint that binds. docs/serving.md, "Planner".
 *
 * Pure: the caller passes the arrays; nothing is allocated.
 */
#ifndef MEMWALL_CORE_SERVE_PLAN_H
#define MEMWALL_CORE_SERVE_PLAN_H

#include "serve_timing.h"

#define CORE_SPLAN_TOP          20   /* plans a reply lists */
#define CORE_SPLAN_PARETO_MAX   32   /* Pareto points kept */
#define CORE_SPLAN_TP_MAX       8    /* default largest tensor parallelism searched */
#define CORE_SPLAN_REPLICAS_MAX 1024 /* default and bound of replicas_max */
#define CORE_SPLAN_RPS_MAX      1e7  /* requests per second */
#define CORE_SPLAN_SLO_MAX      1e6  /* seconds */
#define CORE_SPLAN_REASONS      4

struct core_serve_plan_input {
    /* The model, engine and its knobs as for core_serve(); the planner chooses gpu, gpus, tp,
     * quantization and kv_cache_dtype (pp stays 1: one node per replica). */
    struct core_serve_input base; /* its input_len and output_len are the workload's */
    double requests_per_second;   /* 0 = not given */
    int64_t concurrency;          /* sequences in flight over all replicas; 0 = not given */
    double ttft_slo_seconds, tpot_slo_seconds; /* 0 = none */
    int64_t tp_max;                            /* 1..CORE_SPLAN_TP_MAX */
    int64_t replicas_max;                      /* 1..CORE_SPLAN_REPLICAS_MAX */
    int gpu_count;                             /* 0 = every catalog GPU */
    int gpus[CORE_PLAN_GPU_MAX];
    double usd_per_gpu_hour[CORE_PLAN_GPU_MAX]; /* by catalog index; < 0 = none */
    int quant_count;                            /* 0 = none, fp8, awq */
    enum core_quant quantizations[CORE_QUANT_COUNT];
    int kv_count; /* 0 = auto and fp8 */
    enum core_kv_dtype kv_cache_dtypes[CORE_KV_DTYPE_COUNT];
};

void core_serve_plan_input_init(struct core_serve_plan_input *in);

struct core_serve_plan {
    int gpu; /* catalog index */
    int64_t tp, replicas, gpus;
    enum core_quant quantization;
    enum core_kv_dtype kv_cache_dtype;
    int64_t concurrency;         /* sequences in flight per replica */
    int64_t max_concurrency;     /* what the replica's KV pool and max_num_seqs hold */
    double usd_per_gpu_hour;     /* < 0 = no price */
    double usd_per_hour;         /* all replicas; < 0 = no price */
    double requests_per_second;  /* all replicas at this concurrency */
    struct core_serve_time time; /* one replica, continuous batching at `concurrency` */
};

struct core_serve_plan_reason {
    const char *field; /* the constraint: "memory", "gpu_memory_utilization" (CUDA graphs),
                          "tpot_slo_seconds", "ttft_slo_seconds", "requests_per_second",
                          "concurrency", "gpu", or the field of a refusal ("input_len") */
    char message[CORE_MESSAGE_MAX];
};

struct core_serve_plan_summary {
    bool ranked_by_cost;
    int plan_count, pareto_count;
    int64_t evaluated; /* configurations sized (GPU x tp x quantization x KV dtype) */
    int64_t fitting;   /* of those, starting with one request of the workload's length */
    int64_t timed;     /* time-model evaluations (the replica and concurrency searches) */
    int64_t feasible;  /* configurations meeting the load and the SLOs */
    int gpus_searched;
    int searched[CORE_PLAN_GPU_MAX]; /* their catalog indexes */
    int quant_count, kv_count;       /* the lists searched (the request's or the defaults) */
    enum core_quant quantizations[CORE_QUANT_COUNT];
    enum core_kv_dtype kv_cache_dtypes[CORE_KV_DTYPE_COUNT];
    int reason_count;
    struct core_serve_plan_reason reasons[CORE_SPLAN_REASONS];
};

/* Search. plans (plans_max) receives the best plans by cost per hour, then TPOT; pareto
 * (pareto_max) the non-dominated (usd_per_hour, tpot) points by cost. CORE_EINVAL with problems
 * for inputs that cannot be planned (no load, contradictory bounds); an empty result is CORE_OK
 * with reasons. */
enum core_status core_serve_plan_search(const struct core_serve_plan_input *in,
                                        struct core_serve_plan *plans, int plans_max,
                                        struct core_serve_plan *pareto, int pareto_max,
                                        struct core_serve_plan_summary *out,
                                        struct core_problems *problems);

/* The /inference inputs of a plan: base with the plan's gpu, gpus, tp, quantization, KV dtype,
 * max_model_len (the workload's length unless given), its concurrency per replica, continuous
 * batching and its GPU's price: they reproduce its time. */
void core_serve_plan_request(const struct core_serve_plan_input *in,
                             const struct core_serve_plan *p, struct core_serve_input *serve);

#endif
