/*
 * test_core_serve.c - core_serve() (core/serve.h) against figures derived by hand from the
 * engines' arithmetic (vLLM vllm/v1/core/kv_cache_utils.py, vllm/v1/worker/gpu_worker.py) and
 * the quantization layouts (core/quant.c). docs/serving.md has the formulas.
 */
#include <math.h>
#include <string.h>

#include "core_test_util.h"
#include "check_main.h"
#include "serve.h"
#include "serve_timing.h"

static const struct core_arch *preset_arch(const char *id)
{
    return &core_presets[core_preset_find(id)].arch;
}

/* KV bytes per token = layers x 2 (K and V) x max(1, kv_heads / tp) x head_dim x bytes.
 * Llama 3 8B (32 layers, 8 KV heads of 128), bf16: 32 x 2 x 8 x 128 x 2 = 131,072 (128 KiB);
 * tp 2 halves the heads: 65,536; an FP8 cache (1 byte): 65,536 at tp 1.
 * Llama 3 70B (80 layers, 8 KV heads) at tp 16: 8 / 16 < 1, so each rank keeps one replicated
 * head: 80 x 2 x 1 x 128 x 2 = 40,960. DeepSeek-V3 (MLA, 61 layers): one latent of
 * kv_lora_rank 512 + rope 64 = 576 elements, no factor 2, the same on every rank: 61 x 576 x 2
 * = 70,272 at tp 1 and at tp 8. */
START_TEST(kv_bytes_per_token)
{
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("llama3-8b"), 1, 32, 2), 131072);
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("llama3-8b"), 2, 32, 2), 65536);
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("llama3-8b"), 1, 32, 1), 65536);
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("llama3-70b"), 16, 80, 2), 40960);
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("deepseek-v3"), 1, 61, 2), 70272);
    ASSERT_I64(core_serve_kv_bytes_per_token(preset_arch("deepseek-v3"), 8, 61, 2), 70272);
}
END_TEST

/* Mistral 7B's shape (32 layers, d 4096, 32 heads, 8 KV heads of 128, f 14336, V 32000) as K26
 * of serving-measured.csv logs it (vLLM V1, GPTQ, fp16, max_model_len 32768):
 * "Available KV cache memory: 102.56 GiB / GPU KV cache size: 840,160 tokens / Maximum
 * concurrency for 32,768 tokens per request: 25.64x / num_gpu_blocks is: 52510".
 * Page = 16 tokens x 2 x 8 x 128 x 2 bytes = 65,536 per layer; a block across 32 layers is
 * 2,097,152. kv_cache_memory = floor(102.56 x 2^30) = 110,122,961,469 bytes:
 * blocks = floor(110,122,961,469 / 2,097,152) = 52,510; tokens = 52,510 x 16 = 840,160;
 * concurrency = 52,510 / ceil(32,768 / 16) = 52,510 / 2,048 = 25.6396 (logged 25.64x). */
static void mistral_shape(struct core_serve_input *in)
{
    core_serve_input_init(in);
    in->base.layers = 32;
    in->base.hidden = 4096;
    in->base.heads = 32;
    in->base.kv_heads = 8;
    in->base.ffn_hidden = 14336;
    in->base.vocab = 32000;
    in->base.gated_mlp = CORE_FLAG_YES;
    in->base.precision = CORE_PREC_FP16;
    in->max_model_len = 32768;
}

START_TEST(k26_blocks_tokens_concurrency)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    mistral_shape(&in);
    in.quantization = CORE_QUANT_GPTQ;
    in.kv_cache_memory = INT64_C(110122961469);
    in.base.gpu = core_gpu_find("h200-sxm");
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.page_bytes, 65536);
    ASSERT_I64(r.kv.blocks, 52510);
    ASSERT_I64(r.kv.tokens, 840160);
    ck_assert_double_eq_tol(r.kv.max_concurrency, 52510.0 / 2048.0, 1e-12);
    ck_assert(fabs(r.kv.max_concurrency - 25.64) < 0.005);
    ck_assert(r.kv.max_model_len_fits);
    ASSERT_I64(r.kv.max_model_len_supported, 840160);
}
END_TEST

/* vLLM's start-up error (K12: 221,000 tokens need 10.12 GiB, 5.59 available, "the estimated
 * maximum model length is 122080"): the longest request is the whole pool, blocks x 16. With
 * Llama 3 8B in bf16 (128 KiB per token, 2 MiB per block over 32 layers) and a 1 GiB pool:
 * 512 blocks = 8,192 tokens, so 32,768 does not fit, and lowering max_model_len to 8,192 is the
 * first advice. */
START_TEST(max_model_len_estimate_and_advice)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.max_model_len = 8192;
    in.kv_cache_memory = INT64_C(1073741824);
    in.max_model_len = 8192;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.blocks, 512);
    ASSERT_I64(r.kv.tokens, 8192);
    ck_assert(r.kv.max_model_len_fits);
    ck_assert_double_eq_tol(r.kv.max_concurrency, 1.0, 1e-12);
    in.kv_cache_memory = INT64_C(1073741824) - 1; /* one byte short of 512 blocks */
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.blocks, 511);
    ck_assert(!r.kv.max_model_len_fits);
    ck_assert(!r.fits);
    ASSERT_I64(r.kv.max_model_len_supported, 511 * 16);
    ck_assert_int_ge(r.advice_count, 1);
    ck_assert_str_eq(r.advice[0].code, "lower_max_model_len");
    ck_assert_str_eq(r.advice[0].changes[0].input, "max_model_len");
    ASSERT_I64(r.advice[0].changes[0].int_value, 8176);
}
END_TEST

