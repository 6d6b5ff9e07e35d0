/*
 * plan_reply.c - the POST /plan reply as a jansson value, names exactly as the API contract
 * spells them (openapi.yaml, docs/planner.md).
 *
 * Built with json_pack and a NULL-propagating setter so that one failed allocation anywhere
 * makes the whole value NULL, which the reply function turns into a 500: a reply is either
 * complete or not sent. Byte figures are {bytes, gb, gib} with GB = 1e9 and GiB = 2^30, as the
 * compute routes write them (write.c); absent optional numbers are null. This is the only encoder
 * of the reply; tests/golden holds its bytes (elapsed_seconds masked).
 */
#include "api_internal.h"

static json_t *bytes(int64_t b)
{
    return json_pack("{s:I,s:f,s:f}", "bytes", (json_int_t)b, "gb", (double)b / 1e9, "gib",
                     (double)b / 1073741824.0);
}

/* 0 means "not given". */
static json_t *real_or_null(double x)
{
    return x > 0 ? json_real(x) : json_null();
}

static json_t *shape(const struct core_shape *s)
{
    const struct core_arch *a = &s->arch;
    return json_pack("{s:s,s:s?,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:I,s:I}", "source",
                     core_shape_source_names[s->source], "preset",
                     s->preset >= 0 ? core_presets[s->preset].id : NULL, "layers",
                     (json_int_t)a->layers, "hidden", (json_int_t)a->hidden, "heads",
                     (json_int_t)a->heads, "kv_heads", (json_int_t)a->kv_heads, "head_dim",
                     (json_int_t)a->head_dim, "ffn_hidden", (json_int_t)a->ffn_hidden, "vocab",
                     (json_int_t)a->vocab, "gated_mlp", (int)a->gated_mlp, "tied_embeddings",
                     (int)a->tied_embeddings, "learned_positions", (json_int_t)a->learned_positions,
                     "params", (json_int_t)s->arch_params);
}

/* Sets key to value (stolen) unless obj is already NULL; returns obj, or NULL (released) when
 * out of memory, so a chain of calls degrades to NULL like json_pack. */
static json_t *with(json_t *obj, const char *key, json_t *value)
{
    if (obj == NULL || value == NULL || json_object_set_new(obj, key, value) != 0) {
        json_decref(obj);
        json_decref(value);
        return NULL;
    }
    return obj;
}

static json_t *flag_value(enum core_flag f)
{
    return json_boolean(f == CORE_FLAG_YES);
}

/* The peak's profile inputs the request gave (a framework other than generic, and its
 * overrides), so /fit of a plan's config judges it as the planner did (core/plan_judge.c). */
static json_t *profile_inputs(const struct core_input *in, json_t *c)
{
    if (in->framework != CORE_FW_GENERIC)
        c = with(c, "framework", json_string(core_framework_names[in->framework]));
    if (in->loss >= 0 && in->loss < CORE_LOSS_COUNT)
        c = with(c, "loss", json_string(core_loss_names[in->loss]));
    if (in->compile)
        c = with(c, "compile", json_true());
    if (in->optimizer_in_backward)
        c = with(c, "optimizer_in_backward", json_true());
    if (in->activation_offload)
        c = with(c, "activation_offload", json_true());
    if (in->memory_metric != CORE_METRIC_ALLOCATED)
        c = with(c, "memory_metric", json_string(core_memory_metric_names[in->memory_metric]));
    return c;
}

/* The uneven split's inputs (core/plan_table.c), the ones set: the names /fit reads and
 * Megatron-LM's --decoder-first/last-pipeline-num-layers take. */
static json_t *uneven_split(json_t *obj, const struct core_plan *p)
{
    if (p->first_stage_layers > 0)
        obj = with(obj, "decoder_first_pipeline_num_layers",
                   json_integer((json_int_t)p->first_stage_layers));
    if (p->last_stage_layers > 0)
        obj = with(obj, "decoder_last_pipeline_num_layers",
                   json_integer((json_int_t)p->last_stage_layers));
    return obj;
}

/* A plan's configuration: the model inputs as the request gave them (so /fit resolves the same
 * shape), the training inputs resolved, the hardware overrides given, and the planner's
 * choices. Valid /fit and /runtime input; /runtime of it gives the plan's days: with mfu
 * "predicted" it runs the same time model on the same layout and global batch, with a number
 * mfu is the plan's effective MFU. */
