/*
 * params.c - parameter counts and shape resolution.
 *
 * The ledger needs only N, but activations and the attention FLOP term need a shape (L, d, a,
 * T). This file decides where that shape comes from - a preset, an explicit architecture, the
 * nearest preset by size, or the d/L ~ 128 aspect rule - applies the caller's overrides on
 * top, and derives N from a shape when the caller did not give one. Counts are overflow-checked
 * because fuzzed architectures can exceed int64.
 */
#include <math.h>

#include "internal.h"

#define DEFAULT_PARAMS 7000000000LL
#define DEFAULT_VOCAB  32000
#define NEAREST_MAX    1.5 /* a preset is "near" within this factor of N */
#define MISMATCH_RATIO 0.05

/* The counts themselves (core_arch_params and the MoE/MLA breakdown) live in arch.c. */

/* ---------------------------------------------------------------------------------------------
 * Base shapes
 * ------------------------------------------------------------------------------------------- */

static void shape_from_preset(int idx, enum core_shape_source source, struct core_shape *s)
{
    s->source = source;
    s->preset = idx;
    s->arch = core_presets[idx].arch;
}

/* The Llama rule for a gated MLP: 2/3 of 4d, rounded up to a multiple of 256. */
static int64_t default_ffn(int64_t hidden, bool gated)
{
    return gated ? 256 * ceil_div(ceil_div(8 * hidden, 3), 256) : 4 * hidden;
}

static void shape_from_architecture(const struct core_input *in, struct core_shape *s)
{
    struct core_arch *a = &s->arch;
    int64_t d = in->hidden;

    s->source = CORE_SHAPE_ARCHITECTURE;
    s->preset = -1;
    *a = (struct core_arch){0}; /* dense, no biases: the extra fields stay at zero */
    a->layers = in->layers;
    a->hidden = d;
    /* Default heads keep the 128 (else 64) head size of GPT-3 and Llama when d allows it. */
    a->heads = d % 128 == 0 ? d / 128 : d % 64 == 0 ? d / 64 : 1;
    a->kv_heads = a->heads;
    a->head_dim = d / a->heads;
    a->gated_mlp = in->gated_mlp == CORE_FLAG_YES;
    a->tied_embeddings = in->tied_embeddings == CORE_FLAG_YES;
    a->ffn_hidden = default_ffn(d, a->gated_mlp);
    a->vocab = DEFAULT_VOCAB;
    a->learned_positions = 0;
    a->relative_position_projection = false;
}

/* Nearest dense preset by |ln(N / derived)|, i.e. the smallest max(N/P, P/N); -1 if none
 * within 1.5x. */
static int nearest_preset(int64_t n)
{
    double best = NEAREST_MAX;
    int found = -1;

    for (size_t i = 0; i < core_preset_count && i < CORE_PRESET_STAND_INS; i++) {
        const struct core_preset *pre = &core_presets[i];
        double published = pre->published_params;
        int64_t p;

        /* A bare N says nothing about experts: only dense presets lend their shape. And a preset
         * whose published count is not within 1.6x of N cannot have a derived count within
         * 1.5x (every derived count is within 1 % of its published one: tests/core), so its
         * count is not worth deriving on every evaluation. */
        if (pre->arch.experts > 0 || (double)n > 1.6 * published || published > 1.6 * (double)n)
            continue;
        p = core_arch_params(&pre->arch);
        if (p <= 0)
            continue;
        double ratio = (double)n > (double)p ? (double)n / (double)p : (double)p / (double)n;
        if (ratio <= best) {
            best = ratio;
            found = (int)i;
        }
    }
    return found;
}

/* d/L ~ 128 with 128-wide heads, as in GPT-3 and Llama: 12 L d^2 = N gives L = (N/12/128^2)^(1/3).
 */
static void shape_from_aspect(int64_t n, struct core_shape *s)
{
    struct core_arch *a = &s->arch;
    int64_t layers = (int64_t)llround(cbrt((double)n / (12.0 * 128.0 * 128.0)));

    s->source = CORE_SHAPE_ASPECT;
    s->preset = -1;
    *a = (struct core_arch){0};
    a->layers = layers < 1 ? 1 : layers;
    a->hidden = 128 * a->layers;
    a->heads = a->layers;
    a->kv_heads = a->heads;
    a->head_dim = 128;
    a->ffn_hidden = 4 * a->hidden;
    a->vocab = DEFAULT_VOCAB;
    a->gated_mlp = false;
    a->tied_embeddings = false;
    a->learned_positions = 0;
    a->relative_position_projection = false;
}

/* ---------------------------------------------------------------------------------------------
 * Overrides and validation
 * ------------------------------------------------------------------------------------------- */

static void apply_flag(enum core_flag f, bool *target)
{
    if (f != CORE_FLAG_AUTO)
        *target = f == CORE_FLAG_YES;
}

/* Given fields replace the base. The head size is derived (d/a) unless given, so it follows an
 * overridden d or a; MHA presets (k == a) keep k == a when only a changes. */