/*
 * Weights of Llama 2 7B (32 layers, d 4096, 32 heads, f 11008 gated, V 32000 untied) by format.
 * Linear weights per layer: q, k, v, o 4 x 4096^2 = 67,108,864 and the MLP 3 x 4096 x 11008 =
 * 135,266,304: 202,375,168 x 32 = 6,476,005,376. Embedding and head 2 x 32000 x 4096 =
 * 262,144,000; norms (2 x 32 + 1) x 4096 = 266,240. Total 6,738,415,616.
 *  - bf16: 2 x 6,738,415,616 = 13,476,831,232.
 *  - AWQ g128: codes 6,476,005,376 / 2 = 3,238,002,688; 50,593,792 groups x (16 + 4) bits =
 *    126,484,480 bytes; embedding, head and norms in 16 bits 524,820,480: 3,889,307,648.
 *  - GPTQ: + g_idx, 4 bytes per input channel: per layer 6 x 4096 (q, k, v, o, gate, up) +
 *    11008 (down) = 35,584, x 32 = 1,138,688 channels = 4,554,752 bytes: 3,893,862,400.
 *  - FP8: one byte per linear weight + an fp32 scale per tensor (7 x 32 = 224 tensors, 896
 *    bytes) + 524,820,480 in 16 bits: 7,000,826,752.
 *  - GGUF Q8_0: 34 bytes per 32 weights for the linears (6,880,755,712), the embedding and the
 *    output (139,264,000 each), norms in f32 (1,064,960): 7,160,348,672 (TheBloke's
 *    llama-2-7b.Q8_0.gguf is listed at 7.16 GB).
 *  - GGUF Q4_K_M: attn_v and ffn_down of the 16 use_more_bits layers in Q6_K: 16 x (4096^2 +
 *    11008 x 4096) = 989,855,744 weights x 210/256 = 811,991,040 bytes; the other 5,486,149,632
 *    linear weights in Q4_K x 144/256 = 3,085,959,168; token_embd Q4_K 73,728,000; output Q6_K
 *    107,520,000; norms f32 1,064,960: 4,080,263,168 (the published file: 4.08 GB).
 */
START_TEST(weights_by_format)
{
    const struct core_arch *a = preset_arch("llama2-7b");

    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_NONE, 0, 2, 1, 1, 1), INT64_C(13476831232));
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_AWQ, 0, 2, 1, 1, 1), INT64_C(3889307648));
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_GPTQ, 0, 2, 1, 1, 1), INT64_C(3893862400));
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_FP8, 0, 2, 1, 1, 1), INT64_C(7000826752));
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_GGUF_Q8_0, 0, 2, 1, 1, 1),
               INT64_C(7160348672));
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_GGUF_Q4_K_M, 0, 2, 1, 1, 1),
               INT64_C(4080263168));
    /* tp 2: every linear, the embedding and the head halve; the norms stay whole:
     * (6,476,005,376 + 262,144,000) / 2 x 2 + 266,240 x 2 = 6,738,681,856. */
    ASSERT_I64(core_serve_weight_bytes(a, CORE_QUANT_NONE, 0, 2, 2, 1, 1), INT64_C(6738681856));
}
END_TEST

/* vLLM V1's budget (gpu_worker.py): available = total x utilization - weights - profile peak -
 * non-torch increase. Llama 2 7B bf16 on an H100 (79.19 GiB usable) at utilization 0.9 with
 * max_num_batched_tokens 2048 and max_num_seqs 256 given:
 *   total x 0.9 = floor(0.9 x round(79.19 x 2^30)) = floor(0.9 x 85,029,615,043) = 76,526,653,538
 *   weights 13,476,831,232 (above)
 *   profile: hidden 2 x 2048 x 4096 x 2 = 33,554,432; the MLP (larger than attention's
 *   2048 x (64 + 64) x 128 x 2 = 67,108,864) 2048 x 3 x 11008 x 2 = 135,266,304; sampler
 *   256 x 32000 x 26 = 212,992,000: 381,812,736; plus the cuBLAS workspace that the pass's
 *   first GEMM (qkv_proj) takes from the caching allocator and keeps (CublasHandlePool.cpp,
 *   getChosenWorkspaceSize: 4,096 KiB x 8 = 33,554,432 on sm 9.0): 415,367,168
 *   non-torch increase (tp 1) 52,428,800
 *   available = 76,526,653,538 - 13,476,831,232 - 415,367,168 - 52,428,800 = 62,582,026,338
 *   blocks = floor(62,582,026,338 / (16 x 2 x 32 x 128 x 2 x 32 = 8,388,608)) = 7,460. */
START_TEST(vllm_v1_budget)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama2-7b");
    in.max_num_batched_tokens = 2048;
    in.max_num_seqs = 256;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.per_gpu.capacity, INT64_C(85029615043));
    ASSERT_I64(r.per_gpu.weights, INT64_C(13476831232));
    ASSERT_I64(r.per_gpu.activations, INT64_C(415367168));
    ASSERT_I64(r.kv.available, INT64_C(62582026338));
    ASSERT_I64(r.kv.blocks, 7460);
    ASSERT_I64(r.kv.tokens, 7460 * 16);
    ck_assert(r.fits);
}
END_TEST

/* The same Llama 2 7B pass run eagerly (vLLM V0, or V1 under enforce_eager): LlamaMLP.forward
 * (vllm/model_executor/models/llama.py) keeps its local gate_up alive while down_proj writes its
 * 2048 x 4096 output, so the MLP transient is 2048 x (3 x 11008 + 4096) x 2 = 152,043,520 (still
 * above attention's 67,108,864): 33,554,432 + 152,043,520 + 212,992,000 = 398,589,952, and the
 * H100's 33,554,432-byte cuBLAS workspace: 432,144,384. V1 compiled (above) frees gate_up before
 * down_proj: 415,367,168. */
