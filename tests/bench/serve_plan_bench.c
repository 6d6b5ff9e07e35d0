/*
 * serve_plan_bench.c - how many candidate deployments per second the serving planner sizes and
 * times on one core.
 *
 * Built with the tests but not registered with ctest (timings are not assertions); script/bench
 * prints its last line. Runs core_serve_plan_search() on a few representative requests,
 * repeating each until a second of CPU time has passed, and prints the configurations sized
 * (GPU x tp x quantization x KV dtype, each through core_serve) and the time-model evaluations
 * (the replica and concurrency searches) per second. Usage:
 *   build/tests/bench/serve_plan_bench [seconds-per-case]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "serve_plan.h"

struct bench_case {
    const char *name;
    const char *model;
    int64_t input_len, output_len;
    double rps, tpot_slo;
};

static const struct bench_case cases[] = {
    {"llama3-8b, 1024/128, 10 req/s, every GPU", "llama3-8b", 1024, 128, 10, 0},
    {"llama3-70b, 2048/512, 50 req/s, TPOT 50 ms, every GPU", "llama3-70b", 2048, 512, 50, 0.05},
    {"mixtral-8x7b, 512/256, 100 req/s, every GPU", "mixtral-8x7b", 512, 256, 100, 0},
};

static double cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static struct core_serve_plan plans[CORE_SPLAN_TOP], pareto[CORE_SPLAN_PARETO_MAX];
    static struct core_serve_plan_input in;
    double budget = argc > 1 ? strtod(argv[1], NULL) : 1.0;
    int64_t all_sized = 0, all_timed = 0;
    double all_seconds = 0;

    if (!(budget > 0))
        budget = 1.0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bench_case *c = &cases[i];
        struct core_serve_plan_summary out;
        struct core_problems problems = {0};
        int64_t sized = 0, timed = 0;
        int runs = 0;
        double start, spent;

        core_serve_plan_input_init(&in);
        in.base.base.preset = core_preset_find(c->model);
        in.base.input_len = c->input_len;
        in.base.output_len = c->output_len;
        in.requests_per_second = c->rps;
        in.tpot_slo_seconds = c->tpot_slo;
        start = cpu_seconds();
        do {
            if (core_serve_plan_search(&in, plans, CORE_SPLAN_TOP, pareto, CORE_SPLAN_PARETO_MAX,
                                       &out, &problems) != CORE_OK) {
                fprintf(stderr, "%s: %s: %s\n", c->name, problems.items[0].field,
                        problems.items[0].message);
                return 1;
            }
            sized += out.evaluated;
            timed += out.timed;
            runs++;
            spent = cpu_seconds() - start;
        } while (spent < budget);
        printf(
            "%-55s %5lld sized %6lld timed %7.2f ms/search %9.0f candidates/s %10.0f timings/s\n",
            c->name, (long long)out.evaluated, (long long)out.timed, 1e3 * spent / runs,
            (double)sized / spent, (double)timed / spent);
        all_sized += sized;
        all_timed += timed;
        all_seconds += spent;
    }
    printf("overall: %.0f candidate deployments/s (%.0f time-model evaluations/s) on one core\n",
           (double)all_sized / all_seconds, (double)all_timed / all_seconds);
    return 0;
}
