/*
 * cuda_graph.c - Megatron-Core's per-layer CUDA graphs for training (--cuda-graph-impl
 * transformer_engine --cuda-graph-modules, megatron/core/transformer/transformer_config.py;
 * Megatron-Bridge's cuda_graph_scope): which parts of each layer a step replays from a captured
 * graph instead of launching kernel by kernel. perf.c takes their host time out of moe_host.
 *
 *   attn            TransformerLayer._forward_attention(): norm, projections, core attention
 *   moe_router      the MoE block up to MoELayer.router(), with the shared experts when they are
 *                   not overlapped with the expert-parallel exchange
 *   moe_preprocess  MoELayer.preprocess(), the dispatcher's token bookkeeping (needs moe_router)
 *
 * The empty list is Megatron's default, --cuda-graph-impl none. Whole-layer and "moe" graphs
 * (and full_iteration) need drop-and-pad MoE (fixed shapes): not offered for the dropless
 * experts memwall prices.
 */
#include <string.h>

#include "inputs.h"
#include "internal.h"

const char *const core_cuda_graph_module_names[CORE_CG_COUNT] = {"attn", "moe_router",
                                                                 "moe_preprocess"};

/* The bits of a list of module names separated by commas or blanks; false when a name is not
 * one of them. "" = no CUDA graphs. */
bool core_cuda_graph_parse(const char *s, size_t len, unsigned *bits)
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
        for (k = 0; k < CORE_CG_COUNT; k++)
            if (strlen(core_cuda_graph_module_names[k]) == n &&
                memcmp(core_cuda_graph_module_names[k], s + start, n) == 0)
                break;
        if (k == CORE_CG_COUNT)
            return false;
        *bits |= 1u << k;
    }
    return true;
}

const char *core_cuda_graph_text_check(const char *s, size_t len)
{
    unsigned bits;

    return core_cuda_graph_parse(s, len, &bits)
               ? NULL
               : "a list of attn, moe_router, moe_preprocess (Megatron-Core's "
                 "--cuda-graph-modules)";
}

void core_cuda_graph_text(unsigned bits, char out[CORE_TEXT_MAX])
{
    size_t at = 0;

    out[0] = '\0';
    for (int k = 0; k < CORE_CG_COUNT; k++) {
        size_t n = strlen(core_cuda_graph_module_names[k]);
        if (!(bits & (1u << k)) || at + n + 2 > CORE_TEXT_MAX)
            continue;
        if (at > 0)
            out[at++] = ',';
        memcpy(out + at, core_cuda_graph_module_names[k], n);
        at += n;
        out[at] = '\0';
    }
}
