/*
 * accesslog.c - per-thread access-line buffers and their flusher (see accesslog.h).
 *
 * Each slot has two buffers: its thread appends to the active one under `lock`, which is held
 * for a memcpy and nothing longer. Whoever writes out (the flusher on its tick, the thread when
 * its buffer is full, the stop) takes `write_lock`, swaps the buffers under `lock` and writes
 * the one it took after letting `lock` go, so the thread goes on appending meanwhile. Before,
 * the flusher held the single buffer's lock through its write(), and under wrk the workers
 * queued behind it: ~1.6 futex calls per request, none with this. `write_lock` is held from the
 * swap to the end of the write, so a slot's buffers reach the file in the order they were
 * filled.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accesslog.h"
#include "logline.h"

struct server_accesslog_slot {
    pthread_mutex_t lock;       /* `active` and its buffer's length and bytes */
    pthread_mutex_t write_lock; /* from a swap to the end of writing what it took */
    unsigned active;
    size_t len[2];
    char data[2][SERVER_ACCESSLOG_BUFFER];
};

/* Every started log gets a new generation, so a thread's remembered slot can never belong to
 * an earlier log that happened to live at the same address. */
static atomic_ullong generations;

/* The slot the calling thread was given, and by which log (a worker serves one daemon). */
static _Thread_local struct {
    unsigned long long generation;
    struct server_accesslog_slot *slot;
} mine;

/* Write len bytes of whole lines in pieces of at most PIPE_BUF bytes, each ending at a line's
 * end (a single longer line goes alone), so that no write() to a pipe can be interleaved with
 * another writer's. */
static void write_lines(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        size_t n = len;

        if (n > PIPE_BUF) {
            n = PIPE_BUF;
            while (n > 0 && buf[n - 1] != '\n')
                n--;
            if (n == 0) { /* one line longer than PIPE_BUF: up to its end */
                const char *nl = memchr(buf, '\n', len);

                n = nl != NULL ? (size_t)(nl - buf) + 1 : len;
            }
        }
        server_log_write(fd, buf, n);
        buf += n;
        len -= n;
    }
}

/* With write_lock held: make the other (empty: its last writer emptied it under write_lock)
 * buffer active, put `line` (len <= SERVER_ACCESSLOG_BUFFER, or none) in it, and write out the
 * one that was active. */
static void swap_and_write(int fd, struct server_accesslog_slot *slot, const char *line, size_t len)
{
    unsigned old;

    pthread_mutex_lock(&slot->lock);
    old = slot->active;
    if (slot->len[old] == 0 && line == NULL) {
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    slot->active = old ^ 1U;
    if (line != NULL) {
        memcpy(slot->data[old ^ 1U], line, len);
        slot->len[old ^ 1U] = len;
    }
    pthread_mutex_unlock(&slot->lock);
    /* the thread appends to the other buffer meanwhile; only write_lock's holder touches this */
    write_lines(fd, slot->data[old], slot->len[old]);
    slot->len[old] = 0;
}

static void flush_slot(int fd, struct server_accesslog_slot *slot)
{
    pthread_mutex_lock(&slot->write_lock);
    swap_and_write(fd, slot, NULL, 0);
    pthread_mutex_unlock(&slot->write_lock);
}

void server_accesslog_flush(struct server_accesslog *log)
{
    unsigned n = atomic_load(&log->claimed);

    if (n > log->nslots)
        n = log->nslots;
    for (unsigned i = 0; i < n; i++)
        flush_slot(log->fd, &log->slots[i]);
}

static void *flusher(void *arg)
{
    struct server_accesslog *log = arg;

    pthread_mutex_lock(&log->stop_lock);
    while (!log->stopping) {
        struct timespec until;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += log->flush_ms / 1000;
        until.tv_nsec += (long)(log->flush_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&log->stop_cond, &log->stop_lock, &until);
        if (log->stopping)
            break;
        pthread_mutex_unlock(&log->stop_lock);
        server_accesslog_flush(log);
        pthread_mutex_lock(&log->stop_lock);
    }
    pthread_mutex_unlock(&log->stop_lock);
    return NULL;
}

bool server_accesslog_start(struct server_accesslog *log, int fd, unsigned threads,
                            unsigned flush_ms)
{
    pthread_condattr_t attr;
    bool attr_made = false, stop_lock_made = false, cond_made = false, ok = false;
    unsigned locks_made = 0;

    memset(log, 0, sizeof *log);
    log->fd = fd;
    log->generation = atomic_fetch_add(&generations, 1ULL) + 1;
    log->flush_ms = flush_ms;
    if (threads == 0 || flush_ms == 0)
        goto cleanup;
    log->slots = calloc(threads, sizeof *log->slots);
    if (log->slots == NULL)
        goto cleanup;
    for (; locks_made < threads; locks_made++) {
        if (pthread_mutex_init(&log->slots[locks_made].lock, NULL) != 0)
            goto cleanup;
        if (pthread_mutex_init(&log->slots[locks_made].write_lock, NULL) != 0) {
            pthread_mutex_destroy(&log->slots[locks_made].lock);
            goto cleanup;
        }
    }
    if (pthread_mutex_init(&log->stop_lock, NULL) != 0)
        goto cleanup;
    stop_lock_made = true;
    /* the flusher's deadline is on the monotonic clock: a wall-clock step cannot stall it */
    if (pthread_condattr_init(&attr) != 0)
        goto cleanup;
    attr_made = true;
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&log->stop_cond, &attr) != 0)
        goto cleanup;
    cond_made = true;
    log->nslots = threads; /* before the flusher, which reads it */
    if (pthread_create(&log->flusher, NULL, flusher, log) != 0)
        goto cleanup;
    log->flusher_running = true;
    ok = true;

