/*
 * catalog_reply.c - the /gpus and /models replies: the catalogs of core/catalog.c as jansson
 * values, names exactly as the API contract spells them (openapi.yaml).
 *
 * Built with json_pack so that one failed allocation anywhere makes the whole value NULL (the
 * "o" arguments are stolen even on failure), which the reply function turns into a 500: a reply
 * is either complete or not sent. These are the only encoders of their replies; the compute
 * routes stream theirs (write.c). tests/golden holds their bytes.
 */
#include <math.h>

#include "api_internal.h"

/* 0 means "not supported / not published". */
static json_t *real_or_null(double x)
{
    return x > 0 ? json_real(x) : json_null();
}

json_t *api_encode_gpus(void)
{
    json_t *arr = json_array();
    size_t i;

    for (i = 0; arr != NULL && i < core_gpu_count; i++) {
        const struct core_gpu *g = &core_gpus[i];
        json_t *row = json_pack(
            "{s:s,s:s,s:{s:o,s:o,s:o,s:o},s:f,s:f,s:o,s:o,s:o,s:s}", "id", g->id, "name", g->name,
            "peak_tflops", "bf16", real_or_null(g->bf16_tflops), "fp16",
            real_or_null(g->fp16_tflops), "fp8", real_or_null(g->fp8_tflops), "tf32",
            real_or_null(g->tf32_tflops), "memory_gb", g->memory_gb, "hbm_tbps", g->hbm_tbps,
            "watts", real_or_null(g->watts), "int8_tops", real_or_null(g->int8_tops), "usable_gib",
            real_or_null(g->usable_gib), "usable_source", g->usable_source);
        if (json_array_append_new(arr, row) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return json_pack("{s:o,s:s}", "gpus", arr, "default", core_gpus[CORE_GPU_DEFAULT].id);
}

json_t *api_encode_models(void)
{
    json_t *arr = json_array();
    size_t i;

    for (i = 0; arr != NULL && i < core_preset_count; i++) {
        const struct core_preset *p = &core_presets[i];
        const struct core_arch *a = &p->arch;
        struct core_layer_types t;
        core_arch_layer_types(a, &t);
        /* Published counts are whole numbers of parameters: print them as integers. */
        json_t *row = json_pack(
            "{s:s,s:s,s:s,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:I,s:b,s:I,s:I,s:I}}",
            "id", p->id, "name", p->name, "source", p->source, "published_params",
            (json_int_t)llround(p->published_params), "params", (json_int_t)core_arch_params(a),
            "context", (json_int_t)p->context, "architecture", "layers", (json_int_t)a->layers,
            "hidden", (json_int_t)a->hidden, "heads", (json_int_t)a->heads, "kv_heads",
            (json_int_t)a->kv_heads, "head_dim", (json_int_t)a->head_dim, "ffn_hidden",
            (json_int_t)a->ffn_hidden, "vocab", (json_int_t)a->vocab, "gated_mlp",
            (int)a->gated_mlp, "tied_embeddings", (int)a->tied_embeddings, "learned_positions",
            (json_int_t)a->learned_positions, "relative_position_projection",
            (int)a->relative_position_projection, "sliding_window", (json_int_t)t.window,
            "sliding_layers", (json_int_t)t.layers[CORE_LAYER_SLIDING], "linear_layers",
            (json_int_t)t.layers[CORE_LAYER_LINEAR]);
        if (json_array_append_new(arr, row) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return json_pack("{s:o}", "models", arr);
}
