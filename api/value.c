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

    for (size_t i = 0; i < count && used < size; i++) {
        size_t need = strlen(names[i]) + (i ? 2 : 0);
        /* A name that does not fit whole is cut at the last one that does, with ", ..." (so a
         * client never reads half an id as if it were one). */
        if (used + need + 6 >= size && i + 1 < count) {
            snprintf(msg + used, size - used, "%s...", i ? ", " : "");
            return;
        }
        used += (size_t)snprintf(msg + used, size - used, "%s%s", i ? ", " : "", names[i]);
    }
}

/* s[0..len) folded for a loose comparison: lower case, '-', '_', '.' and ' ' dropped. */
static size_t fold(const char *s, size_t len, char *out, size_t size)
{
    size_t n = 0;

    for (size_t i = 0; i < len && n + 1 < size; i++) {
        char c = s[i];
        if (c == '-' || c == '_' || c == '.' || c == ' ')
            continue;
        out[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[n] = '\0';
    return n;
}

/* Whether id is what a user probably meant by s: folded, one starts with the other ("h200" for
 * h200-sxm, "Llama-3-8B" for llama3-8b). */
static bool near_id(const char *s, size_t len, const char *id)
{
    char a[64], b[64];
    size_t na = fold(s, len, a, sizeof a), nb = fold(id, strlen(id), b, sizeof b);

    if (na == 0 || nb == 0)
        return false;
    return na <= nb ? strncmp(a, b, na) == 0 : strncmp(a, b, nb) == 0 && nb >= 4;
}

void api_catalog_message(bool gpu, const char *s, size_t len, char *msg, size_t size)
{
    const char *ids[64], *near[64];
    size_t n = 0, m = 0;
    char lead[80];

    for (size_t i = 0; n < 64 && i < (gpu ? core_gpu_count : core_preset_count); i++) {
        ids[n] = gpu ? core_gpus[i].id : core_presets[i].id;
        if (near_id(s, len, ids[n]))
            near[m++] = ids[n];
        n++;
    }
    snprintf(lead, sizeof lead, "unknown %s (GET /%s lists all %zu); ", gpu ? "GPU" : "model",
             gpu ? "gpus" : "models", n);
    if (m > 0) {
        size_t used = (size_t)snprintf(msg, size, "%sdid you mean ", lead);
        api_list_names(msg + used, used < size ? size - used : 0, "", near, m);
        used = strlen(msg);
        snprintf(msg + used, used < size ? size - used : 0, "?");
        return;
    }
    snprintf(lead + strlen(lead), sizeof lead - strlen(lead), "one of: ");
    api_list_names(msg, size, lead, ids, n);
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
