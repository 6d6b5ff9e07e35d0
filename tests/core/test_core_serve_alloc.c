/*
 * test_core_caching_alloc.c - the caching-allocator model (core/caching_alloc.h) against its rules
 * as c10/cuda/CUDACachingAllocator.cpp states them, the release rows (core/serve_trace.c) and the
 * replayed profiling passes of vLLM V0 releases, each value walked by hand below.
 */
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "serve.h"
#include "caching_alloc.h"
#include "serve_trace.h"

#define MIB ((int64_t)1 << 20)

/* round_size: 1 byte -> 512 (kMinBlockSize), in the small pool (<= 1 MiB): live only.
 * 3 MiB is under kMinLargeAlloc (10 MiB): a kLargeBuffer segment of 20 MiB; a second 3 MiB
 * request takes the 17 MiB remainder (split: 17 MiB > kSmallSize), no new segment.
 * On a fresh allocator 11 MiB + 1 byte rounds to 11 MiB + 512 and opens a segment rounded to
 * 2 MiB: 12 MiB, whose remainder (1 MiB - 512) is too small to split off. */
START_TEST(segment_sizes_and_rounding)
{
    struct core_alloc al;

    core_alloc_init(&al);
    core_alloc_malloc(&al, 1);
    ASSERT_I64(al.live, 512);
    ASSERT_I64(al.reserved, 0);
    core_alloc_malloc(&al, 3 * MIB);
    ASSERT_I64(al.reserved, 20 * MIB);
    core_alloc_malloc(&al, 3 * MIB);
    ASSERT_I64(al.reserved, 20 * MIB);
    ASSERT_I64(al.live, 512 + 6 * MIB);
    core_alloc_init(&al);
    core_alloc_malloc(&al, 11 * MIB + 1);
    ASSERT_I64(al.reserved, 12 * MIB);
    ASSERT_I64(al.live, 12 * MIB); /* 1 MiB - 512 left: not split, the block is all 12 MiB */
    ck_assert(!al.overflow);
}
END_TEST

/* A 12 MiB segment, freed, then an 11.5 MiB request: the remainder (0.5 MiB) is not above
 * kSmallSize, so the block is not split and the request holds all 12 MiB (live 12 MiB).
 * Best fit: free blocks of 100 and 50 MiB (two segments, both allocated before either was freed);
 * a 40 MiB request takes the 50 MiB one,
 * a 60 MiB request the 100 MiB one: no third segment (reserved 162 MiB). */
START_TEST(no_split_below_a_mebibyte_and_best_fit)
{
    struct core_alloc al;
    int h;

    core_alloc_init(&al);
    h = core_alloc_malloc(&al, 12 * MIB);
    core_alloc_free(&al, h);
    core_alloc_malloc(&al, 12 * MIB - MIB / 2);
    ASSERT_I64(al.live, 12 * MIB);
    h = core_alloc_malloc(&al, 100 * MIB);
    core_alloc_free(&al, core_alloc_malloc(&al, 50 * MIB)); /* 100 MiB is in use: own segment */
    core_alloc_free(&al, h);
    ASSERT_I64(al.reserved, 162 * MIB);
    core_alloc_malloc(&al, 40 * MIB);
    core_alloc_malloc(&al, 60 * MIB);
    ASSERT_I64(al.reserved, 162 * MIB);
    ASSERT_I64(al.segments, 3);
}
END_TEST

/* Merging: two 4 MiB blocks in one 20 MiB segment, freed, merge back into one 20 MiB block,
 * which then holds a 20 MiB request (reserved stays 20). Fragmentation: a 100 MiB segment,
 * freed, takes a 30 MiB tensor (split), so a second 100 MiB request finds only 70 MiB free and
 * opens a new segment: 200 MiB reserved for 130 MiB live. */
START_TEST(merge_and_fragmentation)
{
    struct core_alloc al;
    int a, b;

    core_alloc_init(&al);
    a = core_alloc_malloc(&al, 4 * MIB);
    b = core_alloc_malloc(&al, 4 * MIB);
    core_alloc_free(&al, a);
    core_alloc_free(&al, b);
    core_alloc_malloc(&al, 20 * MIB);
    ASSERT_I64(al.reserved, 20 * MIB);

    core_alloc_init(&al);
    core_alloc_free(&al, core_alloc_malloc(&al, 100 * MIB));
    core_alloc_malloc(&al, 30 * MIB);
    core_alloc_malloc(&al, 100 * MIB);
    ASSERT_I64(al.reserved, 200 * MIB);
    ASSERT_I64(al.peak_live, 130 * MIB);
}
END_TEST

