/*
 * validation.h - how far the models are from measurement on runs that informed none of their
 * constants: the step-time model per GPU generation and memory.peak per framework profile.
 *
 * The figures are computed by script/validate (test_throughput --cv, test_memory --cv) from
 * leave-one-source-out folds over every measured run in tests/validation; validation.c keeps
 * them with their provenance, and the validation suites fail when the table and the data
 * disagree. docs/model.md ("Validation") and docs/frameworks.md say which constants were chosen
 * looking at which rows.
 */
#ifndef MEMWALL_CORE_VALIDATION_H
#define MEMWALL_CORE_VALIDATION_H

#include "core.h"

struct core_validation {
    double expected_error; /* mean absolute relative error over the unseen runs; < 0 = none */
    int unseen_runs;       /* measured runs that informed no constant (the figure's rows) */
    int tuning_runs;       /* measured runs that some constant was chosen looking at */
    const char *unseen;    /* their sources ("TT"), NULL when none */
    /* Why there is no figure (expected_error < 0): where the constants come from. */
    const char *borrowed;
};

/* The step-time model (perf.c) per generation (enum core_gpu_generation). */
extern const struct core_validation core_perf_validation[CORE_GEN_COUNT];
/* The step-time model on mixture-of-experts layouts (any generation): its own figure, from
 * tests/validation/moe-measured.csv (test_moe_throughput), which perf.c reports for a MoE run. */
extern const struct core_validation core_perf_moe_validation;
/* memory.peak (peak.c) per framework profile (enum core_framework). */
extern const struct core_validation core_peak_validation[CORE_FW_COUNT];
/* memory.peak of an adapter fine-tune (finetune lora, qlora or dora) per framework profile, from
 * tests/validation/peft-measured.csv (test_peft): its own figure, for adapters price a frozen base
 * with terms (adapters.c, peak_replay.c) that full training does not use. */
extern const struct core_validation core_adapter_peak_validation[CORE_FW_COUNT];
/* The row that backs memory.peak of this run: the adapters' table for a fine-tune with adapters,
 * the profile's otherwise. */
const struct core_validation *core_peak_validation_of(const struct core_resolved *r);

#endif
