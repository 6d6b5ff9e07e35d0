/*
 * launch.c - launch configurations resolved into memwall's inputs (launch.h): the state every
 * format shares, reading values through rows, the merge with the body's explicit inputs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_internal.h"
#include "inputs.h"
#include "launch_internal.h"
#include "value.h"

/* ---------------------------------------------------------------------------------------------
 * Problems and warnings
 * ------------------------------------------------------------------------------------------- */

static void problem(struct api_launch_ctx *c, bool conflict, const char *key, const char *fmt,
                    va_list ap) __attribute__((format(printf, 4, 0)));

static void problem(struct api_launch_ctx *c, bool conflict, const char *key, const char *fmt,
                    va_list ap)
{
    char field[160], msg[API_MSG_MAX + 100];

    if (key != NULL)
        snprintf(field, sizeof field, "%s.%s", c->format->member, key);
    else
        snprintf(field, sizeof field, "%s", c->format->member);
    vsnprintf(msg, sizeof msg, fmt, ap);
    api_errors_add(c->errors, field, strlen(field), msg);
    c->error_count++;
    c->contradictory = c->contradictory || conflict;
}

void api_launch_error(struct api_launch_ctx *c, const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    problem(c, false, key, fmt, ap);
    va_end(ap);
}

void api_launch_conflict(struct api_launch_ctx *c, const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    problem(c, true, key, fmt, ap);
    va_end(ap);
}

void api_launch_warn(struct api_launch_ctx *c, const char *code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(c->warnings, json_pack("{s:s,s:s}", "code", code, "message", msg));
}

/* ---------------------------------------------------------------------------------------------
 * Setting inputs
 * ------------------------------------------------------------------------------------------- */

void api_launch_set(struct api_launch_ctx *c, const char *input, json_t *value, const char *key)
{
    const struct core_input_spec *row = c->format->find != NULL
                                            ? c->format->find(input, strlen(input))
                                            : core_input_find(input, strlen(input), false);

    if (value == NULL)
        return;
    if (row == NULL) {
        api_launch_warn(c, "launch_not_modelled",
                        "%s sets %s, which this build of memwall does not model; ignored", key,
                        input);
        json_decref(value);
        return;
    }
    json_object_set_new(c->out, input, value);
    json_object_set_new(c->from, input, json_string(key));
}

void api_launch_set_int(struct api_launch_ctx *c, const char *input, int64_t v, const char *key)
{
    api_launch_set(c, input, json_integer(v), key);
}

void api_launch_set_str(struct api_launch_ctx *c, const char *input, const char *v, const char *key)
{
    api_launch_set(c, input, json_string(v), key);
}

void api_launch_set_bool(struct api_launch_ctx *c, const char *input, bool v, const char *key)
{
    api_launch_set(c, input, json_boolean(v), key);
}

/* ---------------------------------------------------------------------------------------------
 * Rows and values
 * ------------------------------------------------------------------------------------------- */

const struct api_launch_row *api_launch_row_of(const struct api_launch_format *f, const char *key)
{
    const struct api_launch_row *wild = NULL;

    for (size_t i = 0; i < f->row_count; i++) {
        const char *k = f->rows[i].key;
        size_t n = strlen(k);

        if (strcmp(k, key) == 0)
            return &f->rows[i];
        if (n >= 2 && k[n - 1] == '*' && k[n - 2] == '.' && strncmp(k, key, n - 1) == 0)
            wild = &f->rows[i];
    }
    return wild;
}

