/*
 * peak_replay.h - the caching allocator's reserved bytes over a replayed training step with a
 * frozen base and full activation checkpointing (docs/frameworks.md, "The statistic").
 *
 * The allocator model is caching_alloc.h's (PyTorch's CUDACachingAllocator: 512-byte rounding,
 * best fit, 2/20 MiB segments, split above 1 MiB, merge on free, no release). What is replayed is
 * the sequence of tensors the Hugging Face Llama/Mistral code allocates and frees in one step
 * under reentrant checkpointing (transformers' default): every layer's forward without
 * autograd (only each layer's input kept), the loss's forward and backward, and per layer, top
 * to bottom, its recompute with autograd (the saved tensors kept) and its backward (each op's
 * input gradient, the bitsandbytes linears' dequantized weight around every matmul, FSDP's
 * gathered layer around both passes). The step is replayed several times: the segments the
 * first step left cached are reused and split by the next, and the reserved high-water mark
 * grows until the pattern repeats. The model's weights and state are not replayed: they were
 * allocated at load time, in segments of their own, and are resident throughout.
 */
#ifndef MEMWALL_CORE_PEAK_REPLAY_H
#define MEMWALL_CORE_PEAK_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* One step's shapes, per GPU. Widths in elements per token, bytes per element. */
struct core_step_shape {
    int64_t tokens;             /* tokens of one micro-batch */
    int64_t layers;             /* decoder layers */
    int64_t hidden, q, kv, ffn; /* hidden, query width, one of k/v's width, MLP width */
    int64_t heads;              /* query heads */
    int64_t vocab;              /* the output layer's local vocabulary */
    int stream;                 /* the residual stream's bytes (4 under PEFT's k-bit preparation) */
    int norm_out;               /* an RMSNorm's output (4 when its weight is fp32) */
    int compute;                /* the compute dtype's bytes */
    bool dequant; /* the base's linears are quantized (bitsandbytes NF4): dequantized per matmul */
    int64_t gather; /* one layer's gathered parameters under FSDP, bytes (0: none) */
    /* FSDP1's reshard-only hook on a frozen unit holds each checkpointed layer input and the
     * input gradient accumulated into it until the backward's end (register_multi_grad_hook's
     * AccumulateGrad node, freed by _finalize_params; PROVENANCE-peft.md). */
    bool hold_inputs;
    enum core_loss loss;
    /* The adapters (PEFT's LoRA Linear.forward, tuners/lora/layer.py and bnb.py): rank, the
     * wrapped linears (mask of enum core_module), their tensors' bytes per element (adapters.c's
     * dtypes: a the adapter's GEMMs, res the base output, sum after the add) and which casts
     * and copies they make. */
    int64_t rank;
    unsigned wrapped;
    int a, res, sum;
    bool cast_in, cast_back, clone;
};

struct core_step_replay {
    int64_t peak_reserved; /* the replayed tensors' segments, high-water mark, bytes */
    int64_t peak_live;     /* their live bytes (after rounding), high-water mark */
    int steps;             /* steps replayed until the high-water mark repeated */
};

/* Replays steps until the reserved high-water mark stops growing (at most CORE_REPLAY_STEPS).
 * False when a size overflows or the allocator model runs out of blocks. */
#define CORE_REPLAY_STEPS 4
bool core_step_replay(const struct core_step_shape *s, struct core_step_replay *out);

#endif
