/*
 * test_core_quant.c - the quantization formats table (core/quant.c) against bytes derived by
 * hand from each format's layout (ggml-common.h blocks, AWQ/GPTQ packing, bitsandbytes NF4).
 */
#include <math.h>

#include "core_test_util.h"
#include "check_main.h"
#include "quant.h"

/* ggml-common.h: sizeof(block_q8_0) = 2 (ggml_half d) + 32 (int8 qs) = 34 bytes per 32 weights;
 * block_q4_0 = 2 + 16 = 18 per 32; block_q4_K = 2 + 2 (d, dmin) + 12 (scales) + 128 (qs) = 144
 * per 256; block_q5_K = 144 + 32 (qh) = 176 per 256; block_q6_K = 128 + 64 + 16 + 2 = 210 per
 * 256. One 4096 x 4096 tensor (16,777,216 weights) holds 524,288 blocks of 32 and 65,536 of 256. */
START_TEST(gguf_blocks_from_ggml_common)
{
    const int64_t n = INT64_C(16777216);

    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GGUF_Q8_0].linear, n, 0),
               INT64_C(524288) * 34);
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GGUF_Q4_0].linear, n, 0),
               INT64_C(524288) * 18);
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GGUF_Q4_K_M].linear, n, 0),
               INT64_C(65536) * 144);
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GGUF_Q5_K_M].linear, n, 0),
               INT64_C(65536) * 176);
    ASSERT_I64(core_quant_bytes(core_quant_formats[CORE_QUANT_GGUF_Q4_K_M].more_bits, n, 0),
               INT64_C(65536) * 210);
    /* Bits per weight: 8.5, 4.5, 4.5, 5.5, 6.5625. */
    ck_assert_double_eq_tol(
        core_quant_bits_per_weight(&core_quant_formats[CORE_QUANT_GGUF_Q4_K_M].linear, n, 0), 4.5,
        1e-12);
    ck_assert_double_eq_tol(
        core_quant_bits_per_weight(core_quant_formats[CORE_QUANT_GGUF_Q5_K_M].more_bits, n, 0),
        6.5625, 1e-12);
}
END_TEST

/* AWQ, group 128, 4096 x 4096: qweight 16,777,216 / 2 = 8,388,608 bytes; per group of 128 an
 * fp16 scale (2 bytes) and a 4-bit zero (0.5 byte): 131,072 groups x 2.5 = 327,680. Total
 * 8,716,288 bytes = 4.15625 bits per weight. GPTQ adds g_idx, 4 bytes per input channel:
 * 4096 x 4 = 16,384 -> 8,732,672. Group 64: 262,144 groups x 2.5 = 655,360 -> 9,043,968. */
START_TEST(awq_gptq_packing)
{
    const int64_t n = INT64_C(16777216);
    struct core_quant_layout g64 = core_quant_linear(CORE_QUANT_AWQ, 64);
    struct core_quant_layout dflt = core_quant_linear(CORE_QUANT_GPTQ, 0);

    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_AWQ].linear, n, 4096),
               INT64_C(8716288));
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GPTQ].linear, n, 4096),
               INT64_C(8732672));
    ASSERT_I64(core_quant_bytes(&g64, n, 4096), INT64_C(9043968));
    ASSERT_I64(dflt.block, 128);
    /* fp8 has no group: the group size is ignored. */
    ASSERT_I64(core_quant_linear(CORE_QUANT_FP8, 64).block, 0);
}
END_TEST

/* NF4 over 16,777,216 weights: codes 8,388,608 bytes. bitsandbytes without double quantization:
 * fp32 absmax per 64 -> 262,144 x 4 = 1,048,576: 9,437,184 bytes (4.5 bits). Double quantized:
 * uint8 absmax per 64 -> 262,144 bytes, plus an fp32 per 256 of those (1,024 groups of 16,384
 * weights) -> 4,096: 8,654,848 bytes = 4.126953125 bits per weight. */
START_TEST(nf4_with_and_without_double_quant)
{
    const int64_t n = INT64_C(16777216);

    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_BNB_NF4].linear, n, 0),
               INT64_C(9437184));
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_BNB_NF4_DQ].linear, n, 0),
               INT64_C(8654848));
    ck_assert_double_eq_tol(
        core_quant_bits_per_weight(&core_quant_formats[CORE_QUANT_BNB_NF4_DQ].linear, n, 0),
        4.126953125, 1e-12);
    /* torchao (nf4tensor.py, double_quantize_scalers): the same int8 scaler per 64 weights, but
     * the per-256 quantization factor is kept in the input dtype (bf16 under torchtune): 1,024
     * x 2 = 2,048 bytes, so 8,388,608 + 262,144 + 2,048 = 8,652,800. */
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_TORCHAO_NF4].linear, n, 0),
               INT64_C(8652800));
}
END_TEST

/* FP8: one byte per weight plus one fp32 scale per tensor: 16,777,216 + 4. */
START_TEST(fp8_per_tensor_scale)
{
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_FP8].linear, INT64_C(16777216), 0),
               INT64_C(16777220));
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_FP8].linear, -1, 0), -1);
    ASSERT_I64(core_quant_bytes(&core_quant_formats[CORE_QUANT_GGUF_Q8_0].linear, INT64_MAX, 0),
               -1);
}
END_TEST

/* use_more_bits over 32 layers: i < 4 (4 layers), i >= 28 (4), and in [4, 28) those with
 * (i - 4) % 3 == 2: i = 6, 9, ..., 27 (8): 16 layers. Over 80: i < 10 (10), i >= 70 (10), and
 * (i - 10) % 3 == 2 for i in [10, 70): 12, 15, ..., 69 (20): 40. */
START_TEST(use_more_bits_counts)
{
    ASSERT_I64(core_quant_more_bits_layers(32), 16);
    ASSERT_I64(core_quant_more_bits_layers(80), 40);
    ASSERT_I64(core_quant_more_bits_layers(1), 1); /* i = 0 >= 7/8 = 0 */
    ASSERT_I64(core_quant_more_bits_layers(0), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_quant");
    TCase *t = tcase_create("quant");

    tcase_add_test(t, gguf_blocks_from_ggml_common);
    tcase_add_test(t, awq_gptq_packing);
    tcase_add_test(t, nf4_with_and_without_double_quant);
    tcase_add_test(t, fp8_per_tensor_scale);
    tcase_add_test(t, use_more_bits_counts);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
