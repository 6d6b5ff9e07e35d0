/*
 * fields.c - decoding query pairs and JSON objects into a struct core_input, row by row of the
 * core's input table (core/inputs.h).
 *
 * The table owns names, bounds and defaults; this file adds only syntax, one small function per
 * kind of value (a new kind is one function and one row of kind_ops). GET query pairs (strings)
 * and POST JSON members go through the same row and the same string grammar (number.h), so
 * identical inputs give an identical core_input and byte-identical replies. Decoding never stops
 * at the first problem: every bad field is reported at once (400 naming it), so core_evaluate()
 * only sees inputs valid one by one, and its 422 means inputs that contradict each other.
 *
 * Decisions (docs/conventions.md):
 * - A JSON string is decoded exactly like the query value with the same text: {"batch": "4"} ==
 *   ?batch=4, {"params": "7B"} == ?params=7B.
 * - Integers accept any number with an integral value (2, 2.0, 2e0); 2.5 is an error.
 * - Booleans: JSON true/false or the words of number.h. JSON numbers are not booleans. A choice
 *   with a boolean alias (checkpointing) takes true (= its last name) and false (= its first).
 * - JSON null is accepted only by nullable rows and means "not given" (the row's default).
 * - Names are case-sensitive, as the API spells them; a repeated query key is an error.
 * - /plan decodes through the same rows plus core_plan_inputs (they shadow gpu and
 *   usd_per_gpu_hour); the inputs the planner chooses itself are refused there.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "hfconfig.h"
#include "number.h"
#include "plan_input.h"
#include "suggest.h"
#include "value.h"

/* ---------------------------------------------------------------------------------------------
 * One decoder per kind: from text (query values and JSON strings) and from the other JSON types
 * ------------------------------------------------------------------------------------------- */

typedef bool text_fn(const struct core_input_spec *f, const char *s, size_t len,
                     struct api_value *v, char *msg, size_t size);
/* A non-string JSON value: 1 decoded, 0 invalid (msg filled), -1 not a type this kind takes. */
typedef int json_fn(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                    char *msg, size_t size);

static bool number_text(const struct core_input_spec *f, const char *s, size_t len,
                        struct api_value *v, char *msg, size_t size)
{
    const char *why;

    for (int i = 0; i < f->choice_count; i++) /* a number row's words ("predicted") */
        if (api_text_is(s, len, f->choices[i])) {
            v->kind = V_INDEX;
            v->index = i;
            return true;
        }
    why = api_parse_number(s, len, f->kind == CORE_KIND_SIZE, &v->number);
    if (why != NULL) {
        char lead[API_MSG_MAX];

        snprintf(lead, sizeof lead, "%s%s", why, f->choice_count > 0 ? "; or one of: " : "");
        api_list_names(msg, size, lead, f->choices, (size_t)f->choice_count);
        return false;
    }
    v->kind = V_NUMBER;
    return true;
}

static int number_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                       char *msg, size_t size)
{
    (void)f, (void)msg, (void)size;
    if (!json_is_number(j))
        return -1;
    v->kind = V_NUMBER;
    v->number = json_number_value(j);
    return 1;
}

static bool bool_text(const struct core_input_spec *f, const char *s, size_t len,
                      struct api_value *v, char *msg, size_t size)
{
    int b = api_parse_bool(s, len);

    (void)f;
    if (b < 0) {
        snprintf(msg, size, "expected a boolean: true, false, 1, 0, yes or no");
        return false;
    }
    v->kind = V_BOOL;
    v->boolean = b == 1;
    return true;
}

static int bool_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                     char *msg, size_t size)
{
    (void)msg, (void)size;
    if (!json_is_boolean(j) || (f->kind == CORE_KIND_CHOICE && !f->bool_alias))
        return -1;
    v->kind = V_BOOL;
    v->boolean = json_is_true(j);
    return 1;
}

