/*
 * quant.c - the quantization formats table (quant.h): each format's layout as the engines and
 * file formats store it, and the one function that turns a layout into bytes.
 *
 * Layout sources (docs/serving.md, "Quantized weights", derives every bits-per-weight figure):
 *  - GGUF blocks: ggml/src/ggml-common.h. block_q8_0 = ggml_half d + int8 qs[32] (34 bytes per
 *    32 weights); block_q4_0 = ggml_half d + uint8 qs[16] (18 / 32); block_q4_K = ggml_half d,
 *    dmin + uint8 scales[12] (6-bit scale and 6-bit min for each of 8 sub-blocks of 32) + qs[128]
 *    (144 / 256); block_q5_K = the same + qh[32] (176 / 256); block_q6_K = ql[128] + qh[64] +
 *    int8 scales[16] (one per 16 weights) + ggml_half d (210 / 256).
 *  - The _M mixes: src/llama-quant.cpp, llama_tensor_get_type: output.weight in Q6_K; attn_v and
 *    ffn_down in Q6_K where use_more_bits(i, n); 1-D tensors (norms) and ffn_gate_inp (routers)
 *    are not quantized (f32).
 *  - AWQ (vLLM awq.py / AutoAWQ GEMM): qweight int32 packs 8 4-bit codes; qzeros packs 8 4-bit
 *    zeros per group; scales fp16 per group and output column.
 *  - GPTQ (vLLM gptq.py / AutoGPTQ): the same packing of qweight, qzeros and scales, plus g_idx,
 *    one int32 per input channel.
 *  - bitsandbytes NF4 (bitsandbytes/functional.py, quantize_4bit): two codes per byte, one fp32
 *    absmax per block of 64; compress_statistics (double quantization) stores the absmax as uint8
 *    codes with an fp32 absmax per 256 of them (QLoRA, Dettmers et al. 2023, section 3).
 *  - torchao NF4Tensor (torchao/dtypes/nf4tensor.py): block_size 64, scaler_block_size 256:
 *    int8 quantized scalers per block, one quantization factor per 256 scalers in the scalers'
 *    (input) dtype, bf16 under torchtune (double_quantize_scalers): 4.1265 bits per weight.
 *  The training side (core/adapters.c, fine-tuning a quantized base) prices its frozen base from
 *  these same NF4 rows and int8's, adding only the per-tensor objects the formats' Python
 *  classes keep (torchao's scaler mean and NF4 table, bitsandbytes' double-quantization offset).
 *  - FP8 W8A8 (vLLM fp8.py): one byte per weight, an fp32 weight_scale per tensor.
 *  - INT8 W8A8 (vLLM compressed_tensors w8a8_int8): int8 weights, fp32 scale per output channel
 *    (block = the input width; taken as 4096, i.e. 32 bits per 4096 weights, which is < 0.01 bit).
 */
#include <stddef.h>

#include "quant.h"

const char *const core_quant_names[CORE_QUANT_COUNT] = {
    [CORE_QUANT_NONE] = "none",
    [CORE_QUANT_FP8] = "fp8",
    [CORE_QUANT_INT8] = "int8",
    [CORE_QUANT_AWQ] = "awq",
    [CORE_QUANT_GPTQ] = "gptq",
    [CORE_QUANT_BNB_NF4] = "bnb_nf4",
    [CORE_QUANT_BNB_NF4_DQ] = "bnb_nf4_dq",
    [CORE_QUANT_TORCHAO_NF4] = "torchao_nf4",
    [CORE_QUANT_GGUF_Q8_0] = "gguf_q8_0",
    [CORE_QUANT_GGUF_Q4_0] = "gguf_q4_0",
    [CORE_QUANT_GGUF_Q4_K_M] = "gguf_q4_k_m",
    [CORE_QUANT_GGUF_Q5_K_M] = "gguf_q5_k_m",
    [CORE_QUANT_MXFP4] = "mxfp4",
};

/* ggml's block types (ggml-common.h), as initializers (a format embeds its linear layout by
 * value, and C takes only constant expressions there) and as objects (the more-bits, embedding
 * and output layouts are pointers). */
#define Q8_0                                                                                       \
    {                                                                                              \
        .name = "q8_0", .block = 32, .data_bits = 8, .scale_bits = 16                              \
    }
#define Q4_0                                                                                       \
    {                                                                                              \
        .name = "q4_0", .block = 32, .data_bits = 4, .scale_bits = 16                              \
    }
/* K-quants: sub-blocks of 32 with a 6-bit scale and a 6-bit min, 8 per super-block of 256 that
 * adds fp16 d and dmin (32 bits). */
