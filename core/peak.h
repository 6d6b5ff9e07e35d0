/*
 * peak.h - the peak of a training step as a framework really allocates it.
 *
 * The ledger (memory.c) sums state and activations with one set of rules. Real frameworks store
 * different dtypes (FSDP2's fp32 shards, Megatron's fp32 main gradients, torchtune's pure bf16),
 * keep different activations (torchtitan's per-op selective checkpointing is not Korthikanti's),
 * compute the loss differently (an uncompiled cross_entropy(logits.float()) holds three fp32
 * logits-sized buffers; a compiled or chunked one less than one) and peak at different moments of
 * the step. A profile per framework (docs/frameworks.md, with the code and version each number
 * comes from) prices three moments of a steady-state step on the first and the last pipeline
 * stage, and reports the largest in the statistic asked for: the allocator's allocated, active or
 * reserved peak, or the device's used memory as nvidia-smi shows it.
 *
 * Pure: no allocation, no I/O; every figure finite (byte counts are doubles here: a profile's
 * fractional bytes per logit and per-allocator factors are not integral, and the peak is an
 * estimate, not a ledger).
 */
#ifndef MEMWALL_CORE_PEAK_H
#define MEMWALL_CORE_PEAK_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* enum core_framework, core_loss and core_memory_metric are inputs, so they live in core.h next
 * to the other input enums; their name arrays are defined in peak.c. */

enum core_peak_moment { CORE_MOMENT_FORWARD_END, CORE_MOMENT_BACKWARD, CORE_MOMENT_OPTIMIZER };
#define CORE_MOMENT_COUNT 3

/* "forward_end", "backward", "optimizer_step" */
extern const char *const core_peak_moment_names[CORE_MOMENT_COUNT];

struct core_peak_options {
    enum core_framework framework;
    int loss; /* enum core_loss, or -1 = the profile's */
    bool compile;
    bool optimizer_in_backward;
    bool activation_offload;
    enum core_memory_metric metric;
    bool first_step; /* step 1: Adam's moments do not exist before the first optimizer step */
    /* The ledger core_evaluate() has already computed, or NULL: `generic` then takes its
     * segments instead of deriving them again. */
    const struct core_memory *ledger;
};

/* Options as core_evaluate() resolves them from a result's inputs. */
void core_peak_options_resolved(const struct core_resolved *r, struct core_peak_options *o);

/* One moment on one stage, allocated bytes, by piece. */
struct core_peak_moment_bytes {
    double weights;     /* stored parameters (and unsharded copies a profile keeps) */
    double grads;       /* gradients alive at this moment */
    double optimizer;   /* master weights and moments */
    double activations; /* saved activations of every in-flight micro-batch, and the working set */
    double logits;      /* the loss's logits-sized buffers */
    double buffers;     /* communication and temporary buffers (gathers, buckets, optimizer) */
    double total;       /* sum of the above */
    double stranded;    /* freed but not reusable at this instant: reserved, not allocated */
};

struct core_peak {
    double bytes;     /* the peak in the requested metric */
    double gb;        /* bytes / 1e9 */
    double gib;       /* bytes / 2^30 */
    double allocated; /* the allocated peak it derives from */
    double held;      /* allocated + blocks freed but not reusable at that instant: what the
                         allocator holds before its rounding and fragmentation slack */
    enum core_memory_metric metric;
    enum core_framework framework;
    enum core_loss loss; /* as resolved */
    enum core_peak_moment at;
    int stage;              /* pipeline stage index that peaks (0 = first) */
    const char *stage_name; /* "only" (pp = 1), "first", "last" */
    double in_flight;       /* micro-batches whose activations the peaking stage holds */
    /* [0] first stage, [1] last stage (equal when pp = 1), by moment. */
    struct core_peak_moment_bytes stages[2][CORE_MOMENT_COUNT];
};

/* The peak for resolved inputs r under options o. r must be valid (core_evaluate's checks). */
void core_peak_compute(const struct core_resolved *r, const struct core_peak_options *o,
                       struct core_peak *out);

/* The caching allocator over a replayed step (peak_replay.h), where the replay's code is the
 * framework's: LoRA or QLoRA (an unquantized or bitsandbytes NF4 base) under Hugging Face's
 * Trainer (PEFT, the Llama/Mistral layer, flash attention, reentrant full checkpointing,
 * transformers' unfused fp32 loss), one pipeline stage, no sequence parallelism, eager, no
 * offload; false elsewhere. Its segments' high-water mark less its live bytes' is the
 * allocator's slack: core_peak_compute's reserved and device figures add it to the allocated
 * peak instead of the profile's factor (docs/frameworks.md, "The statistic"). */
struct core_step_replay;
bool core_peak_replay(const struct core_resolved *r, const struct core_peak_options *o,
                      struct core_step_replay *out);

#endif