static json_t *plan_config(const struct core_input *in, const struct core_resolved *r,
                           const struct core_plan *p)
{
    struct arch_input {
        const char *name;
        int64_t value;
    } const arch[] = {{"params", in->params},     {"active_params", in->active_params},
                      {"layers", in->layers},     {"hidden", in->hidden},
                      {"heads", in->heads},       {"kv_heads", in->kv_heads},
                      {"head_dim", in->head_dim}, {"ffn_hidden", in->ffn_hidden},
                      {"vocab", in->vocab}};
    struct hardware_input {
        const char *name;
        double value;
    } const hardware[] = {{"gpus_per_node", (double)in->gpus_per_node},
                          {"intra_node_gbs", in->intra_node_gbs},
                          {"inter_node_gbs", in->inter_node_gbs}};
    json_t *c = json_object();

    if (in->preset >= 0)
        c = with(c, "model", json_string(core_presets[in->preset].id));
    for (size_t i = 0; i < sizeof arch / sizeof arch[0]; i++)
        if (arch[i].value > 0)
            c = with(c, arch[i].name, json_integer((json_int_t)arch[i].value));
    if (in->gated_mlp != CORE_FLAG_AUTO)
        c = with(c, "gated_mlp", flag_value(in->gated_mlp));
    if (in->tied_embeddings != CORE_FLAG_AUTO)
        c = with(c, "tied_embeddings", flag_value(in->tied_embeddings));
    c = with(c, "seq_len", json_integer((json_int_t)r->seq_len));
    c = with(c, "tokens", json_real(r->tokens));
    c = with(c, "precision", json_string(core_precision_names[r->precision]));
    c = with(c, "grad_precision", json_string(core_precision_names[r->grad_precision]));
    c = with(c, "master_weights", json_boolean(r->master_weights));
    c = with(c, "optimizer", json_string(core_optimizer_names[r->optimizer]));
    c = with(c, "flash_attention", json_boolean(r->flash_attention));
    c = with(c, "attention_flops", json_string(core_attention_flops_names[r->attention_flops]));
    if (in->memory_gb > 0)
        c = with(c, "memory_gb", json_real(in->memory_gb));
    if (in->peak_tflops > 0)
        c = with(c, "peak_tflops", json_real(in->peak_tflops));
    c = with(c, "reserve_gb", json_real(r->reserve_gb));
    c = with(c, "count", json_string(core_count_names[r->count]));
    c = with(c, "gpu", json_string(core_gpus[p->gpu].id));
    c = with(c, "gpus", json_integer((json_int_t)p->gpus));
    c = with(c, "tp", json_integer((json_int_t)p->tp));
    c = with(c, "pp", json_integer((json_int_t)p->pp));
    c = with(c, "sequence_parallel", json_boolean(p->sequence_parallel));
    c = with(c, "zero_stage", json_integer(p->zero_stage));
    c = with(c, "checkpointing", json_string(core_checkpointing_names[p->checkpointing]));
    c = with(c, "batch", json_integer((json_int_t)p->batch));
    c = with(c, "cp", json_integer((json_int_t)p->cp));
    c = with(c, "virtual_stages", json_integer((json_int_t)p->virtual_stages));
    c = uneven_split(c, p); /* Megatron-LM's uneven split where pp does not divide the layers */
    if (r->shape.arch.experts > 0) { /* the experts' grid the search chose */
        c = with(c, "ep", json_integer((json_int_t)p->ep));
        c = with(c, "etp", json_integer((json_int_t)p->etp));
    }
    c = with(c, "mfu", p->predicted ? json_string("predicted") : json_real(p->mfu));
    c = with(c, "global_batch", json_real(p->global_batch));
    c = with(c, "global_batch_tokens", json_real(p->global_batch_tokens));
    for (size_t i = 0; i < sizeof hardware / sizeof hardware[0]; i++)
        if (hardware[i].value > 0)
            c = with(c, hardware[i].name, json_real(hardware[i].value));
    if (in->tp_comm_overlap != CORE_FLAG_AUTO)
        c = with(c, "tp_comm_overlap", flag_value(in->tp_comm_overlap));
    if (in->dp_comm_overlap != CORE_FLAG_AUTO)
        c = with(c, "dp_comm_overlap", flag_value(in->dp_comm_overlap));
    if (p->usd_per_gpu_hour >= 0)
        c = with(c, "usd_per_gpu_hour", json_real(p->usd_per_gpu_hour));
    return profile_inputs(in, c);
}