/* K06's pass (vLLM V0 of mid 2024, engine_version vllm_0.4): Llama 2 7B's shape (deepseek-
 * coder-6.7b's but for the vocabulary: 32 layers, d 4096, 32 heads of 128, f 11008), tp 2,
 * 65,536 tokens, fp16. Sizes per rank: [T, d] 512 MiB; qkv [T, 3 x 16 x 128] 768; the
 * attention output buffer and xformers' output [T, 16 x 128] 256 each; gate_up [T, 11008]
 * 1,376; the activation [T, 5504] 688. Layer 0: embedding (seg 1, 512), norm (seg 2, 512), qkv
 * (seg 3, 768), output buffer (seg 4, 256), xformers' output (seg 5, 256; freed after the copy),
 * o_proj's 512 fits no free block (seg 5 has 256): seg 6; qkv, the buffer and the norm die;
 * gate_up fits none (768, 512, 256, 256 free): seg 7, 1,376; the activation takes the best fit
 * 768 (seg 3, split: 80 MiB left); down_proj's 512 the norm's old block (seg 2); the activation,
 * gate_up and o die. Layer 1's input is layer 0's output (seg 2), which LlamaModel.forward's loop
 * (`hidden_states, residual = layer(positions, hidden_states, ...)`) holds until the layer
 * returns: qkv seg 3, the buffer seg 4, xformers' output seg 5, o_proj seg 6, gate_up seg 7, the
 * activation seg 3 again; down_proj's 512 then finds seg 2 (the held input) and seg 6 (o) in use
 * and 80, 256, 256 free: seg 8 (512). Later layers reuse these eight segments (the outputs
 * alternate between them). Reserved: 512 + 512 + 768 + 256 + 256 + 512 + 1,376 + 512 =
 * 4,704 MiB; live at most residual 512 + input 512 + o 512 + gate_up 1,376 + act 688 + down 512
 * = 4,112. The sampler (256 x 32,000 x 26 B = 203 MiB in six tensors of 16-63 MiB) fits the
 * freed blocks. (With the layer's input freed after attention, as the replay had it before, the
 * eighth segment is not needed: 4,192 MiB.)
 * The cuBLAS workspace (CublasHandlePool.cpp: getNewWorkspace asks the caching allocator for
 * getChosenWorkspaceSize(), ":4096:2:16:8" = 4,096 KiB x 2 + 16 KiB x 8 = 8,519,680 B off
 * sm 9.0) is made by the process's first cuBLAS GEMM, layer 0's qkv_proj: nothing before the
 * profile runs one (rotary's cos/sin cache is an einsum outer product, a mul). At that point segs
 * 1-3 are in use and no block is free, so the 8.125 MiB request (under 10 MiB) opens a 20 MiB
 * segment; its 11.875 MiB remainder holds none of the pass's later requests (128 MiB and up, the
 * sampler's 15.6 MiB and up). Reserved: 4,704 + 20 = 4,724 MiB. */
START_TEST(k06_pass_reserves_eight_segments)
{
    const struct core_arch *a = &core_presets[core_preset_find("llama2-7b")].arch;
    const struct core_serve_release *r = &core_serve_releases[CORE_VERSION_VLLM_0_4];

    ASSERT_I64(core_serve_profile_reserved(a, r, CORE_QUANT_NONE, 2, 1, 1, 65536, 256, 2, 0),
               4704 * MIB);
    ASSERT_I64(core_serve_profile_reserved(a, r, CORE_QUANT_NONE, 2, 1, 1, 65536, 256, 2,
                                           INT64_C(8519680)),
               4724 * MIB);
}
END_TEST

/* The workspace's size by GPU (getChosenWorkspaceSize's defaults): 4,096 x 1,024 x 2 + 16 x 1,024
 * x 8 = 8,519,680 on the T4 and the A100; 4,096 x 8 x 1,024 = 33,554,432 on the H100 (sm 9.0);
 * ROCm's 128 MiB = 134,217,728 on gfx94x (MI300X); none on a TPU. */
