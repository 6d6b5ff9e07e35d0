/*
 * serve_timing.h - the time of a sized deployment: the serving time model (serve_time.h) fed
 * from the memory side's result (serve.h), so that /inference and the serving planner price a
 * configuration with one function and give the same figures for it.
 *
 * The workload is core_serve_input's input_len, output_len, concurrency (a number, or 0 = `max`:
 * as many as the KV pool and max_num_seqs allow) and batching, which core_serve() resolves into
 * its result. Formulas and sources: docs/serving.md, "Time".
 */
#ifndef MEMWALL_CORE_SERVE_TIMING_H
#define MEMWALL_CORE_SERVE_TIMING_H

#include "serve.h"
#include "serve_time.h"

/* batching: auto = static for a number of sequences, continuous for `max`. */
enum core_batching { CORE_BATCHING_AUTO, CORE_BATCHING_STATIC, CORE_BATCHING_CONTINUOUS };
#define CORE_BATCHING_COUNT 3
extern const char *const core_batching_names[CORE_BATCHING_COUNT];

#define CORE_SERVE_INPUT_LEN_DEFAULT  1024 /* vLLM benchmarks' --random-input-len default */
#define CORE_SERVE_OUTPUT_LEN_DEFAULT 128  /* ... and --random-output-len */
#define CORE_SERVE_CONCURRENCY_MAX    0    /* the stored value of the word `max` */

/* The sequences `max` resolves to: min(kv tokens / (input_len + output_len), max_num_seqs);
 * 0 when not one request of this length fits. */
int64_t core_serve_max_concurrency(const struct core_serve_result *r, int64_t input_len,
                                   int64_t output_len);

/* Can this deployment serve one request of its workload? false when it does not start, when
 * input_len + output_len exceeds max_model_len (the engine refuses such a request), or when its
 * pool holds none. */
bool core_serve_time_possible(const struct core_serve_result *r);

/* Fill the time model's input from a sized deployment (r from core_serve()): its bytes,
 * hardware, layout, and the workload and price it resolved. */
void core_serve_time_input_of(const struct core_serve_result *r, struct core_serve_time_input *out);

/* Both steps: the time of deployment r under its workload. */
void core_serve_timing(const struct core_serve_result *r, struct core_serve_time *out);

#endif
