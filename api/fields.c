/*
 * fields.c - the input field table and the two decoders that share it.
 *
 * One row per API input: name, type, bounds, enum names, where it lands in struct core_input,
 * and a one-line doc. GET query pairs (strings) and POST JSON objects go through the same row
 * and the same string grammar, so identical inputs give an identical core_input and therefore
 * byte-identical replies. Decoding never stops at the first problem: every bad field is
 * reported at once (400), and core_evaluate() only sees inputs that are valid one by one.
 *
 * Decisions (documented in the OpenAPI contract):
 * - A JSON string is decoded exactly like the query string with the same text, for every
 *   field: {"batch": "4"} == ?batch=4, {"params": "7B"} == ?params=7B. Query strings are
 *   strings anyway, and this keeps the two encodings one grammar.
 * - Numbers: [+-] digits [. digits] [e[+-]digits], nothing else (no hex, NaN, inf, spaces,
 *   empty). Size fields (params, active_params, tokens, global_batch_tokens) may end in one SI
 *   suffix K, M, B/G, T (any case) instead of an exponent: "7B", "1.3b", "1.4T". The suffix
 *   becomes a decimal exponent before strtod, so "1.3B" is exactly 1.3e9, not 1.3 * 1e9.
 * - Integers accept any number with an integral value (2, 2.0, 2e0); 2.5 is an error.
 * - Booleans: JSON true/false, or the strings true/false/1/0/yes/no (lower case). JSON numbers
 *   are not booleans. checkpointing takes none/selective/full or a boolean (true = full).
 * - JSON null is accepted only where the reply echoes null (model, usd_per_gpu_hour,
 *   tokens_per_second) and means "not given".
 * - Enum names and catalog ids are case-sensitive, as the API spells them.
 * - /plan decodes through the same rows plus plan_fields[] (its own inputs, and its readings of
 *   gpu and usd_per_gpu_hour, which there take a list and per-GPU prices); offsets of those
 *   rows are into struct core_plan_input, whose first member is the core_input the main rows
 *   address. The inputs the planner chooses itself (batch, gpus, tp, ...) are refused there.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api_internal.h"

enum field_type {
    FT_INT,    /* integral number */
    FT_SIZE,   /* number, SI suffix allowed */
    FT_NUMBER, /* number */
    FT_BOOL,   /* boolean */
    FT_FLAG,   /* boolean into an enum core_flag (AUTO stays when not given) */
    FT_ENUM,   /* one of names[] */
    FT_CKPT,   /* checkpointing: one of names[] or a boolean */
    FT_GPU,    /* catalog id */
    FT_PRESET, /* preset id */
    FT_GPUS,   /* /plan: a catalog id, a list of them (JSON array or "a,b"), into gpus[] */
    FT_PRICES, /* /plan: one price, or prices by GPU id ({"b200": 5} or "b200=5,h100-sxm=2") */
};

enum field_store {
    ST_I64,    /* int64_t, value rounded to the nearest integer */
    ST_INT,    /* int (also every enum core_* type: see the static asserts) */
    ST_DOUBLE, /* double */
    ST_BOOL,   /* bool */
    ST_GPUS,   /* gpu_count and gpus[] of struct core_plan_input */
    ST_PRICES, /* usd_per_gpu_hour[] of struct core_plan_input */
};

struct field_spec {
    const char *name;
    enum field_type type;
    enum field_store store;
    size_t offset; /* into struct core_input */
    double min, max;
    bool min_exclusive; /* min < x rather than min <= x (the max is always inclusive) */
    bool nullable;      /* JSON null = not given */
    const char *const *names;
    size_t name_count;
    const char *doc; /* type, default and meaning, one line */
};

/* Enums are written through an int; C only promises "some integer type", so check it here. */
_Static_assert(sizeof(enum core_precision) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_optimizer) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_checkpointing) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_attention_flops) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_count) == sizeof(int), "enum size");
_Static_assert(sizeof(enum core_flag) == sizeof(int), "enum size");

/* grad_precision excludes fp8: fp8 gradients are not a ledger anyone trains with. */
static const char *const grad_precision_names[] = {"bf16", "fp16", "fp32"};

