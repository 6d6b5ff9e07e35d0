/*
 * fuzz_serve.c - libFuzzer target: core_serve() (core/serve.h) fed arbitrary model inputs (the
 * core generator of tests/core/core_invariants.h) and serving inputs within their rows' bounds.
 * Properties: it returns CORE_OK, CORE_EINVAL or CORE_ERANGE and never crashes; on CORE_OK every
 * figure is finite and non-negative where it must be, total is the sum of its parts, the pool is
 * blocks x page x layers (or the hybrid group), tokens = blocks x block_size (uniform pools),
 * fits implies total <= capacity and one max_model_len request in the pool, and the advice only
 * appears when it does not serve. A broken property aborts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "core_invariants.h"
#include "serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void gen_serve(struct core_gen *g, struct core_serve_input *in)
{
    core_serve_input_init(in);
    core_gen_input(g, &in->base);
    in->engine = (enum core_engine)gen_pick(g, CORE_ENGINE_COUNT);
    in->quantization = (enum core_quant)gen_pick(g, CORE_QUANT_COUNT);
    in->quant_group_size = gen_pick(g, 4) == 0 ? gen_int(g, 1, CORE_SERVE_GROUP_MAX) : 0;
    in->kv_cache_dtype = (enum core_kv_dtype)gen_pick(g, CORE_KV_DTYPE_COUNT);
    in->gpu_memory_utilization = gen_pick(g, 2) ? 0.9 : gen_log(g, 1e-6, 1);
    in->mem_fraction_static = gen_pick(g, 2) ? 0 : gen_log(g, 1e-6, 1);
    in->kv_cache_free_gpu_mem_fraction = gen_pick(g, 2) ? 0.9 : gen_log(g, 1e-6, 1);
    in->kv_cache_memory = gen_pick(g, 3) == 0 ? gen_int(g, 1, (int64_t)CORE_SERVE_KV_MEM_MAX) : 0;
    in->max_model_len = gen_opt_int(g, 1, CORE_SERVE_LEN_MAX);
    in->max_num_seqs = gen_opt_int(g, 1, CORE_SERVE_SEQS_MAX);
    in->max_num_batched_tokens = gen_opt_int(g, 1, CORE_SERVE_LEN_MAX);
    in->block_size = gen_opt_int(g, 1, CORE_SERVE_BLOCK_MAX);
    in->enforce_eager = gen_pick(g, 2) == 0;
    in->hbm_tbps = gen_pick(g, 4) == 0 ? gen_log(g, 1e-3, CORE_SERVE_TBPS_MAX) : 0;
    /* Last, so the earlier draws of the corpus keep their meaning. */
    in->engine_version = (enum core_engine_version)gen_pick(g, CORE_VERSION_COUNT);
}

static const char *check(const struct core_serve_input *in)
{
    struct core_serve_result r;
    struct core_problems p = {0};
    enum core_status st = core_serve(in, &r, &p);
    const struct core_serve_memory *m = &r.per_gpu;

    if (st != CORE_OK)
        return st == CORE_EINVAL || st == CORE_ERANGE ? (p.count > 0 ? NULL : "no problem named")
                                                      : "unknown status";
    if (m->weights < 0 || m->activations < 0 || m->non_torch < 0 || m->cuda_graphs < 0 ||
        m->kv_cache < 0 || m->capacity <= 0)
        return "a negative segment";
    if (m->total != m->weights + m->activations + m->non_torch + m->cuda_graphs + m->kv_cache)
        return "total is not the sum of its parts";
    if (m->kv_cache != r.kv.pool_bytes || r.kv.blocks < 0 || r.kv.tokens < 0)
        return "pool";
    if (!isfinite(r.kv.max_concurrency) || r.kv.max_concurrency < 0)
        return "concurrency not finite";
    if (r.fits && (m->total > m->capacity || !r.kv.max_model_len_fits))
        return "fits but does not";
    /* A replica that serves gets advice only about the workload: a request longer than
     * max_model_len (core_serve_time_notes), never about the deployment. */
    for (int i = 0; r.fits && i < r.advice_count; i++)
        if (r.resolved.input_len + r.resolved.output_len <= r.resolved.max_model_len ||
            (strcmp(r.advice[i].code, "raise_max_model_len") != 0 &&
             strcmp(r.advice[i].code, "shorten_input_len") != 0))
            return "advice for a replica that serves";
    if (r.kv.max_model_len_supported < 0)
        return "negative longest request";
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct core_gen g = {data, size};
    struct core_serve_input in;
    const char *why;

    (void)core_check; /* the training properties live in the same header: fuzz_core checks them */
    gen_serve(&g, &in);
    why = check(&in);
    if (why != NULL) {
        fprintf(stderr, "property broken: %s\n", why);
        abort();
    }
    return 0;
}