START_TEST(vllm_eager_profile_keeps_gate_up)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama2-7b");
    in.max_num_batched_tokens = 2048;
    in.max_num_seqs = 256;
    in.max_model_len = 2048; /* V0 without chunked prefill refuses 2048 tokens below 4096 */
    in.engine = CORE_ENGINE_VLLM_V0;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.per_gpu.activations, INT64_C(432144384));
    in.engine = CORE_ENGINE_VLLM;
    in.enforce_eager = true;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.per_gpu.activations, INT64_C(432144384));
}
END_TEST

/* TensorRT-LLM (docs/source/reference/memory.md): kv_cache_free_gpu_mem_fraction of what is free
 * after the engine's weights, its execution context, its runtime and decoder buffers and the
 * CUDA context. K14's engine: Llama 2 7B fp16 on an A10 (22.19 GiB usable: round(22.19 x 2^30)
 * = 23,826,331,075), 51,200 tokens, 25 sequences, 16-token blocks, fraction 0.95. The execution
 * context is TensorRT's liveness-based plan of the decoder layer's graph: the normed input feeds
 * only the qkv, fc and gate GEMMs (TensorRT-LLM's GatedMLP: inter = act(fc(h)); gate = gate(h);
 * proj(inter * gate)) and is dead at the layer's peak, so beside the residual 51,200 x 4096 x 2
 * = 419,430,400 only the larger transient counts: the MLP's act, gate and product 51,200 x 3 x
 * 11,008 x 2 = 3,381,657,600 (attention's q, k, v and output 51,200 x 128 x 128 x 2 =
 * 1,677,721,600 is smaller); runtime and decoder logits 25 x 32,000 x 8 = 6,400,000:
 * 3,807,488,000. Weights 13,476,831,232 (above), context + non-torch 589,299,712:
 *   free = 23,826,331,075 - 13,476,831,232 - 3,807,488,000 - 589,299,712 = 5,952,712,131
 *   available = floor(0.95 x free) = 5,655,076,524; blocks = floor(available / (16 x 32 x 2 x
 *   4096 x 2 = 8,388,608)) = 674: 10,784 tokens (the log: 10,718). */
START_TEST(trtllm_budget_liveness)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama2-7b");
    in.base.gpu = core_gpu_find("a10");
    in.base.precision = CORE_PREC_FP16;
    in.engine = CORE_ENGINE_TRTLLM;
    in.max_model_len = 4096;
    in.block_size = 16;
    in.max_num_seqs = 25;
    in.max_num_batched_tokens = 51200;
    in.kv_cache_free_gpu_mem_fraction = 0.95;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.per_gpu.capacity, INT64_C(23826331075));
    ASSERT_I64(r.per_gpu.weights, INT64_C(13476831232));
    ASSERT_I64(r.per_gpu.activations, INT64_C(3807488000));
    ASSERT_I64(r.per_gpu.non_torch, INT64_C(589299712));
    ASSERT_I64(r.kv.available, INT64_C(5655076524));
    ASSERT_I64(r.kv.blocks, 674);
    ASSERT_I64(r.kv.tokens, 674 * 16);
}
END_TEST

/* Bad and contradictory input: a max_model_len beyond the model's positions (Llama 3 8B: 8192),
 * an AWQ model in fp32, tp that does not divide the heads, a format the engine does not load. */
START_TEST(contradictions_name_the_field)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.max_model_len = 8193;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "max_model_len");
    in.max_model_len = 0;
    in.quantization = CORE_QUANT_AWQ;
    in.base.precision = CORE_PREC_FP32;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "quantization");
    in.base.precision = CORE_PREC_BF16;
    in.base.tp = 3;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "tp");
    in.base.tp = 1;
    in.engine = CORE_ENGINE_LLAMACPP;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "quantization");
    in.engine = CORE_ENGINE_VLLM;
    in.quantization = CORE_QUANT_NONE;
    in.gpu_memory_utilization = 1.5;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "gpu_memory_utilization");
}
END_TEST

/* The engine's length limit is the config's positions, not the trained context (qa4): vLLM sets
 * max_model_len's default and bound from config.json's max_position_embeddings, a yarn config's
 * original_max_position_embeddings x factor (vllm/config/model.py, _get_and_verify_max_len).
 * Mistral-7B-v0.1's config says 32768 (tests/validation/hf-configs.json), trained at 8192;
 * Qwen3-30B-A3B's 40960 (test_hfconfig.c's config) for a native 32768; DeepSeek-V3's yarn is
 * 40 x 4096 = 163840 for the paper's 128k. `vllm serve mistralai/Mistral-7B-v0.1
 * --max-model-len 32768` starts, where memwall answered "32768 exceeds the model's 8192
 * positions". Llama 3 8B's config says 8192, its context: unchanged. */
