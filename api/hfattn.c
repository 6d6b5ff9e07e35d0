/*
 * hfattn.c - the attention layer types of a Hugging Face config (docs/architectures.md,
 * "Attention layer types"): the sliding window and which layers use it.
 *
 * Three ways a config states them: `layer_types`, a list of "full_attention" /
 * "sliding_attention" (and, for Qwen3-Next, "linear_attention") per layer (GPT-OSS, Gemma 2
 * and 3 in recent transformers, any family); a period key, Gemma 3's older
 * `sliding_window_pattern` or Qwen3-Next's `full_attention_interval` P (layer i full when
 * (i + 1) mod P = 0); and Mistral's `sliding_window` alone, which applies to every layer. Where a
 * key is absent the transformers class's default applies (table below). The list is folded into the
 * repeating pattern struct core_arch keeps (its shortest period, at most CORE_LAYER_PERIOD_MAX
 * layers).
 */
#include <string.h>

#include "hffamily.h"
#include "hfkeys.h"

/* What each configuration class defaults to when its config leaves the keys out. */
struct attn_family {
    const char *model_type;
    const char *prefix; /* where the text model's keys live ("" or "text_config.") */
    int64_t window;     /* class default of sliding_window; 0 = None */
    int64_t pattern; /* default pattern P: full when (i + 1) mod P = 0; 0 = every layer sliding */
    const char *pattern_key; /* the key that states P (Gemma 3, Qwen3-Next), or NULL */
    bool linear;             /* the other layers are linear attention, not sliding (Qwen3-Next) */
};

static const struct attn_family attn_families[] = {
    /* MistralConfig: sliding_window=4096, every layer (Mistral 7B v0.1; v0.2 on say null) */
    {.model_type = "mistral", .prefix = "", .window = 4096, .pattern = 0},
    /* MixtralConfig / Phi3Config: sliding_window=None; when given, every layer */
    {.model_type = "mixtral", .prefix = "", .window = 0, .pattern = 0},
    {.model_type = "phi3", .prefix = "", .window = 0, .pattern = 0},
    /* Gemma2Config: sliding_window=4096, layer_types sliding when (i + 1) % 2 */
    {.model_type = "gemma2", .prefix = "", .window = 4096, .pattern = 2},
    /* Gemma3TextConfig: sliding_window=4096, sliding_window_pattern=6 (five local, one global) */
    {.model_type = "gemma3_text",
     .prefix = "",
     .window = 4096,
     .pattern = 6,
     .pattern_key = "sliding_window_pattern"},
    {.model_type = "gemma3",
     .prefix = "text_config.",
     .window = 4096,
     .pattern = 6,
     .pattern_key = "sliding_window_pattern"},
    /* Qwen3NextConfig: full_attention_interval=4 (three Gated DeltaNet layers, then one full);
     * no sliding window (use_sliding_window is not read by the class) */
    {.model_type = "qwen3_next",
     .prefix = "",
     .window = 0,
     .pattern = 4,
     .pattern_key = "full_attention_interval",
     .linear = true},
    /* GptOssConfig: sliding_window=128, layer_types sliding when (i + 1) % 2 */
    {.model_type = "gpt_oss", .prefix = "", .window = 128, .pattern = 2},
};

#define ATTN_FAMILIES (sizeof attn_families / sizeof attn_families[0])

static const struct attn_family *attn_family(const char *model_type)
{
    static const struct attn_family none = {.model_type = "", .prefix = ""};

    for (size_t i = 0; i < ATTN_FAMILIES; i++)
        if (strcmp(attn_families[i].model_type, model_type) == 0)
            return &attn_families[i];
    return &none;
}

/* prefix + name, for the key readers (which take a dotted path). */
static const char *key(char *buf, size_t size, const struct attn_family *f, const char *name)
{
    size_t p = strlen(f->prefix), n = strlen(name);

    if (p + n + 1 > size)
        return name;
    memcpy(buf, f->prefix, p);
    memcpy(buf + p, name, n + 1);
    return buf;
}

/* The pattern "full when (i + 1) mod P = 0" (P >= 1), the other layers sliding or linear; or
 * every layer sliding (P = 0). */
static void every_pth_full(struct core_arch *a, int64_t p, bool linear)
{
    a->layer_period = p > 1 ? p : 0;
    a->full_layers = p >= 1 ? (uint64_t)1 << (p - 1) : 0;
    a->linear_layers = linear && p > 1 ? a->full_layers - 1 : 0;
}

enum { K_SLIDING, K_FULL, K_LINEAR, K_BAD };

