/*
 * cv_check.h - the check the validation suites share: a row of core/validation.c's tables (one
 * GPU generation's step-time error, one framework profile's peak error) equals what the
 * leave-one-source-out folds over the measured data give: the run counts, the sources, the figure
 * to three decimals, and no figure (with a note why) exactly where no run is unseen.
 */
#ifndef MEMWALL_TESTS_CV_CHECK_H
#define MEMWALL_TESTS_CV_CHECK_H

#include <math.h>

#include <check.h>

#include "validation.h"

/* What the folds gave for one row. */
struct cv_fold_result {
    int unseen, tuning;         /* runs that informed no constant / some constant */
    double expected_error;      /* mean absolute relative error over the unseen runs */
    const char *unseen_sources; /* their sources, as the table spells them */
};

static inline void cv_check_row(const char *name, const struct core_validation *v,
                                const struct cv_fold_result *cv)
{
    ck_assert_msg(v->unseen_runs == cv->unseen && v->tuning_runs == cv->tuning,
                  "%s: validation.c says %d unseen and %d tuning runs, the data %d and %d", name,
                  v->unseen_runs, v->tuning_runs, cv->unseen, cv->tuning);
    if (cv->unseen == 0) {
        ck_assert_msg(v->expected_error < 0 && v->borrowed != NULL,
                      "%s: no unseen run, so no figure and a note why", name);
        return;
    }
    ck_assert_msg(fabs(v->expected_error - cv->expected_error) < 0.0005,
                  "%s: validation.c says %.3f, script/validate %.4f", name, v->expected_error,
                  cv->expected_error);
    ck_assert_str_eq(v->unseen, cv->unseen_sources);
}

#endif
