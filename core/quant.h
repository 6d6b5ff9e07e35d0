/*
 * quant.h - weight quantization formats: bytes per weight derived from each format's layout.
 *
 * One table (quant.c), one mechanism. A format stores a run of weights as packed integer codes
 * plus the numbers that decode them; a layout row says how many bits each costs:
 *
 *   bits(n weights, c input channels) = n * data_bits
 *                                     + ceil(n / block) * (scale_bits + zero_bits)
 *                                     + ceil(n / (block * super_blocks)) * super_bits
 *                                     + c * channel_bits
 *
 * block = 0 means one scale for the whole tensor (FP8 W8A8's per-tensor scale); super_blocks = 0
 * means no second level (only the K-quants and double-quantized NF4 have one). A format names
 * the layout of its linear layers, the layout its GGUF "_M" mixes give to the "more bits" layers
 * (attn_v and ffn_down), and what the embedding and the output head are stored in (NULL: the
 * model's 16-bit dtype). Norms, biases and MoE routers stay unquantized in every format (16 bits,
 * or fp32 in GGUF files). The derivation of each row, with the file it comes from, is in
 * docs/serving.md ("Quantized weights"); peft (issue 22) reads the NF4 rows.
 *
 * Pure: no allocation, no state.
 */
#ifndef MEMWALL_CORE_QUANT_H
#define MEMWALL_CORE_QUANT_H

#include <stdbool.h>
#include <stdint.h>

enum core_quant {
    CORE_QUANT_NONE,        /* weights in the model's precision */
    CORE_QUANT_FP8,         /* FP8 E4M3 W8A8, per-tensor scales (vLLM fp8, compressed-tensors) */
    CORE_QUANT_INT8,        /* INT8 W8A8, per-output-channel scales (SmoothQuant style) */
    CORE_QUANT_AWQ,         /* 4-bit, group 128, fp16 scale + 4-bit zero per group */
    CORE_QUANT_GPTQ,        /* 4-bit, group 128, fp16 scale + 4-bit zero per group, g_idx */
    CORE_QUANT_BNB_NF4,     /* bitsandbytes NF4, fp32 absmax per 64 weights */
    CORE_QUANT_BNB_NF4_DQ,  /* bitsandbytes NF4 with double quantization (QLoRA) */
    CORE_QUANT_TORCHAO_NF4, /* torchao NF4Tensor (torchtune's QLoRA) */
    CORE_QUANT_GGUF_Q8_0,   /* llama.cpp Q8_0 */
    CORE_QUANT_GGUF_Q4_0,   /* llama.cpp Q4_0 */
    CORE_QUANT_GGUF_Q4_K_M, /* llama.cpp Q4_K_M (Q4_K with Q6_K where use_more_bits) */
    CORE_QUANT_GGUF_Q5_K_M, /* llama.cpp Q5_K_M (Q5_K with Q6_K where use_more_bits) */
    CORE_QUANT_MXFP4,       /* OCP MXFP4 on the routed experts only (GPT-OSS checkpoints) */
    CORE_QUANT_COUNT
};

/* How one run of weights is laid out (bits per part; see the formula above). */
struct core_quant_layout {
    const char *name;     /* "q4_K", "nf4" */
    int64_t block;        /* weights sharing a scale; 0 = one scale per tensor */
    int data_bits;        /* the packed code of each weight */
    int scale_bits;       /* per block: its scale (fp16 = 16, fp32 = 32, 6-bit K-quant scale) */
    int zero_bits;        /* per block: its zero point or minimum (0 = symmetric) */
    int64_t super_blocks; /* blocks per second-level group; 0 = none */
    int super_bits;       /* per second-level group: the scales of the block scales */
    int channel_bits;     /* per input channel (GPTQ's int32 g_idx) */
};

/* Engines that load a format (bit per enum core_engine value, serve.h). */
#define CORE_QUANT_ENGINES_ALL 0x1fu

struct core_quant_format {
    const char *name;                          /* as the API spells it: "gguf_q4_k_m" */
    struct core_quant_layout linear;           /* every quantized linear layer */
    const struct core_quant_layout *more_bits; /* GGUF _M: attn_v, ffn_down in use_more_bits
                                                  layers; NULL = as linear */
    const struct core_quant_layout *embedding; /* token embedding; NULL = 16-bit */
    const struct core_quant_layout *output;    /* output head (lm_head); NULL = 16-bit */
    int unquantized_bits;                      /* norms, biases, routers: 16, or 32 in GGUF */
    bool group_settable;                       /* quant_group_size sets linear.block */
    bool experts_only;                         /* only routed experts take the layout; every
                                                  other linear stays 16-bit (MXFP4) */
    bool fp32_ok;                              /* its kernels take fp32 activations */
    unsigned engines;                          /* bit (1u << engine) per engine that loads it */
    const char *source;                        /* the file its layout is read from */
};

extern const struct core_quant_format core_quant_formats[CORE_QUANT_COUNT];
/* The API's names, index = enum core_quant. */
extern const char *const core_quant_names[CORE_QUANT_COUNT];

/* Bytes of n weights with c input channels in layout l (the formula above, rounded up to whole
 * bytes); -1 when an argument is negative or the count overflows int64. */
int64_t core_quant_bytes(const struct core_quant_layout *l, int64_t n, int64_t c);

/* Bits per weight of layout l over an n-weight tensor with c input channels (the formula divided
 * by n); 0 when n <= 0. */
double core_quant_bits_per_weight(const struct core_quant_layout *l, int64_t n, int64_t c);

/* The linear layout of format q with the group size `group` applied when the format takes one
 * (group 0 = the format's default). */
struct core_quant_layout core_quant_linear(enum core_quant q, int64_t group);

/* llama.cpp's use_more_bits(i, n) (src/llama-quant.cpp): the layers whose attn_v and ffn_down a
 * Q4_K_M / Q5_K_M file keeps in Q6_K; how many of n layers those are. */
int64_t core_quant_more_bits_layers(int64_t n);

#endif
