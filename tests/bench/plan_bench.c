/*
 * plan_bench.c - how many configurations per second the planner prices on one core.
 *
 * Built with the tests but not registered with ctest (timings are not assertions). Runs
 * core_plan_search() on a few representative requests, repeating each until a second has
 * passed, and prints evaluated configurations per second of CPU time. Usage:
 *   build/tests/bench/plan_bench [seconds-per-case]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

struct bench_case {
    const char *name;
    const char *model; /* preset id or NULL */
    double params;
    double tokens;
    int64_t seq_len;
    double deadline_days;
    enum core_framework framework;
};

static const struct bench_case cases[] = {
    {"7B, 1.4T tokens, T 512, every GPU", NULL, 7e9, 1.4e12, 512, 0, CORE_FW_GENERIC},
    {"llama2-70b, 2T tokens, T 4096, every GPU, 30 days", "llama2-70b", 0, 2e12, 4096, 30,
     CORE_FW_GENERIC},
    {"llama3.1-405b, 15T tokens, T 8192, every GPU", "llama3.1-405b", 0, 15e12, 8192, 0,
     CORE_FW_GENERIC},
    /* 61 layers: pp 2 .. 64 only through Megatron-LM's uneven split (core/plan_table.c) */
    {"deepseek-v3, 14.8T tokens, T 4096, H100, megatron", "deepseek-v3", 0, 14.8e12, 4096, 0,
     CORE_FW_MEGATRON},
};

static double cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static struct core_plan plans[CORE_PLAN_TOP], pareto[CORE_PLAN_PARETO_MAX];
    double budget = argc > 1 ? strtod(argv[1], NULL) : 1.0;
    int64_t all_evaluated = 0;
    double all_seconds = 0;

    if (!(budget > 0))
        budget = 1.0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bench_case *c = &cases[i];
        struct core_plan_input in;
        struct core_plan_summary out;
        struct core_problems problems;
        int64_t evaluated = 0;
        int runs = 0;
        double start, spent;

        core_plan_input_init(&in);
        in.base.preset = c->model != NULL ? core_preset_find(c->model) : -1;
        in.base.params = (int64_t)c->params;
        in.base.tokens = c->tokens;
        in.base.seq_len = c->seq_len;
        in.deadline_days = c->deadline_days;
        in.base.framework = c->framework;
        if (c->framework == CORE_FW_MEGATRON) { /* one GPU type, as a Megatron user asks */
            in.gpus[0] = core_gpu_find("h100-sxm");
            in.gpu_count = 1;
            in.gpus_max = 2048;
        }
        start = cpu_seconds();
        do {
            if (core_plan_search(&in, plans, CORE_PLAN_TOP, pareto, CORE_PLAN_PARETO_MAX, &out,
                                 &problems) != CORE_OK) {
                fprintf(stderr, "%s: %s: %s\n", c->name, problems.items[0].field,
                        problems.items[0].message);
                return 1;
            }
            evaluated += out.evaluated;
            runs++;
            spent = cpu_seconds() - start;
        } while (spent < budget);
        printf("%-55s %10lld configs/search %8.2f ms/search %12.0f configs/s\n", c->name,
               (long long)out.evaluated, 1e3 * spent / runs, (double)evaluated / spent);
        all_evaluated += evaluated;
        all_seconds += spent;
    }
    printf("overall: %.0f configurations/s on one core\n", (double)all_evaluated / all_seconds);
    return 0;
}
