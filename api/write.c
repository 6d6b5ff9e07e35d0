/*
 * write.c - the compute routes' reply members streamed through the JSON writer (jsonw.c).
 *
 * The only encoder of these replies (tests/golden holds their bytes): names exactly as the API
 * contract spells them, byte figures as {bytes, gb, gib} with GB = 1e9 and GiB = 2^30, absent
 * optional numbers null, cost_usd present only when priced.
 * Why not jansson: the compute routes are the hot path, and a jansson tree plus its dump
 * cost ~100x the core evaluation (docs/performance.md).
 */
#include "api_internal.h"
#include "inputs.h"
#include "perf.h"

#include "write_keys.h"

/* extra: more notes ([{code, message}], the launch resolution's), after core's; NULL for none. */
void api_write_notes(struct api_jsonw *w, const char *key, size_t klen,
                     const struct core_note *notes, int count, bool changes, const json_t *extra)
{
    size_t e;
    const json_t *note;

    api_jsonw_key_encoded(w, key, klen);
    api_jsonw_open_array(w);
    for (int i = 0; i < count; i++) {
        const struct core_note *n = &notes[i];
        api_jsonw_open_object(w);
        k_str(w, KEY("code"), n->code);
        k_str(w, KEY("message"), n->message);
        if (changes) {
            k_open(w, KEY("change"));
            for (int k = 0; k < n->change_count; k++) {
                const struct core_change *c = &n->changes[k];
                api_jsonw_key(w, c->input);
                switch (c->kind) {
                case CORE_VALUE_INT:
                    api_jsonw_int(w, c->int_value);
                    break;
                case CORE_VALUE_STRING:
                    api_jsonw_string(w, c->string_value);
                    break;
                case CORE_VALUE_BOOL:
                    api_jsonw_bool(w, c->bool_value);
                    break;
                case CORE_VALUE_REAL:
                    api_jsonw_double(w, c->real_value);
                    break;
                }
            }
            api_jsonw_close_object(w);
        }
        api_jsonw_close_object(w);
    }
    json_array_foreach (extra, e, note) {
        api_jsonw_open_object(w);
        k_str(w, KEY("code"), json_string_value(json_object_get(note, "code")));
        k_str(w, KEY("message"), json_string_value(json_object_get(note, "message")));
        api_jsonw_close_object(w);
    }
    api_jsonw_close_array(w);
}

/* The mixture-of-experts and multi-latent-attention fields of the shape (0 for a dense model,
 * 0 ranks for standard attention), with the architecture's own active and expert counts. */
static void moe_shape(struct api_jsonw *w, const struct core_shape *s)
{
    const struct core_arch *a = &s->arch;
    struct core_arch_counts c = {0};

    if (!core_arch_count(a, &c))
        c.active = c.experts = 0; /* never for a resolved shape */
    k_int(w, KEY("active_params"), c.active);
    k_int(w, KEY("expert_params"), c.experts);
    k_int(w, KEY("experts"), a->experts);
    k_int(w, KEY("experts_per_token"), a->experts_per_token);
    k_int(w, KEY("shared_experts"), a->shared_experts);
    k_int(w, KEY("moe_ffn_hidden"),
          a->experts > 0 ? (a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden) : 0);
    k_int(w, KEY("dense_layers"), a->experts > 0 ? a->dense_layers : 0);
    k_int(w, KEY("moe_router_num_groups"), a->router_groups);
    k_int(w, KEY("moe_router_group_topk"), a->router_group_topk);
    k_int(w, KEY("moe_layers"), c.moe_layers);
    k_int(w, KEY("q_lora_rank"), a->q_lora_rank);
    k_int(w, KEY("kv_lora_rank"), a->kv_lora_rank);
}

/* The attention layer types (docs/architectures.md): the window and how many layers use it. */
static void attention_shape(struct api_jsonw *w, const struct core_arch *a)
{
    struct core_layer_types t;

    core_arch_layer_types(a, &t);
    k_int(w, KEY("sliding_window"), t.window);
    k_int(w, KEY("sliding_layers"), t.layers[CORE_LAYER_SLIDING]);
    k_int(w, KEY("linear_layers"), t.layers[CORE_LAYER_LINEAR]);
}