static void apply_overrides(const struct core_input *in, struct core_shape *s,
                            struct core_problems *p)
{
    struct core_arch *a = &s->arch;
    bool mha = a->kv_heads == a->heads;
    bool reshaped = in->hidden > 0 || in->heads > 0 || s->source == CORE_SHAPE_ARCHITECTURE;

    a->layers = in->layers > 0 ? in->layers : a->layers;
    a->hidden = in->hidden > 0 ? in->hidden : a->hidden;
    a->heads = in->heads > 0 ? in->heads : a->heads;
    a->kv_heads = in->kv_heads > 0 ? in->kv_heads : mha ? a->heads : a->kv_heads;
    a->ffn_hidden = in->ffn_hidden > 0 ? in->ffn_hidden : a->ffn_hidden;
    a->vocab = in->vocab > 0 ? in->vocab : a->vocab;
    apply_flag(in->gated_mlp, &a->gated_mlp);
    apply_flag(in->tied_embeddings, &a->tied_embeddings);
    if (in->head_dim > 0) {
        a->head_dim = in->head_dim;
    } else if (reshaped) {
        if (a->hidden % a->heads != 0)
            core_problem_add(p, "heads",
                             "hidden (%lld) is not divisible by heads (%lld); give head_dim",
                             (long long)a->hidden, (long long)a->heads);
        a->head_dim = a->hidden / a->heads > 0 ? a->hidden / a->heads : 1;
    }
    if (a->heads % a->kv_heads != 0)
        core_problem_add(p, "kv_heads", "kv_heads (%lld) must divide heads (%lld)",
                         (long long)a->kv_heads, (long long)a->heads);
}

/* `sliding_window_pattern` and `sliding_window` (docs/architectures.md, "Attention layer
 * types"). A pattern P >= 1 makes layer i full attention when (i + 1) mod P = 0 and the others
 * sliding (Gemma 3's rule; 2 alternates as Gemma 2 and GPT-OSS do, 1 makes every layer full);
 * P = 0 makes every layer sliding. A window 0 makes every layer full attention; a window w
 * replaces the architecture's, on its sliding layers, or on every layer when it has no
 * pattern (Mistral's rule). A hybrid's pattern (its linear layers) is its own. */
static void apply_window(const struct core_input *in, struct core_arch *a, struct core_problems *p)
{
    if (in->sliding_window_pattern >= 0 && a->linear_layers != 0) {
        core_problem_add(p, "sliding_window_pattern",
                         "this model's layer pattern holds linear-attention layers; it cannot "
                         "be replaced");
        return;
    }
    if (in->sliding_window_pattern >= 0) {
        int64_t period = in->sliding_window_pattern;
        a->layer_period = period > 1 ? period : 0;
        a->full_layers = period >= 1 ? (uint64_t)1 << (period - 1) : 0;
    }
    if (in->sliding_window < 0)
        return;
    if (in->sliding_window == 0 && a->linear_layers == 0)
        a->layer_period = 0, a->full_layers = 0; /* a hybrid's linear layers keep the pattern */
    a->sliding_window = in->sliding_window;
}

/* Megatron-Core's group-limited routing (transformer_config.py: a group top-k needs
 * moe_router_num_groups; moe_utils.py group_limited_topk views the E scores as num_groups equal
 * groups and takes the top-(topk / group_topk) of each, so both must divide). */
static void router_groups_check(const struct core_arch *a, struct core_problems *p)
{
    int64_t g = a->router_groups, gk = a->router_group_topk;

    if (g > 1 && a->experts % g != 0)
        core_problem_add(p, "moe_router_num_groups",
                         "moe_router_num_groups %lld does not divide the %lld experts",
                         (long long)g, (long long)a->experts);
    if (gk > 0 && g == 0)
        core_problem_add(p, "moe_router_group_topk",
                         "moe_router_group_topk needs moe_router_num_groups (Megatron-Core)");
    else if (gk > g)
        core_problem_add(p, "moe_router_group_topk",
                         "moe_router_group_topk %lld exceeds moe_router_num_groups %lld",
                         (long long)gk, (long long)g);
    else if (gk > a->experts_per_token)
        core_problem_add(p, "moe_router_group_topk",
                         "moe_router_group_topk %lld exceeds experts_per_token %lld", (long long)gk,
                         (long long)a->experts_per_token);
    else if (g > 0 && gk == 0)
        core_problem_add(p, "moe_router_group_topk",
                         "moe_router_num_groups needs moe_router_group_topk");
}

/* Mixture-of-experts rows replace the base's fields (docs/model.md, "Mixture of experts").
 * experts 0 makes the model dense; a new MoE needs its top-k. */
