/*
 * rules.h - the layout rules the training frameworks enforce on tp, cp and the interleaved
 * pipeline schedule (docs/model.md, "Layout rules"; each rule cites the Megatron-LM code that
 * raises it). core_evaluate() turns a broken rule of an explicit layout into a 422 naming the
 * inputs; the planner never generates a layout that breaks one.
 */
#ifndef MEMWALL_CORE_RULES_H
#define MEMWALL_CORE_RULES_H

#include <stdbool.h>
#include <stdint.h>

struct core_resolved;
struct core_problems;

/* Tensor parallelism splits the attention heads: heads a multiple of tp, and the key/value
 * heads (query groups) a multiple or a divisor of tp. */
bool core_rule_tp_heads(int64_t heads, int64_t kv_heads, int64_t tp);
/* Context parallelism splits the sequence into 2 cp chunks (causal load balance). */
bool core_rule_cp_seq(int64_t seq_len, int64_t cp);
/* The interleaved schedule (v > 1): pp > 1 and micro-batches per step a multiple of pp. */
bool core_rule_interleave(int64_t pp, int64_t virtual_stages, double micro_batches);

/* Every rule above for a resolved input, one problem each (shaped: the architecture is known). */
void core_check_layout_rules(const struct core_resolved *r, bool shaped, struct core_problems *p);

#endif
