/*
 * test_core_properties.c - property tests on core_evaluate(): conservation and monotonicity
 * over many inputs rather than a few hand-derived points.
 *
 * Two kinds:
 *   - random: a fixed-seed PRNG feeds the generator of core_invariants.h (the same one the
 *     fuzz_core libFuzzer target uses) and every property there is checked for each input; a
 *     floor on how many inputs core_evaluate() accepted keeps the test from passing vacuously;
 *   - sweeps: one input varied along one axis (GPUs, batch, seq_len, tp, checkpointing) where
 *     the direction of change follows from the formulas in docs/model.md, stated per test.
 * Deterministic: the seed is fixed, so a failure reproduces exactly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_invariants.h"
#include "check_main.h"

/* xorshift64*: small, fast, and good enough to spread bytes. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static int64_t state_of(const struct core_input *in, struct core_result *r)
{
    struct core_problems p;

    ck_assert_int_eq(core_evaluate(in, r, &p), CORE_OK);
    return r->memory.state;
}

/* 20 000 random inputs: every property holds; at least 10 % are accepted (measured: about a
 * quarter are; the rest are refused as 422, e.g. gpus not a multiple of tp*pp). */
START_TEST(test_random_inputs)
{
    static uint8_t bytes[512];
    int accepted = 0;

    rng_state = 0x6d656d77616c6c05ULL; /* "memwall" 5 */
    for (int i = 0; i < 20000; i++) {
        struct core_gen g = {bytes, sizeof bytes};
        struct core_input in;
        struct core_result r;
        struct core_problems p;
        const char *why;

        for (size_t k = 0; k < sizeof bytes; k += 8) {
            uint64_t v = rng_next();

            memcpy(bytes + k, &v, 8);
        }
        core_gen_input(&g, &in);
        why = core_check(&in);
        ck_assert_msg(why == NULL, "input %d: %s", i, why);
        if (core_evaluate(&in, &r, &p) == CORE_OK)
            accepted++;
    }
    ck_assert_msg(accepted >= 2000, "only %d of 20000 inputs accepted", accepted);
}
END_TEST

/* ZeRO 1..3: per-GPU state = ceil-divided pieces over dp = G, each non-increasing in dp. At
 * ZeRO 0 nothing is divided, so state is constant: 7e9 x 16 B = 112e9 bytes for every G. */
START_TEST(test_more_gpus_never_raise_state)
{
    for (int stage = 0; stage <= 3; stage++) {
        int64_t prev = INT64_MAX;

        for (int64_t g = 1; g <= 4096; g = g < 16 ? g + 1 : g * 3 / 2) {
            struct core_input in;
            struct core_result r;
            int64_t s;

            core_input_init(&in);
            in.zero_stage = stage;
            in.gpus = g;
            s = state_of(&in, &r);
            if (stage == 0)
                ck_assert_int_eq(s, 112000000000LL);
            else
                ck_assert_msg(s <= prev, "stage %d: G %lld raised state", stage, (long long)g);
            prev = s;
        }
    }
}
END_TEST

/* Activations grow with batch and with seq_len (34sbd + 5as^2b per layer: increasing in s and
 * b), and never exceed the no-checkpointing figure when checkpointing is on. */
START_TEST(test_activations_monotone)
{
    static const enum core_checkpointing ckpt[] = {CORE_CKPT_NONE, CORE_CKPT_SELECTIVE,
                                                   CORE_CKPT_FULL};

    for (size_t c = 0; c < 3; c++) {
        int64_t prev_b = -1, prev_s = -1;

        for (int64_t b = 1; b <= 64; b *= 2) {
            struct core_input in;
            struct core_result r, none;
            struct core_problems p;

            core_input_init(&in);
            in.preset = core_preset_find("llama2-7b");
            in.checkpointing = ckpt[c];
            in.batch = b;
            ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
            ck_assert_int_gt(r.memory.activations, prev_b);
            prev_b = r.memory.activations;
            in.checkpointing = CORE_CKPT_NONE;
            ck_assert_int_eq(core_evaluate(&in, &none, &p), CORE_OK);
            ck_assert_int_le(r.memory.activations, none.memory.activations);
        }
        for (int64_t s = 128; s <= 65536; s *= 2) {
            struct core_input in;
            struct core_result r;
            struct core_problems p;

            core_input_init(&in);
            in.preset = core_preset_find("llama2-7b");
            in.checkpointing = ckpt[c];
            in.seq_len = s;
            ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
            ck_assert_int_gt(r.memory.activations, prev_s);
            prev_s = r.memory.activations;
        }
    }
}
END_TEST

/* Tensor parallelism divides weights, grads and optimizer (ceil(X / tp)) and, with sequence
 * parallelism, every activation term: per-GPU total is non-increasing in tp (gpus = tp so
 * dp stays 1). */
START_TEST(test_tp_never_raises_total)
{
    int64_t prev = INT64_MAX;

    for (int64_t tp = 1; tp <= 64; tp *= 2) {
        struct core_input in;
        struct core_result r;
        struct core_problems p;

        core_input_init(&in);
        in.preset = core_preset_find("llama2-70b");
        in.tp = tp;
        in.gpus = tp;
        in.sequence_parallel = CORE_FLAG_YES;
        ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
        ck_assert_int_le(r.memory.total, prev);
        prev = r.memory.total;
    }
}
END_TEST

/* Every property of core_invariants.h (sharding conservation among them) on a grid: every preset
 * x optimizer x precision x checkpointing. */
START_TEST(test_grid_conservation)
{
    int checked = 0;

    for (size_t m = 0; m < core_preset_count; m++)
        for (int opt = 0; opt < 7; opt++)
            for (int prec = 0; prec < 4; prec++)
                for (int c = 0; c < 3; c++) {
                    struct core_input in;
                    struct core_result r;
                    struct core_problems p;
                    const char *why;

                    core_input_init(&in);
                    in.preset = (int)m;
                    in.optimizer = (enum core_optimizer)opt;
                    in.precision = (enum core_precision)prec;
                    in.checkpointing = (enum core_checkpointing)c;
                    in.gpus = 8;
                    if (core_evaluate(&in, &r, &p) != CORE_OK)
                        continue;
                    why = core_check(&in);
                    ck_assert_msg(why == NULL, "preset %zu opt %d prec %d ckpt %d: %s", m, opt,
                                  prec, c, why);
                    checked++;
                }
    /* every combination is valid on an H100 (bf16/fp16/fp32/fp8 all in its catalog row) */
    ck_assert_int_eq(checked, (int)core_preset_count * 7 * 4 * 3);
}
END_TEST

static Suite *properties_suite(void)
{
    Suite *s = suite_create("core_properties");
    TCase *tc = tcase_create("properties");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_random_inputs);
    tcase_add_test(tc, test_more_gpus_never_raise_state);
    tcase_add_test(tc, test_activations_monotone);
    tcase_add_test(tc, test_tp_never_raises_total);
    tcase_add_test(tc, test_grid_conservation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(properties_suite());
}