void api_write_shape(struct api_jsonw *w, const struct core_shape *s)
{
    const struct core_arch *a = &s->arch;

    k_open(w, KEY("shape"));
    k_str(w, KEY("source"), core_shape_source_names[s->source]);
    k_str(w, KEY("preset"), s->preset >= 0 ? core_presets[s->preset].id : NULL);
    k_int(w, KEY("layers"), a->layers);
    k_int(w, KEY("hidden"), a->hidden);
    k_int(w, KEY("heads"), a->heads);
    k_int(w, KEY("kv_heads"), a->kv_heads);
    k_int(w, KEY("head_dim"), a->head_dim);
    k_int(w, KEY("ffn_hidden"), a->ffn_hidden);
    k_int(w, KEY("vocab"), a->vocab);
    k_bool(w, KEY("gated_mlp"), a->gated_mlp);
    k_bool(w, KEY("tied_embeddings"), a->tied_embeddings);
    k_int(w, KEY("learned_positions"), a->learned_positions);
    k_int(w, KEY("params"), s->arch_params);
    moe_shape(w, s);
    attention_shape(w, a);
    api_jsonw_close_object(w);
}

/* The resolved value of an echoed row, as .store keeps it (a flag resolves to a bool). */
static int64_t echo_int(const struct core_input_spec *row, const char *at)
{
    int64_t i64;
    int i;

    if (row->store == CORE_STORE_I64) {
        memcpy(&i64, at, sizeof i64);
        return i64;
    }
    memcpy(&i, at, sizeof i);
    return i;
}

/* One row of the input table as `inputs` shows it (enum core_input_echo). */
static void echo_row(struct api_jsonw *w, const struct core_input_spec *row,
                     const struct core_resolved *in)
{
    const char *at = (const char *)in + row->resolved;
    double d;
    bool b;

    api_jsonw_key(w, row->name);
    switch (row->kind) {
    case CORE_KIND_PRESET: /* the model, only when the shape is the preset's own */
        api_jsonw_string(
            w, in->shape.source == CORE_SHAPE_PRESET ? core_presets[echo_int(row, at)].id : NULL);
        return;
    case CORE_KIND_GPU:
        api_jsonw_string(w, core_gpus[echo_int(row, at)].id);
        return;
    case CORE_KIND_CHOICE: {
        int64_t i = echo_int(row, at);
        api_jsonw_string(w, i >= 0 && i < row->choice_count ? row->choices[i] : NULL);
        return;
    }
    case CORE_KIND_BOOL:
    case CORE_KIND_FLAG:
        memcpy(&b, at, sizeof b);
        api_jsonw_bool(w, b);
        return;
    case CORE_KIND_TEXT: /* a NUL-terminated char[CORE_TEXT_MAX]; "" = not given */
        api_jsonw_string(w, at[0] != '\0' ? at : NULL);
        return;
    case CORE_KIND_MODULES: { /* lora_targets: the mask as Hugging Face names */
        int64_t mask = echo_int(row, at);
        api_jsonw_open_array(w);
        for (int m = 0; m < CORE_MOD_COUNT; m++)
            if (mask & (int64_t)CORE_MOD_BIT(m))
                api_jsonw_string(w, core_module_names[m]);
        api_jsonw_close_array(w);
        return;
    }
    default:
        break;
    }
    if (row->echo == CORE_ECHO_PREDICTED && in->mfu_predicted) {
        api_jsonw_string(w, row->choices[0]);
        return;
    }
    if (row->store != CORE_STORE_DOUBLE) {
        int64_t v = echo_int(row, at);
        if (row->nullable && (double)v == row->dflt)
            api_jsonw_null(w); /* still "not given" */
        else
            api_jsonw_int(w, v);
        return;
    }
    memcpy(&d, at, sizeof d);
    if (row->nullable && d == row->dflt)
        api_jsonw_null(w); /* still "not given" */
    else
        api_jsonw_double(w, d);
}

/* `inputs`: every row of the input table that echoes a resolved value, in the table's order,
 * then the resolved architecture (shape) for the rows that set it. */
void api_write_inputs(struct api_jsonw *w, const struct core_result *r, const char *source)
{
    k_open(w, KEY("inputs"));
    for (size_t i = 0; i < core_input_count; i++)
        if (core_inputs[i].echo == CORE_ECHO_RESOLVED || core_inputs[i].echo == CORE_ECHO_PREDICTED)
            echo_row(w, &core_inputs[i], &r->resolved);
    api_write_shape(w, &r->resolved.shape);
    if (source != NULL)
        k_str(w, KEY("source"), source);
    api_jsonw_close_object(w);
}

void api_write_warnings(struct api_jsonw *w, const struct core_result *r, const json_t *extra)
{
    api_write_notes(w, KEY("warnings"), r->warnings, r->warning_count, false, extra);
}