START_TEST(max_model_len_bound_is_the_config_positions)
{
    static const struct {
        const char *preset;
        int64_t positions, trained;
    } rows[] = {
        {"mistral-7b", 32768, 8192}, {"qwen3-30b-a3b", 40960, 32768},
        {"qwen3-8b", 40960, 32768},  {"deepseek-v3", 40 * 4096, 131072},
        {"llama3-8b", 8192, 8192},
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct core_serve_input in;
        struct core_serve_result r;
        struct core_problems p = {0};
        int preset = core_preset_find(rows[i].preset);

        ck_assert_int_ge(preset, 0);
        /* The training half keeps the trained context (seq_len_exceeds_context). */
        ASSERT_I64(core_presets[preset].context, rows[i].trained);
        core_serve_input_init(&in);
        in.base.preset = preset;
        in.base.gpu = core_gpu_find("h200-sxm");
        in.base.tp = strcmp(rows[i].preset, "deepseek-v3") == 0 ? 8 : 1;
        in.quantization = in.base.tp == 8 ? CORE_QUANT_FP8 : CORE_QUANT_NONE;
        ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
        ASSERT_I64(r.resolved.max_model_len, rows[i].positions); /* the default */
        ASSERT_I64(r.resolved.context, rows[i].positions);
        in.max_model_len = rows[i].positions;
        ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
        in.max_model_len = rows[i].positions + 1;
        memset(&p, 0, sizeof p);
        ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
        ck_assert_str_eq(p.items[0].field, "max_model_len");
    }
}
END_TEST

/* vLLM runs MLA on Hopper with FlashMLA and forces 64-token pages (vllm/platforms/cuda.py,
 * check_and_update_config: block_size % 64 != 0 -> 64, "Forcing kv cache block size to 64 for
 * FlashMLA backend"; is_flashmla_dense_supported: Hopper only) (qa4). DeepSeek-V3 FP8 at tp 8
 * on H200, max_model_len 32768: one latent of 512 + 64 in bf16 per layer, 1,152 B; a 64-token
 * page is 73,728 B and a block over 61 layers 4,497,408 B. The budget does not depend on the
 * page: 0.9 x 150,109,106,995 = 135,098,196,295 less the weights, the profile and the 256 MiB
 * non-torch increase = 44,959,705,839 B (as with 16-token pages), so blocks =
 * floor(44,959,705,839 / 4,497,408) = 9,996 (9,996.8), tokens 639,744, and V1's concurrency
 * 9,996 / ceil(32,768 / 64) = 9,996 / 512 = 19.5234375. A given 16 is forced too; 128 is kept;
 * an A100 (no FlashMLA) keeps vLLM's 16. */
START_TEST(vllm_mla_on_hopper_pages_64_tokens)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("deepseek-v3");
    in.base.gpu = core_gpu_find("h200-sxm");
    in.base.tp = 8;
    in.quantization = CORE_QUANT_FP8;
    in.max_model_len = 32768;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.block_size, 64);
    ASSERT_I64(r.kv.page_bytes, 73728);
    ASSERT_I64(r.kv.available, INT64_C(44959705839));
    ASSERT_I64(r.kv.blocks, 9996);
    ASSERT_I64(r.kv.tokens, 639744);
    ck_assert_double_eq_tol(r.kv.max_concurrency, 19.5234375, 1e-12);
    in.block_size = 16;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.block_size, 64);
    in.block_size = 128;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.block_size, 128);
    in.block_size = 0;
    in.base.gpu = core_gpu_find("a100-sxm-80gb");
    in.base.tp = 8;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.block_size, 16);
    /* A model without MLA on Hopper keeps 16. */
    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.base.gpu = core_gpu_find("h200-sxm");
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.block_size, 16);
}
END_TEST

/* llama.cpp keeps the input layer on the CPU (src/llama-model.cpp, load_tensors: "there is very
 * little benefit to offloading the input layer, so always keep it on the CPU"; qa4): Llama 3.1
 * 8B Q4_K_M's token_embd (Q4_K, 144 B per 256 weights) is 128,256 x 4,096 x 144 / 256 =
 * 295,501,824 B = 281.81 MiB of host memory, not GPU memory. vLLM's GGUF loader puts the same
 * file on the GPU whole. A tied model (Gemma 2 9B) reads token_embd as its output head too,
 * which the GPU holds: the same bytes under both engines. */
START_TEST(llamacpp_input_embedding_on_the_host)
{
    struct core_serve_input in;
    struct core_serve_result cpp, vllm;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.base.gpu = core_gpu_find("rtx-4090");
    in.quantization = CORE_QUANT_GGUF_Q4_K_M;
    in.engine = CORE_ENGINE_LLAMACPP;
    ck_assert_int_eq(core_serve(&in, &cpp, &p), CORE_OK);
    in.engine = CORE_ENGINE_VLLM;
    ck_assert_int_eq(core_serve(&in, &vllm, &p), CORE_OK);
    ASSERT_I64(vllm.per_gpu.weights - cpp.per_gpu.weights, INT64_C(295501824));
    in.base.preset = core_preset_find("gemma-2-9b");
    in.engine = CORE_ENGINE_LLAMACPP;
    ck_assert_int_eq(core_serve(&in, &cpp, &p), CORE_OK);
    in.engine = CORE_ENGINE_VLLM;
    ck_assert_int_eq(core_serve(&in, &vllm, &p), CORE_OK);
    ASSERT_I64(vllm.per_gpu.weights, cpp.per_gpu.weights);
}
END_TEST

/* SGLang's default mem_fraction_static (server_args.py) on an H100 at tp 1, in MiB: memory
 * 79.19 GiB + 512 = 81,602.56; chunked_prefill_size 8192 and cuda_graph_max_bs 256 (60-160 GiB
 * bucket): reserved = 512 + 1.5 x 8192 + 2 x 256 + 1024 / 8 = 13,440 (above the 10 GiB floor);
 * fraction = round((81,602.56 - 13,440) / 81,602.56, 3) = round(0.83530, 3) = 0.835. */
