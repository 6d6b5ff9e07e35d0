/*
 * test_core_serve_validation.c - which serving figures carry an expected error and which a
 * warning (core/serve_validation.c). The figures themselves are checked against the data by
 * the validation suites (validation_serve_time, validation_serve_mem); here the lookup: the
 * measured rows are TensorRT-LLM on A100 / L40S / H100 / H200 and vLLM V1 on H100 (timing), and
 * vLLM V1, V0 and TensorRT-LLM end to end (pool); nothing else was measured.
 */
#include <string.h>

#include "check_main.h"
#include "serve.h"
#include "serve_validation.h"

static const struct core_note *warning(const struct core_serve_result *r, const char *code)
{
    for (int i = 0; i < r->warning_count; i++)
        if (strcmp(r->warnings[i].code, code) == 0)
            return &r->warnings[i];
    return NULL;
}

static void serve(enum core_engine engine, const char *gpu, struct core_serve_result *r)
{
    struct core_serve_input in;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.gpu = core_gpu_find(gpu);
    in.engine = engine;
    in.max_model_len = 8192;
    ck_assert_int_eq(core_serve(&in, r, &p), CORE_OK);
}

/* TensorRT-LLM on H100: both figures measured, no warning of either kind. */
START_TEST(measured_cells_carry_a_figure)
{
    struct core_serve_result r;

    serve(CORE_ENGINE_TRTLLM, "h100-sxm", &r);
    ck_assert(core_serve_time_expected_error(&r) > 0);
    ck_assert(core_serve_kv_expected_error(&r) > 0);
    ck_assert_ptr_null(warning(&r, "unvalidated_engine"));
    ck_assert_ptr_null(warning(&r, "unvalidated_hardware"));
    ck_assert_ptr_null(warning(&r, "unvalidated_kv_pool"));
}
END_TEST

/* SGLang was never timed nor its pool measured end to end: both null, both warnings. */
START_TEST(an_unmeasured_engine_is_null_with_warnings)
{
    struct core_serve_result r;

    serve(CORE_ENGINE_SGLANG, "h100-sxm", &r);
    ck_assert(core_serve_time_expected_error(&r) < 0);
    ck_assert(core_serve_kv_expected_error(&r) < 0);
    ck_assert_ptr_nonnull(warning(&r, "unvalidated_engine"));
    ck_assert_ptr_nonnull(warning(&r, "unvalidated_kv_pool"));
    ck_assert_ptr_null(warning(&r, "unvalidated_hardware"));
}
END_TEST

/* TensorRT-LLM on B200: the engine was timed, Blackwell never was; the message names the
 * generation its constants come from (Hopper's, core/validation.c). The pool figure is the
 * engine's and stays. */
START_TEST(an_unmeasured_generation_names_where_it_borrows)
{
    struct core_serve_result r;
    const struct core_note *n;

    serve(CORE_ENGINE_TRTLLM, "b200", &r);
    ck_assert(core_serve_time_expected_error(&r) < 0);
    ck_assert(core_serve_kv_expected_error(&r) > 0);
    n = warning(&r, "unvalidated_hardware");
    ck_assert_ptr_nonnull(n);
    ck_assert_ptr_nonnull(strstr(n->message, "Hopper"));
    ck_assert_ptr_null(warning(&r, "unvalidated_engine"));
}
END_TEST

/* Every cell's figure is a fraction over at least one unseen row, with its sources named. */
START_TEST(cells_are_well_formed)
{
    for (int i = 0; i < core_serve_time_cell_count; i++) {
        const struct core_validation *v = &core_serve_time_cells[i].v;
        ck_assert(v->expected_error >= 0 && v->unseen_runs >= 1 && v->unseen != NULL);
        ck_assert_ptr_eq(core_serve_time_validation(core_serve_time_cells[i].engine,
                                                    core_serve_time_cells[i].generation),
                         v);
    }
    for (int e = 0; e < CORE_ENGINE_COUNT; e++) {
        const struct core_validation *v = &core_serve_kv_validation[e];
        ck_assert(v->expected_error >= 0 ? v->unseen_runs >= 1 && v->unseen != NULL
                                         : v->borrowed != NULL);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_serve_validation");
    TCase *tc = tcase_create("lookup");

    tcase_add_test(tc, measured_cells_carry_a_figure);
    tcase_add_test(tc, an_unmeasured_engine_is_null_with_warnings);
    tcase_add_test(tc, an_unmeasured_generation_names_where_it_borrows);
    tcase_add_test(tc, cells_are_well_formed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