/* The step-time model's figures for the plan's layout (core_perf_predict), written by the one
 * encoder of `performance` (api/write.c) and read back into the reply's tree: the dump prints
 * every number to the 15 digits it was written with, so the bytes are the encoder's. */
static json_t *performance(const struct core_perf *perf)
{
    char buf[1024];
    struct api_jsonw w;
    json_t *j = NULL;

    api_jsonw_init_buffer(&w, buf, sizeof buf);
    api_jsonw_open_object(&w);
    api_write_performance_members(&w, perf, NULL);
    api_jsonw_close_object(&w);
    if (!w.failed)
        j = json_loadb(w.buf, w.len, 0, NULL);
    api_jsonw_free(&w);
    return j != NULL ? j : json_null();
}

/* The assumed-MFU model's factors; null for a predicted plan (its breakdown says it all). */
static json_t *efficiency(const struct core_plan *p)
{
    if (p->predicted)
        return json_null();
    return json_pack("{s:f,s:f,s:f}", "recompute", p->recompute_factor, "bubble", p->bubble_factor,
                     "tensor", p->tensor_factor);
}

static json_t *plan_object(const struct core_input *in, const struct core_resolved *r,
                           const struct core_plan *p)
{
    json_t *obj = json_pack(
        "{s:o,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:s,s:I,s:I,s:f,s:f,s:f,s:o,s:o,s:f,s:o,"
        "s:{s:o,s:o,s:o,s:o,s:o,s:o}}",
        "config", plan_config(in, r, p), "gpu", core_gpus[p->gpu].id, "gpus", (json_int_t)p->gpus,
        "tp", (json_int_t)p->tp, "pp", (json_int_t)p->pp, "cp", (json_int_t)p->cp, "virtual_stages",
        (json_int_t)p->virtual_stages, "dp", (json_int_t)p->dp, "zero_stage", p->zero_stage,
        "checkpointing", core_checkpointing_names[p->checkpointing], "batch", (json_int_t)p->batch,
        "micro_batches", (json_int_t)p->micro_batches, "days", p->days, "gpu_hours", p->gpu_hours,
        "seconds", p->seconds, "cost_usd", p->cost_usd >= 0 ? json_real(p->cost_usd) : json_null(),
        "usd_per_gpu_hour", p->usd_per_gpu_hour >= 0 ? json_real(p->usd_per_gpu_hour) : json_null(),
        "mfu", p->mfu, "efficiency", efficiency(p), "memory_per_gpu", "params", bytes(p->params),
        "grads", bytes(p->grads), "optimizer", bytes(p->optimizer), "activations",
        bytes(p->activations), "total", bytes(p->total), "capacity", bytes(p->capacity));
    json_t *m;

    if (r->shape.arch.experts > 0) {
        obj = with(obj, "ep", json_integer((json_int_t)p->ep));
        obj = with(obj, "etp", json_integer((json_int_t)p->etp));
    }
    obj = uneven_split(obj, p);
    m = json_object_get(obj, "memory_per_gpu");
    if (m != NULL && r->framework != CORE_FW_GENERIC) { /* as /fit: fit.judged "device_peak" */
        json_object_set_new(m, "judged", json_string("device_peak"));
        json_object_set_new(m, "device_peak", bytes(p->judged));
    }
    obj = with(obj, "global_batch", json_real(p->global_batch));
    obj = with(obj, "global_batch_tokens", json_real(p->global_batch_tokens));
    obj = with(obj, "steps", json_real(p->steps));
    return with(obj, "performance", performance(&p->performance));
}