static bool choice_text(const struct core_input_spec *f, const char *s, size_t len,
                        struct api_value *v, char *msg, size_t size)
{
    if (f->bool_alias && api_parse_bool(s, len) >= 0)
        return bool_text(f, s, len, v, msg, size);
    for (int i = 0; i < f->choice_count; i++)
        if (api_text_is(s, len, f->choices[i])) {
            v->kind = V_INDEX;
            v->index = i;
            return true;
        }
    api_list_names(msg, size,
                   f->bool_alias ? "expected a boolean or one of: " : "expected one of: ",
                   f->choices, (size_t)f->choice_count);
    return false;
}

static bool catalog_text(const struct core_input_spec *f, const char *s, size_t len,
                         struct api_value *v, char *msg, size_t size)
{
    bool gpu = f->kind == CORE_KIND_GPU;

    v->index = api_find_catalog(gpu, s, len);
    if (v->index < 0) {
        api_catalog_message(gpu, s, len, msg, size);
        return false;
    }
    v->kind = V_INDEX;
    return true;
}

static int none_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                     char *msg, size_t size)
{
    (void)f, (void)j, (void)v, (void)msg, (void)size;
    return -1;
}

static bool gpus_text(const struct core_input_spec *f, const char *s, size_t len,
                      struct api_value *v, char *msg, size_t size)
{
    (void)f;
    return api_gpu_list_text(s, len, v, msg, size);
}

static int gpus_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                     char *msg, size_t size)
{
    (void)f;
    return json_is_array(j) ? api_gpu_list_json(j, v, msg, size) : -1;
}

static bool prices_text(const struct core_input_spec *f, const char *s, size_t len,
                        struct api_value *v, char *msg, size_t size)
{
    (void)f;
    return api_prices_text(s, len, v, msg, size);
}

static int prices_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                       char *msg, size_t size)
{
    (void)f;
    if (!json_is_number(j) && !json_is_object(j))
        return -1;
    return api_prices_json(j, v, msg, size);
}

/* One name of f's choices into v's list (duplicates add nothing). */
static bool add_choice(const struct core_input_spec *f, const char *s, size_t len,
                       struct api_value *v, char *msg, size_t size)
{
    for (int i = 0; i < f->choice_count; i++)
        if (api_text_is(s, len, f->choices[i])) {
            for (int j = 0; j < v->gpu_count; j++)
                if (v->gpus[j] == i)
                    return true;
            v->gpus[v->gpu_count++] = i; /* at most choice_count distinct names */
            return true;
        }
    api_list_names(msg, size, "expected one of, or a list of: ", f->choices,
                   (size_t)f->choice_count);
    return false;
}

/* "fp8" or "none,fp8,awq". */
static bool choices_text(const struct core_input_spec *f, const char *s, size_t len,
                         struct api_value *v, char *msg, size_t size)
{
    size_t start = 0;

    v->kind = V_GPUS;
    v->gpu_count = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        if (!add_choice(f, s + start, i - start, v, msg, size))
            return false;
        start = i + 1;
    }
    return true;
}

/* ["none", "fp8"] (a plain string goes through choices_text). */
static int choices_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                        char *msg, size_t size)
{
    const json_t *item;
    size_t i;

    if (!json_is_array(j))
        return -1;
    v->kind = V_GPUS;
    v->gpu_count = 0;
    if (json_array_size(j) == 0) {
        snprintf(msg, size, "an empty list: give at least one name");
        return 0;
    }
    json_array_foreach (j, i, item) {
        if (!json_is_string(item)) {
            snprintf(msg, size, "expected names, got %s", api_json_type_name(item));
            return 0;
        }
        if (!add_choice(f, json_string_value(item), json_string_length(item), v, msg, size))
            return 0;
    }
    return 1;
}

/* A text row: at most CORE_TEXT_MAX - 1 printable bytes, well formed by the row's own check. */
static bool text_text(const struct core_input_spec *f, const char *s, size_t len,
                      struct api_value *v, char *msg, size_t size)
{
    const char *why = NULL;