#define Q4_K                                                                                       \
    {                                                                                              \
        .name = "q4_K", .block = 32, .data_bits = 4, .scale_bits = 6, .zero_bits = 6,              \
        .super_blocks = 8, .super_bits = 32                                                        \
    }
#define Q5_K                                                                                       \
    {                                                                                              \
        .name = "q5_K", .block = 32, .data_bits = 5, .scale_bits = 6, .zero_bits = 6,              \
        .super_blocks = 8, .super_bits = 32                                                        \
    }
/* Q6_K: 16 sub-blocks of 16 with an int8 scale, one fp16 d per super-block of 256. */
#define Q6_K                                                                                       \
    {                                                                                              \
        .name = "q6_K", .block = 16, .data_bits = 6, .scale_bits = 8, .super_blocks = 16,          \
        .super_bits = 16                                                                           \
    }

static const struct core_quant_layout q8_0 = Q8_0, q4_0 = Q4_0, q4_k = Q4_K, q5_k = Q5_K,
                                      q6_k = Q6_K;

#define VLLM_ONLY   (1u << 0 | 1u << 1 | 1u << 2) /* vllm, vllm_v0, sglang */
#define GPU_ENGINES (1u << 0 | 1u << 1 | 1u << 2 | 1u << 3)
#define LLAMA_CPP   (1u << 4)

/* OCP Microscaling MXFP4 (OCP MX spec v1.0; vLLM quantization/mxfp4.py; the gpt-oss checkpoints'
 * *_blocks and *_scales tensors): 32 E2M1 codes of 4 bits share one E8M0 scale of 8 bits. */
#define MXFP4                                                                                      \
    {                                                                                              \
        .name = "mxfp4", .block = 32, .data_bits = 4, .scale_bits = 8                              \
    }

const struct core_quant_format core_quant_formats[CORE_QUANT_COUNT] = {
    [CORE_QUANT_NONE] = {.name = "none",
                         .linear = {.name = "16-bit", .data_bits = 16},
                         .unquantized_bits = 16,
                         .fp32_ok = true,
                         .engines = CORE_QUANT_ENGINES_ALL,
                         .source = "the model's dtype"},
    [CORE_QUANT_FP8] = {.name = "fp8",
                        .linear = {.name = "fp8_e4m3", .data_bits = 8, .scale_bits = 32},
                        .unquantized_bits = 16,
                        .engines = GPU_ENGINES,
                        .source = "vllm/model_executor/layers/quantization/fp8.py"},
    [CORE_QUANT_INT8] =
        {.name = "int8",
         .linear = {.name = "int8", .block = 4096, .data_bits = 8, .scale_bits = 32},
         .unquantized_bits = 16,
         .engines = GPU_ENGINES,
         .source = "vllm/model_executor/layers/quantization/compressed_tensors"},
    [CORE_QUANT_AWQ] = {.name = "awq",
                        .linear = {.name = "awq_int4",
                                   .block = 128,
                                   .data_bits = 4,
                                   .scale_bits = 16,
                                   .zero_bits = 4},
                        .unquantized_bits = 16,
                        .group_settable = true,
                        .engines = GPU_ENGINES,
                        .source = "vllm/model_executor/layers/quantization/awq.py"},
    [CORE_QUANT_GPTQ] = {.name = "gptq",
                         .linear = {.name = "gptq_int4",
                                    .block = 128,
                                    .data_bits = 4,
                                    .scale_bits = 16,
                                    .zero_bits = 4,
                                    .channel_bits = 32},
                         .unquantized_bits = 16,
                         .group_settable = true,
                         .engines = GPU_ENGINES,
                         .source = "vllm/model_executor/layers/quantization/gptq.py"},
    [CORE_QUANT_BNB_NF4] =
        {.name = "bnb_nf4",
         .linear = {.name = "nf4", .block = 64, .data_bits = 4, .scale_bits = 32},
         .unquantized_bits = 16,
         .fp32_ok = true,
         .engines = VLLM_ONLY,
         .source = "bitsandbytes/functional.py (quantize_4bit)"},
    [CORE_QUANT_BNB_NF4_DQ] = {.name = "bnb_nf4_dq",
                               .linear = {.name = "nf4_dq",
                                          .block = 64,
                                          .data_bits = 4,
                                          .scale_bits = 8,
                                          .super_blocks = 256,
                                          .super_bits = 32},
                               .unquantized_bits = 16,
                               .fp32_ok = true,
                               .engines = VLLM_ONLY,
                               .source = "bitsandbytes/functional.py (compress_statistics)"},
    [CORE_QUANT_TORCHAO_NF4] = {.name = "torchao_nf4",
                                .linear = {.name = "nf4_torchao",
                                           .block = 64,
                                           .data_bits = 4,
                                           .scale_bits = 8,
                                           .super_blocks = 256,
                                           .super_bits = 16},
                                .unquantized_bits = 16,
                                .fp32_ok = true,
                                .engines = 0, /* a training format: no engine serves it */
                                .source = "torchao/dtypes/nf4tensor.py"},
    [CORE_QUANT_GGUF_Q8_0] = {.name = "gguf_q8_0",
                              .linear = Q8_0,
                              .embedding = &q8_0,
                              .output = &q8_0,
                              .unquantized_bits = 32,
                              .fp32_ok = true,
                              .engines = VLLM_ONLY | LLAMA_CPP,
                              .source = "ggml/src/ggml-common.h, src/llama-quant.cpp"},
    [CORE_QUANT_GGUF_Q4_0] = {.name = "gguf_q4_0",
                              .linear = Q4_0,
                              .embedding = &q4_0,
                              .output = &q6_k,
                              .unquantized_bits = 32,
                              .fp32_ok = true,
                              .engines = VLLM_ONLY | LLAMA_CPP,
                              .source = "ggml/src/ggml-common.h, src/llama-quant.cpp"},
    [CORE_QUANT_GGUF_Q4_K_M] = {.name = "gguf_q4_k_m",
                                .linear = Q4_K,
                                .more_bits = &q6_k,
                                .embedding = &q4_k,
                                .output = &q6_k,
                                .unquantized_bits = 32,
                                .fp32_ok = true,
                                .engines = VLLM_ONLY | LLAMA_CPP,
                                .source = "ggml/src/ggml-common.h, src/llama-quant.cpp"},
    [CORE_QUANT_GGUF_Q5_K_M] = {.name = "gguf_q5_k_m",
                                .linear = Q5_K,
                                .more_bits = &q6_k,
                                .embedding = &q5_k,
                                .output = &q6_k,
                                .unquantized_bits = 32,
                                .fp32_ok = true,
                                .engines = VLLM_ONLY | LLAMA_CPP,
                                .source = "ggml/src/ggml-common.h, src/llama-quant.cpp"},
    [CORE_QUANT_MXFP4] = {.name = "mxfp4",
                          .linear = MXFP4,
                          .unquantized_bits = 16,
                          .experts_only = true,
                          .engines = CORE_QUANT_ENGINES_ALL,
                          .source = "vllm/model_executor/layers/quantization/mxfp4.py"},
};

