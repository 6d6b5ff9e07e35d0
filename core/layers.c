/*
 * layers.c - attention layer types: which layers attend the whole prefix, which a sliding
 * window of it, which none (linear attention), and what each kind costs per sequence (keys
 * attended, positions cached, the linear layers' fixed state).
 *
 * The types are data in struct core_arch (sliding_window, layer_period, full_layers,
 * linear_layers): a pattern of P layer types that repeats over the L layers, as the Hugging Face
 * configs state it (`layer_types`, Gemma 3's `sliding_window_pattern`, Qwen3-Next's
 * `full_attention_interval`, Mistral's every-layer `sliding_window`).
 * Counts are closed form, no loop over layers. All zero: every layer full attention, and every
 * function here reduces to the formulas that held before it (L x T keys, L x T positions).
 * docs/architectures.md, "Attention layer types".
 */
#include "internal.h"

const char *const core_layer_kind_names[CORE_LAYER_KINDS] = {"full_attention", "sliding_attention",
                                                             "linear_attention"};

static int64_t period(const struct core_arch *a)
{
    return a->layer_period > 1 ? a->layer_period : 1;
}

/* Bits above the period are not slots of the pattern. */
static bool within_period(const struct core_arch *a, uint64_t bits)
{
    return period(a) >= 64 || (bits >> period(a)) == 0;
}

bool core_arch_layer_types_valid(const struct core_arch *a)
{
    if (a == NULL || a->sliding_window < 0 || a->layer_period < 0 ||
        a->layer_period > CORE_LAYER_PERIOD_MAX)
        return false;
    if (!within_period(a, a->full_layers) || !within_period(a, a->linear_layers) ||
        (a->full_layers & a->linear_layers) != 0)
        return false;
    /* A linear layer needs its sizes (their products are overflow-checked by the count). */
    return a->linear_layers == 0 ||
           (a->linear_key_heads > 0 && a->linear_key_dim > 0 && a->linear_value_heads > 0 &&
            a->linear_value_dim > 0 && a->linear_conv_kernel > 0);
}

enum core_layer_kind core_arch_layer_kind(const struct core_arch *a, int64_t layer)
{
    uint64_t slot;

    if (a == NULL || !core_arch_layer_types_valid(a) || layer < 0)
        return CORE_LAYER_FULL;
    slot = (uint64_t)1 << (layer % period(a));
    if (a->linear_layers & slot)
        return CORE_LAYER_LINEAR;
    if (a->sliding_window <= 0 || (a->full_layers & slot))
        return CORE_LAYER_FULL;
    return CORE_LAYER_SLIDING;
}

/* Layers i in [0, n) whose slot i mod P has its bit set in bits. */
static int64_t below(const struct core_arch *a, uint64_t bits, int64_t n)
{
    int64_t p = period(a), whole = n / p, rest = n % p, count = 0;

    for (int64_t j = 0; j < p; j++) /* P <= 64: the pattern, not the layers */
        if ((bits >> j) & 1u)
            count += whole + (j < rest);
    return count;
}

void core_arch_layer_types_range(const struct core_arch *a, int64_t first, int64_t count,
                                 struct core_layer_types *out)
{
    int64_t lo, hi, linear, full;

    *out = (struct core_layer_types){{0, 0, 0}, 0};
    if (a == NULL)
        return;
    lo = first < 0 ? 0 : first;
    if (count <= 0 || lo >= a->layers)
        return;
    hi = count > a->layers - lo ? a->layers : lo + count;
    if (!core_arch_layer_types_valid(a)) {
        out->layers[CORE_LAYER_FULL] = hi - lo;
        return;
    }
    linear = below(a, a->linear_layers, hi) - below(a, a->linear_layers, lo);
    /* Without a window every layer that is not linear is full attention. */
    full = a->sliding_window > 0 ? below(a, a->full_layers, hi) - below(a, a->full_layers, lo)
                                 : hi - lo - linear;
    out->layers[CORE_LAYER_LINEAR] = linear;
    out->layers[CORE_LAYER_FULL] = full;
    out->layers[CORE_LAYER_SLIDING] = hi - lo - linear - full;
    out->window = out->layers[CORE_LAYER_SLIDING] > 0 ? a->sliding_window : 0;
}

void core_arch_layer_types(const struct core_arch *a, struct core_layer_types *out)
{
    core_arch_layer_types_range(a, 0, a != NULL ? a->layers : 0, out);
}

int64_t core_arch_kv_positions(const struct core_arch *a, enum core_layer_kind kind,
                               int64_t seq_len)
{
    if (seq_len <= 0 || kind == CORE_LAYER_LINEAR)
        return 0;
    if (kind == CORE_LAYER_SLIDING && a != NULL && a->sliding_window > 0 &&
        a->sliding_window < seq_len)
        return a->sliding_window;
    return seq_len;
}

int64_t core_arch_kv_positions_total(const struct core_arch *a, int64_t seq_len)
{
    struct core_layer_types t;
    int64_t total = 0;

    core_arch_layer_types(a, &t);
    for (int k = 0; k < CORE_LAYER_KINDS; k++) {
        int64_t one;
        if (!ck_mul(t.layers[k], core_arch_kv_positions(a, (enum core_layer_kind)k, seq_len),
                    &one) ||
            !ck_add(total, one, &total))
            return -1;
    }
    return total;
}

int64_t core_arch_linear_state_elements(const struct core_arch *a)
{
    int64_t kd, vd, conv, rec;

    if (a == NULL || a->linear_layers == 0 || !core_arch_layer_types_valid(a))
        return 0;
    if (!ck_mul(a->linear_key_heads, a->linear_key_dim, &kd) ||
        !ck_mul(a->linear_value_heads, a->linear_value_dim, &vd) || !ck_mul(kd, 2, &conv) ||
        !ck_add(conv, vd, &conv) || !ck_mul(conv, a->linear_conv_kernel - 1, &conv) ||
        !ck_mul(a->linear_value_heads, a->linear_key_dim, &rec) ||
        !ck_mul(rec, a->linear_value_dim, &rec) || !ck_add(conv, rec, &rec))
        return -1;
    return rec;
}

double core_attention_mean_keys(int64_t seq_len, int64_t window, bool causal)
{
    double t = (double)seq_len, w = (double)window;

    if (seq_len <= 0)
        return 0.0;
    if (window <= 0 || window >= seq_len)
        return causal ? t / 2.0 : t;
    /* Query t attends min(t, w) keys: (1/T) (integral of t over [0, w] + w (T - w)). */
    return causal ? w - w * w / (2.0 * t) : w;
}

double core_arch_attended_keys(const struct core_arch *a, int64_t seq_len, bool causal)
{
    struct core_layer_types t;
    double full, sliding = 0.0;

    if (a == NULL)
        return 0.0;
    core_arch_layer_types(a, &t);
    /* L x T exactly as before when every layer is full (integers below 2^53). */
    full = (double)t.layers[CORE_LAYER_FULL] * (double)seq_len;
    full = causal ? full / 2.0 : full;
    if (t.layers[CORE_LAYER_SLIDING] > 0)
        sliding = (double)t.layers[CORE_LAYER_SLIDING] *
                  core_attention_mean_keys(seq_len, t.window, causal);
    return full + sliding;
}