#define AT(member)   offsetof(struct core_input, member)
#define NAMES(array) array, sizeof(array) / sizeof((array)[0])
#define NONE         NULL, 0

/* clang-format off */
static const struct field_spec fields[] = {
    {"model", FT_PRESET, ST_INT, AT(preset), 0, 0, false, true, NONE,
     "preset id; fills the architecture and N"},
    {"params", FT_SIZE, ST_I64, AT(params), 1, CORE_PARAMS_MAX, false, false, NONE,
     "N; default the architecture's count, else 7e9; SI suffixes"},
    {"active_params", FT_SIZE, ST_I64, AT(active_params), 1, CORE_PARAMS_MAX, false, false, NONE,
     "MoE active N for FLOPs; default params"},
    {"layers", FT_INT, ST_I64, AT(layers), 1, CORE_LAYERS_MAX, false, false, NONE,
     "L; default inferred"},
    {"hidden", FT_INT, ST_I64, AT(hidden), 1, CORE_HIDDEN_MAX, false, false, NONE,
     "d; default inferred"},
    {"heads", FT_INT, ST_I64, AT(heads), 1, CORE_HEADS_MAX, false, false, NONE,
     "a; default inferred"},
    {"kv_heads", FT_INT, ST_I64, AT(kv_heads), 1, CORE_HEADS_MAX, false, false, NONE,
     "k; default heads"},
    {"head_dim", FT_INT, ST_I64, AT(head_dim), 1, CORE_HIDDEN_MAX, false, false, NONE,
     "h_d; default hidden/heads"},
    {"ffn_hidden", FT_INT, ST_I64, AT(ffn_hidden), 1, 4.0 * CORE_HIDDEN_MAX, false, false, NONE,
     "f; default 4d, or the Llama rule when gated"},
    {"vocab", FT_INT, ST_I64, AT(vocab), 1, CORE_VOCAB_MAX, false, false, NONE,
     "V; default 32000"},
    {"gated_mlp", FT_FLAG, ST_INT, AT(gated_mlp), 0, 0, false, false, NONE,
     "SwiGLU MLP; default per preset, else false"},
    {"tied_embeddings", FT_FLAG, ST_INT, AT(tied_embeddings), 0, 0, false, false, NONE,
     "shared input/output embeddings; default per preset, else false"},
    {"batch", FT_INT, ST_I64, AT(batch), 1, CORE_BATCH_MAX, false, false, NONE,
     "micro-batch per GPU; default 1"},
    {"seq_len", FT_INT, ST_I64, AT(seq_len), 1, CORE_SEQ_LEN_MAX, false, false, NONE,
     "T; default 512"},
    {"tokens", FT_SIZE, ST_DOUBLE, AT(tokens), 1, CORE_TOKENS_MAX, false, false, NONE,
     "D; default 1.4e12; SI suffixes"},
    {"precision", FT_ENUM, ST_INT, AT(precision), 0, 0, false, false,
     NAMES(core_precision_names), "bf16 | fp16 | fp32 | fp8; default bf16"},
    {"grad_precision", FT_ENUM, ST_INT, AT(grad_precision), 0, 0, false, false,
     NAMES(grad_precision_names), "bf16 | fp16 | fp32; default as weights"},
    {"master_weights", FT_FLAG, ST_INT, AT(master_weights), 0, 0, false, false, NONE,
     "fp32 master copy; default true for 16/8-bit, false for fp32"},
    {"optimizer", FT_ENUM, ST_INT, AT(optimizer), 0, 0, false, false,
     NAMES(core_optimizer_names), "default adamw"},
    {"checkpointing", FT_CKPT, ST_INT, AT(checkpointing), 0, 0, false, false,
     NAMES(core_checkpointing_names), "none | selective | full, or a boolean; default none"},
    {"flash_attention", FT_BOOL, ST_BOOL, AT(flash_attention), 0, 0, false, false, NONE,
     "scores not materialized; default false"},
    {"attention_flops", FT_ENUM, ST_INT, AT(attention_flops), 0, 0, false, false,
     NAMES(core_attention_flops_names), "full | causal; default full"},
    {"gpus", FT_INT, ST_I64, AT(gpus), 1, CORE_GPUS_MAX, false, false, NONE,
     "G; default 1; a multiple of tp*pp"},
    {"gpu", FT_GPU, ST_INT, AT(gpu), 0, 0, false, false, NONE,
     "catalog id; default h100-sxm"},
    {"zero_stage", FT_INT, ST_INT, AT(zero_stage), 0, 3, false, false, NONE,
     "0..3; default 3"},
    {"tp", FT_INT, ST_I64, AT(tp), 1, CORE_PARALLEL_MAX, false, false, NONE,
     "tensor-parallel size; default 1"},
    {"pp", FT_INT, ST_I64, AT(pp), 1, CORE_PARALLEL_MAX, false, false, NONE,
     "pipeline-parallel size; default 1"},
    {"sequence_parallel", FT_FLAG, ST_INT, AT(sequence_parallel), 0, 0, false, false, NONE,
     "default tp > 1"},
    {"memory_gb", FT_NUMBER, ST_DOUBLE, AT(memory_gb), 0, CORE_MEMORY_GB_MAX, true, false, NONE,
     "per-GPU memory, decimal GB; default the catalog's"},
    {"peak_tflops", FT_NUMBER, ST_DOUBLE, AT(peak_tflops), CORE_PEAK_TFLOPS_MIN,
     CORE_PEAK_TFLOPS_MAX, false, false, NONE, "dense peak per GPU; default the catalog's"},
    {"reserve_gb", FT_NUMBER, ST_DOUBLE, AT(reserve_gb), 0, CORE_MEMORY_GB_MAX, false, false,
     NONE, "per-GPU memory held back, GB; default 0"},
    {"mfu", FT_NUMBER, ST_DOUBLE, AT(mfu), CORE_MFU_MIN, 1, false, false, NONE,
     "model FLOPs utilization; default 0.5"},
    {"count", FT_ENUM, ST_INT, AT(count), 0, 0, false, false, NAMES(core_count_names),
     "six_nd | model | hardware; default six_nd"},
    {"usd_per_gpu_hour", FT_NUMBER, ST_DOUBLE, AT(usd_per_gpu_hour), 0, CORE_USD_MAX, false,
     true, NONE, "price; adds cost_usd"},
    {"tokens_per_second", FT_NUMBER, ST_DOUBLE, AT(tokens_per_second), 0, CORE_TPS_MAX, true,
     true, NONE, "measured cluster throughput; gives the achieved MFU"},
    {"global_batch_tokens", FT_SIZE, ST_DOUBLE, AT(global_batch_tokens), 1, CORE_TOKENS_MAX,
     false, false, NONE, "tokens per optimizer step; default batch*seq_len*dp"},
};
/* clang-format on */