START_TEST(sglang_default_fraction)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.engine = CORE_ENGINE_SGLANG;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert_double_eq_tol(r.resolved.mem_fraction_static, 0.835, 1e-12);
    ASSERT_I64(r.kv.block_size, 1);
    /* Under another engine the echo is still SGLang's default, with SGLang's own chunk (qa4):
     * vLLM V0 at max_model_len 8192 profiles 8192 tokens, which is also SGLang's chunk in this
     * bucket; at tp 4 on Llama 3.1 70B FP8 with max_model_len 32768, V0's batch is 32768 and
     * was read as the chunk: reserved 512 + 1.5 x 32768 + 2 x 512 + 1024 x 4 / 8 = 51,200 MiB,
     * round((81,602.56 - 51,200) / 81,602.56, 3) = 0.373. SGLang's chunk 8192: reserved
     * 512 + 12,288 + 1,024 + 512 = 14,336 MiB, round(67,266.56 / 81,602.56, 3) = 0.824. */
    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-70b");
    in.base.tp = 4;
    in.quantization = CORE_QUANT_FP8;
    in.max_model_len = 32768;
    in.engine = CORE_ENGINE_VLLM_V0;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.resolved.max_num_batched_tokens, 32768);
    ck_assert_double_eq_tol(r.resolved.mem_fraction_static, 0.824, 1e-12);
    in.engine = CORE_ENGINE_SGLANG;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert_double_eq_tol(r.resolved.mem_fraction_static, 0.824, 1e-12);
}
END_TEST

/* The generic ledger is judged against the marketed 80 GB (80e9 bytes); a framework profile's
 * device peak against what the driver reports: round(79.19 x 2^30) = 85,029,615,043 bytes on an
 * 80 GB H100 (so a device peak of 84.1e9 fits, as published 80 GB runs of it did); memory_gb
 * overrides both. */
START_TEST(framework_profile_judged_against_usable_memory)
{
    struct core_input in;
    struct core_result r;
    struct core_problems p = {0};

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    in.gpus = 8;
    ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
    ck_assert_int_eq(r.fit.capacity, INT64_C(80000000000));
    in.framework = CORE_FW_MEGATRON;
    ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
    ck_assert_int_eq(r.fit.capacity, INT64_C(85029615043));
    in.memory_gb = 80;
    ck_assert_int_eq(core_evaluate(&in, &r, &p), CORE_OK);
    ck_assert_int_eq(r.fit.capacity, INT64_C(80000000000));
}
END_TEST

/* vLLM V1's hybrid allocator on gpt-oss-20b (24 layers alternating sliding (window 128) and full,
 * 8 KV heads of 64, bf16): 2 x 8 x 64 x 2 = 2,048 bytes per layer per token, a 16-token page
 * 32,768. Groups of g = min(12 full, 12 sliding) = 12 layers: 2 groups share one pool of 12 page
 * tensors. kv_cache_memory 1 GiB: blocks = floor(1,073,741,824 / (32,768 x 12)) = 2,730; pool
 * 2,730 x 393,216 = 1,073,479,680 bytes; logged size 2,730 / 2 x 16 = 21,840 tokens. With
 * max_model_len 8192 and 2048 batched tokens a request needs ceil(8192 / 16) = 512 blocks in
 * the full group and ceil(min(127 + 2048, 8192) / 16) + 1 = 137 in the sliding group: 649, so
 * concurrency 2,730 / 649 = 4.2065; the longest request (2,730 - 137) x 16 = 41,488 tokens. */
START_TEST(hybrid_sliding_window_pool)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("gpt-oss-20b");
    in.max_model_len = 8192;
    in.max_num_batched_tokens = 2048;
    in.kv_cache_memory = INT64_C(1073741824);
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.page_bytes, 32768);
    ASSERT_I64(r.kv.layers, 24);
    ASSERT_I64(r.kv.blocks, 2730);
    ASSERT_I64(r.per_gpu.kv_cache, INT64_C(1073479680));
    ASSERT_I64(r.kv.tokens, 21840);
    ck_assert_double_eq_tol(r.kv.max_concurrency, 2730.0 / 649.0, 1e-12);
    ASSERT_I64(r.kv.max_model_len_supported, 41488);
}
END_TEST

/* SGLang's hybrid SWA pool on gpt-oss-20b (model_runner_kv_cache_mixin.py,
 * set_num_tokens_hybrid_swa; swa_full_tokens_ratio r = 0.8, server_args.py): 12 full and 12
 * sliding layers of 2,048 bytes per token each (2 x 8 x 64 x 2). The profile's cell is 24 x 2,048
 * = 49,152 bytes: T = floor(available / 49,152) tokens; re-shared as full = T x 49,152 /
 * (2,048 x 12 + 0.8 x 2,048 x 12) = T x 49,152 / 44,236.8 = T x 10 / 9 (floored) tokens in the
 * full layers and floor(0.8 full) in the sliding ones; the pool is 24,576 (full + swa) bytes.
 * With 64-token pages (page_size 64) both counts are floored to multiples of 64. */
START_TEST(sglang_hybrid_swa_pool)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    int64_t t, full, swa;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("gpt-oss-20b");
    in.engine = CORE_ENGINE_SGLANG;
    in.max_model_len = 8192;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.kv.available > 0);
    t = r.kv.available / 49152;
    full = t * 10 / 9;
    swa = full * 4 / 5;
    ASSERT_I64(r.kv.tokens, full);
    ASSERT_I64(r.per_gpu.kv_cache, 24576 * (full + swa));
    ck_assert_double_eq_tol(r.kv.max_concurrency, (double)full / 8192.0, 1e-12);

    in.block_size = 64;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    t = r.kv.available / 49152;
    full = t * 10 / 9 / 64 * 64;
    swa = t * 10 / 9 * 4 / 5 / 64 * 64;
    ASSERT_I64(r.kv.tokens, full);
    ASSERT_I64(r.kv.blocks, full / 64);
    ASSERT_I64(r.per_gpu.kv_cache, 24576 * (full + swa));
}
END_TEST