START_TEST(cublas_workspace_by_gpu)
{
    ASSERT_I64(core_serve_cublas_workspace_bytes(core_gpu_find("t4")), INT64_C(8519680));
    ASSERT_I64(core_serve_cublas_workspace_bytes(core_gpu_find("a100-sxm-80gb")), INT64_C(8519680));
    ASSERT_I64(core_serve_cublas_workspace_bytes(core_gpu_find("h100-sxm")), INT64_C(33554432));
    ASSERT_I64(core_serve_cublas_workspace_bytes(core_gpu_find("mi300x")), INT64_C(134217728));
}
END_TEST

/* K05's pass (vLLM 0.2.7, engine_version vllm_0.2): Mixtral 8x7B AWQ, tp 2 (4 local experts of
 * f = 14,336), 32,768 tokens, fp16. Every linear is AWQ: an [8, T, n] fp16 split-K buffer, the
 * output, and for 8 T n >= 2^31 an fp32 [T, n] accumulation buffer (w1 and w3 only: 8 x 32,768 x
 * 14,336 = 3.76e9; o_proj's 8 x 32,768 x 4,096 = 1.07e9 is below). Per rank, MiB: [T, d] 256;
 * qkv's buffer 1,536 (n = 3,072) and output 192; xformers' output 128; o_proj's buffer 2,048;
 * w1/w3's buffer 7,168, output 896, accumulation 1,792; w2's buffer 2,048.
 * Layer 0's attention: embedding (seg 1), norm (seg 2), qkv buffer (seg 3, 1,536), qkv (seg 4,
 * 192), xformers' output and o_proj's output split seg 3 (128 + 256), o_proj's buffer seg 5
 * (2,048). Expert 0: w1's buffer seg 6 (7,168); its output the best fit 1,152 of seg 3; its
 * accumulation 2,048 of seg 5 (freed); the activation seg 5; w3's buffer seg 6 again; its output
 * seg 3's 1,152; its accumulation fits nothing free (1,152, 256, 192, 128): seg 7 (1,792); the
 * product seg 5's 1,152; w2's buffer seg 6's 7,168 (split); w2's output (the sum) seg 2's 256.
 * Expert 1: w1 seg 6, its output seg 3 at 384, its accumulation seg 7, the activation seg 7, w3
 * seg 6, its output seg 7 at 896, its accumulation seg 5, the product seg 3 at 384, w2's buffer
 * seg 5, w2's output seg 3's last 256 (at 1,280). mixtral.py's loop rebinds
 * `current_hidden_states` only when the next expert's output is assigned, so expert 1's output
 * (seg 3 at 1,280) lives through expert 2. Expert 2: w1 seg 6, its output seg 3 at 384, its
 * accumulation seg 7, the activation seg 7, w3 seg 6, its output and the product take the two
 * free 896 blocks (seg 3 at 384, seg 7 at 896: either way round), its accumulation and w2's buffer
 * seg 5; its w2 output (256) then finds seg 3 holding o_proj's output, w3's output and expert 1's
 * (128 free), seg 5 w2's buffer, seg 7 the activation and product, seg 4 192, seg 2 the sum: the
 * only free block of 256 is seg 6's 7,168,
 * which it splits, and it lives through expert 3, whose w1 buffer (7,168) then needs a new
 * segment: seg 8. Later layers find room in these eight segments. Reserved: 256 + 256 + 1,536 +
 * 192 + 2,048 + 7,168 + 1,792 + 7,168 = 20,416 MiB; live at most residual 256 + the layer's input
 * 256 (held by the model's loop) + o_proj's output 256 + sum 256 + the previous expert's output
 * 256 + activation 896 + w3's buffer 7,168 + output 896 + accumulation 1,792 = 12,032. (With each
 * expert's output freed at its add_, as the replay had it before, expert 2's output takes seg 3 at
 * 1,280 and seven segments do: 13,248 MiB.)
 * The cuBLAS workspace: every linear here is awq_gemm (the engine's kernel), so the first cuBLAS
 * GEMM is layer 0's router (an unquantized ReplicatedLinear, F.linear), after attention. The free
 * blocks then are seg 2's 256 (the norm's, freed when attention's output replaced it), seg 3's
 * 128 (xformers' output) and 1,152, seg 4's 192 (qkv) and seg 5's 2,048: the best fit for
 * 8.125 MiB is seg 3's 128, split (119.875 left). No later request of the pass is below 128 MiB
 * (the experts' tensors are 256 MiB and up; a layer's 128 MiB attention output now finds another
 * free block of at least 128, of which each layer has several), so no segment is added:
 * 20,416 MiB still. */