#define FIELD_COUNT (sizeof fields / sizeof fields[0])

_Static_assert(offsetof(struct core_plan_input, base) == 0, "plan rows share offsets");
#define PAT(member) offsetof(struct core_plan_input, member)

/* clang-format off */
static const struct field_spec plan_fields[] = {
    {"gpu", FT_GPUS, ST_GPUS, PAT(gpu_count), 0, 0, false, false, NONE,
     "catalog id or a list of them; default every catalog GPU that supports the precision"},
    {"usd_per_gpu_hour", FT_PRICES, ST_PRICES, PAT(usd_per_gpu_hour), 0, CORE_USD_MAX, false,
     true, NONE, "price for every GPU, or an object of prices by GPU id; ranks by cost"},
    {"deadline_days", FT_NUMBER, ST_DOUBLE, PAT(deadline_days), 0, CORE_PLAN_DEADLINE_MAX, true,
     true, NONE, "longest acceptable run, days; default none"},
    {"budget_usd", FT_NUMBER, ST_DOUBLE, PAT(budget_usd), 0, CORE_PLAN_BUDGET_MAX, false, true,
     NONE, "largest acceptable cost, USD (needs a price); default none"},
    {"gpus_max", FT_INT, ST_I64, PAT(gpus_max), 1, CORE_PLAN_GPUS_MAX, false, false, NONE,
     "largest cluster searched; default 4096"},
};
/* clang-format on */

#define PLAN_FIELD_COUNT (sizeof plan_fields / sizeof plan_fields[0])

