/*
 * inputs_doc.c - GET /inputs: the input table as JSON, so that clients (the page, pipelines)
 * take every input's kind, bounds, default, unit and choices from the server instead of
 * retyping them, and the contract tests can hold openapi.yaml and docs/model.md to it.
 *
 * Reply: {"inputs": [row...], "plan_inputs": [row...]}, a row being
 *   {name, kind, unit, default, default_doc, minimum, maximum, exclusive_minimum, nullable,
 *    choices, planned, description}
 * kind is integer | size | number | boolean | choice | gpu | model | gpu_list | prices; default
 * is the value an omitted input takes (null when it is resolved from other inputs, described by
 * default_doc); minimum/maximum only on numbers; choices on choice, gpu and model rows.
 */
#include "api_internal.h"

static const char *const kind_names[CORE_KIND_COUNT] = {
    [CORE_KIND_INT] = "integer",
    [CORE_KIND_SIZE] = "size",
    [CORE_KIND_REAL] = "number",
    [CORE_KIND_BOOL] = "boolean",
    [CORE_KIND_FLAG] = "boolean",
    [CORE_KIND_CHOICE] = "choice",
    [CORE_KIND_GPU] = "gpu",
    [CORE_KIND_PRESET] = "model",
    [CORE_KIND_GPUS] = "gpu_list",
    [CORE_KIND_PRICES] = "prices",
    [CORE_KIND_OBJECT] = "object",
    [CORE_KIND_CHOICES] = "choice_list",
    [CORE_KIND_MODULES] = "module_list",
    [CORE_KIND_TEXT] = "string",
};

static bool is_number(const struct core_input_spec *s)
{
    return s->kind == CORE_KIND_INT || s->kind == CORE_KIND_SIZE || s->kind == CORE_KIND_REAL;
}

/* An integral value as a JSON integer, anything else as a real. */
static json_t *number(double x)
{
    if (x == (double)(json_int_t)x && x > -9.0e15 && x < 9.0e15)
        return json_integer((json_int_t)x);
    return json_real(x);
}

static json_t *default_value(const struct core_input_spec *s)
{
    if (s->unset)
        return json_null();
    switch (s->kind) {
    case CORE_KIND_INT:
    case CORE_KIND_SIZE:
    case CORE_KIND_REAL:
        /* A number row whose default is one of its words (word i is stored as -i). */
        if (s->choice_count > 0 && s->dflt <= 0 && s->dflt > -s->choice_count)
            return json_string(s->choices[(int)-s->dflt]);
        return number(s->dflt);
    case CORE_KIND_BOOL:
        return json_boolean(s->dflt != 0);
    case CORE_KIND_CHOICE:
        return json_string(s->choices[(int)s->dflt]);
    case CORE_KIND_GPU:
        return json_string(core_gpus[(int)s->dflt].id);
    default:
        return json_null();
    }
}

static json_t *choices(const struct core_input_spec *s)
{
    json_t *list = json_array();

    if (s->kind == CORE_KIND_CHOICE || s->kind == CORE_KIND_CHOICES)
        for (int i = 0; i < s->choice_count; i++)
            json_array_append_new(list, json_string(s->choices[i]));
    else if (s->kind == CORE_KIND_GPU || s->kind == CORE_KIND_GPUS)
        for (size_t i = 0; i < core_gpu_count; i++)
            json_array_append_new(list, json_string(core_gpus[i].id));
    else if (s->kind == CORE_KIND_PRESET)
        for (size_t i = 0; i < core_preset_count; i++)
            json_array_append_new(list, json_string(core_presets[i].id));

    return list;
}

static json_t *row(const struct core_input_spec *s)
{
    json_t *o = json_object();

    json_object_set_new(o, "name", json_string(s->name));
    json_object_set_new(o, "kind", json_string(kind_names[s->kind]));
    json_object_set_new(o, "unit", json_string(s->unit));
    json_object_set_new(o, "default", default_value(s));
    json_object_set_new(o, "default_doc",
                        s->default_doc ? json_string(s->default_doc) : json_null());
    json_object_set_new(o, "minimum", is_number(s) ? number(s->min) : json_null());
    json_object_set_new(o, "maximum", is_number(s) ? number(s->max) : json_null());
    json_object_set_new(o, "exclusive_minimum", json_boolean(s->min_exclusive));
    json_object_set_new(o, "nullable", json_boolean(s->nullable));
    json_object_set_new(o, "choices", choices(s));
    json_object_set_new(o, "boolean_alias", json_boolean(s->bool_alias));
    json_object_set_new(o, "planned", json_boolean(s->planned));
    json_object_set_new(o, "description", json_string(s->doc));
    return o;
}

static json_t *rows(const struct core_input_spec *table, size_t count)
{
    json_t *list = json_array();

    for (size_t i = 0; i < count; i++)
        json_array_append_new(list, row(&table[i]));
    return list;
}

json_t *api_encode_input_table(void)
{
    json_t *doc = json_object();

    json_object_set_new(doc, "inputs", rows(core_inputs, core_input_count));
    json_object_set_new(doc, "plan_inputs", rows(core_plan_inputs, core_plan_input_count));
    json_object_set_new(doc, "inference_inputs", rows(core_serve_inputs, core_serve_input_count));
    json_object_set_new(doc, "inference_plan_inputs",
                        rows(core_serve_plan_inputs, core_serve_plan_input_count));
    return doc;
}