START_TEST(k05_pass_split_k_awq_experts)
{
    const struct core_arch *a = &core_presets[core_preset_find("mixtral-8x7b")].arch;
    const struct core_serve_release *r = &core_serve_releases[CORE_VERSION_VLLM_0_2];

    ASSERT_I64(core_serve_profile_reserved(a, r, CORE_QUANT_AWQ, 2, 1, 1, 32768, 256, 2, 0),
               20416 * MIB);
    ASSERT_I64(
        core_serve_profile_reserved(a, r, CORE_QUANT_AWQ, 2, 1, 1, 32768, 256, 2, INT64_C(8519680)),
        20416 * MIB);
    /* The same pass under vllm_0.4 (AWQ dequantizes the weight from 256 tokens, quantized MoE
     * still loops): its live peak is residual 256 + the layer's input 256 + o_proj's output 256 +
     * sum 256 + the previous expert's output 256 + activation 896 + w3 896 + product 896 + w2's
     * dequantized weight 112 + output 256 = 4,336 MiB, and with no split-K buffer the replay stays
     * below one w1 buffer (7,168 MiB). */
    int64_t v04 = core_serve_profile_reserved(a, &core_serve_releases[CORE_VERSION_VLLM_0_4],
                                              CORE_QUANT_AWQ, 2, 1, 1, 32768, 256, 2, 0);
    ck_assert(v04 >= 4336 * MIB && v04 < 7168 * MIB);
}
END_TEST

/* Unquantized Mixtral under vllm_0.4 runs fused_moe (the loop is for quantized models only):
 * tp 2, 4,096 tokens, fp16, per rank MiB: [T, d] 32; qkv [T, 3,072] 24; the attention output
 * buffer and xformers' output [T, 2,048] 16 each; fused_moe's caches [T x 2, 2 x 7,168] 224,
 * [T x 2, 7,168] 112, [T x 2, 4,096] 64, the result written into the input. Layer 0: embedding
 * (seg 1), norm (seg 2), qkv (seg 3), buffer (seg 4), xformers' output (seg 5, freed), o_proj's
 * 32 fits no free block (16): seg 6; the caches segs 7-9. Layer 1 reuses seg 3 for qkv, 4 and 5
 * for the two outputs, seg 2 for o_proj (the layers alternate segs 2 and 6), 7-9 for the caches.
 * Reserved: 32 + 32 + 24 + 16 + 16 + 32 + 224 + 112 + 64 = 552 MiB; the sampler's six tensors
 * (15.6, 31.25 x 4 and 62.5 MiB) fit the freed 16, 32, 64 (split), 112 (split) blocks. With the
 * cuBLAS workspace made at layer 0's qkv_proj (segs 1-3 in use, nothing free): a 20 MiB segment,
 * whose 11.875 MiB remainder holds none of the later requests (16 MiB and up): 572 MiB. */
START_TEST(fused_moe_under_vllm_0_4)
{
    const struct core_arch *a = &core_presets[core_preset_find("mixtral-8x7b")].arch;

    ASSERT_I64(core_serve_profile_reserved(a, &core_serve_releases[CORE_VERSION_VLLM_0_4],
                                           CORE_QUANT_NONE, 2, 1, 1, 4096, 256, 2, 0),
               552 * MIB);
    ASSERT_I64(core_serve_profile_reserved(a, &core_serve_releases[CORE_VERSION_VLLM_0_4],
                                           CORE_QUANT_NONE, 2, 1, 1, 4096, 256, 2,
                                           INT64_C(8519680)),
               572 * MIB);
}
END_TEST

