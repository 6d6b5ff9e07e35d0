/*
 * serve_internal.h - private glue between serve.c and serve_size.c.
 */
#ifndef MEMWALL_CORE_SERVE_INTERNAL_H
#define MEMWALL_CORE_SERVE_INTERNAL_H

#include "serve.h"

/* max(1, kv_heads / tp): vLLM replicates the KV heads once tp exceeds them
 * (vllm/model_executor/layers/linear.py, QKVParallelLinear). */
int64_t core_serve_kv_heads_per_rank(int64_t kv_heads, int64_t tp);

/* The profiling forward pass's peak on one rank: `tokens` through the model, the sampler over
 * `seqs` sequences, act_bytes per activation, eager: run without torch.compile, etp: the routed
 * experts' tensor split (moe_width / ep; 1: whole on each rank) (serve_size.c documents the
 * terms); -1 beyond 4e18 bytes. */
int64_t core_serve_profile_bytes(const struct core_arch *a, int64_t tp, int64_t etp, int64_t tokens,
                                 int64_t seqs, int act_bytes, bool eager);

/* The usable (driver-reported) bytes of catalog row gpu: usable_gib, else the nominal GB. */
int64_t core_serve_usable_bytes(int gpu);

/* serve.c: the inputs checked one by one, the model resolved (core_evaluate()'s rules), the
 * serving inputs after the engine's defaults and their combinations checked (CORE_EINVAL /
 * CORE_ERANGE with p filled); out is zeroed first. */
enum core_status core_serve_resolve(const struct core_serve_input *in,
                                    struct core_serve_result *out, struct core_problems *p);
/* serve.c: the ranks of a pipeline stage the engine's MoE layers span (core_serve_resolved's
 * moe_width) for the layout in s (engine, release, gpus, tp, pp). */
int64_t core_serve_moe_width(const struct core_arch *a, const struct core_serve_resolved *s);
/* serve.c: the engine's defaults for the replica on catalog row gpu (tokens, sequences, block
 * size, SGLang's fraction) into s, for a model with MLA attention when mla; one replica sized
 * with s (false when a figure overflows). */
void core_serve_engine_defaults(const struct core_serve_input *in, int gpu, bool mla,
                                struct core_serve_resolved *s);
/* serve_size.c: the token embedding's bytes per rank in format q (its GGUF layout, else the
 * dtype), as core_serve_weight_bytes counts it; -1 on a bad argument. */
int64_t core_serve_input_embedding_bytes(const struct core_arch *a, enum core_quant q,
                                         int dtype_bytes, int64_t tp);
bool core_serve_size_replica(const struct core_arch *a, int gpu, const struct core_input *b,
                             const struct core_serve_resolved *s, struct core_serve_result *out);

/* serve_advice.c: the warnings of a sized replica r into res, and (when it does not serve) the
 * advice; explicit_seqs: max_num_seqs was given. */
void core_serve_warnings(const struct core_serve_result *r, bool explicit_seqs,
                         struct core_serve_result *res);
void core_serve_advise(const struct core_arch *a, const struct core_serve_input *in,
                       const struct core_serve_result *r, struct core_serve_result *res);
/* serve_advice.c: the workload's warnings and advice on a replica that serves. */
void core_serve_time_notes(const struct core_arch *a, const struct core_serve_input *in,
                           struct core_serve_result *res);

/* serve_checks.c: whether catalog row gpu runs the model's dtype (the catalog has a peak for it,
 * unless peak_given) and engine e's kernels for weight format q (their minimum compute
 * capability); the engines' refusals beyond the heads and formats into p (docs/serving.md,
 * "Checks"); core_serve_engine_models: whether engine e is modelled on catalog row gpu at all
 * (GPUs, not TPUs), the one rule /inference and /inference/plan share. */
bool core_serve_engine_models(enum core_engine e, int gpu);
bool core_serve_gpu_runs(int gpu, enum core_precision precision, bool peak_given,
                         enum core_engine e, enum core_quant q);
void core_serve_check_rules(const struct core_serve_input *in, const struct core_resolved *m,
                            const struct core_serve_resolved *s, struct core_problems *p);
/* serve_checks.c, its pieces for core_serve_check_candidate: whether catalog row gpu's compute
 * capability runs engine e's kernels for format q; vLLM's scheduler rule on the resolved s. */
void core_serve_check_capability(enum core_engine e, enum core_quant q, int gpu,
                                 struct core_problems *p);
void core_serve_check_scheduler(const struct core_serve_input *in,
                                const struct core_serve_resolved *s, struct core_problems *p);

#endif
