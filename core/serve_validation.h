/*
 * serve_validation.h - how far the serving figures are from measurement on rows that informed
 * none of their constants: the time model (serve_time.c) per engine and GPU generation, and the
 * KV pool (serve.c, end to end from the GPU and the model) per engine.
 *
 * The figures are what the validation suites print (test_serve_time --cv, test_serve_mem with
 * MEMWALL_VALIDATION_TABLE=1) over the CSVs of tests/validation; serve_validation.c keeps them
 * with their provenance and the suites fail when the table and the data disagree. A cell with no
 * unseen row has no figure: /inference then gives null and a warning (time: unvalidated_engine
 * where the engine was never timed, unvalidated_hardware where only the generation was not; the
 * pool: unvalidated_kv_pool).
 */
#ifndef MEMWALL_CORE_SERVE_VALIDATION_H
#define MEMWALL_CORE_SERVE_VALIDATION_H

#include "serve.h"
#include "validation.h"

/* One measured cell of the time model: an engine on a GPU generation. */
struct core_serve_time_cell {
    enum core_engine engine;
    enum core_gpu_generation generation;
    struct core_validation v;
};

extern const struct core_serve_time_cell core_serve_time_cells[];
extern const int core_serve_time_cell_count;

/* The KV pool end to end, per engine (enum core_engine). */
extern const struct core_validation core_serve_kv_validation[CORE_ENGINE_COUNT];

/* The time model's cell for an engine and generation; NULL when none was measured. */
const struct core_validation *core_serve_time_validation(enum core_engine engine,
                                                         enum core_gpu_generation generation);

/* time.expected_error (< 0: none) and inference.kv_cache.expected_error (< 0: none). */
double core_serve_time_expected_error(const struct core_serve_result *r);
double core_serve_kv_expected_error(const struct core_serve_result *r);

/* The warnings for the figures without one (unvalidated_engine, unvalidated_hardware,
 * unvalidated_kv_pool). */
void core_serve_validation_warnings(struct core_serve_result *res);

#endif