static void apply_moe(const struct core_input *in, struct core_arch *a, struct core_problems *p)
{
    if (in->experts >= 0)
        a->experts = in->experts;
    if (in->experts_per_token > 0)
        a->experts_per_token = in->experts_per_token;
    if (in->shared_experts >= 0)
        a->shared_experts = in->shared_experts;
    if (in->moe_ffn_hidden > 0)
        a->moe_ffn_hidden = in->moe_ffn_hidden;
    if (in->dense_layers >= 0)
        a->dense_layers = in->dense_layers;
    if (in->moe_router_num_groups >= 0)
        a->router_groups = in->moe_router_num_groups;
    if (in->moe_router_group_topk >= 0)
        a->router_group_topk = in->moe_router_group_topk;
    if (a->experts == 0) { /* dense: the routing fields mean nothing */
        a->experts_per_token = 0;
        a->router_groups = a->router_group_topk = 0;
        a->moe_layer_freq = a->moe_layer_phase = 0;
        a->router_bias = a->shared_expert_gate = false;
        if (in->experts_per_token > 0)
            core_problem_add(p, "experts_per_token", "experts_per_token needs experts > 0");
        return;
    }
    if (a->experts_per_token == 0)
        core_problem_add(p, "experts_per_token",
                         "a mixture of %lld experts needs experts_per_token",
                         (long long)a->experts);
    else if (a->experts_per_token > a->experts)
        core_problem_add(p, "experts_per_token", "experts_per_token %lld exceeds experts %lld",
                         (long long)a->experts_per_token, (long long)a->experts);
    router_groups_check(a, p);
    if (a->dense_layers >= a->layers)
        core_problem_add(p, "dense_layers",
                         "dense_layers %lld leaves no MoE layer of the %lld; give experts 0 for a "
                         "dense model",
                         (long long)a->dense_layers, (long long)a->layers);
}

enum core_status core_resolve_shape(const struct core_input *in, struct core_shape *s,
                                    struct core_problems *p)
{
    int before = p->count;

    if (in->config_given) {
        s->source = CORE_SHAPE_CONFIG;
        s->preset = -1;
        s->arch = in->config_arch;
        if (in->preset >= 0)
            core_problem_add(p, "config", "give model or config, not both");
    } else if (in->preset >= 0) {
        shape_from_preset(in->preset, CORE_SHAPE_PRESET, s);
    } else if (in->layers > 0 && in->hidden > 0) {
        shape_from_architecture(in, s);
    } else {
        int64_t n = in->params > 0 ? in->params : DEFAULT_PARAMS;
        int idx = nearest_preset(n);
        if (idx >= 0) {
            shape_from_preset(idx, CORE_SHAPE_NEAREST, s);
            /* A stand-in lends its size, not its attention pattern: a bare N is priced with
             * full attention in every layer (Mistral 7B's window stays with `model`). */
            s->arch.sliding_window = 0;
            s->arch.layer_period = 0;
            s->arch.full_layers = 0;
        } else
            shape_from_aspect(n, s);
    }
    apply_overrides(in, s, p);
    apply_moe(in, &s->arch, p);
    apply_window(in, &s->arch, p);
    if (p->count > before)
        return CORE_EINVAL;
    s->arch_params = core_arch_params(&s->arch);
    if (s->arch_params < 0) {
        core_problem_add(p, "hidden",
                         "result out of range: the architecture's parameter count "
                         "does not fit in 64 bits");
        return CORE_ERANGE;
    }
    return CORE_OK;
}

/* The shape's count is the model's own (not a stand-in picked by size). */
static bool from_arch(const struct core_shape *s)
{
    return s->source == CORE_SHAPE_PRESET || s->source == CORE_SHAPE_ARCHITECTURE ||
           s->source == CORE_SHAPE_CONFIG;
}

/* N: as given, else the architecture's own count, else the lesson's 7B. */
int64_t core_resolve_params(const struct core_input *in, const struct core_shape *s)
{
    if (in->params > 0)
        return in->params;
    return from_arch(s) ? s->arch_params : DEFAULT_PARAMS;
}

/* The architecture's share of n: active per token and routed experts. For the architecture's
 * own count (n = arch_params) they are its exact counts; for a given N they scale with it,
 * so a dense model's active count is N itself. */
void core_resolve_moe_split(const struct core_shape *s, int64_t n, int64_t *active,
                            int64_t *experts)
{
    struct core_arch_counts c;

    *active = n;
    *experts = 0;
    if (s->arch.experts <= 0 || !core_arch_count(&s->arch, &c) || c.total <= 0)
        return;
    if (n == c.total) {
        *active = c.active;
        *experts = c.experts;
        return;
    }
    *active = (int64_t)llround((double)n * ((double)c.active / (double)c.total));
    *experts = (int64_t)llround((double)n * ((double)c.experts / (double)c.total));
    *active = *active < 1 ? 1 : *active;
}

/* Used by the params_mismatch warning: N given and more than 5 % away from the architecture. */
bool core_params_mismatch(const struct core_input *in, const struct core_shape *s, int64_t n)
{
    return in->params > 0 && from_arch(s) && s->arch_params > 0 &&
           fabs((double)n / (double)s->arch_params - 1.0) > MISMATCH_RATIO;
}
