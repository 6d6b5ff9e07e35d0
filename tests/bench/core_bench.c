/*
 * core_bench.c - the core evaluation alone, in a loop, for callgrind and a wall-clock figure.
 *
 * usage: core_bench [N]   (default 1000)
 *
 * Evaluates the benchmark's /fit question (13B, 4 GPUs, T 2048, selective checkpointing) N
 * times, exactly as the /fit handler would after decoding: core_input_init, the four inputs,
 * core_evaluate (which includes the min_gpus and max_batch bisections). script/bench runs it
 * under callgrind with N and with 0 and divides the difference by N, so process start-up and
 * the dynamic loader cancel out. A checksum of every result is printed so the compiler cannot
 * drop the loop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = 1000;
    uint64_t sum = 0;
    double t0, t1;

    if (argc > 1) {
        char *end;

        errno = 0;
        n = strtol(argv[1], &end, 10);
        if (errno != 0 || end == argv[1] || *end != '\0' || n < 0) {
            fprintf(stderr, "usage: core_bench [N]\n");
            return 2;
        }
    }
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        struct core_input in;
        struct core_result result;
        struct core_problems problems;

        core_input_init(&in);
        in.params = 13000000000;
        in.gpus = 4;
        in.seq_len = 2048;
        in.checkpointing = CORE_CKPT_SELECTIVE;
        memset(&problems, 0, sizeof problems);
        if (core_evaluate(&in, &result, &problems) != CORE_OK) {
            fprintf(stderr, "core_bench: core_evaluate failed\n");
            return 1;
        }
        sum += (uint64_t)result.fit.max_batch + (uint64_t)result.memory.total;
    }
    t1 = now_ns();
    printf("{\"evaluations\":%ld,\"ns_per_evaluation\":%.1f,\"checksum\":%llu}\n", n,
           n > 0 ? (t1 - t0) / (double)n : 0.0, (unsigned long long)sum);
    return 0;
}