/* The kind of one entry of layer_types; linear attention only where the family has it. */
static int entry_kind(const json_t *v, bool linear)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;

    if (s != NULL && strcmp(s, "full_attention") == 0)
        return K_FULL;
    if (s != NULL && strcmp(s, "sliding_attention") == 0)
        return K_SLIDING;
    if (linear && s != NULL && strcmp(s, "linear_attention") == 0)
        return K_LINEAR;
    return K_BAD;
}

/* The shortest period P <= CORE_LAYER_PERIOD_MAX with kinds[i] = kinds[i mod P]; 0 if none. */
static int64_t shortest_period(const int *kinds, int64_t n)
{
    for (int64_t p = 1; p <= CORE_LAYER_PERIOD_MAX && p <= n; p++) {
        int64_t i = p;
        while (i < n && kinds[i] == kinds[i % p])
            i++;
        if (i == n)
            return p;
    }
    return 0;
}

/* Read layer_types into a (period, full and linear bits); false (with a problem) when it
 * cannot be. The pattern is found in the first 2 P_max entries, then checked against all. */
static bool read_layer_types(struct dec *d, const char *k, const json_t *list, bool linear,
                             struct core_arch *a)
{
    int kinds[CORE_LAYER_PERIOD_MAX * 2];
    int64_t n = (int64_t)json_array_size(list), p, head;

    if (!json_is_array(list) || n != a->layers) {
        hf_fail(d, k, "must be a list of %lld layer types, one per layer", (long long)a->layers);
        return false;
    }
    head = n < CORE_LAYER_PERIOD_MAX * 2 ? n : CORE_LAYER_PERIOD_MAX * 2;
    for (int64_t i = 0; i < n; i++) {
        int kind = entry_kind(json_array_get(list, (size_t)i), linear);
        if (kind == K_BAD) {
            hf_fail(d, k,
                    "entry %lld is not \"full_attention\", \"sliding_attention\"%s: the layer "
                    "types this service prices for this model_type",
                    (long long)i, linear ? " or \"linear_attention\"" : "");
            return false;
        }
        if (i < head)
            kinds[i] = kind;
    }
    p = shortest_period(kinds, head);
    for (int64_t i = head; p > 0 && i < n; i++)
        if (entry_kind(json_array_get(list, (size_t)i), linear) != kinds[i % p])
            p = 0;
    if (p == 0) {
        hf_fail(d, k, "the layer types do not repeat with a period of %d layers or fewer",
                CORE_LAYER_PERIOD_MAX);
        return false;
    }
    a->layer_period = p > 1 ? p : 0;
    a->full_layers = 0, a->linear_layers = 0;
    for (int64_t j = 0; j < p; j++) {
        if (kinds[j] == K_FULL)
            a->full_layers |= (uint64_t)1 << j;
        if (kinds[j] == K_LINEAR)
            a->linear_layers |= (uint64_t)1 << j;
    }
    return true;
}

/* Every slot of the pattern is full attention. */
static bool all_full(const struct core_arch *a)
{
    int64_t p = a->layer_period > 1 ? a->layer_period : 1;
    uint64_t every = p >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << p) - 1;

    return a->full_layers == every;
}

void hf_attention_types(struct dec *d, const char *model_type, struct core_arch *a)
{
    const struct attn_family *f = attn_family(model_type != NULL ? model_type : "");
    char kbuf[HF_KEY_MAX], lbuf[HF_KEY_MAX];
    const char *lk = key(lbuf, sizeof lbuf, f, "layer_types");
    const json_t *list = hf_lookup(d->cfg, lk);
    bool listed = list != NULL && !json_is_null(list);

    a->sliding_window = 0, a->layer_period = 0, a->full_layers = 0, a->linear_layers = 0;
    /* Families without a window of their own read one only when layer_types asks for it. */
    if (f->model_type[0] == '\0' && !listed)
        return;
    if (listed && !read_layer_types(d, lk, list, f->linear, a))
        return;
    if (!listed && f->pattern_key != NULL)
        every_pth_full(a,
                       hf_int(d, key(kbuf, sizeof kbuf, f, f->pattern_key), f->pattern, f->pattern,
                              1, CORE_LAYER_PERIOD_MAX),
                       f->linear);
    else if (!listed)
        every_pth_full(a, f->pattern, f->linear);
    /* Qwen3-Next's class has no sliding window: its sliding_window key is inert. */
    if (!f->linear)
        a->sliding_window = hf_int(d, key(kbuf, sizeof kbuf, f, "sliding_window"), f->window, 0, 1,
                                   CORE_SEQ_LEN_MAX);
    /* No linear layer and no window (None) or no sliding layer: every layer full attention. With
     * linear layers and no window the other layers are full (the full bits stay as read). */
    if (a->linear_layers == 0 && (a->sliding_window == 0 || all_full(a)))
        a->sliding_window = 0, a->layer_period = 0, a->full_layers = 0;
}