static json_t *plan_list(const struct core_input *in, const struct core_resolved *r,
                         const struct core_plan *plans, int n)
{
    json_t *arr = json_array();

    for (int i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, plan_object(in, r, &plans[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

/* The planner's inputs as resolved: the model and training inputs, the constraints, and the
 * GPUs searched with their prices. */
static json_t *plan_inputs(const struct core_plan_input *in, const struct core_plan_summary *s)
{
    const struct core_resolved *r = &s->resolved;
    json_t *gpus = json_array(), *prices = s->ranked_by_cost ? json_object() : json_null();
    json_t *obj;

    for (int i = 0; i < s->gpus_searched; i++) {
        int g = s->searched[i];
        if (gpus != NULL && json_array_append_new(gpus, json_string(core_gpus[g].id)) != 0) {
            json_decref(gpus);
            gpus = NULL;
        }
        if (s->ranked_by_cost)
            prices = with(prices, core_gpus[g].id, json_real(in->usd_per_gpu_hour[g]));
    }
    obj = json_pack(
        "{s:s?,s:I,s:I,s:I,s:f,s:s,s:s,s:b,s:s,s:b,s:s,s:o,s:o,s:f,s:o,s:s,s:f,s:o,s:o,s:I,s:o,"
        "s:o,s:o}",
        "model", r->shape.source == CORE_SHAPE_PRESET ? core_presets[r->shape.preset].id : NULL,
        "params", (json_int_t)r->params, "active_params", (json_int_t)r->active_params, "seq_len",
        (json_int_t)r->seq_len, "tokens", r->tokens, "precision",
        core_precision_names[r->precision], "grad_precision",
        core_precision_names[r->grad_precision], "master_weights", (int)r->master_weights,
        "optimizer", core_optimizer_names[r->optimizer], "flash_attention", (int)r->flash_attention,
        "attention_flops", core_attention_flops_names[r->attention_flops], "memory_gb",
        real_or_null(in->base.memory_gb), "peak_tflops", real_or_null(in->base.peak_tflops),
        "reserve_gb", r->reserve_gb, "mfu",
        r->mfu_predicted ? json_string("predicted") : json_real(r->mfu), "count",
        core_count_names[r->count], "global_batch_tokens", r->global_batch_tokens, "deadline_days",
        real_or_null(in->deadline_days), "budget_usd",
        in->budget_usd >= 0 ? json_real(in->budget_usd) : json_null(), "gpus_max",
        (json_int_t)in->gpus_max, "gpu", gpus, "usd_per_gpu_hour", prices, "shape",
        shape(&r->shape));
    return obj;
}

json_t *api_encode_plan(const struct core_plan_input *in, const struct core_plan_summary *s,
                        const struct core_plan *plans, const struct core_plan *pareto,
                        double elapsed_seconds)
{
    json_t *reasons = json_array();

    for (int i = 0; reasons != NULL && i < s->reason_count; i++)
        if (json_array_append_new(reasons, json_pack("{s:s,s:s}", "field", s->reasons[i].field,
                                                     "message", s->reasons[i].message)) != 0) {
            json_decref(reasons);
            reasons = NULL;
        }
    return json_pack(
        "{s:o,s:s,s:s,s:o,s:o,s:b,s:I,s:I,s:I,s:f,s:o}", "inputs", plan_inputs(in, s), "time_model",
        s->resolved.mfu_predicted
            ? "seconds = steps * step_seconds with steps = ceil(tokens / global_batch_tokens) "
              "and step_seconds from the step-time model (docs/model.md, \"Step time\") for the "
              "plan's layout: its performance member"
            : "days = F / (G * peak * mfu_eff) / 86400 with F the `count` FLOPs; mfu_eff = mfu * "
              "recompute (model / hardware FLOPs under the checkpointing) * bubble (m / (m + pp "
              "- 1), m micro-batches per step) * tensor (0.7 when tp spans more than one 8-GPU "
              "node)",
        "ranked_by", s->ranked_by_cost ? "cost_usd" : "gpu_hours", "plans",
        plan_list(&in->base, &s->resolved, plans, s->plan_count), "pareto",
        plan_list(&in->base, &s->resolved, pareto, s->pareto_count), "pareto_truncated",
        (int)s->pareto_truncated, "evaluated", (json_int_t)s->evaluated, "fitting",
        (json_int_t)s->fitting, "feasible", (json_int_t)s->feasible, "elapsed_seconds",
        elapsed_seconds, "reasons", reasons);
}
