/*
 * hfkeys.c - typed, aliased, dotted-path reads from a Hugging Face config (hfkeys.h).
 *
 * Why its own file: the family rules in hfconfig.c read dozens of keys, and each read has the
 * same four outcomes - absent (class default), null (the class's "derive it"), a value of the
 * right type within bounds, or an error naming config.<key>. Keeping them here keeps the rules
 * file a table.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "api_internal.h"
#include "core.h"
#include "hfkeys.h"

#define MSG_MAX 200
#define KEY_MAX HF_KEY_MAX

void hf_fail(struct dec *d, const char *key, const char *fmt, ...)
{
    char field[KEY_MAX + 16], msg[MSG_MAX];
    va_list ap;
    int n = snprintf(field, sizeof field, "config%s%s", key[0] ? "." : "", key);

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->ok = false;
    api_errors_add(d->errors, field, n > 0 ? strnlen(field, sizeof field) : 0, msg);
}

/* A dotted path ("attn_config.kv_n_heads") inside the config; NULL when absent. */
const json_t *hf_lookup(const json_t *cfg, const char *path)
{
    char part[KEY_MAX];
    const json_t *v = cfg;

    while (v != NULL && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof part || !json_is_object(v))
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        v = json_object_get(v, part);
        path += n + (path[n] == '.');
    }
    return v;
}

/* Keys are "a" or aliases "a|b": the first present one gives the value, and any other present
 * one must agree with it. *name receives the key that gave the value. */
static const json_t *find(struct dec *d, const char *keys, char *name)
{
    const json_t *found = NULL;
    char key[KEY_MAX];

    name[0] = '\0';
    while (*keys) {
        size_t n = strcspn(keys, "|");
        const json_t *v;
        if (n >= sizeof key)
            return found;
        memcpy(key, keys, n);
        key[n] = '\0';
        keys += n + (keys[n] == '|');
        v = hf_lookup(d->cfg, key);
        if (v == NULL || json_is_null(v))
            continue;
        if (found == NULL) {
            found = v;
            memcpy(name, key, n + 1);
        } else if (!json_equal(found, v)) {
            hf_fail(d, key, "contradicts config.%s: they name the same setting", name);
        }
    }
    return found;
}

/* An integer key: absent -> absent_value, null -> null_value, else it must be a whole number in
 * [min, max] (15.0 is accepted as 15). */
int64_t hf_int(struct dec *d, const char *keys, int64_t absent_value, int64_t null_value,
               int64_t min, int64_t max)
{
    char name[KEY_MAX];
    const json_t *v = find(d, keys, name);

    if (v == NULL) {
        /* absent, or every alias null: tell the two apart on the first key */
        const json_t *first;
        char key[KEY_MAX];
        size_t n = strcspn(keys, "|");
        if (n >= sizeof key)
            return absent_value;
        memcpy(key, keys, n);
        key[n] = '\0';
        first = hf_lookup(d->cfg, key);
        return first != NULL && json_is_null(first) ? null_value : absent_value;
    }
    if (json_is_integer(v)) {
        if (json_integer_value(v) >= min && json_integer_value(v) <= max)
            return json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
               json_real_value(v) >= (double)min && json_real_value(v) <= (double)max) {
        return (int64_t)json_real_value(v);
    }
    hf_fail(d, name, "must be a whole number from %lld to %lld", (long long)min, (long long)max);
    return absent_value;
}

bool hf_bool(struct dec *d, const char *keys, bool absent_value)
{
    char name[KEY_MAX];
    const json_t *v = find(d, keys, name);

    if (v == NULL)
        return absent_value;
    if (!json_is_boolean(v)) {
        hf_fail(d, name, "must be true or false");
        return absent_value;
    }
    return json_is_true(v);
}

/* A string key; NULL when absent or null, an error when not a string. */
const char *hf_string(struct dec *d, const char *key)
{
    char name[KEY_MAX];
    const json_t *v = find(d, key, name);

    if (v != NULL && !json_is_string(v)) {
        hf_fail(d, name, "must be a string");
        return NULL;
    }
    return v ? json_string_value(v) : NULL;
}

void hf_check_kv(struct dec *d, const char *key, const struct core_arch *a)
{
    if (a->kv_heads > a->heads || a->heads % a->kv_heads != 0)
        hf_fail(d, key, "%lld key/value heads must divide the %lld attention heads",
                (long long)a->kv_heads, (long long)a->heads);
}
