/*
 * core_test_util.h - small helpers shared by the core/ Check suites.
 *
 * Header-only (static inline) so each suite stays one translation unit and no helper needs a
 * prototype elsewhere. The macros report the failing expression and both values, because a
 * bare "assertion failed" on a 12-digit byte count is useless when a formula drifts.
 */
#ifndef MEMWALL_CORE_TEST_UTIL_H
#define MEMWALL_CORE_TEST_UTIL_H

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Evaluate and require CORE_OK; on failure show the first problem, which names the cause. */
#define EVAL_OK(in, out)                                                                           \
    do {                                                                                           \
        struct core_problems probs_;                                                               \
        memset(&probs_, 0, sizeof probs_);                                                         \
        enum core_status st_ = core_evaluate(&(in), &(out), &probs_);                              \
        ck_assert_msg(st_ == CORE_OK, "core_evaluate returned %d; first problem %s: %s", (int)st_, \
                      probs_.count > 0 ? probs_.items[0].field : "(none)",                         \
                      probs_.count > 0 ? probs_.items[0].message : "(none)");                      \
    } while (0)

/* |actual - expected| <= rel * |expected|. */
#define ASSERT_REL(actual, expected, rel)                                                          \
    ck_assert_msg(fabs((double)(actual) - (double)(expected)) <= (rel)*fabs((double)(expected)),   \
                  "%s = %.17g, expected %.17g (relative tolerance %g)", #actual, (double)(actual), \
                  (double)(expected), (double)(rel))

/* Exact 64-bit integer equality with both values printed. */
#define ASSERT_I64(actual, expected)                                                               \
    ck_assert_msg((int64_t)(actual) == (int64_t)(expected), "%s = %lld, expected %lld", #actual,   \
                  (long long)(actual), (long long)(expected))

/* Run core_evaluate expecting `status`; true when some problem names `field`. */
static inline bool eval_fails_on(const struct core_input *in, enum core_status status,
                                 const char *field)
{
    struct core_result out;
    struct core_problems probs;
    memset(&probs, 0, sizeof probs);
    enum core_status st = core_evaluate(in, &out, &probs);
    if (st != status)
        return false;
    for (int i = 0; i < probs.count && i < CORE_MAX_PROBLEMS; i++)
        if (probs.items[i].field != NULL && strcmp(probs.items[i].field, field) == 0)
            return true;
    return false;
}

static inline const struct core_note *find_note(const struct core_note *notes, int count,
                                                const char *code)
{
    for (int i = 0; i < count && i < CORE_MAX_NOTES; i++)
        if (notes[i].code != NULL && strcmp(notes[i].code, code) == 0)
            return &notes[i];
    return NULL;
}

static inline const struct core_note *find_warning(const struct core_result *r, const char *code)
{
    return find_note(r->warnings, r->warning_count, code);
}

static inline const struct core_note *find_advice(const struct core_result *r, const char *code)
{
    return find_note(r->advice, r->advice_count, code);
}

static inline const struct core_change *find_change(const struct core_note *n, const char *input)
{
    for (int i = 0; i < n->change_count && i < CORE_MAX_CHANGES; i++)
        if (n->changes[i].input != NULL && strcmp(n->changes[i].input, input) == 0)
            return &n->changes[i];
    return NULL;
}

static inline int preset_index(const char *id)
{
    int i = core_preset_find(id);
    ck_assert_msg(i >= 0, "preset %s is missing", id);
    return i;
}

/*
 * Every double a result carries, so a property test can demand "never NaN or inf" (core.h
 * promises it). Returns the name of the first non-finite field, or NULL when all are finite.
 */
static inline const char *first_nonfinite(const struct core_result *r)
{
    const struct {
        const char *name;
        double value;
    } fields[] = {
        {"resolved.tokens", r->resolved.tokens},
        {"resolved.memory_gb", r->resolved.memory_gb},
        {"resolved.peak_tflops", r->resolved.peak_tflops},
        {"resolved.reserve_gb", r->resolved.reserve_gb},
        {"resolved.mfu", r->resolved.mfu},
        {"resolved.usd_per_gpu_hour", r->resolved.usd_per_gpu_hour},
        {"resolved.tokens_per_second", r->resolved.tokens_per_second},
        {"resolved.global_batch_tokens", r->resolved.global_batch_tokens},
        {"flops.six_nd", r->flops.six_nd},
        {"flops.model", r->flops.model},
        {"flops.hardware", r->flops.hardware},
        {"flops.per_token.forward", r->flops.per_token.forward},
        {"flops.per_token.backward", r->flops.per_token.backward},
        {"flops.per_token.recompute", r->flops.per_token.recompute},
        {"flops.per_token.attention", r->flops.per_token.attention},
        {"flops.attention_fraction", r->flops.attention_fraction},
        {"fit.utilization", r->fit.utilization},
        {"runtime.flops", r->runtime.flops},
        {"runtime.seconds", r->runtime.seconds},
        {"runtime.hours", r->runtime.hours},
        {"runtime.days", r->runtime.days},
        {"runtime.gpu_hours", r->runtime.gpu_hours},
        {"runtime.tokens_per_second", r->runtime.tokens_per_second},
        {"runtime.tokens_per_second_per_gpu", r->runtime.tokens_per_second_per_gpu},
        {"runtime.mfu", r->runtime.mfu},
        {"runtime.peak_flops_per_gpu", r->runtime.peak_flops_per_gpu},
        {"runtime.global_batch_tokens", r->runtime.global_batch_tokens},
        {"runtime.steps", r->runtime.steps},
        {"runtime.step_seconds", r->runtime.step_seconds},
        {"runtime.cost_usd", r->runtime.cost_usd},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!isfinite(fields[i].value))
            return fields[i].name;
    return NULL;
}

#endif
