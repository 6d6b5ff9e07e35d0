/*
 * recompute.c - Megatron-Core's fine-grained recompute modules (--recompute-modules,
 * megatron/core/transformer/transformer_config.py): which parts of a layer selective recompute
 * recomputes instead of keeping their activations. The bytes each drops are in memory.c.
 *
 *   core_attn       the core attention (the default): the score term, as Korthikanti's selective
 *   moe_act         the routed experts' activation function (output-discarding)
 *   layernorm       input_layernorm and pre_mlp_layernorm (output-discarding)
 *   mla_up_proj     MLA's up projections and RoPE (output-discarding; MLA models only)
 *   mlp             a dense layer's MLP
 *   moe             the whole MoE block
 *   shared_experts  the shared experts
 */
#include <string.h>

#include "internal.h"

const char *const core_recompute_module_names[CORE_RC_COUNT] = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};

/* The bits of a list of module names separated by commas or blanks; false when a name is not one
 * of them. "" is Megatron's default, core_attn. */
bool core_recompute_parse(const char *s, size_t len, unsigned *bits)
{
    size_t i = 0;

    *bits = 0;
    while (i < len) {
        size_t start, n;
        int k;
        while (i < len && (s[i] == ',' || s[i] == ' '))
            i++;
        start = i;
        while (i < len && s[i] != ',' && s[i] != ' ')
            i++;
        n = i - start;
        if (n == 0)
            break;
        for (k = 0; k < CORE_RC_COUNT; k++)
            if (strlen(core_recompute_module_names[k]) == n &&
                memcmp(core_recompute_module_names[k], s + start, n) == 0)
                break;
        if (k == CORE_RC_COUNT)
            return false;
        *bits |= 1u << k;
    }
    if (*bits == 0)
        *bits = CORE_RC_CORE_ATTN;
    return true;
}

const char *core_recompute_text_check(const char *s, size_t len)
{
    unsigned bits;

    return core_recompute_parse(s, len, &bits)
               ? NULL
               : "a list of core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts "
                 "(Megatron-LM's --recompute-modules)";
}

void core_recompute_text(unsigned bits, char out[CORE_TEXT_MAX])
{
    size_t at = 0;

    out[0] = '\0';
    for (int k = 0; k < CORE_RC_COUNT; k++) {
        size_t n = strlen(core_recompute_module_names[k]);
        if (!(bits & (1u << k)) || at + n + 2 > CORE_TEXT_MAX)
            continue;
        if (at > 0)
            out[at++] = ',';
        memcpy(out + at, core_recompute_module_names[k], n);
        at += n;
        out[at] = '\0';
    }
}