    if (len >= CORE_TEXT_MAX) {
        snprintf(msg, size, "at most %d characters", CORE_TEXT_MAX - 1);
        return false;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) {
            snprintf(msg, size, "printable ASCII only");
            return false;
        }
    if (len > 0)
        why = core_input_text_check(f, s, len);
    if (why != NULL) {
        snprintf(msg, size, "%s", why);
        return false;
    }
    v->kind = V_TEXT;
    memcpy(v->text, s, len);
    v->text[len] = '\0';
    return true;
}

/* lora_targets: module names separated by commas ("q_proj,v_proj"), stored as their mask. */
static bool modules_word(const char *s, size_t len, unsigned *mask, char *msg, size_t size)
{
    unsigned m;

    while (len > 0 && s[0] == ' ')
        s++, len--;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    m = len > 0 ? core_module_mask(s, len) : 0;
    if (m == 0) {
        char lead[API_MSG_MAX], word[25];
        size_t n = len < 24 ? len : 24;

        for (size_t i = 0; i < n; i++) /* printable ASCII only: the message is JSON */
            word[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
        word[n] = '\0';
        snprintf(lead, sizeof lead, "unknown module \"%s\"; names: all-linear, mlp, ", word);
        api_list_names(msg, size, lead, core_module_names, CORE_MOD_COUNT);
        return false;
    }
    *mask |= m;
    return true;
}

static bool modules_text(const struct core_input_spec *f, const char *s, size_t len,
                         struct api_value *v, char *msg, size_t size)
{
    unsigned mask = 0;
    size_t start = 0;

    (void)f;
    for (size_t i = 0; i <= len; i++)
        if (i == len || s[i] == ',') {
            if (!modules_word(s + start, i - start, &mask, msg, size))
                return false;
            start = i + 1;
        }
    v->kind = V_INDEX;
    v->index = (int)mask;
    return true;
}

static int modules_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                        char *msg, size_t size)
{
    unsigned mask = 0;
    size_t i;
    json_t *item;

    (void)f;
    if (!json_is_array(j))
        return -1;
    if (json_array_size(j) == 0) {
        snprintf(msg, size, "expected at least one module name");
        return 0;
    }
    json_array_foreach (j, i, item) {
        if (!json_is_string(item)) {
            snprintf(msg, size, "expected module names (strings), got %s at [%zu]",
                     api_json_type_name(item), i);
            return 0;
        }
        if (!modules_word(json_string_value(item), json_string_length(item), &mask, msg, size))
            return 0;
    }
    v->kind = V_INDEX;
    v->index = (int)mask;
    return 1;
}

struct kind_ops {
    const char *expected; /* for "expected X, got Y" */
    text_fn *text;
    json_fn *json;
};

static const struct kind_ops kind_ops[CORE_KIND_COUNT] = {
    [CORE_KIND_INT] = {"an integer", number_text, number_json},
    [CORE_KIND_SIZE] = {"a number or a string like \"7B\"", number_text, number_json},
    [CORE_KIND_REAL] = {"a number", number_text, number_json},
    [CORE_KIND_BOOL] = {"a boolean", bool_text, bool_json},
    [CORE_KIND_FLAG] = {"a boolean", bool_text, bool_json},
    [CORE_KIND_CHOICE] = {"a string", choice_text, bool_json},
    [CORE_KIND_GPU] = {"a GPU id string", catalog_text, none_json},
    [CORE_KIND_PRESET] = {"a model id string", catalog_text, none_json},
    [CORE_KIND_GPUS] = {"a GPU id or an array of them", gpus_text, gpus_json},
    [CORE_KIND_PRICES] = {"a number or an object of numbers by GPU id", prices_text, prices_json},
    [CORE_KIND_CHOICES] = {"a name or an array of names", choices_text, choices_json},
    [CORE_KIND_TEXT] = {"a string", text_text, none_json},
    [CORE_KIND_MODULES] = {"a module name list (string or array)", modules_text, modules_json},
};