cleanup:
    /* Undo, in reverse, what was made; on success only the attribute object goes. */
    if (attr_made)
        pthread_condattr_destroy(&attr);
    if (!ok) {
        if (cond_made)
            pthread_cond_destroy(&log->stop_cond);
        if (stop_lock_made)
            pthread_mutex_destroy(&log->stop_lock);
        while (locks_made > 0) {
            pthread_mutex_destroy(&log->slots[--locks_made].lock);
            pthread_mutex_destroy(&log->slots[locks_made].write_lock);
        }
        free(log->slots);
        log->slots = NULL;
        log->nslots = 0;
    }
    return ok;
}

void server_accesslog_write(struct server_accesslog *log, const char *line, size_t len)
{
    struct server_accesslog_slot *slot;

    if (mine.generation != log->generation) {
        unsigned i = log->flusher_running ? atomic_fetch_add(&log->claimed, 1U) : log->nslots;

        mine.generation = log->generation;
        mine.slot = i < log->nslots ? &log->slots[i] : NULL;
    }
    slot = mine.slot;
    if (slot == NULL || len > SERVER_ACCESSLOG_BUFFER) {
        write_lines(log->fd, line, len);
        return;
    }
    pthread_mutex_lock(&slot->lock);
    if (slot->len[slot->active] + len <= SERVER_ACCESSLOG_BUFFER) {
        unsigned a = slot->active;

        memcpy(slot->data[a] + slot->len[a], line, len);
        slot->len[a] += len;
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    pthread_mutex_unlock(&slot->lock);
    /* Full: write it out. The flusher may swap first, which leaves room; swap_and_write() puts
     * the line in the fresh buffer either way, after everything written before it. */
    pthread_mutex_lock(&slot->write_lock);
    swap_and_write(log->fd, slot, line, len);
    pthread_mutex_unlock(&slot->write_lock);
}

void server_accesslog_stop(struct server_accesslog *log)
{
    if (log->flusher_running) {
        pthread_mutex_lock(&log->stop_lock);
        log->stopping = true;
        pthread_cond_signal(&log->stop_cond);
        pthread_mutex_unlock(&log->stop_lock);
        pthread_join(log->flusher, NULL);
        log->flusher_running = false;
        pthread_cond_destroy(&log->stop_cond);
        pthread_mutex_destroy(&log->stop_lock);
    }
    if (log->slots != NULL) {
        server_accesslog_flush(log);
        for (unsigned i = 0; i < log->nslots; i++) {
            pthread_mutex_destroy(&log->slots[i].lock);
            pthread_mutex_destroy(&log->slots[i].write_lock);
        }
        free(log->slots);
    }
    log->slots = NULL;
    log->nslots = 0;
    atomic_store(&log->claimed, 0U);
}
