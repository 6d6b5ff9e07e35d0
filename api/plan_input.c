/*
 * plan_input.c - /plan's GPU lists and prices (plan_input.h). A repeated GPU adds nothing; a
 * price is a number in [0, CORE_USD_MAX]; ids are the catalog's, case-sensitive.
 */
#include <stdio.h>
#include <string.h>

#include "number.h"
#include "plan_input.h"

/* Append catalog id s[0..len) to v's GPU list; false with msg filled when it is not one. */
static bool add_gpu(struct api_value *v, const char *s, size_t len, char *msg, size_t size)
{
    int g = api_find_catalog(true, s, len);

    if (g < 0) {
        api_catalog_message(true, s, len, msg, size);
        return false;
    }
    for (int i = 0; i < v->gpu_count; i++)
        if (v->gpus[i] == g)
            return true;
    if (v->gpu_count >= CORE_PLAN_GPU_MAX) {
        snprintf(msg, size, "at most %d GPU types", CORE_PLAN_GPU_MAX);
        return false;
    }
    v->gpus[v->gpu_count++] = g;
    return true;
}

bool api_gpu_list_text(const char *s, size_t len, struct api_value *v, char *msg, size_t size)
{
    size_t start = 0;

    v->kind = V_GPUS;
    v->gpu_count = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        if (!add_gpu(v, s + start, i - start, msg, size))
            return false;
        start = i + 1;
    }
    return true;
}

bool api_gpu_list_json(const json_t *j, struct api_value *v, char *msg, size_t size)
{
    json_t *item;
    size_t i;

    v->kind = V_GPUS;
    v->gpu_count = 0;
    if (json_array_size(j) == 0) {
        snprintf(msg, size, "an empty list; omit gpu to search every GPU");
        return false;
    }
    json_array_foreach (j, i, item) {
        if (!json_is_string(item)) {
            snprintf(msg, size, "expected GPU id strings, got %s", api_json_type_name(item));
            return false;
        }
        if (!add_gpu(v, json_string_value(item), json_string_length(item), msg, size))
            return false;
    }
    return true;
}

static bool price_ok(double x, char *msg, size_t size)
{
    if (x >= 0 && x <= CORE_USD_MAX)
        return true;
    snprintf(msg, size, "a price must be >= 0 and <= %.15g", CORE_USD_MAX);
    return false;
}

/* Every GPU at price x (x < 0: none). */
static void prices_all(struct api_value *v, double x)
{
    v->kind = V_PRICES;
    for (int i = 0; i < CORE_PLAN_GPU_MAX; i++)
        v->prices[i] = x;
}

/* One price for id s[0..len): text t[0..tlen), or the JSON number `number` when t is NULL. */
static bool set_price(struct api_value *v, const char *s, size_t len, const char *t, size_t tlen,
                      double number, char *msg, size_t size)
{
    int g = api_find_catalog(true, s, len);
    const char *why = t != NULL ? api_parse_number(t, tlen, false, &number) : NULL;

    if (g < 0) {
        api_catalog_message(true, s, len, msg, size);
        return false;
    }
    if (why != NULL) {
        snprintf(msg, size, "%s", why);
        return false;
    }
    if (!price_ok(number, msg, size))
        return false;
    v->prices[g] = number;
    return true;
}

bool api_prices_text(const char *s, size_t len, struct api_value *v, char *msg, size_t size)
{
    size_t start = 0;

    prices_all(v, -1.0);
    if (memchr(s, '=', len) == NULL) {
        const char *why = api_parse_number(s, len, false, &v->number);
        if (why != NULL) {
            snprintf(msg, size, "%s; or give id=price pairs separated by commas", why);
            return false;
        }
        if (!price_ok(v->number, msg, size))
            return false;
        prices_all(v, v->number);
        return true;
    }
    for (size_t i = 0; i <= len; i++) {
        const char *eq;
        if (i < len && s[i] != ',')
            continue;
        eq = memchr(s + start, '=', i - start);
        if (eq == NULL) {
            snprintf(msg, size, "expected id=price pairs separated by commas");
            return false;
        }
        if (!set_price(v, s + start, (size_t)(eq - (s + start)), eq + 1, (size_t)(s + i - (eq + 1)),
                       0, msg, size))
            return false;
        start = i + 1;
    }
    return true;
}

bool api_prices_json(const json_t *j, struct api_value *v, char *msg, size_t size)
{
    const char *key;
    json_t *item;

    if (json_is_number(j)) {
        if (!price_ok(json_number_value(j), msg, size))
            return false;
        prices_all(v, json_number_value(j));
        return true;
    }
    prices_all(v, -1.0);
    json_object_foreach ((json_t *)j, key, item) {
        bool text = json_is_string(item);
        if (!text && !json_is_number(item)) {
            snprintf(msg, size, "expected a price for %.40s, got %s", key,
                     api_json_type_name(item));
            return false;
        }
        if (!set_price(v, key, strlen(key), text ? json_string_value(item) : NULL,
                       text ? json_string_length(item) : 0, text ? 0 : json_number_value(item), msg,
                       size))
            return false;
    }
    return true;
}