/* Inputs the planner searches over: giving one to /plan is an error, not a constraint. */
static const char *const planner_chosen[] = {
    "batch",
    "gpus",
    "tp",
    "pp",
    "zero_stage",
    "checkpointing",
    "sequence_parallel",
    "tokens_per_second",
};

/* A decoded value before it is stored. */
struct value {
    enum { V_NUMBER, V_BOOL, V_INDEX, V_NULL, V_GPUS, V_PRICES } kind;
    double number;
    bool boolean;
    int index;
    int gpu_count;                    /* V_GPUS */
    int gpus[CORE_PLAN_GPU_MAX];      /* V_GPUS */
    double prices[CORE_PLAN_GPU_MAX]; /* V_PRICES: by catalog index, < 0 = none */
};

/* Error messages are built here: long enough for an enum list or a bounds sentence. */
#define MSG_MAX 200

/* ---------------------------------------------------------------------------------------------
 * String grammar (shared by query values and JSON strings)
 * ------------------------------------------------------------------------------------------- */

static size_t count_digits(const char *s, size_t len, size_t i)
{
    size_t n = 0;
    while (i + n < len && isdigit((unsigned char)s[i + n]))
        n++;
    return n;
}

/* Parse s[0..len) as a finite decimal number (see the file comment). Returns NULL, or the
 * reason it is not one. */
static const char *parse_number(const char *s, size_t len, bool si, double *out)
{
    char buf[80];
    size_t i = 0, digits, mantissa_len;
    int exponent = 0;
    bool has_exponent = false;
    char *end;
    double v;

    if (len == 0)
        return "empty value; expected a number";
    if (len >= sizeof buf - 8)
        return "too long for a number";
    if (s[i] == '+' || s[i] == '-')
        i++;
    digits = count_digits(s, len, i);
    i += digits;
    if (i < len && s[i] == '.') {
        size_t frac = count_digits(s, len, i + 1);
        digits += frac;
        i += 1 + frac;
    }
    if (digits == 0)
        return si ? "not a number (e.g. 7e9 or 7B)" : "not a number";
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        digits = count_digits(s, len, j);
        if (digits == 0)
            return "not a number: exponent without digits";
        i = j + digits;
        has_exponent = true;
    }
    mantissa_len = i;
    if (si && i < len) {
        switch (tolower((unsigned char)s[i])) {
        case 'k':
            exponent = 3;
            break;
        case 'm':
            exponent = 6;
            break;
        case 'b':
        case 'g':
            exponent = 9;
            break;
        case 't':
            exponent = 12;
            break;
        default:
            break;
        }
        if (exponent != 0) {
            if (has_exponent)
                return "not a number: use an exponent or an SI suffix, not both";
            i++;
        }
    }
    if (i != len) {
        if (memchr(s, '\0', len) != NULL)
            return "contains a NUL byte";
        return si ? "not a number (SI suffixes: K, M, B/G, T)" : "not a number";
    }
    memcpy(buf, s, mantissa_len);
    if (exponent != 0)
        snprintf(buf + mantissa_len, sizeof buf - mantissa_len, "e%d", exponent);
    else
        buf[mantissa_len] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (*end != '\0')
        return "not a number";
    if (errno == ERANGE || !isfinite(v))
        return "out of range";
    *out = v;
    return NULL;
}

static bool text_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* Returns 1 true, 0 false, -1 not a boolean word. */
static int parse_bool(const char *s, size_t len)
{
    if (text_is(s, len, "true") || text_is(s, len, "1") || text_is(s, len, "yes"))
        return 1;
    if (text_is(s, len, "false") || text_is(s, len, "0") || text_is(s, len, "no"))
        return 0;
    return -1;
}

static int find_name(const struct field_spec *f, const char *s, size_t len)
{
    size_t i;
    for (i = 0; i < f->name_count; i++)
        if (text_is(s, len, f->names[i]))
            return (int)i;
    return -1;
}

