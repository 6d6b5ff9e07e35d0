/*
 * write_serve.c - GET|POST /inference's reply members, streamed through the JSON writer like the
 * compute routes' (write.c): "inputs" (the model as core_evaluate() resolves it, the replica and
 * the engine's knobs after its defaults) and "inference" (memory.per_gpu, kv_cache, fits,
 * warnings, advice). Byte figures are {bytes, gb, gib}. docs/serving.md documents each member.
 */
#include "serve_timing.h"
#include "serve_validation.h"
#include "write_keys.h"

void api_write_serve_inputs(struct api_jsonw *w, const struct core_serve_result *r,
                            const char *source)
{
    const struct core_resolved *m = &r->model;
    const struct core_serve_resolved *s = &r->resolved;

    k_open(w, KEY("inputs"));
    k_str(w, KEY("model"),
          m->shape.source == CORE_SHAPE_PRESET ? core_presets[m->shape.preset].id : NULL);
    k_int(w, KEY("params"), m->params);
    k_str(w, KEY("precision"), core_precision_names[m->precision]);
    k_str(w, KEY("engine"), core_engine_names[s->engine]);
    k_str(w, KEY("engine_version"), core_engine_version_names[s->engine_version]);
    k_str(w, KEY("quantization"), core_quant_names[s->quantization]);
    /* null where the format's layout is fixed (none, fp8, bnb, GGUF, MXFP4): the echo posts
     * back as "not given" */
    if (core_quant_formats[s->quantization].group_settable)
        k_int(w, KEY("quant_group_size"), s->quant_group_size);
    else
        k_str(w, KEY("quant_group_size"), NULL);
    k_str(w, KEY("kv_cache_dtype"), core_kv_dtype_names[s->kv_cache_dtype]);
    k_real(w, KEY("gpu_memory_utilization"), s->gpu_memory_utilization);
    k_real(w, KEY("mem_fraction_static"), s->mem_fraction_static);
    k_real(w, KEY("kv_cache_free_gpu_mem_fraction"), s->kv_cache_free_gpu_mem_fraction);
    k_real_if(w, KEY("kv_cache_memory"), s->kv_cache_memory > 0, (double)s->kv_cache_memory);
    k_int(w, KEY("max_model_len"), s->max_model_len);
    k_int(w, KEY("max_num_seqs"), s->max_num_seqs);
    k_int(w, KEY("max_num_batched_tokens"), s->max_num_batched_tokens);
    k_int(w, KEY("block_size"), s->block_size);
    k_bool(w, KEY("enforce_eager"), s->enforce_eager);
    k_real(w, KEY("hbm_tbps"), s->hbm_tbps);
    k_int(w, KEY("input_len"), s->input_len);
    k_int(w, KEY("output_len"), s->output_len);
    if (s->concurrency == CORE_SERVE_CONCURRENCY_MAX)
        k_str(w, KEY("concurrency"), "max");
    else
        k_int(w, KEY("concurrency"), s->concurrency);
    k_str(w, KEY("batching"), core_batching_names[s->batching]);
    k_real_if(w, KEY("usd_per_gpu_hour"), s->usd_per_gpu_hour >= 0, s->usd_per_gpu_hour);
    k_str(w, KEY("gpu"), core_gpus[m->gpu].id);
    k_int(w, KEY("gpus"), s->gpus);
    k_int(w, KEY("tp"), s->tp);
    k_int(w, KEY("pp"), s->pp);
    k_int(w, KEY("ep"), s->ep);
    k_real_if(w, KEY("memory_gb"), s->memory_gb > 0, s->memory_gb);
    api_write_shape(w, &m->shape);
    if (source != NULL)
        k_str(w, KEY("source"), source);
    api_jsonw_close_object(w);
}

static void per_gpu(struct api_jsonw *w, const struct core_serve_memory *g)
{
    k_open(w, KEY("memory"));
    k_open(w, KEY("per_gpu"));
    k_bytes(w, KEY("weights"), g->weights);
    k_bytes(w, KEY("activations"), g->activations);
    k_bytes(w, KEY("non_torch"), g->non_torch);
    k_bytes(w, KEY("cuda_graphs"), g->cuda_graphs);
    k_bytes(w, KEY("kv_cache"), g->kv_cache);
    k_bytes(w, KEY("total"), g->total);
    k_bytes(w, KEY("capacity"), g->capacity);
    api_jsonw_close_object(w);
    api_jsonw_close_object(w);
}

void api_write_inference(struct api_jsonw *w, const struct core_serve_result *r,
                         const json_t *extra)
{
    const struct core_serve_kv *kv = &r->kv;

    k_open(w, KEY("inference"));
    per_gpu(w, &r->per_gpu);
    k_open(w, KEY("kv_cache"));
    k_int(w, KEY("bytes_per_token"), kv->bytes_per_token);
    k_int(w, KEY("block_size"), kv->block_size);
    k_int(w, KEY("page_bytes"), kv->page_bytes);
    k_int(w, KEY("layers"), kv->layers);
    k_bytes(w, KEY("available"), kv->available);
    k_int(w, KEY("blocks"), kv->blocks);
    k_int(w, KEY("tokens"), kv->tokens);
    k_real(w, KEY("max_concurrency"), kv->max_concurrency);
    k_bool(w, KEY("max_model_len_fits"), kv->max_model_len_fits);
    k_int(w, KEY("max_model_len_supported"), kv->max_model_len_supported);
    /* core/serve_validation.c: the engine's end-to-end pool error; null where none measured. */
    k_real_if(w, KEY("expected_error"), core_serve_kv_expected_error(r) >= 0,
              core_serve_kv_expected_error(r));
    api_jsonw_close_object(w);
    k_bool(w, KEY("fits"), r->fits);
    api_write_notes(w, KEY("warnings"), r->warnings, r->warning_count, false, extra);
    api_write_notes(w, KEY("advice"), r->advice, r->advice_count, true, NULL);
    api_jsonw_close_object(w);
}
