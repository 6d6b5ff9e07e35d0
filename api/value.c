/*
 * value.c - catalog-id lookups and name lists for the decoders' messages (value.h).
 */
#include <stdio.h>
#include <string.h>

#include "value.h"

int api_find_catalog(bool gpu, const char *s, size_t len)
{
    char id[64];

    /* The core lookups need a NUL-terminated id; an embedded NUL never names an entry. */
    if (len >= sizeof id || memchr(s, '\0', len) != NULL)
        return -1;
    memcpy(id, s, len);
    id[len] = '\0';
    return gpu ? core_gpu_find(id) : core_preset_find(id);
}

void api_list_names(char *msg, size_t size, const char *lead, const char *const *names,
                    size_t count)
{
    size_t used = (size_t)snprintf(msg, size, "%s", lead);

    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(msg + used, size - used, "%s%s", i ? ", " : "", names[i]);
}

void api_catalog_message(bool gpu, char *msg, size_t size)
{
    const char *ids[64];
    size_t n = 0;

    if (gpu)
        for (size_t i = 0; i < core_gpu_count && n < 64; i++)
            ids[n++] = core_gpus[i].id;
    else
        for (size_t i = 0; i < core_preset_count && n < 64; i++)
            ids[n++] = core_presets[i].id;
    api_list_names(msg, size, gpu ? "unknown GPU; one of: " : "unknown model; one of: ", ids, n);
}

const char *api_json_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "something else";
}