/* MXFP4 (gpt-oss): the routed experts in 32-weight blocks of 4-bit codes and one 8-bit scale
 * (17 bytes per 32), every other weight in bf16. gpt-oss-20b: 24 layers x 32 experts x 3 x
 * 2880 x 2880 = 19,110,297,600 expert weights -> 597,196,800 blocks x 17 = 10,152,345,600
 * bytes; the remaining 20,914,757,184 - 19,110,297,600 = 1,804,459,584 weights (attention,
 * embedding, head, norms, routers, biases; V 201,088 is already a multiple of 64) x 2 =
 * 3,608,919,168. Total 13,761,264,768 bytes (12.8 GiB; the released checkpoint is 13.8 GB). */
/* A request longer than max_model_len (issue 19; QA note "Open" 1). Llama 3.1 8B in bf16: 128 KiB
 * per token, 2 MiB per 16-token block. kv_cache_memory 2 GiB = 1,024 blocks = 16,384 tokens, so
 * max_model_len 8,192 fits. input 8,000 + output 500 = 8,500 > 8,192: vLLM rejects the request,
 * time is null, and the warning says so. Raising max_model_len to 8,500 needs ceil(8500/16) = 532
 * blocks
 * <= 1,024 and is within the model's 131,072 positions: the first advice; shortening the prompt to
 * 8,192 - 500 = 7,692 the second. With a 1 GiB pool (512 blocks = 8,192 tokens) 532 blocks do not
 * fit, so only the shorter prompt is advised. */
START_TEST(request_longer_than_max_model_len)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    const struct core_note *n;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.max_model_len = 8192;
    in.kv_cache_memory = INT64_C(2147483648);
    in.input_len = 8000;
    in.output_len = 500;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    ck_assert(!core_serve_time_possible(&r));
    n = find_note(r.warnings, r.warning_count, "time_request_exceeds_max_model_len");
    ck_assert_ptr_nonnull(n);
    ck_assert_ptr_nonnull(strstr(n->message, "8500"));
    ck_assert_int_eq(r.advice_count, 2);
    ck_assert_str_eq(r.advice[0].code, "raise_max_model_len");
    ck_assert_str_eq(r.advice[0].changes[0].input, "max_model_len");
    ASSERT_I64(r.advice[0].changes[0].int_value, 8500);
    ck_assert_str_eq(r.advice[1].code, "shorten_input_len");
    ck_assert_str_eq(r.advice[1].changes[0].input, "input_len");
    ASSERT_I64(r.advice[1].changes[0].int_value, 7692);
    in.kv_cache_memory = INT64_C(1073741824);
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    ck_assert_int_eq(r.advice_count, 1);
    ck_assert_str_eq(r.advice[0].code, "shorten_input_len");
    in.input_len = 7692; /* 8,192 exactly: no warning */
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert_ptr_null(
        find_note(r.warnings, r.warning_count, "time_request_exceeds_max_model_len"));
    ck_assert_int_eq(r.advice_count, 0);
}
END_TEST

/* A concurrency above the pool (QA note "Open" 2): the same 16,384-token pool holds
 * 16,384 / (1,000 + 1,000) = 8 requests (max_num_seqs 256 does not bind); 64 asked run as 8 and
 * the warning says so; 8 asked warn nothing. */
START_TEST(concurrency_above_pool_warns)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    struct core_serve_time_input t;
    const struct core_note *n;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.max_model_len = 8192;
    in.kv_cache_memory = INT64_C(2147483648);
    in.input_len = 1000;
    in.output_len = 1000;
    in.concurrency = 64;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.tokens, 16384);
    n = find_note(r.warnings, r.warning_count, "concurrency_capped");
    ck_assert_ptr_nonnull(n);
    ck_assert_ptr_nonnull(strstr(n->message, "64 requests asked, 8 in flight"));
    core_serve_time_input_of(&r, &t);
    ASSERT_I64(t.concurrency, 8);
    in.concurrency = 8;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert_ptr_null(find_note(r.warnings, r.warning_count, "concurrency_capped"));
    ck_assert_int_eq(r.advice_count, 0);
}
END_TEST

/* The advice on a capped concurrency, in cost order, each re-sized. Llama 3.1 8B's KV is 32
 * layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token, so the fixed 2 GiB pool per
 * GPU holds 16,384 tokens = 8 requests of 1,000 + 1,000. An FP8 cache is 65,536 B: 32,768
 * tokens = 16 requests. tp t splits the KV heads, 131,072 / t B per token per GPU in the same
 * 2 GiB: tp 2 16 requests, tp 4 32,768 x 2 / 2,000 = 32, tp 8 131,072 / 2,000 = 65. Replicas:
 * ceil(asked / 8), each at ceil(asked / replicas).
 *  - 16 asked: fp8_kv_cache (16 fit), more_tensor_parallel tp 2 / gpus 2 (16), more_replicas 2
 *    at concurrency 8.
 *  - 64 asked: FP8 holds 16 (not listed), tp 8 / gpus 8 holds 65, more_replicas 8 at 8.
 * Re-posted, each change serves the asked load uncapped (the tp one and fp8 at 16, the per-replica
 * concurrency of the replicas one), and fits keeps its meaning: true throughout. */