/* A strict decimal integer (sign allowed), the whole word. */
static bool word_int(const char *s, int64_t *v)
{
    char *end;
    long long x;

    if (*s == '\0' || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
        return false;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return false;
    *v = x;
    return true;
}

json_t *api_launch_word_value(struct api_launch_ctx *c, const struct api_launch_row *row,
                              const char *key, const char *word)
{
    int64_t i;
    double d;
    char *end;

    switch (row->value) {
    case API_LAUNCH_INT:
        if (!word_int(word, &i)) {
            api_launch_error(c, key, "expected an integer, got '%.40s'", word);
            return NULL;
        }
        return json_integer(i);
    case API_LAUNCH_REAL:
        errno = 0;
        d = strtod(word, &end);
        if (*word == '\0' || *end != '\0' || errno != 0 || !(d == d)) {
            api_launch_error(c, key, "expected a number, got '%.40s'", word);
            return NULL;
        }
        return json_real(d);
    case API_LAUNCH_SWITCH:
        return json_true();
    default:
        return json_string(word);
    }
}

/* Does a typed (TOML/JSON) value suit the row? */
static bool typed_ok(const struct api_launch_row *row, const json_t *v)
{
    switch (row->value) {
    case API_LAUNCH_SWITCH:
        return json_is_boolean(v);
    case API_LAUNCH_INT:
        return json_is_integer(v);
    case API_LAUNCH_REAL:
        return json_is_number(v);
    case API_LAUNCH_STRING:
        return json_is_string(v);
    case API_LAUNCH_LIST:
        return json_is_array(v) || json_is_string(v);
    default:
        return true;
    }
}

static const char *value_words(enum api_launch_value v)
{
    static const char *const words[] = {
        [API_LAUNCH_SWITCH] = "a boolean", [API_LAUNCH_INT] = "an integer",
        [API_LAUNCH_REAL] = "a number",    [API_LAUNCH_STRING] = "a string",
        [API_LAUNCH_LIST] = "an array",    [API_LAUNCH_ANY] = "a value"};
    return words[v];
}

void api_launch_take(struct api_launch_ctx *c, const char *key, json_t *value)
{
    const struct api_launch_row *row = api_launch_row_of(c->format, key);

    if (value == NULL)
        return;
    if (row == NULL) {
        json_array_append_new(c->unknown, json_string(key));
        json_decref(value);
        return;
    }
    if (!json_is_string(value) || row->value == API_LAUNCH_STRING || row->value == API_LAUNCH_ANY ||
        row->value == API_LAUNCH_LIST) {
        if (!typed_ok(row, value)) {
            api_launch_error(c, key, "expected %s, got %s", value_words(row->value),
                             api_json_type_name(value));
            json_decref(value);
            return;
        }
    } else if (json_is_string(value) && row->value != API_LAUNCH_SWITCH) {
        /* a typed format holding a string where a number belongs: checked as a word */
        json_t *w = api_launch_word_value(c, row, key, json_string_value(value));

        json_decref(value);
        if (w == NULL)
            return;
        value = w;
    }
    if (row->use == API_LAUNCH_SET)
        api_launch_set(c, row->input, json_incref(value), key);
    else if (row->use == API_LAUNCH_WARN)
        api_launch_warn(c, "launch_not_modelled", "%s: %s", key, row->note);
    json_object_set_new(c->seen, key, value);
}

/* ---------------------------------------------------------------------------------------------
 * Command-line flags (megatron_args, vllm_args)
 * ------------------------------------------------------------------------------------------- */

bool api_launch_is_flag(const char *w)
{
    return w[0] == '-' && w[1] == '-' && w[2] != '\0';
}

/* --name or --name=value into name (with '_' read as '-') and *value. */
static void flag_name(const char *w, char *name, size_t size, const char **value)
{
    const char *eq = strchr(w, '=');
    size_t n = eq != NULL ? (size_t)(eq - w) : strlen(w);

    if (n >= size)
        n = size - 1;
    memcpy(name, w, n);
    name[n] = '\0';
    for (size_t k = 2; k < n; k++)
        name[k] = name[k] == '_' ? '-' : name[k];
    *value = eq != NULL ? eq + 1 : NULL;
}

/* The flags of words[from, to): each with its value(s) into launch_take. prefix names the
 * launcher's flags ("torchrun "); launcher flags outside the table are skipped silently. */
void api_launch_read_flags(struct api_launch_ctx *c, char **words, size_t from, size_t to,
                           const char *prefix)
{
    for (size_t i = from; i < to; i++) {
        char name[96], key[128];
        const char *inline_value;
        const struct api_launch_row *row;
        json_t *v;

        if (!api_launch_is_flag(words[i])) {
            if (prefix[0] == '\0')
                json_array_append_new(c->unknown, json_string(words[i]));
            continue;
        }
        flag_name(words[i], name, sizeof name, &inline_value);
        snprintf(key, sizeof key, "%s%s", prefix, name);
        row = api_launch_row_of(c->format, key);
        if (row == NULL && prefix[0] != '\0')
            continue;
        if (row != NULL && row->value == API_LAUNCH_SWITCH) {
            if (inline_value != NULL)
                api_launch_error(c, key, "takes no value, got '%.40s'", inline_value);
            else
                api_launch_take(c, key, json_true());
            continue;
        }
        if (inline_value != NULL) {
            api_launch_take(c, key, json_string(inline_value));
            continue;
        }
        if (row != NULL && row->value != API_LAUNCH_LIST && row->value != API_LAUNCH_ANY) {
            if (i + 1 >= to || api_launch_is_flag(words[i + 1])) {
                api_launch_error(c, key, "needs a value");
                continue;
            }
            api_launch_take(c, key, json_string(words[++i]));
            continue;
        }
        v = json_array(); /* nargs='+', ignored rows and unknown flags: every word up to a flag */
        while (i + 1 < to && !api_launch_is_flag(words[i + 1]))
            json_array_append_new(v, json_string(words[++i]));
        api_launch_take(c, key, v);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Reading what was taken
 * ------------------------------------------------------------------------------------------- */

bool api_launch_has(const struct api_launch_ctx *c, const char *key)
{
    return json_object_get(c->seen, key) != NULL;
}

int64_t api_launch_int(const struct api_launch_ctx *c, const char *key, int64_t def)
{
    const json_t *v = json_object_get(c->seen, key);

    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

const char *api_launch_str(const struct api_launch_ctx *c, const char *key)
{
    return json_string_value(json_object_get(c->seen, key));
}

bool api_launch_on(const struct api_launch_ctx *c, const char *key)
{
    return json_is_true(json_object_get(c->seen, key));
}

static bool loose_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v) && json_real_value(v) == (double)(int64_t)json_real_value(v)) {
        *out = (int64_t)json_real_value(v);
        return true;
    }
    return json_is_string(v) && word_int(json_string_value(v), out);
}

int64_t api_launch_out_int(const struct api_launch_ctx *c, const char *input, int64_t def)
{
    int64_t v;

    return loose_int(json_object_get(c->out, input), &v) ? v : def;
}

int64_t api_launch_body_int(const struct api_launch_ctx *c, const char *member, int64_t def)
{
    int64_t v;

    return loose_int(json_object_get(c->body, member), &v) ? v : def;
}

bool api_launch_mul(int64_t a, int64_t b, int64_t *out)
{
    *out = 0;
    if (a < 0 || b < 0 || (b != 0 && a > INT64_MAX / b))
        return false;
    *out = a * b;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Hugging Face ids
 * ------------------------------------------------------------------------------------------- */

/* An id matches a row when it equals the row's id or continues it with '-' (a suffix such as
 * -Instruct, -chat-hf); case-insensitive, as the Hub treats ids. */
static const struct {
    const char *id, *preset;
} hf_ids[] = {
    {"meta-llama/Llama-2-7b", "llama2-7b"},
    {"meta-llama/Llama-2-13b", "llama2-13b"},
    {"meta-llama/Llama-2-70b", "llama2-70b"},
    {"meta-llama/Meta-Llama-3-8B", "llama3-8b"},
    {"meta-llama/Meta-Llama-3-70B", "llama3-70b"},
    {"NousResearch/Meta-Llama-3-8B", "llama3-8b"}, /* re-uploads of Meta's weights */
    {"NousResearch/Meta-Llama-3-70B", "llama3-70b"},
    {"meta-llama/Llama-3.1-8B", "llama3.1-8b"},
    {"meta-llama/Meta-Llama-3.1-8B", "llama3.1-8b"},
    {"meta-llama/Llama-3.1-70B", "llama3.1-70b"},
    {"meta-llama/Meta-Llama-3.1-70B", "llama3.1-70b"},
    {"meta-llama/Llama-3.1-405B", "llama3.1-405b"},
    {"meta-llama/Meta-Llama-3.1-405B", "llama3.1-405b"},
    {"mistralai/Mistral-7B-v0.1", "mistral-7b"},
    {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b"},
    {"mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b"},
    {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},
    {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
    {"mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"},
    {"mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b"},
    {"mosaicml/mpt-7b", "mpt-7b"},
    {"Qwen/Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"},
    {"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},
    {"allenai/OLMoE-1B-7B-0924", "olmoe-1b-7b"},
    {"databricks/dbrx-base", "dbrx"},
    {"databricks/dbrx-instruct", "dbrx"},
    {"deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"},
    {"deepseek-ai/DeepSeek-V2", "deepseek-v2"},
    {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
    {"google/gemma-2-9b", "gemma-2-9b"},
    {"google/gemma-2-27b", "gemma-2-27b"},
    {"google/gemma-3-27b", "gemma-3-27b"},
    {"openai/gpt-oss-20b", "gpt-oss-20b"},
    {"openai/gpt-oss-120b", "gpt-oss-120b"},
    {"Qwen/Qwen3-Next-80B-A3B", "qwen3-next-80b-a3b"},
    {"meta-llama/Llama-3.2-1B", "llama3.2-1b"},
    {"meta-llama/Llama-3.2-3B", "llama3.2-3b"},
    {"Qwen/Qwen2.5-7B", "qwen2.5-7b"},
    {"Qwen/Qwen2.5-14B", "qwen2.5-14b"},
    {"Qwen/Qwen2.5-32B", "qwen2.5-32b"},
    {"Qwen/Qwen2.5-72B", "qwen2.5-72b"},
    {"Qwen/Qwen3-8B", "qwen3-8b"},
    {"Qwen/Qwen3-14B", "qwen3-14b"},
    {"Qwen/Qwen3-32B", "qwen3-32b"},
    {"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"},
    {"Qwen/Qwen2-57B-A14B", "qwen2-57b-a14b"},
    {"moonshotai/Kimi-K2", "kimi-k2"},
    {"microsoft/phi-4", "phi-4"},
    {"mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"},
    {"mistralai/Mistral-Nemo-Base-2407", "mistral-nemo-12b"},
};

const char *api_launch_preset_of_hf_id(const char *id)
{
    for (size_t i = 0; i < sizeof hf_ids / sizeof hf_ids[0]; i++) {
        size_t n = strlen(hf_ids[i].id);

        if (strncasecmp(id, hf_ids[i].id, n) == 0 && (id[n] == '\0' || id[n] == '-') &&
            !(id[n] == '-' && (id[n + 1] == 'v' || id[n + 1] == 'V') && id[n + 2] >= '0' &&
              id[n + 2] <= '9')) /* Mistral-7B-v0.3 is not v0.1 */
            return hf_ids[i].preset;
    }
    return NULL;
}
