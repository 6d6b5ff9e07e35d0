/*
 * launch_resolve.c - a body's launch configuration resolved into memwall's inputs (launch.h):
 * which format a member names, reading it, the format's derived values, and the merge with the
 * body's explicit inputs. Apart from launch.c, whose shared helpers the formats' files call,
 * so that no file both serves the formats and calls them (no symbol cycle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "inputs.h"
#include "launch_internal.h"
#include "value.h"

/* Every format; the last is /inference's. */
static const struct api_launch_format *const formats[] = {
    &api_launch_megatron, &api_launch_torchtitan, &api_launch_deepspeed, &api_launch_vllm};
#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

bool api_launch_is_member(const char *member)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        if (strcmp(member, formats[i]->member) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------------------------------------
 * Resolution and the merge with the body's own members
 * ------------------------------------------------------------------------------------------- */

/* Values equal as the field decoder would read them: 8 and "8", true and "true". */
static bool same_value(const json_t *a, const json_t *b)
{
    char *x, *y;
    bool same;

    if (json_equal(a, b))
        return true;
    x = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
    y = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
    same = x != NULL && y != NULL &&
           (strcmp(x, y) == 0 || (json_is_string(b) && strcmp(x, json_string_value(b)) == 0) ||
            (json_is_string(a) && strcmp(y, json_string_value(a)) == 0));
    free(x);
    free(y);
    return same;
}

static json_t *merge(struct api_launch_ctx *c)
{
    json_t *merged = json_deep_copy(c->out), *value;
    const char *key;

    if (merged == NULL)
        return NULL;
    json_object_foreach ((json_t *)c->body, key, value) {
        const json_t *mine = json_object_get(c->out, key);

        if (strcmp(key, c->format->member) == 0)
            continue;
        if (mine != NULL && !same_value(mine, value)) {
            char *a = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
            char *b = json_dumps(mine, JSON_ENCODE_ANY | JSON_COMPACT);

            api_launch_warn(c, "launch_override",
                            "%s = %.60s given in the body overrides %.60s from %s", key,
                            a != NULL ? a : "?", b != NULL ? b : "?",
                            json_string_value(json_object_get(c->from, key)));
            free(a);
            free(b);
        }
        json_object_set(merged, key, value);
    }
    return merged;
}

static void report_unknown(struct api_launch_ctx *c)
{
    char list[300];
    size_t n = 0, i;
    json_t *k;

    if (json_array_size(c->unknown) == 0)
        return;
    list[0] = '\0';
    json_array_foreach (c->unknown, i, k) {
        int w = snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", json_string_value(k));

        if (w < 0 || (size_t)w >= sizeof list - n) {
            snprintf(list + (n < sizeof list - 5 ? n : sizeof list - 5), 5, ", ..");
            break;
        }
        n += (size_t)w;
    }
    api_launch_warn(c, "launch_unknown",
                    "%s: %zu key(s) memwall does not know, ignored (not checked for an effect on "
                    "memory or time): %s",
                    c->format->member, json_array_size(c->unknown), list);
}

static void read_member(struct api_launch_ctx *c, const json_t *v)
{
    const struct api_launch_format *f = c->format;

    if (f == &api_launch_deepspeed) {
        if (!json_is_object(v))
            api_launch_error(c, NULL, "expected the ds_config object, got %s",
                             api_json_type_name(v));
        else
            api_launch_read_json(c, v, "");
        return;
    }
    if (!json_is_string(v)) {
        api_launch_error(c, NULL, "expected %s as a string, got %s",
                         f == &api_launch_torchtitan ? "the TOML text" : "the argument string",
                         api_json_type_name(v));
        return;
    }
    if (f == &api_launch_megatron)
        api_launch_read_args(c, json_string_value(v), json_string_length(v));
    else if (f == &api_launch_vllm)
        api_launch_read_vllm(c, json_string_value(v), json_string_length(v));
    else
        api_launch_read_toml(c, json_string_value(v), json_string_length(v));
}

static void derive(struct api_launch_ctx *c)
{
    if (c->format == &api_launch_megatron)
        api_launch_megatron_derive(c);
    else if (c->format == &api_launch_torchtitan)
        api_launch_torchtitan_derive(c);
    else if (c->format == &api_launch_vllm)
        api_launch_vllm_derive(c);
    else
        api_launch_deepspeed_derive(c);
}

json_t *api_launch_resolve(const json_t *body, bool route_inference, struct api_launch *out,
                           json_t *errors, bool *contradictory)
{
    struct api_launch_ctx c = {.body = body, .errors = errors};
    const json_t *member = NULL;
    json_t *merged = NULL, *value;
    const char *key;

    memset(out, 0, sizeof *out);
    *contradictory = false;
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        const json_t *v = json_object_get(body, formats[i]->member);
        bool serving = formats[i] == &api_launch_vllm;
        const char *m = formats[i]->member;

        if (v == NULL)
            continue;
        if (member != NULL || serving != route_inference) {
            api_errors_add(errors, m, strlen(m),
                           member != NULL ? "one launch configuration per request"
                           : serving      ? "a serving command: POST it to /inference"
                                          : "a training configuration; /inference takes vllm_args");
            return NULL;
        }
        member = v;
        c.format = formats[i];
    }
    if (member == NULL)
        return json_incref((json_t *)body);
    c.seen = json_object();
    c.out = json_object();
    c.from = json_object();
    c.warnings = json_array();
    c.unknown = json_array();
    if (c.seen != NULL && c.out != NULL && c.from != NULL && c.warnings != NULL &&
        c.unknown != NULL) {
        read_member(&c, member);
        if (c.error_count == 0)
            derive(&c);
        if (c.error_count == 0) {
            if (c.format != &api_launch_vllm) { /* the engine is the launcher's */
                json_object_set_new(c.out, "framework", json_string(c.format->framework_name));
                json_object_set_new(c.from, "framework", json_string(c.format->member));
            }
            report_unknown(&c);
            merged = merge(&c);
        }
    }
    json_decref(c.seen);
    json_decref(c.out);
    json_decref(c.unknown);
    *contradictory = c.contradictory;
    if (merged == NULL) {
        if (c.error_count == 0)
            api_errors_add(errors, c.format->member, strlen(c.format->member), "out of memory");
        json_decref(c.warnings);
        json_decref(c.from);
        return NULL;
    }
    /* Inputs the body gave itself are not the configuration's to answer for. */
    json_object_foreach ((json_t *)body, key, value)
        json_object_del(c.from, key);
    out->source = c.format->member;
    out->warnings = c.warnings;
    out->from = c.from;
    return merged;
}

void api_launch_free(struct api_launch *out)
{
    json_decref(out->warnings);
    json_decref(out->from);
    memset(out, 0, sizeof *out);
}

void api_launch_blame(const struct api_launch *launch, json_t *errors)
{
    size_t i;
    json_t *e;

    if (launch->source == NULL)
        return;
    json_array_foreach (errors, i, e) {
        const char *field = json_string_value(json_object_get(e, "field"));
        const char *flag =
            json_string_value(json_object_get(launch->from, field != NULL ? field : ""));
        char name[200], msg[API_MSG_MAX + 120];

        if (flag == NULL)
            continue;
        snprintf(name, sizeof name, "%s.%s", launch->source, flag);
        snprintf(msg, sizeof msg, "sets %s, which %s", field,
                 json_string_value(json_object_get(e, "message")));
        json_object_set_new(e, "message", json_string(msg));
        json_object_set_new(e, "field", json_string(name));
    }
}
