/*
 * perf_moe.c - where a MoE layer's tokens go (docs/model.md, "Mixture of experts").
 *
 * Geometry only: how many bytes one rank's all-to-all keeps, sends over the scale-up link and
 * sends over the network, and how many tokens each local expert computes. perf.c turns them
 * into seconds with its per-generation link efficiencies.
 *
 * Placement follows Megatron-Core's process groups (megatron/core/parallel_state.py): the
 * expert ranks are generated in the order tp-ep-dp-pp with the experts' own tensor-parallel
 * size (etp, --expert-tensor-parallel-size, default tp) in the tp slot, so the ep ranks of one
 * expert group are etp apart and the group covers ep*etp consecutive ranks; nodes hold
 * consecutive ranks.
 *
 * Routing is balanced (Megatron-Bridge's published tables force-balance it): each token's k
 * copies land uniformly on the E experts, E/ep on each rank.
 */
#include <math.h>

#include "perf.h"

static double at_least(double x, double lo)
{
    return x >= lo ? x : lo; /* also maps NaN to lo */
}

/* Probability that k distinct experts drawn uniformly from E miss all `held` of them:
 * C(E - held, k) / C(E, k) = prod_{i<k} (E - held - i) / (E - i). */
static double miss_all(double E, double held, double k)
{
    double p = 1.0;

    if (held >= E || k > E - held)
        return 0.0;
    if (k > 512) /* long products: the with-replacement form, within 1e-3 there */
        return pow(1.0 - held / E, k);
    for (double i = 0; i < k; i++)
        p *= (E - held - i) / (E - i);
    return p;
}

static double etp_of(const struct core_perf_input *in)
{
    return at_least((double)(in->etp > 0 ? in->etp : in->tp), 1);
}

/* Probability that one token's k experts include any of `held` consecutive experts (a GPU's or
 * a node's, starting on a multiple of `held`). Without groups: 1 - C(E - held, k) / C(E, k).
 * With group-limited routing (Megatron-Core moe_utils.py group_limited_topk: the token takes the
 * top group_topk of G groups by the sum of each group's top k / group_topk scores, then its top k
 * inside them) and the force-balanced tables' random scores, the chosen groups are a uniform
 * group_topk-subset and each gives about k / group_topk experts, uniform within it: `held`
 * whole groups (held a multiple of E / G) are hit when one of them is chosen,
 * 1 - C(G - held G / E, group_topk) / C(G, group_topk); `held` experts inside one group when
 * that group is chosen and one of its k / group_topk picks lands on them. */
static double hit(const struct core_perf_input *in, double E, double held, double k)
{
    double G = (double)in->router_groups, gk = (double)in->router_group_topk;

    if (G <= 1 || gk <= 0 || gk >= G || fmod(E, G) != 0)
        return 1.0 - miss_all(E, held, k);
    double size = E / G, per = floor(k / gk) > 1 ? floor(k / gk) : 1;
    if (held >= size)
        return 1.0 - miss_all(G, floor(held / size), gk);
    return gk / G * (1.0 - miss_all(size, held, per));
}

double core_perf_expert_tokens(const struct core_perf_input *in)
{
    double t = at_least((double)in->tp, 1), c = at_least((double)in->cp, 1);
    double rows = at_least((double)in->micro_batch, 1) * at_least((double)in->seq_len, 1) / c;
    double E = at_least((double)in->experts, 1), ep = at_least((double)in->ep, 1);
    double k = at_least((double)in->experts_per_token, 1);

    return rows / t * k * ep * etp_of(in) / E;
}

void core_perf_ep_traffic(const struct core_perf_input *in, struct core_ep_traffic *out)
{
    double t = at_least((double)in->tp, 1), c = at_least((double)in->cp, 1);
    double ep = at_least((double)in->ep, 1), etp = etp_of(in);
    double gpn = at_least((double)in->gpus_per_node, 1);
    double E = at_least((double)in->experts, 1), k = at_least((double)in->experts_per_token, 1);
    double e = in->precision == CORE_PREC_FP32 ? 4.0 : 2.0; /* dispatched in the 16-bit type */
    double d = at_least((double)in->hidden, 1);

    out->tokens = at_least((double)in->micro_batch, 1) * at_least((double)in->seq_len, 1) / c / t;
    /* EP peers per node: the whole group when its ep*etp ranks fit, else one per etp ranks. */
    out->in_node = ep * etp <= gpn ? ep : at_least(floor(gpn / etp), 1);
    if (out->in_node > ep)
        out->in_node = ep;
    out->nodes = ep / out->in_node;

    double token = out->tokens * d * e; /* one copy of every token */
    if (in->moe_dispatcher == CORE_MOE_ALLTOALL) {
        /* NCCL all-to-all (token_dispatcher.py, MoEAlltoAllTokenDispatcher): one copy per chosen
         * expert, 1/ep of them to each rank of the group. */
        double all = token * k;
        out->local = all / ep;
        out->nvlink = all * (out->in_node - 1.0) / ep;
        out->network = all * (ep - out->in_node) / ep;
        return;
    }
    /* DeepEP / HybridEP (the flex dispatcher, fused_a2a.py): a token crosses the network once per
     * remote node holding any of its k experts (E in_node / ep of them), to the GPU of the same
     * local index, which forwards it over NVLink to each local GPU holding one (E / ep each);
     * inside a node it goes once to each GPU holding one. A GPU sends its own tokens to its
     * in_node - 1 peers and forwards the tokens of the nodes - 1 other nodes to them. */
    double hit_node = hit(in, E, E * out->in_node / ep, k);
    double hit_gpu = hit(in, E, E / ep, k);
    out->local = token * hit_gpu;
    out->network = token * (out->nodes - 1.0) * hit_node;
    out->nvlink = token * out->nodes * (out->in_node - 1.0) * hit_gpu;
}