void api_write_flops(struct api_jsonw *w, const struct core_result *r)
{
    const struct core_flops *f = &r->flops;

    k_open(w, KEY("flops"));
    k_real(w, KEY("six_nd"), f->six_nd);
    k_real(w, KEY("model"), f->model);
    k_real(w, KEY("hardware"), f->hardware);
    k_open(w, KEY("per_token"));
    k_real(w, KEY("forward"), f->per_token.forward);
    k_real(w, KEY("backward"), f->per_token.backward);
    k_real(w, KEY("recompute"), f->per_token.recompute);
    k_real(w, KEY("attention"), f->per_token.attention);
    api_jsonw_close_object(w);
    k_real(w, KEY("attention_fraction"), f->attention_fraction);
    api_jsonw_close_object(w);
}

/* One host ledger: the offloaded segments. */
static void host_ledger(struct api_jsonw *w, const char *key, size_t klen,
                        const struct core_host_bytes *h)
{
    k_open(w, key, klen);
    k_bytes(w, KEY("params"), h->params);
    k_bytes(w, KEY("grads"), h->grads);
    k_bytes(w, KEY("optimizer"), h->optimizer);
    k_bytes(w, KEY("total"), h->total);
    api_jsonw_close_object(w);
}

/* memory.experts (the routed experts' share of per_gpu) and memory.host (offloaded state, per
 * GPU and per node of gpus_per_node GPUs, or of all the GPUs when fewer). */
static void memory_moe_host(struct api_jsonw *w, const struct core_result *r)
{
    const struct core_memory *m = &r->memory;

    k_open(w, KEY("experts"));
    k_bytes(w, KEY("params"), m->expert_params);
    k_bytes(w, KEY("grads"), m->expert_grads);
    k_bytes(w, KEY("optimizer"), m->expert_optimizer);
    api_jsonw_close_object(w);
    k_open(w, KEY("host"));
    host_ledger(w, KEY("per_gpu"), &m->host);
    host_ledger(w, KEY("per_node"), &m->host_node);
    api_jsonw_close_object(w);
    /* memory.adapters: present only when finetune is not full (adapters.c). */
    if (r->resolved.adapters.finetune != CORE_FT_FULL) {
        k_open(w, KEY("adapters"));
        k_bytes(w, KEY("params"), m->adapters.params);
        k_bytes(w, KEY("grads"), m->adapters.grads);
        k_bytes(w, KEY("optimizer"), m->adapters.optimizer);
        k_int(w, KEY("trainable_params"), m->adapters.trainable);
        k_bytes(w, KEY("frozen_base"), m->adapters.frozen);
        api_jsonw_close_object(w);
    }
}

void api_write_memory(struct api_jsonw *w, const struct core_result *r)
{
    const struct core_memory *m = &r->memory;
    const struct core_bytes_per_param *b = &m->bytes_per_param;

    k_open(w, KEY("memory"));
    k_open(w, KEY("per_gpu"));
    k_bytes(w, KEY("params"), m->params);
    k_bytes(w, KEY("grads"), m->grads);
    k_bytes(w, KEY("optimizer"), m->optimizer);
    k_bytes(w, KEY("activations"), m->activations);
    k_bytes(w, KEY("reserve"), m->reserve);
    k_bytes(w, KEY("total"), m->total);
    api_jsonw_close_object(w);
    k_open(w, KEY("bytes_per_param"));
    k_int(w, KEY("weights"), b->weights);
    k_int(w, KEY("master"), b->master);
    k_int(w, KEY("moments"), b->moments);
    k_int(w, KEY("grads"), b->grads);
    k_int(w, KEY("total"), b->total);
    api_jsonw_close_object(w);
    k_open(w, KEY("peak"));
    k_int(w, KEY("bytes"), m->peak.bytes);
    k_gb(w, KEY("gb"), m->peak.bytes);
    k_real(w, KEY("gib"), (double)m->peak.bytes / 1073741824.0);
    k_str(w, KEY("metric"), core_memory_metric_names[m->peak.metric]);
    k_str(w, KEY("at"), m->peak.at);
    k_str(w, KEY("stage"), m->peak.stage);
    k_bytes(w, KEY("device"), m->peak.device);
    k_error(w, KEY("expected_error"), m->peak.expected_error);
    api_jsonw_close_object(w);
    memory_moe_host(w, r);
    api_jsonw_close_object(w);
}

/* 0 means "none": the search found no answer. */
static void k_int_or_null(struct api_jsonw *w, const char *key, size_t klen, int64_t v)
{
    api_jsonw_key_encoded(w, key, klen);
    if (v > 0)
        api_jsonw_int(w, v);
    else
        api_jsonw_null(w);
}