static bool decode_json(const struct core_input_spec *f, const json_t *j, struct api_value *v,
                        char *msg, size_t size)
{
    const struct kind_ops *ops = &kind_ops[f->kind];
    const char *expected = f->bool_alias ? "a string or a boolean"
                           : f->choice_count > 0 && f->kind != CORE_KIND_CHOICE
                               ? "a number or a word"
                               : ops->expected;
    int got;

    if (json_is_string(j))
        return ops->text(f, json_string_value(j), json_string_length(j), v, msg, size);
    got = ops->json(f, j, v, msg, size);
    if (got >= 0)
        return got == 1;
    if (f->nullable && json_is_null(j)) {
        v->kind = V_NULL;
        return true;
    }
    snprintf(msg, size, "expected %s%s, got %s", expected, f->nullable ? " or null" : "",
             api_json_type_name(j));
    return false;
}

/* ---------------------------------------------------------------------------------------------
 * Checking and storing
 * ------------------------------------------------------------------------------------------- */

static bool check_bounds(const struct core_input_spec *f, const struct api_value *v, char *msg,
                         size_t size)
{
    double x = v->number;

    if (v->kind != V_NUMBER)
        return true;
    if (f->kind == CORE_KIND_INT && x != floor(x)) {
        snprintf(msg, size, "must be an integer");
        return false;
    }
    if ((f->min_exclusive ? x <= f->min : x < f->min) || x > f->max) {
        snprintf(msg, size, "must be %s %.15g and <= %.15g", f->min_exclusive ? ">" : ">=", f->min,
                 f->max);
        return false;
    }
    return true;
}