/* "one of: a, b, c" into msg. */
static void list_names(char *msg, size_t size, const char *lead, const char *const *names,
                       size_t count)
{
    size_t used = (size_t)snprintf(msg, size, "%s", lead);
    size_t i;
    for (i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(msg + used, size - used, "%s%s", i ? ", " : "", names[i]);
}

/* Catalog / preset ids into an index: the core lookups need a NUL-terminated id. */
static int find_catalog(enum field_type type, const char *s, size_t len)
{
    char id[64];
    if (len >= sizeof id || memchr(s, '\0', len) != NULL)
        return -1;
    memcpy(id, s, len);
    id[len] = '\0';
    return type == FT_GPU ? core_gpu_find(id) : core_preset_find(id);
}

static void catalog_message(enum field_type type, char *msg, size_t size)
{
    const char *ids[64];
    size_t n = 0, i;
    if (type == FT_GPU)
        for (i = 0; i < core_gpu_count && n < 64; i++)
            ids[n++] = core_gpus[i].id;
    else
        for (i = 0; i < core_preset_count && n < 64; i++)
            ids[n++] = core_presets[i].id;
    list_names(msg, size, type == FT_GPU ? "unknown GPU; one of: " : "unknown model; one of: ", ids,
               n);
}

/* ---- /plan's list and price values ---- */

/* Append catalog id s[0..len) to v's GPU list; false with msg filled when it is not one. */
static bool add_gpu(struct value *v, const char *s, size_t len, char *msg, size_t size)
{
    int g = find_catalog(FT_GPU, s, len);

    if (g < 0) {
        catalog_message(FT_GPU, msg, size);
        return false;
    }
    for (int i = 0; i < v->gpu_count; i++)
        if (v->gpus[i] == g)
            return true; /* a repeat adds nothing */
    if (v->gpu_count >= CORE_PLAN_GPU_MAX) {
        snprintf(msg, size, "at most %d GPU types", CORE_PLAN_GPU_MAX);
        return false;
    }
    v->gpus[v->gpu_count++] = g;
    return true;
}

/* "h100-sxm" or "h100-sxm,b200". */
static bool decode_gpu_list(const char *s, size_t len, struct value *v, char *msg, size_t size)
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

static bool price_ok(double x, char *msg, size_t size)
{
    if (x >= 0 && x <= CORE_USD_MAX)
        return true;
    snprintf(msg, size, "a price must be >= 0 and <= %.15g", CORE_USD_MAX);
    return false;
}

static void prices_none(struct value *v)
{
    v->kind = V_PRICES;
    for (int i = 0; i < CORE_PLAN_GPU_MAX; i++)
        v->prices[i] = -1.0;
}

/* One price for id s[0..len) (text t[0..tlen) or a JSON number when t is NULL). */
static bool set_price(struct value *v, const char *s, size_t len, const char *t, size_t tlen,
                      double number, char *msg, size_t size)
{
    int g = find_catalog(FT_GPU, s, len);
    const char *why = t != NULL ? parse_number(t, tlen, false, &number) : NULL;

    if (g < 0) {
        catalog_message(FT_GPU, msg, size);
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

/* "2.5" (every GPU) or "h100-sxm=2.5,b200=5". */
static bool decode_prices(const char *s, size_t len, struct value *v, char *msg, size_t size)
{
    size_t start = 0;

    prices_none(v);
    if (memchr(s, '=', len) == NULL) {
        const char *why = parse_number(s, len, false, &v->number);
        if (why != NULL) {
            snprintf(msg, size, "%s; or give id=price pairs separated by commas", why);
            return false;
        }
        if (!price_ok(v->number, msg, size))
            return false;
        for (int i = 0; i < CORE_PLAN_GPU_MAX; i++)
            v->prices[i] = v->number;
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

/* Decode a string value for field f. Returns false with msg filled when it is invalid. */
static bool decode_string(const struct field_spec *f, const char *s, size_t len, struct value *v,
                          char *msg, size_t size)
{
    const char *why;
    int b;

    switch (f->type) {
    case FT_INT:
    case FT_NUMBER:
    case FT_SIZE:
        why = parse_number(s, len, f->type == FT_SIZE, &v->number);
        if (why != NULL) {
            snprintf(msg, size, "%s", why);
            return false;
        }
        v->kind = V_NUMBER;
        return true;
    case FT_BOOL:
    case FT_FLAG:
        b = parse_bool(s, len);
        if (b < 0) {
            snprintf(msg, size, "expected a boolean: true, false, 1, 0, yes or no");
            return false;
        }
        v->kind = V_BOOL;
        v->boolean = b == 1;
        return true;
    case FT_CKPT:
    case FT_ENUM:
        b = f->type == FT_CKPT ? parse_bool(s, len) : -1;
        if (b >= 0) {
            v->kind = V_BOOL;
            v->boolean = b == 1;
            return true;
        }
        v->index = find_name(f, s, len);
        if (v->index < 0) {
            list_names(msg, size,
                       f->type == FT_CKPT ? "expected a boolean or one of: " : "expected one of: ",
                       f->names, f->name_count);
            return false;
        }
        v->kind = V_INDEX;
        return true;
    case FT_GPU:
    case FT_PRESET:
        v->index = find_catalog(f->type, s, len);
        if (v->index < 0) {
            catalog_message(f->type, msg, size);
            return false;
        }
        v->kind = V_INDEX;
        return true;
    case FT_GPUS:
        return decode_gpu_list(s, len, v, msg, size);
    case FT_PRICES:
        return decode_prices(s, len, v, msg, size);
    }
    return false;
}

static const char *json_type_name(const json_t *j)
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

static const char *expected_name(const struct field_spec *f)
{
    switch (f->type) {
    case FT_INT:
        return "an integer";
    case FT_SIZE:
        return "a number or a string like \"7B\"";
    case FT_NUMBER:
        return "a number";
    case FT_BOOL:
    case FT_FLAG:
        return "a boolean";
    case FT_ENUM:
        return "a string";
    case FT_CKPT:
        return "a string or a boolean";
    case FT_GPU:
        return "a GPU id string";
    case FT_PRESET:
        return "a model id string";
    case FT_GPUS:
        return "a GPU id or an array of them";
    case FT_PRICES:
        return "a number or an object of numbers by GPU id";
    }
    return "something else";
}

/* /plan's structured forms: a JSON array of GPU ids, an object of prices by id. */
static bool decode_json_structured(const struct field_spec *f, const json_t *j, struct value *v,
                                   char *msg, size_t size)
{
    const char *key;
    json_t *item;
    size_t i;

    if (f->type == FT_GPUS) {
        v->kind = V_GPUS;
        v->gpu_count = 0;
        if (json_array_size(j) == 0) {
            snprintf(msg, size, "an empty list; omit gpu to search every GPU");
            return false;
        }
        json_array_foreach (j, i, item) {
            if (!json_is_string(item)) {
                snprintf(msg, size, "expected GPU id strings, got %s", json_type_name(item));
                return false;
            }
            if (!add_gpu(v, json_string_value(item), json_string_length(item), msg, size))
                return false;
        }
        return true;
    }
    prices_none(v);
    json_object_foreach ((json_t *)j, key, item) {
        bool text = json_is_string(item);
        if (!text && !json_is_number(item)) {
            snprintf(msg, size, "expected a price for %.40s, got %s", key, json_type_name(item));
            return false;
        }
        if (!set_price(v, key, strlen(key), text ? json_string_value(item) : NULL,
                       text ? json_string_length(item) : 0, text ? 0 : json_number_value(item), msg,
                       size))
            return false;
    }
    return true;
}

static bool decode_json(const struct field_spec *f, const json_t *j, struct value *v, char *msg,
                        size_t size)
{
    bool numeric = f->type == FT_INT || f->type == FT_SIZE || f->type == FT_NUMBER;

    if ((f->type == FT_GPUS && json_is_array(j)) || (f->type == FT_PRICES && json_is_object(j)))
        return decode_json_structured(f, j, v, msg, size);
    if (f->type == FT_PRICES && json_is_number(j)) {
        prices_none(v);
        if (!price_ok(json_number_value(j), msg, size))
            return false;
        for (int i = 0; i < CORE_PLAN_GPU_MAX; i++)
            v->prices[i] = json_number_value(j);
        return true;
    }
    bool boolean = f->type == FT_BOOL || f->type == FT_FLAG || f->type == FT_CKPT;

    if (json_is_string(j))
        return decode_string(f, json_string_value(j), json_string_length(j), v, msg, size);
    if (numeric && json_is_number(j)) {
        v->kind = V_NUMBER;
        v->number = json_number_value(j);
        return true;
    }
    if (boolean && json_is_boolean(j)) {
        v->kind = V_BOOL;
        v->boolean = json_is_true(j);
        return true;
    }
    if (f->nullable && json_is_null(j)) {
        v->kind = V_NULL;
        return true;
    }
    snprintf(msg, size, "expected %s%s, got %s", expected_name(f), f->nullable ? " or null" : "",
             json_type_name(j));
    return false;
}

/* ---------------------------------------------------------------------------------------------
 * Checking and storing
 * ------------------------------------------------------------------------------------------- */

static bool check_bounds(const struct field_spec *f, const struct value *v, char *msg, size_t size)
{
    double x = v->number;

    if (v->kind != V_NUMBER)
        return true;
    if (f->type == FT_INT && x != floor(x)) {
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

/* base: a struct core_input, or a struct core_plan_input for /plan (rows of plan_fields). */
static void store(const struct field_spec *f, const struct value *v, char *base)
{
    char *dst = base + f->offset;
    int64_t i64;
    int i;
    bool b;

    if (v->kind == V_NULL) {
        /* "not given": put back the default this field had after core_input_init(). */
        struct core_plan_input defaults;
        core_plan_input_init(&defaults);
        memcpy(dst, (const char *)&defaults + f->offset,
               f->store == ST_PRICES   ? sizeof defaults.usd_per_gpu_hour
               : f->store == ST_DOUBLE ? sizeof(double)
                                       : sizeof(int));
        return;
    }
    switch (f->store) {
    case ST_I64:
        i64 = (int64_t)llround(v->number); /* bounds were checked: well inside int64 */
        memcpy(dst, &i64, sizeof i64);
        break;
    case ST_DOUBLE:
        memcpy(dst, &v->number, sizeof v->number);
        break;
    case ST_BOOL:
        b = v->boolean;
        memcpy(dst, &b, sizeof b);
        break;
    case ST_GPUS: {
        struct core_plan_input *plan = (struct core_plan_input *)base;
        plan->gpu_count = v->gpu_count;
        memcpy(plan->gpus, v->gpus, sizeof plan->gpus);
        break;
    }
    case ST_PRICES:
        memcpy(dst, v->prices, sizeof v->prices);
        break;
    case ST_INT:
        if (v->kind == V_NUMBER)
            i = (int)v->number;
        else if (v->kind == V_INDEX)
            i = v->index;
        else if (f->type == FT_CKPT)
            i = v->boolean ? CORE_CKPT_FULL : CORE_CKPT_NONE;
        else /* FT_FLAG */
            i = v->boolean ? CORE_FLAG_YES : CORE_FLAG_NO;
        memcpy(dst, &i, sizeof i);
        break;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------- */

static const struct field_spec *find_field(const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < FIELD_COUNT; i++)
        if (text_is(name, len, fields[i].name))
            return &fields[i];
    return NULL;
}

/* Edit distance with an early cap, to suggest "batch" for "bacth". Names are short. */
static size_t distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b), row[40], i, j;
    if (alen >= 40 || blen >= 40)
        return 99;
    for (j = 0; j <= blen; j++)
        row[j] = j;
    for (i = 1; i <= alen; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= blen; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[blen];
}

/* /plan: its own rows first (they shadow gpu and usd_per_gpu_hour), then the shared ones. */
static const struct field_spec *find_plan_field(const char *name, size_t len)
{
    for (size_t i = 0; i < PLAN_FIELD_COUNT; i++)
        if (text_is(name, len, plan_fields[i].name))
            return &plan_fields[i];
    return find_field(name, len);
}

static bool planner_chooses(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof planner_chosen / sizeof planner_chosen[0]; i++)
        if (text_is(name, len, planner_chosen[i]))
            return true;
    return false;
}

static void add_unknown(json_t *errors, const char *name, size_t len, bool plan)
{
    char msg[MSG_MAX];
    const char *best = NULL;
    size_t best_d = 3, i; /* suggest only within two edits */

    for (i = 0; i < FIELD_COUNT + (plan ? PLAN_FIELD_COUNT : 0); i++) {
        const char *candidate =
            i < FIELD_COUNT ? fields[i].name : plan_fields[i - FIELD_COUNT].name;
        size_t d = distance(name, len, candidate);
        if (d < best_d && !(plan && planner_chooses(candidate, strlen(candidate)))) {
            best_d = d;
            best = candidate;
        }
    }
    if (best != NULL)
        snprintf(msg, sizeof msg, "unknown input; did you mean \"%s\"?", best);
    else
        snprintf(msg, sizeof msg, "unknown input");
    api_errors_add(errors, name, len, msg);
}

/* ---------------------------------------------------------------------------------------------
 * Decoders
 * ------------------------------------------------------------------------------------------- */

static void finish(const struct field_spec *f, bool decoded, struct value *v, char *msg, char *in,
                   json_t *errors)
{
    if (decoded && check_bounds(f, v, msg, MSG_MAX))
        store(f, v, in);
    else
        api_errors_add(errors, f->name, strlen(f->name), msg);
}

bool api_decode_query(const struct api_param *query, size_t count, struct core_input *in,
                      json_t *errors)
{
    bool seen[FIELD_COUNT] = {false}, repeated[FIELD_COUNT] = {false};
    size_t unknown[API_ERRORS_MAX], unknown_count = 0;
    size_t before = json_array_size(errors), i, j;

    for (i = 0; i < count && json_array_size(errors) < API_ERRORS_MAX; i++) {
        const struct api_param *p = &query[i];
        const struct field_spec *f = find_field(p->key, p->key_len);
        struct value v = {0};
        char msg[MSG_MAX] = "";
        bool reported = false;

        if (f == NULL) {
            /* Report each unknown name once, however often it repeats; comparing against the
             * reported ones only keeps this O(count * API_ERRORS_MAX). */
            for (j = 0; j < unknown_count && !reported; j++)
                reported = query[unknown[j]].key_len == p->key_len &&
                           memcmp(query[unknown[j]].key, p->key, p->key_len) == 0;
            if (!reported && unknown_count < API_ERRORS_MAX) {
                unknown[unknown_count++] = i;
                add_unknown(errors, p->key, p->key_len, false);
            }
            continue;
        }
        if (seen[f - fields]) {
            /* A repeated key is ambiguous (first or last wins?), so it is an error, reported
             * once per name. */
            if (!repeated[f - fields])
                api_errors_add(errors, f->name, strlen(f->name), "given more than once");
            repeated[f - fields] = true;
            continue;
        }
        seen[f - fields] = true;
        if (p->value == NULL) {
            snprintf(msg, sizeof msg, "missing value (use %s=...)", f->name);
            api_errors_add(errors, f->name, strlen(f->name), msg);
            continue;
        }
        finish(f, decode_string(f, p->value, p->value_len, &v, msg, sizeof msg), &v, msg,
               (char *)in, errors);
    }
    return json_array_size(errors) == before;
}

/* base is a struct core_input, or a struct core_plan_input when plan. */
static bool decode_object(const json_t *object, char *base, bool plan, json_t *errors)
{
    size_t before = json_array_size(errors);
    const char *key;
    json_t *value;

    /* Keys are unique (the parser rejects duplicates) and iterate in document order. */
    json_object_foreach ((json_t *)object, key, value) {
        size_t len = strlen(key);
        const struct field_spec *f = plan ? find_plan_field(key, len) : find_field(key, len);
        struct value v = {0};
        char msg[MSG_MAX] = "";

        if (json_array_size(errors) >= API_ERRORS_MAX)
            break;
        if (plan && planner_chooses(key, len)) {
            api_errors_add(errors, key, len,
                           "the planner chooses this; it is not an input of /plan");
            continue;
        }
        if (f == NULL) {
            add_unknown(errors, key, len, plan);
            continue;
        }
        finish(f, decode_json(f, value, &v, msg, sizeof msg), &v, msg, base, errors);
    }
    return json_array_size(errors) == before;
}

bool api_decode_object(const json_t *object, struct core_input *in, json_t *errors)
{
    return decode_object(object, (char *)in, false, errors);
}

bool api_decode_plan_object(const json_t *object, struct core_plan_input *in, json_t *errors)
{
    return decode_object(object, (char *)in, true, errors);
}