static void k05_input(struct core_serve_input *in, enum core_engine_version v)
{
    core_serve_input_init(in);
    in->base.preset = core_preset_find("mixtral-8x7b");
    in->base.gpu = core_gpu_find("a100-sxm-80gb");
    in->base.precision = CORE_PREC_FP16;
    in->base.tp = 2;
    in->base.gpus = 2;
    in->engine = CORE_ENGINE_VLLM_V0;
    in->engine_version = v;
    in->quantization = CORE_QUANT_AWQ;
    in->max_model_len = 32768;
    in->gpu_memory_utilization = 0.5;
    in->enforce_eager = true;
}

/* Under vllm_0.2 the budget is total x u - weights - the replayed 20,416 MiB - the non-torch
 * increase (256 MiB at tp 2) - the CUDA context (512 MiB: 0.2.x's peak is total - free); the
 * weights and the capacity are the current release's. The same input under current keeps the
 * live formula and no context term. A release of V0 under engine=vllm is a problem named
 * engine_version. */
START_TEST(release_budget_and_engine_check)
{
    struct core_serve_input in;
    struct core_serve_result cur, old;
    struct core_problems p = {0};

    k05_input(&in, CORE_VERSION_CURRENT);
    ck_assert_int_eq(core_serve(&in, &cur, &p), CORE_OK);
    k05_input(&in, CORE_VERSION_VLLM_0_2);
    ck_assert_int_eq(core_serve(&in, &old, &p), CORE_OK);
    ASSERT_I64(old.per_gpu.activations, 20416 * MIB);
    ASSERT_I64(old.per_gpu.weights, cur.per_gpu.weights);
    ASSERT_I64(old.kv.available, (int64_t)((double)old.per_gpu.capacity * 0.5) -
                                     old.per_gpu.weights - 20416 * MIB - 256 * MIB - 512 * MIB);
    ASSERT_I64(cur.kv.available, (int64_t)((double)cur.per_gpu.capacity * 0.5) -
                                     cur.per_gpu.weights - cur.per_gpu.activations - 256 * MIB);
    ASSERT_I64(old.kv.blocks, old.kv.available / (1 * MIB)); /* 1 MiB blocks: 16 x 32 x 2048 */

    k05_input(&in, CORE_VERSION_VLLM_0_2);
    in.engine = CORE_ENGINE_VLLM;
    memset(&p, 0, sizeof p);
    ck_assert_int_ne(core_serve(&in, &old, &p), CORE_OK);
    ck_assert_str_eq(p.items[0].field, "engine_version");
}
END_TEST

/* The release rows as data: current changes nothing, each older row names its engine. */
START_TEST(release_rows)
{
    ck_assert_str_eq(core_engine_version_names[CORE_VERSION_CURRENT], "current");
    for (int v = 0; v < CORE_VERSION_COUNT; v++)
        ck_assert_str_eq(core_serve_releases[v].name, core_engine_version_names[v]);
    ck_assert(!core_serve_releases[CORE_VERSION_CURRENT].peak_reserved);
    ck_assert(!core_serve_releases[CORE_VERSION_CURRENT].peak_counts_context);
    ck_assert(!core_serve_releases[CORE_VERSION_CURRENT].awq_split_k);
    ck_assert_int_eq(core_serve_releases[CORE_VERSION_CURRENT].engine, CORE_ENGINE_COUNT);
    ck_assert_int_eq(core_serve_releases[CORE_VERSION_VLLM_0_2].engine, CORE_ENGINE_VLLM_V0);
    ck_assert_int_eq(core_serve_releases[CORE_VERSION_VLLM_0_4].engine, CORE_ENGINE_VLLM_V0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_serve_alloc");
    TCase *t = tcase_create("allocator");

    tcase_add_test(t, segment_sizes_and_rounding);
    tcase_add_test(t, no_split_below_a_mebibyte_and_best_fit);
    tcase_add_test(t, merge_and_fragmentation);
    tcase_add_test(t, k06_pass_reserves_eight_segments);
    tcase_add_test(t, cublas_workspace_by_gpu);
    tcase_add_test(t, k05_pass_split_k_awq_experts);
    tcase_add_test(t, fused_moe_under_vllm_0_4);
    tcase_add_test(t, release_budget_and_engine_check);
    tcase_add_test(t, release_rows);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