START_TEST(concurrency_capped_advice)
{
    struct core_serve_input in, again;
    struct core_serve_result r, r2;
    struct core_problems p = {0};
    const struct core_note *n;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.max_model_len = 8192;
    in.kv_cache_memory = INT64_C(2147483648);
    in.input_len = 1000;
    in.output_len = 1000;
    in.concurrency = 16;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    n = find_note(r.warnings, r.warning_count, "concurrency_capped");
    ck_assert_ptr_nonnull(n);
    ck_assert_ptr_nonnull(strstr(n->message, "concurrency 16 > 8 that fit"));
    ck_assert_int_eq(r.advice_count, 3);
    ck_assert_str_eq(r.advice[0].code, "fp8_kv_cache");
    ck_assert_str_eq(r.advice[0].changes[0].input, "kv_cache_dtype");
    ck_assert_str_eq(r.advice[1].code, "more_tensor_parallel");
    ASSERT_I64(r.advice[1].changes[0].int_value, 2);
    ck_assert_str_eq(r.advice[2].code, "more_replicas");
    ck_assert_str_eq(r.advice[2].changes[0].input, "concurrency");
    ASSERT_I64(r.advice[2].changes[0].int_value, 8);
    ck_assert_ptr_nonnull(strstr(r.advice[2].message, "2 replicas"));
    again = in;
    again.kv_cache_dtype = CORE_KV_FP8;
    ck_assert_int_eq(core_serve(&again, &r2, &p), CORE_OK);
    ASSERT_I64(r2.kv.tokens, 32768);
    ck_assert_ptr_null(find_note(r2.warnings, r2.warning_count, "concurrency_capped"));
    again = in;
    again.base.tp = 2;
    again.base.gpus = 2;
    ck_assert_int_eq(core_serve(&again, &r2, &p), CORE_OK);
    ASSERT_I64(r2.kv.tokens, 32768);
    ck_assert_ptr_null(find_note(r2.warnings, r2.warning_count, "concurrency_capped"));

    in.concurrency = 64;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    ck_assert_int_eq(r.advice_count, 2);
    ck_assert_str_eq(r.advice[0].code, "more_tensor_parallel");
    ASSERT_I64(r.advice[0].changes[0].int_value, 8);
    ASSERT_I64(r.advice[0].changes[1].int_value, 8);
    ck_assert_ptr_nonnull(strstr(r.advice[0].message, "holds 65 requests"));
    ck_assert_str_eq(r.advice[1].code, "more_replicas");
    ASSERT_I64(r.advice[1].changes[0].int_value, 8);
    ck_assert_ptr_nonnull(strstr(r.advice[1].message, "8 replicas"));
    again = in;
    again.base.tp = 8;
    again.base.gpus = 8;
    ck_assert_int_eq(core_serve(&again, &r2, &p), CORE_OK);
    ASSERT_I64(r2.kv.tokens, 131072);
    ck_assert_ptr_null(find_note(r2.warnings, r2.warning_count, "concurrency_capped"));
}
END_TEST

/* vLLM's block sizes (vllm/config/cache.py: BlockSize = Literal[1, 8, 16, 32, 64, 128]): 7 and 256
 * are 422s naming block_size under vllm and vllm_v0; 32 is taken; SGLang's page_size is free. */
START_TEST(vllm_block_sizes)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.block_size = 7;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "block_size");
    in.engine = CORE_ENGINE_VLLM_V0;
    in.block_size = 256;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "block_size");
    in.engine = CORE_ENGINE_VLLM;
    in.block_size = 32;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.kv.block_size, 32);
    in.engine = CORE_ENGINE_SGLANG;
    in.block_size = 7;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
}
END_TEST

/* Only the CUDA-graph headroom fails (QA note "Open" 5). vLLM captures the graphs after the pool,
 * inside (1 - gpu_memory_utilization) x capacity, beside the non-torch reserve: at utilization 1
 * that is 0 bytes, so Llama 3.1 8B on an H100 does not start. The first advice is the highest
 * utilization u (steps of 0.01) with (1 - u) x capacity >= non_torch + cuda_graphs: re-asked at u
 * it serves and the headroom holds both; at u + 0.01 it does not serve. Eager alone leaves the
 * non-torch reserve in a zero headroom, so it is not advised there. Llama 3.1 70B AWQ on four RTX
 * 4090s at the default 0.9: both changes serve, the utilization first (it costs only pool
 * tokens), then enforce_eager, then a larger GPU. */
START_TEST(cuda_graph_headroom_advice)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    double u;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.gpu_memory_utilization = 1.0;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(!r.fits);
    ck_assert_int_eq(r.advice_count, 1);
    ck_assert_str_eq(r.advice[0].code, "lower_gpu_memory_utilization");
    ck_assert_str_eq(r.advice[0].changes[0].input, "gpu_memory_utilization");
    u = r.advice[0].changes[0].real_value;
    ck_assert(u < 1.0 && u >= 0.5);
    in.gpu_memory_utilization = u;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
    ck_assert((1 - u) * (double)r.per_gpu.capacity >=
              (double)(r.per_gpu.non_torch + r.per_gpu.cuda_graphs));
    in.gpu_memory_utilization = u + 0.01;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(!r.fits);

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-70b");
    in.quantization = CORE_QUANT_AWQ;
    in.base.gpu = core_gpu_find("rtx-4090");
    in.base.tp = 4;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(!r.fits);
    ck_assert_int_ge(r.advice_count, 2);
    ck_assert_str_eq(r.advice[0].code, "lower_gpu_memory_utilization");
    ck_assert_str_eq(r.advice[1].code, "enforce_eager");
    ck_assert(r.advice[1].changes[0].bool_value);
    in.enforce_eager = true;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(r.fits);
}
END_TEST