void api_write_fit(struct api_jsonw *w, const struct core_result *r)
{
    const struct core_fit *f = &r->fit;

    k_open(w, KEY("fit"));
    k_bool(w, KEY("fits"), f->fits);
    k_str(w, KEY("judged"), f->judged_peak ? "device_peak" : "ledger");
    k_bytes(w, KEY("capacity"), f->capacity);
    k_bytes(w, KEY("headroom"), f->headroom);
    k_real(w, KEY("utilization"), f->utilization);
    k_str(w, KEY("bottleneck"), core_bottleneck_names[f->bottleneck]);
    k_int_or_null(w, KEY("min_gpus"), f->min_gpus);
    k_int_or_null(w, KEY("min_gpus_state_only"), f->min_gpus_state_only);
    k_int(w, KEY("max_batch"), f->max_batch);
    api_jsonw_close_object(w);
}

void api_write_advice(struct api_jsonw *w, const struct core_result *r)
{
    api_write_notes(w, KEY("advice"), r->advice, r->advice_count, true, NULL);
}

void api_write_runtime(struct api_jsonw *w, const struct core_result *r)
{
    const struct core_runtime *t = &r->runtime;

    k_open(w, KEY("runtime"));
    k_real(w, KEY("flops"), t->flops);
    k_real(w, KEY("seconds"), t->seconds);
    k_real(w, KEY("hours"), t->hours);
    k_real(w, KEY("days"), t->days);
    k_real(w, KEY("gpu_hours"), t->gpu_hours);
    k_real(w, KEY("tokens_per_second"), t->tokens_per_second);
    k_real(w, KEY("tokens_per_second_per_gpu"), t->tokens_per_second_per_gpu);
    k_real(w, KEY("mfu"), t->mfu);
    k_str(w, KEY("mfu_source"),
          t->mfu_measured             ? "measured"
          : r->resolved.mfu_predicted ? "predicted"
                                      : "assumed");
    k_bool(w, KEY("mfu_measured"), t->mfu_measured);
    k_real(w, KEY("peak_flops_per_gpu"), t->peak_flops_per_gpu);
    k_real(w, KEY("global_batch_tokens"), t->global_batch_tokens);
    k_real(w, KEY("steps"), t->steps);
    k_real(w, KEY("step_seconds"), t->step_seconds);
    if (t->cost_usd >= 0)
        k_real(w, KEY("cost_usd"), t->cost_usd);
    api_jsonw_close_object(w);
}

/* The members of `performance`, the one encoder of the step-time model's prediction
 * (docs/model.md, "Step time"): /runtime's reply and every plan of /plan (api/plan_reply.c).
 * With t, the whole run's figures follow the step (the compute routes); a plan passes NULL, as
 * it carries its days and cost beside. */
void api_write_performance_members(struct api_jsonw *w, const struct core_perf *p,
                                   const struct core_runtime *t)
{
    const double terms[CORE_PERF_TERMS] = {
        p->breakdown.compute, p->breakdown.memory_bound, p->breakdown.recompute,
        p->breakdown.tp_comm, p->breakdown.cp_comm,      p->breakdown.pp_bubble,
        p->breakdown.pp_comm, p->breakdown.dp_comm,      p->breakdown.optimizer,
        p->breakdown.ep_comm, p->breakdown.offload,      p->breakdown.moe_host,
    };

    k_real(w, KEY("step_seconds"), p->step_seconds);
    if (t != NULL) {
        k_real(w, KEY("seconds"), t->predicted_seconds);
        k_real(w, KEY("days"), t->predicted_days);
        k_real(w, KEY("gpu_hours"), t->predicted_gpu_hours);
        if (t->predicted_cost_usd >= 0)
            k_real(w, KEY("cost_usd"), t->predicted_cost_usd);
    }
    k_real(w, KEY("mfu"), p->mfu);
    k_real(w, KEY("hfu"), p->hfu);
    k_real(w, KEY("tokens_per_second_per_gpu"), p->tokens_per_second_per_gpu);
    k_real(w, KEY("model_tflops_per_gpu"), p->model_tflops_per_gpu);
    k_open(w, KEY("breakdown"));
    for (int i = 0; i < CORE_PERF_TERMS; i++) {
        api_jsonw_key(w, core_perf_term_names[i]);
        api_jsonw_double(w, terms[i]);
    }
    api_jsonw_close_object(w);
    k_str(w, KEY("bottleneck"), p->bottleneck != NULL ? p->bottleneck : "none");
    k_error(w, KEY("expected_error"), p->expected_error);
}

/* The step-time model's prediction: per step, then the whole run. */
void api_write_performance(struct api_jsonw *w, const struct core_result *r)
{
    k_open(w, KEY("performance"));
    api_write_performance_members(w, &r->performance, &r->runtime);
    api_jsonw_close_object(w);
}
