/*
 * adapters.h - fine-tuning with adapters (LoRA, QLoRA, DoRA): the enums and the resolved
 * settings core.h carries, and the quantized-base layouts (docs/model.md, "Fine-tuning with
 * adapters"; every formula with the framework file it was read from).
 *
 * finetune = full (the default) leaves every figure of the model as it was: nothing in this file
 * is consulted. Otherwise the base model is frozen (no gradients, no optimizer state, stored in
 * its dtype or a quantized layout), the adapters on the target linears train, and the ledger,
 * the framework peak and the step time take the adapters' rules (core/adapters.c).
 *
 * Included by core.h; includes nothing of core's so that it stays a leaf.
 */
#ifndef MEMWALL_CORE_ADAPTERS_H
#define MEMWALL_CORE_ADAPTERS_H

#include <stdbool.h>
#include <stdint.h>

enum core_finetune { CORE_FT_FULL, CORE_FT_LORA, CORE_FT_QLORA, CORE_FT_DORA };
#define CORE_FT_COUNT 4

/* How the frozen base is stored. nf4 is the framework's own layout: torchao's NF4Tensor under
 * torchtune, bitsandbytes with double quantization elsewhere (the QLoRA paper's recipe). */
enum core_base_quant {
    CORE_BASEQ_NONE,
    CORE_BASEQ_NF4,
    CORE_BASEQ_NF4_TORCHAO,
    CORE_BASEQ_NF4_BNB,
    CORE_BASEQ_NF4_BNB_DQ,
    CORE_BASEQ_INT8,
};
#define CORE_BASEQ_COUNT 6

/* The linears an adapter can wrap, in Hugging Face's spelling (bit i of a target mask). */
enum core_module {
    CORE_MOD_Q,
    CORE_MOD_K,
    CORE_MOD_V,
    CORE_MOD_O,
    CORE_MOD_GATE,
    CORE_MOD_UP,
    CORE_MOD_DOWN,
    CORE_MOD_LM_HEAD,
};
#define CORE_MOD_COUNT  8
#define CORE_MOD_BIT(m) (1u << (unsigned)(m))
/* PEFT's all-linear: every linear but the output layer (tuners_utils.py,
 * _maybe_include_all_linear_layers excludes the output embedding). */
#define CORE_MOD_ALL_LINEAR 0x7Fu
/* PEFT's default for Llama-family models (utils/constants.py,
 * TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: "llama": ["q_proj", "v_proj"]). */
#define CORE_MOD_DEFAULT  (CORE_MOD_BIT(CORE_MOD_Q) | CORE_MOD_BIT(CORE_MOD_V))
#define CORE_MOD_MASK_MAX 0xFFu

enum core_state_dtype { CORE_STATE_FP32, CORE_STATE_BF16 };

extern const char *const core_finetune_names[CORE_FT_COUNT];
extern const char *const core_base_quant_names[CORE_BASEQ_COUNT];
extern const char *const core_state_dtype_names[2];
/* Hugging Face names, index = enum core_module. */
extern const char *const core_module_names[CORE_MOD_COUNT];

/* The mask of one target name: a Hugging Face module name, "all-linear", or a framework's own
 * spelling (torchtune: output_proj = o_proj, output = lm_head, w1/w3/w2 = gate/up/down_proj,
 * mlp = all three). 0 when the name is none of them. */
unsigned core_module_mask(const char *name, uint64_t len);

/* The settings after defaults (core_resolved.adapters). */
struct core_adapters_cfg {
    enum core_finetune finetune;
    int64_t rank;
    double alpha;
    unsigned targets;                /* mask of enum core_module */
    enum core_base_quant base_quant; /* concrete: never CORE_BASEQ_NF4 once resolved */
    int optimizer_state_dtype;       /* enum core_state_dtype, or -1 = the framework's rule */
    bool torchtune;                  /* torchtune's rules (adapters in the model dtype), else
                                        PEFT's (fp32 adapters, k-bit preparation) */
};

/* Bytes of one tensor of n weights in a quantized layout (CORE_BASEQ_NONE: 0; int8 needs the
 * row count, out_rows): core/quant.c's layout of the format (core_quant_bytes) plus the
 * per-tensor objects of the training classes. Exact, including per-block and per-tensor scales;
 * -1 when the count overflows. */
int64_t core_base_quant_tensor_bytes(enum core_base_quant q, int64_t n, int64_t out_rows);
/* Bytes per weight of a layout for a large tensor (the limit of the above / n; int8 for rows of
 * in_features = 4096). */
double core_base_quant_bytes_per_weight(enum core_base_quant q);

#endif