/* base: a struct core_input, or a struct core_plan_input for /plan's rows. */
static void store(const struct core_input_spec *f, const struct api_value *v, char *base)
{
    char *dst = base + f->offset;
    int64_t i64;
    int i;
    bool b;

    if (v->kind == V_NULL) {
        core_input_store_default(f, base);
        return;
    }
    switch (f->store) {
    case CORE_STORE_I64:
        i64 = (int64_t)llround(v->number); /* bounds were checked: well inside int64 */
        memcpy(dst, &i64, sizeof i64);
        break;
    case CORE_STORE_DOUBLE: {
        double d = v->kind == V_INDEX ? -(double)v->index : v->number; /* words: inputs.h */
        memcpy(dst, &d, sizeof d);
        break;
    }
    case CORE_STORE_BOOL:
        b = v->boolean;
        memcpy(dst, &b, sizeof b);
        break;
    case CORE_STORE_GPUS: /* an int count, then the indexes (inputs.h) */
    case CORE_STORE_CHOICES:
        memcpy(dst, &v->gpu_count, sizeof v->gpu_count);
        memcpy(dst + sizeof v->gpu_count, v->gpus,
               (size_t)(f->store == CORE_STORE_GPUS ? CORE_PLAN_GPU_MAX : f->choice_count) *
                   sizeof v->gpus[0]);
        break;
    case CORE_STORE_PRICES:
        memcpy(dst, v->prices, sizeof v->prices);
        break;
    case CORE_STORE_TEXT:
        memcpy(dst, v->text, CORE_TEXT_MAX);
        break;
    case CORE_STORE_INT:
        if (v->kind == V_NUMBER)
            i = (int)v->number;
        else if (v->kind == V_INDEX)
            i = v->index;
        else if (f->kind == CORE_KIND_CHOICE) /* a boolean alias: true = last, false = first */
            i = v->boolean ? f->choice_count - 1 : 0;
        else /* CORE_KIND_FLAG */
            i = v->boolean ? CORE_FLAG_YES : CORE_FLAG_NO;
        memcpy(dst, &i, sizeof i);
        break;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------------------------
 * Decoders
 * ------------------------------------------------------------------------------------------- */

static void finish(const struct core_input_spec *f, bool decoded, struct api_value *v, char *msg,
                   char *base, json_t *errors)
{
    if (decoded && check_bounds(f, v, msg, API_MSG_MAX))
        store(f, v, base);
    else
        api_errors_add(errors, f->name, strlen(f->name), msg);
}

/* Has query[i]'s key been reported as unknown already (among the first `count`)? */
static bool reported_before(const struct api_param *query, const size_t *unknown, size_t count,
                            const struct api_param *p)
{
    for (size_t j = 0; j < count; j++)
        if (query[unknown[j]].key_len == p->key_len &&
            memcmp(query[unknown[j]].key, p->key, p->key_len) == 0)
            return true;
    return false;
}

/* The row a name means in a scope, and its index among the scope's rows (for `seen`). */
static const struct core_input_spec *scope_find(const char *name, size_t len, enum api_scope scope,
                                                size_t *row)
{
    const struct core_input_spec *f =
        scope == API_SCOPE_SERVE_PLAN ? core_serve_plan_input_find(name, len)
        : scope == API_SCOPE_SERVE    ? core_serve_input_find(name, len)
                                      : core_input_find(name, len, scope == API_SCOPE_PLAN);

    if (f != NULL && f >= core_serve_plan_inputs &&
        f < core_serve_plan_inputs + core_serve_plan_input_count)
        *row = core_input_count + core_serve_input_count + (size_t)(f - core_serve_plan_inputs);
    else if (f != NULL && f >= core_serve_inputs && f < core_serve_inputs + core_serve_input_count)
        *row = core_input_count + (size_t)(f - core_serve_inputs);
    else if (f != NULL)
        *row = (size_t)(f - core_inputs);
    return f;
}

/* /inference/plan chooses the replica's GPU count and parallelism itself, and times every
 * candidate under continuous batching. */
static bool serve_planned(const struct core_input_spec *f)
{
    return strcmp(f->name, "gpus") == 0 || strcmp(f->name, "tp") == 0 ||
           strcmp(f->name, "pp") == 0 || strcmp(f->name, "batching") == 0;
}

/* base: a struct core_input, or a struct core_serve_input for /inference. */
static bool decode_query(const struct api_param *query, size_t count, char *base,
                         enum api_scope scope, json_t *errors)
{
    enum { ROWS_MAX = 128 };
    bool seen[ROWS_MAX] = {false}, repeated[ROWS_MAX] = {false};
    size_t unknown[API_ERRORS_MAX], unknown_count = 0;
    size_t before = json_array_size(errors);

    _Static_assert(ROWS_MAX >= 64, "room for every row");
    for (size_t i = 0; i < count && json_array_size(errors) < API_ERRORS_MAX; i++) {
        const struct api_param *p = &query[i];
        size_t row = 0;
        const struct core_input_spec *f = scope_find(p->key, p->key_len, scope, &row);
        struct api_value v = {0};
        char msg[API_MSG_MAX] = "";

        if (f == NULL) {
            /* Each unknown name once, however often it repeats; comparing against the reported
             * ones only keeps this O(count * API_ERRORS_MAX). */
            if (!reported_before(query, unknown, unknown_count, p) &&
                unknown_count < API_ERRORS_MAX) {
                unknown[unknown_count++] = i;
                api_add_unknown(errors, p->key, p->key_len, scope);
            }
            continue;
        }
        if (row >= ROWS_MAX)
            continue; /* never: the table is far smaller */
        if (seen[row]) {
            /* A repeated key is ambiguous (first or last wins?): an error, once per name. */
            if (!repeated[row])
                api_errors_add(errors, f->name, strlen(f->name), "given more than once");
            repeated[row] = true;
            continue;
        }
        seen[row] = true;
        if (f->kind == CORE_KIND_OBJECT) {
            api_errors_add(errors, f->name, strlen(f->name),
                           "a JSON object: POST it in the body (memwall --config FILE)");
            continue;
        }
        if (p->value == NULL) {
            snprintf(msg, sizeof msg, "missing value (use %s=...)", f->name);
            api_errors_add(errors, f->name, strlen(f->name), msg);
            continue;
        }
        finish(f, kind_ops[f->kind].text(f, p->value, p->value_len, &v, msg, sizeof msg), &v, msg,
               base, errors);
    }
    return json_array_size(errors) == before;
}

bool api_decode_query(const struct api_param *query, size_t count, struct core_input *in,
                      json_t *errors)
{
    return decode_query(query, count, (char *)in, API_SCOPE_COMPUTE, errors);
}

bool api_decode_serve_query(const struct api_param *query, size_t count,
                            struct core_serve_input *in, json_t *errors)
{
    return decode_query(query, count, (char *)in, API_SCOPE_SERVE, errors);
}

/* `config`, the one object-valued input: a Hugging Face config.json decoded by hfconfig.c into
 * the architecture core_evaluate() then takes as the shape (its problems name config.<key>).
 * A struct core_plan_input starts with its core_input, so /plan shares this. */
static void decode_config(const json_t *value, struct core_input *in, json_t *errors)
{
    if (!json_is_object(value)) {
        char msg[API_MSG_MAX];

        snprintf(msg, sizeof msg, "expected a Hugging Face config.json object, got %s",
                 api_json_type_name(value));
        api_errors_add(errors, "config", strlen("config"), msg);
        return;
    }
    in->config_given = api_hfconfig_decode(value, &in->config_arch, &in->config_context, errors);
}

/* base is a struct core_input, a struct core_plan_input (plan) or a struct core_serve_input. */
static bool decode_object(const json_t *object, char *base, enum api_scope scope, json_t *errors)
{
    bool plan = scope == API_SCOPE_PLAN;
    size_t before = json_array_size(errors);
    const char *key;
    json_t *value;

    /* Keys are unique (the parser rejects duplicates) and iterate in document order. */
    json_object_foreach ((json_t *)object, key, value) {
        size_t len = strlen(key);
        size_t row = 0;
        const struct core_input_spec *f = scope_find(key, len, scope, &row);
        struct api_value v = {0};
        char msg[API_MSG_MAX] = "";

        if (json_array_size(errors) >= API_ERRORS_MAX)
            break;
        if (f == NULL) {
            api_add_unknown(errors, key, len, scope);
            continue;
        }
        if (plan && f->planned) {
            api_errors_add(errors, key, len,
                           "the planner chooses this; it is not an input of /plan");
            continue;
        }
        if (scope == API_SCOPE_SERVE_PLAN && serve_planned(f)) {
            api_errors_add(errors, key, len,
                           "the planner chooses this; it is not an input of /inference/plan");
            continue;
        }
        if (f->kind == CORE_KIND_OBJECT)
            decode_config(value, (struct core_input *)base, errors);
        else
            finish(f, decode_json(f, value, &v, msg, sizeof msg), &v, msg, base, errors);
    }
    return json_array_size(errors) == before;
}

bool api_decode_object(const json_t *object, struct core_input *in, json_t *errors)
{
    return decode_object(object, (char *)in, API_SCOPE_COMPUTE, errors);
}

bool api_decode_serve_object(const json_t *object, struct core_serve_input *in, json_t *errors)
{
    return decode_object(object, (char *)in, API_SCOPE_SERVE, errors);
}

bool api_decode_plan_object(const json_t *object, struct core_plan_input *in, json_t *errors)
{
    return decode_object(object, (char *)in, API_SCOPE_PLAN, errors);
}

bool api_decode_serve_plan_object(const json_t *object, struct core_serve_plan_input *in,
                                  json_t *errors)
{
    return decode_object(object, (char *)in, API_SCOPE_SERVE_PLAN, errors);
}