/* 4-bit weights at batch 1 (QA note "Open" 3). AWQ g128 stores b = 4/8 + (16 + 4)/(8 x 128) =
 * 0.5195 bytes per linear weight and multiplies in 16 bits. A small-M GEMM's time is
 * F (M + half) / R, half = 96 on Hopper measured on 2-byte tiles; with b-byte tiles the fixed part
 * is half x b / 2 = 24.9. Llama 3.1 70B at tp 4 on H100 SXM: R = 989.4e12 x 0.65 = 643e12,
 * hbm = 3.35e12 x 0.80 = 2.68e12; per GPU the linears are ~68.5e9 / 4 weights at b and the lm_head
 * 128,256 x 8,192 / 4 at 2 bytes, so the weight bytes per GEMM FLOP are (17.1e9 x 0.5195 +
 * 0.263e9 x 2) / (2 x 17.4e9) = 0.27 and the knee is 0.27 x R / hbm - 24.9 = 0.27 x 240 - 24.9
 * ~ 40 (Marlin stays memory-bound to batch ~16-32 and more). At batch 1 the weight read
 * (9.4e9 / 2.68e12 = 3.5 ms) beats the GEMMs (17.4e9 x 2 x 25.9 / 643e12 = 1.4 ms): hbm-bound.
 * Before the fix half stayed 96 (3.5 ms < 17.4e9 x 2 x 97 / 643e12 = 5.2 ms): compute, knee 1. */
START_TEST(awq_decode_memory_bound)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    struct core_serve_time_input t;
    struct core_serve_time tm;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-70b");
    in.base.gpu = core_gpu_find("h100-sxm");
    in.base.tp = 4;
    in.quantization = CORE_QUANT_AWQ;
    in.max_model_len = 2200;
    in.input_len = 2000;
    in.output_len = 200;
    in.concurrency = 1;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ck_assert(core_serve_time_possible(&r));
    core_serve_time_input_of(&r, &t);
    core_serve_time_compute(&t, NULL, &tm);
    ck_assert_int_eq(tm.bottleneck, CORE_SERVE_HBM);
    ck_assert(tm.decode.weights_hbm > 0);
    ck_assert(tm.knee_batch > 30 && tm.knee_batch < 50);
}
END_TEST

START_TEST(mxfp4_experts_only)
{
    ASSERT_I64(core_serve_weight_bytes(preset_arch("gpt-oss-20b"), CORE_QUANT_MXFP4, 0, 2, 1, 1, 1),
               INT64_C(13761264768));
}
END_TEST

/* GB200 and GB300 at their driver-reported memory, as every other NVIDIA row (catalog.c,
 * docs/serving.md "GPU catalog"): nvidia-smi prints 189,471 MiB on a GB200 and 284,208 MiB on a
 * GB300; less the ~0.5 GiB reserve that is 185.0303 - 0.5 = 184.53 GiB and 277.5469 - 0.5 =
 * 277.05 GiB, so round(184.53 x 2^30) = 198,137,578,783 B and round(277.05 x 2^30) =
 * 297,480,172,339 B - each under its nvidia-smi total (198,674,743,296 and 298,013,687,808 B) and
 * above the nominal 186e9 / 288e9 B these rows were sized at. A replica's capacity is that figure:
 * Llama 3 8B bf16 under vLLM on one GB200. */
START_TEST(gb200_gb300_usable_memory)
{
    struct core_serve_input in;
    struct core_serve_result r;
    struct core_problems p = {0};
    int gb200 = core_gpu_find("gb200"), gb300 = core_gpu_find("gb300");

    ASSERT_I64(core_gpu_usable_bytes(gb200), 198137578783);
    ASSERT_I64(core_gpu_usable_bytes(gb300), 297480172339);
    ck_assert(core_gpu_usable_bytes(gb200) < 198674743296 &&
              core_gpu_usable_bytes(gb200) > 186000000000);
    ck_assert(core_gpu_usable_bytes(gb300) < 298013687808 &&
              core_gpu_usable_bytes(gb300) > 288000000000);
    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3-8b");
    in.base.gpu = gb200;
    in.max_model_len = 4096;
    in.input_len = 1024;
    in.output_len = 128;
    ck_assert_int_eq(core_serve(&in, &r, &p), CORE_OK);
    ASSERT_I64(r.per_gpu.capacity, 198137578783);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_serve");
    TCase *t = tcase_create("serve");

    tcase_add_test(t, kv_bytes_per_token);
    tcase_add_test(t, max_model_len_bound_is_the_config_positions);
    tcase_add_test(t, vllm_mla_on_hopper_pages_64_tokens);
    tcase_add_test(t, llamacpp_input_embedding_on_the_host);
    tcase_add_test(t, k26_blocks_tokens_concurrency);
    tcase_add_test(t, max_model_len_estimate_and_advice);
    tcase_add_test(t, weights_by_format);
    tcase_add_test(t, vllm_v1_budget);
    tcase_add_test(t, trtllm_budget_liveness);
    tcase_add_test(t, vllm_eager_profile_keeps_gate_up);
    tcase_add_test(t, contradictions_name_the_field);
    tcase_add_test(t, sglang_default_fraction);
    tcase_add_test(t, framework_profile_judged_against_usable_memory);
    tcase_add_test(t, hybrid_sliding_window_pool);
    tcase_add_test(t, sglang_hybrid_swa_pool);
    tcase_add_test(t, mxfp4_experts_only);
    tcase_add_test(t, request_longer_than_max_model_len);
    tcase_add_test(t, concurrency_above_pool_warns);
    tcase_add_test(t, vllm_block_sizes);
    tcase_add_test(t, cuda_graph_headroom_advice);
    tcase_add_test(t, awq_decode_memory_bound);
    tcase_add_test(t, gb200_gb300_usable_memory);
    tcase_add_test(t, concurrency_capped_advice);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
