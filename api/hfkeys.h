/*
 * hfkeys.h - reading typed keys out of a Hugging Face config object (hfkeys.c).
 *
 * Private to hfconfig.c. A key is a dotted path ("ffn_config.moe_top_k") and may list aliases
 * separated by '|' ("n_embd|hidden_size"): the first present alias gives the value and every
 * other present alias must agree with it. Problems are appended to the errors array as
 * {field: "config.<key>", message} and clear dec.ok.
 */
#ifndef MEMWALL_API_HFKEYS_H
#define MEMWALL_API_HFKEYS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define HF_KEY_MAX 64

struct dec {
    const json_t *cfg;
    json_t *errors; /* borrowed array */
    bool ok;
};

/* Record a problem on config.<key> (or on `config` itself when key is ""). */
void hf_fail(struct dec *d, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The value at a dotted path, or NULL when absent. */
const json_t *hf_lookup(const json_t *cfg, const char *path);
/* Integer: absent -> absent_value, null -> null_value, else a whole number in [min, max]. */
int64_t hf_int(struct dec *d, const char *keys, int64_t absent_value, int64_t null_value,
               int64_t min, int64_t max);
/* Boolean: absent or null -> absent_value. */
bool hf_bool(struct dec *d, const char *keys, bool absent_value);
/* String: NULL when absent or null. */
const char *hf_string(struct dec *d, const char *key);

struct core_arch;
/* kv_heads must divide heads: else a problem on config.<key>. */
void hf_check_kv(struct dec *d, const char *key, const struct core_arch *a);

#endif
