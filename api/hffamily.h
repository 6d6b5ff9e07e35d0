/*
 * hffamily.h - one row per Hugging Face model_type (the table is in hfconfig.c) and the hooks
 * that read what only some families have (hffamily.c). Private to the config decoder.
 */
#ifndef MEMWALL_API_HFFAMILY_H
#define MEMWALL_API_HFFAMILY_H

#include <stdint.h>

#include "core.h"
#include "hfkeys.h"

#define FFN_MAX  (64LL * CORE_HIDDEN_MAX)
#define RANK_MAX CORE_HIDDEN_MAX

/* ---------------------------------------------------------------------------------------------
 * The family table
 * ------------------------------------------------------------------------------------------- */

enum {
    F_GATED = 1 << 0,       /* gate/up/down MLP (SwiGLU, GeGLU) */
    F_QKV_BIAS = 1 << 1,    /* q/k/v biases with no key (Qwen2) */
    F_ALL_BIAS = 1 << 2,    /* biases on every linear (GPT-2, GPT-NeoX's MLP) */
    F_NORM_BIAS = 1 << 3,   /* LayerNorm with a bias */
    F_ATTN_BIAS = 1 << 4,   /* attention_bias puts biases on q, k, v and o */
    F_MLP_BIAS = 1 << 5,    /* mlp_bias puts biases on the MLP */
    F_QK_HEAD = 1 << 6,     /* per-head QK-norm (Qwen3) */
    F_QK_WIDTH = 1 << 7,    /* full-width QK-norm (OLMoE) */
    F_LEARNED_POS = 1 << 8, /* learned position embeddings over max_positions (GPT-2) */
    F_TIED = 1 << 9,        /* tie_word_embeddings defaults to true */
    F_BIAS_ON = 1 << 10,    /* attention_bias defaults to true (GPT-NeoX) */
};

struct family;
typedef void (*family_hook)(struct dec *d, const struct family *f, struct core_arch *a);

/* Slots of the common sizes, in table order. */
enum { S_VOCAB, S_HIDDEN, S_LAYERS, S_HEADS, S_KV, S_HEAD_DIM, S_FFN, S_POS, S_COUNT };

struct family {
    const char *model_type;
    /* keys per slot (aliases with '|'); NULL = the class has no such key */
    const char *key[S_COUNT];
    /* class defaults per slot; kv 0 = heads, head_dim 0 = hidden / heads, ffn 0 = 4 hidden */
    int64_t def[S_COUNT];
    unsigned flags;
    int norms; /* per layer; 0 = 2 */
    family_hook hook;
};

void hf_hook_mixtral(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_qwen2_moe(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_qwen3_moe(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_olmoe(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_gpt_neox(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_falcon(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_deepseek(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_dbrx(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_gpt_oss(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_gemma3(struct dec *d, const struct family *f, struct core_arch *a);
void hf_hook_qwen3_next(struct dec *d, const struct family *f, struct core_arch *a);

/* The attention layer types (hfattn.c): sliding_window, layer_types, sliding_window_pattern as
 * the family's class reads them; model_type NULL for a config read as generic Llama. */
void hf_attention_types(struct dec *d, const char *model_type, struct core_arch *a);

#endif