static int64_t ceil_groups(int64_t n, int64_t size)
{
    return n / size + (n % size != 0);
}

int64_t core_quant_bytes(const struct core_quant_layout *l, int64_t n, int64_t c)
{
    int64_t bits, part;

    if (l == NULL || n < 0 || c < 0)
        return -1;
    if (n == 0)
        return 0;
    if (__builtin_mul_overflow(n, (int64_t)l->data_bits, &bits))
        return -1;
    /* One scale (and zero) per block, or one per tensor when block is 0. */
    part = (l->block > 0 ? ceil_groups(n, l->block) : 1) * (int64_t)(l->scale_bits + l->zero_bits);
    if (__builtin_add_overflow(bits, part, &bits))
        return -1;
    if (l->super_blocks > 0 && l->block > 0) {
        int64_t group;

        if (__builtin_mul_overflow(l->block, l->super_blocks, &group))
            return -1;
        part = ceil_groups(n, group) * (int64_t)l->super_bits;
        if (__builtin_add_overflow(bits, part, &bits))
            return -1;
    }
    if (__builtin_mul_overflow(c, (int64_t)l->channel_bits, &part) ||
        __builtin_add_overflow(bits, part, &bits))
        return -1;
    return ceil_groups(bits, 8);
}

double core_quant_bits_per_weight(const struct core_quant_layout *l, int64_t n, int64_t c)
{
    int64_t bytes;

    if (n <= 0)
        return 0;
    bytes = core_quant_bytes(l, n, c);
    return bytes < 0 ? 0 : (double)bytes * 8.0 / (double)n;
}

struct core_quant_layout core_quant_linear(enum core_quant q, int64_t group)
{
    struct core_quant_layout l = core_quant_formats[q].linear;

    if (core_quant_formats[q].group_settable && group > 0)
        l.block = group;
    return l;
}

/* use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2 (integer division). */
int64_t core_quant_more_bits_layers(int64_t n)
{
    int64_t lo = n / 8, hi = 7 * n / 8, count;

    if (n <= 0)
        return 0;
    count = lo + (n - hi);
    /* Middle layers i in [lo, hi): (i - lo) % 3 == 2, i.e. offsets 2, 5, 8, ... below hi - lo. */
    if (hi - lo > 2)
        count += (hi - lo - 3) / 3 + 1;
    return count;
}
