/*
 * check_main.h - the one way every Check suite in tests/ is run and reported.
 *
 * Each test executable's main() does its own setup (curl, argv), then returns
 * check_main_run(its_suite()). Reporting is the same everywhere: CK_ENV, so the output is Check's
 * CK_NORMAL summary (one line per failure and a total) unless CK_VERBOSITY says otherwise, and the
 * exit status ctest reads is EXIT_SUCCESS only when every test of the suite passed.
 *
 * Header-only (one static inline function) so a suite stays a single translation unit.
 */
#ifndef MEMWALL_CHECK_MAIN_H
#define MEMWALL_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

/* Run every test of s (takes ownership of s) and turn the outcome into an exit status. */
static inline int check_main_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
