/*
 * fuzz_core.c - libFuzzer target: core_evaluate() fed arbitrary inputs within the API's
 * per-field bounds, every property of tests/core/core_invariants.h checked (finite outputs,
 * segments summing to the total, fits <=> total <= capacity, more GPUs never raising per-GPU
 * state at ZeRO >= 1, checkpointing never raising activations). A broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_invariants.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct core_gen g = {data, size};
    struct core_input in;
    const char *why;

    core_gen_input(&g, &in);
    why = core_check(&in);
    if (why != NULL) {
        fprintf(stderr, "property broken: %s\n", why);
        abort();
    }
    return 0;
}
