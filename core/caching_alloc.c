/*
 * caching_alloc.c - the caching allocator's reserved memory over a replayed pass (caching_alloc.h
 * states the rules and the PyTorch file they are read from).
 */
#include "caching_alloc.h"

#include <string.h>

#define MIN_BLOCK    512                 /* kMinBlockSize */
#define SMALL_SIZE   ((int64_t)1 << 20)  /* kSmallSize: 1 MiB */
#define LARGE_BUFFER ((int64_t)20 << 20) /* kLargeBuffer: 20 MiB */
#define MIN_LARGE    ((int64_t)10 << 20) /* kMinLargeAlloc: 10 MiB */
#define ROUND_LARGE  ((int64_t)2 << 20)  /* kRoundLarge: 2 MiB */
#define BYTES_MAX    ((int64_t)1 << 56)  /* beyond any device: refused, overflow */

void core_alloc_init(struct core_alloc *al)
{
    memset(al, 0, sizeof *al);
}

static int64_t round_size(int64_t bytes)
{
    return bytes < MIN_BLOCK ? MIN_BLOCK : (bytes + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
}

static int64_t segment_size(int64_t bytes)
{
    return bytes < MIN_LARGE ? LARGE_BUFFER : (bytes + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

/* The lowest dead slot, else the first never used one. */
static int free_slot(struct core_alloc *al)
{
    for (int i = 0; i < al->top; i++)
        if (!al->blocks[i].alive)
            return i;
    if (al->top < CORE_ALLOC_BLOCKS)
        return al->top++;
    al->overflow = true;
    return -1;
}

/* The best fit: the smallest free large-pool block of at least `bytes`, the lower segment and
 * offset first among equal sizes (the pool's (size, address) order); -1 when none holds it. */
static int best_fit(const struct core_alloc *al, int64_t bytes)
{
    int best = -1;

    for (int i = 0; i < al->top; i++) {
        const struct core_alloc_block *b = &al->blocks[i], *c;

        if (!b->alive || b->used || b->segment < 0 || b->size < bytes)
            continue;
        c = best >= 0 ? &al->blocks[best] : NULL;
        if (c == NULL || b->size < c->size ||
            (b->size == c->size &&
             (b->segment < c->segment || (b->segment == c->segment && b->offset < c->offset))))
            best = i;
    }
    return best;
}

static void count_live(struct core_alloc *al, int64_t bytes)
{
    al->live += bytes;
    if (al->live > al->peak_live)
        al->peak_live = al->live;
}

static int new_segment(struct core_alloc *al, int64_t bytes)
{
    int slot = free_slot(al);
    int64_t size = segment_size(bytes);

    if (slot < 0 || al->segments >= CORE_ALLOC_BLOCKS) {
        al->overflow = true;
        return -1;
    }
    al->segment_bytes[al->segments] = size;
    al->blocks[slot] = (struct core_alloc_block){.offset = 0,
                                                 .size = size,
                                                 .segment = al->segments,
                                                 .prev = -1,
                                                 .next = -1,
                                                 .used = false,
                                                 .alive = true};
    al->segments++;
    al->reserved += size;
    if (al->reserved > al->peak_reserved)
        al->peak_reserved = al->reserved;
    return slot;
}

int core_alloc_malloc(struct core_alloc *al, int64_t bytes)
{
    int64_t size;
    int slot;

    if (bytes <= 0 || bytes > BYTES_MAX) {
        al->overflow = true;
        return -1;
    }
    size = round_size(bytes);
    if (size <= SMALL_SIZE) { /* the small pool: live bytes only */
        slot = free_slot(al);
        if (slot >= 0) {
            al->blocks[slot] = (struct core_alloc_block){
                .size = size, .segment = -1, .prev = -1, .next = -1, .used = true, .alive = true};
            count_live(al, size);
        }
        return slot;
    }
    slot = best_fit(al, size);
    if (slot < 0)
        slot = new_segment(al, size);
    if (slot < 0)
        return -1;
    struct core_alloc_block *b = &al->blocks[slot];
    if (b->size - size > SMALL_SIZE) { /* should_split: the remainder stays a free block */
        int rest = free_slot(al);

        if (rest < 0)
            return -1;
        al->blocks[rest] = (struct core_alloc_block){.offset = b->offset + size,
                                                     .size = b->size - size,
                                                     .segment = b->segment,
                                                     .prev = slot,
                                                     .next = b->next,
                                                     .used = false,
                                                     .alive = true};
        if (b->next >= 0)
            al->blocks[b->next].prev = rest;
        b->next = rest;
        b->size = size;
    }
    b->used = true;
    count_live(al, b->size);
    return slot;
}

void core_alloc_free(struct core_alloc *al, int handle)
{
    struct core_alloc_block *b;
    int n;

    if (handle < 0 || handle >= al->top || !al->blocks[handle].alive || !al->blocks[handle].used)
        return;
    b = &al->blocks[handle];
    al->live -= b->size;
    if (b->segment < 0) {
        b->alive = false;
        return;
    }
    b->used = false;
    n = b->next;
    if (n >= 0 && !al->blocks[n].used) { /* absorb the free block after */
        b->size += al->blocks[n].size;
        b->next = al->blocks[n].next;
        if (b->next >= 0)
            al->blocks[b->next].prev = handle;
        al->blocks[n].alive = false;
    }
    n = b->prev;
    if (n >= 0 && !al->blocks[n].used) { /* the free block before absorbs this one */
        al->blocks[n].size += b->size;
        al->blocks[n].next = b->next;
        if (b->next >= 0)
            al->blocks[b->next].prev = n;
        b->alive = false;
    }
}
