/*
 * value.h - a decoded input value before it is stored, and the catalog-id lookups every decoder
 * shares (fields.c for the compute routes' rows, plan_input.c for /plan's lists and prices).
 */
#ifndef MEMWALL_API_VALUE_H
#define MEMWALL_API_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core.h"

/* Error messages are built into buffers of this size: an enum list or a bounds sentence. */
#define API_MSG_MAX 200

struct api_value {
    enum { V_NUMBER, V_BOOL, V_INDEX, V_NULL, V_GPUS, V_PRICES, V_TEXT } kind;
    double number;
    bool boolean;
    int index;
    int gpu_count;                    /* V_GPUS */
    int gpus[CORE_PLAN_GPU_MAX];      /* V_GPUS */
    double prices[CORE_PLAN_GPU_MAX]; /* V_PRICES: by catalog index, < 0 = none */
    char text[CORE_TEXT_MAX];         /* V_TEXT, NUL-terminated */
};

/* Catalog index of GPU (gpu) or preset (!gpu) id s[0..len), or -1. */
int api_find_catalog(bool gpu, const char *s, size_t len);

/* The message for an unknown GPU (gpu) or model id s[0..len) into msg: the ids it probably meant
 * ("did you mean h200-sxm?"), else the catalog's ids, cut at a whole id. */
void api_catalog_message(bool gpu, const char *s, size_t len, char *msg, size_t size);

/* "an object", "a string", ...: what a JSON value is, for messages. */
const char *api_json_type_name(const json_t *j);

/* lead followed by "a, b, c" into msg. */
void api_list_names(char *msg, size_t size, const char *lead, const char *const *names,
                    size_t count);

#endif
