/*
 * caching_alloc.h - PyTorch's CUDA caching allocator, as far as a replayed pass's reserved memory
 * depends on it (c10/cuda/CUDACachingAllocator.cpp of PyTorch 2.1-2.4, default configuration:
 * no max_split_size_mb, no expandable_segments, no garbage-collection threshold). Shared by
 * serving's profiling pass (serve_trace.c) and training's replayed step (peak_replay.c).
 *
 * vLLM V0 up to 0.6.3 measured its profiling peak as a drop in the device's free memory
 * (torch.cuda.mem_get_info before and after the pass, with no empty_cache in between), so what
 * it counts is the allocator's reserved segments, not the live tensors. The model here replays
 * a pass's allocations and frees and reports the most it had reserved:
 *  - a request is rounded up to a multiple of 512 bytes (kMinBlockSize, round_size);
 *  - requests above 1 MiB (kSmallSize) are served from the large pool: the smallest free block
 *    that holds the request (get_free_block's best fit over the pool ordered by size, then
 *    address), else a new segment of the request rounded up to 2 MiB (kRoundLarge), or of
 *    20 MiB (kLargeBuffer) for requests under 10 MiB (kMinLargeAlloc) (get_allocation_size);
 *  - a block is split when what remains exceeds 1 MiB (should_split, large pool);
 *  - a freed block merges with its free neighbours of the same segment (free_block,
 *    try_merge_blocks); segments are never released during the pass (no empty_cache; the pass
 *    fits by construction, so the release-and-retry path on a failed cudaMalloc is not taken).
 * Requests of 1 MiB or less go to the small pool (2 MiB segments of their own): they are
 * counted in `live` only, their segments not modelled (a pass's small tensors reserve a few MiB).
 * No malloc: fixed arrays; a pass that needs more blocks than CORE_ALLOC_BLOCKS sets overflow.
 */
#ifndef MEMWALL_CORE_CACHING_ALLOC_H
#define MEMWALL_CORE_CACHING_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#define CORE_ALLOC_BLOCKS 256

struct core_alloc_block {
    int64_t offset, size; /* within its segment, bytes */
    int segment;          /* index into segment_bytes */
    int prev, next;       /* the slots of the blocks before and after it in its segment, or -1 */
    bool used, alive;     /* alive: the slot holds a block (dead slots are reused) */
};

struct core_alloc {
    struct core_alloc_block blocks[CORE_ALLOC_BLOCKS];
    int64_t segment_bytes[CORE_ALLOC_BLOCKS];
    int segments;
    int top; /* slots [top, CORE_ALLOC_BLOCKS) were never used: every scan stops at top */
    int64_t reserved, peak_reserved; /* large-pool segments, bytes */
    int64_t live, peak_live;         /* requested bytes after rounding, both pools */
    bool overflow;
};

void core_alloc_init(struct core_alloc *al);
/* A handle for core_alloc_free (>= 0), or -1 (overflow set) when the arrays are full or bytes is
 * not positive. A small-pool request takes a slot of its own (segment -1, no reserved bytes). */
int core_alloc_malloc(struct core_alloc *al, int64_t bytes);
void core_alloc_free(struct core_alloc *al, int handle);

#endif
