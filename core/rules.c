/*
 * rules.c - the layout rules of rules.h, with the framework code each comes from (Megatron-LM,
 * github.com/NVIDIA/Megatron-LM; torchtitan follows the same three for TP, CP and its
 * interleaved schedules).
 */
#include <math.h>

#include "internal.h"
#include "rules.h"

/* megatron/core/transformer/transformer_config.py, TransformerConfig.__post_init__:
 * "num_attention_heads must be a multiple of tensor_model_parallel_size", and
 * "num_query_groups must be a multiple or divisor of tensor_model_parallel_size" (the key/value
 * heads are then replicated over tp / num_query_groups ranks). The serving engines have the same
 * two (vLLM: ModelConfig.verify_with_parallel_config, "Total number of attention heads must be
 * divisible by tensor parallel size"; QKVParallelLinear replicates a key/value head over
 * tp / kv_heads ranks and asserts tp % kv_heads == 0), and /inference resolves its model here. */
bool core_rule_tp_heads(int64_t heads, int64_t kv_heads, int64_t tp)
{
    if (tp <= 1)
        return true;
    if (heads % tp != 0)
        return false;
    return kv_heads <= 0 || kv_heads % tp == 0 || tp % kv_heads == 0;
}

/* megatron/training/arguments.py, validate_args: "seq-length should be a multiple of
 * 2 * context-parallel-size if context-parallel-size > 1" (each rank takes two of 2 cp chunks,
 * one early and one late, so that causal attention costs every rank the same). */
bool core_rule_cp_seq(int64_t seq_len, int64_t cp)
{
    return cp <= 1 || seq_len % (2 * cp) == 0;
}

/* megatron/training/arguments.py, validate_args: the interleaved schedule needs
 * pipeline-model-parallel size > 1 (> 2 without --overlap-p2p-communication, which is on by
 * default). megatron/core/pipeline_parallel/schedules.py,
 * forward_backward_pipelining_with_interleaving: microbatch_group_size_per_vp_stage must lie in
 * [pp, m] and m mod it must be 0 or >= pp (else "dependency bubbles"); it defaults to pp
 * (model_parallel_config.py, __post_init__), so m must be a multiple of pp. Plain 1F1B (v = 1)
 * takes any m >= 1: its bubble, (pp - 1) micro-batch times, holds for m < pp too. */
bool core_rule_interleave(int64_t pp, int64_t virtual_stages, double micro_batches)
{
    if (virtual_stages <= 1)
        return true;
    return pp > 1 && micro_batches >= (double)pp && fmod(micro_batches, (double)pp) == 0;
}

void core_check_layout_rules(const struct core_resolved *r, bool shaped, struct core_problems *p)
{
    const struct core_arch *a = &r->shape.arch;

    if (shaped && !core_rule_tp_heads(a->heads, a->kv_heads, r->tp)) {
        if (a->heads % r->tp != 0)
            core_problem_add(p, "tp",
                             "tp = %lld does not divide the %lld attention heads (each "
                             "tensor-parallel rank holds whole heads: Megatron-LM, vLLM)",
                             (long long)r->tp, (long long)a->heads);
        else
            core_problem_add(p, "tp",
                             "tp = %lld is neither a multiple nor a divisor of the %lld "
                             "key/value heads (each rank holds whole ones or a replica of one)",
                             (long long)r->tp, (long long)a->kv_heads);
    }
    if (r->cp > 1 && r->seq_len % r->cp == 0 && !core_rule_cp_seq(r->seq_len, r->cp))
        core_problem_add(p, "cp",
                         "seq_len = %lld is not a multiple of 2*cp = %lld (context parallelism "
                         "splits the sequence into 2*cp chunks)",
                         (long long)r->seq_len, (long long)(2 * r->cp));
    if (r->pp > 1 && !core_rule_interleave(r->pp, r->virtual_stages, r->micro_batches))
        core_problem_add(p, "virtual_stages",
                         "interleaving (virtual_stages %lld) needs the micro-batches per step, "
                         "global_batch/(batch*dp) = %.15g, to be a multiple of pp = %lld "
                         "(Megatron-LM); or use virtual_stages 1",
                         (long long)r->virtual_stages, r->micro_batches, (long long)r->pp);
}
