/*
 * serve_checks.c - the engines' own refusals that core_serve() reproduces as a 422 (serve.h),
 * beyond the heads and the formats (serve.c): whether the GPU runs the model's dtype and weight
 * format, each engine's expert-parallel layouts, the quantized kernels' shape rule per
 * tensor-parallel rank, and vLLM's scheduler rule.
 * docs/serving.md ("Checks") has the rules and their sources.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "serve.h"
#include "serve_internal.h"
#include "serve_trace.h"

/* The CUDA compute capability of an NVIDIA row, read off the catalog's generation (sm 70
 * Volta, sm 75 Turing - the T4, the one Volta-generation row with INT8 tensor cores - sm 80 and
 * 86 Ampere, sm 89 Ada, sm 90 Hopper, sm 100 / 103 / 120 Blackwell); 0 for AMD and TPU rows,
 * whose kernels these capability rules do not describe. */
static int capability(int gpu)
{
    const struct core_gpu *g = &core_gpus[gpu];

    switch (g->generation) {
    case CORE_GEN_VOLTA:
        return g->int8_tops > 0 ? 75 : 70;
    case CORE_GEN_AMPERE:
        return 80;
    case CORE_GEN_ADA:
        return 89;
    case CORE_GEN_HOPPER:
        return 90;
    case CORE_GEN_BLACKWELL:
        /* The catalog's Blackwell rows: B200 and GB200 sm 100, GB300 (B300) sm 103, and the
         * GB20x parts - GeForce RTX 5090, RTX PRO 6000 Blackwell - sm 120. */
        return strncmp(g->id, "rtx", 3) == 0 ? 120 : strcmp(g->id, "gb300") == 0 ? 103 : 100;
    case CORE_GEN_CDNA3:
    case CORE_GEN_TPU:
        break;
    }
    return 0;
}

/* The smallest compute capability whose kernels load format q under engine e (0: no rule):
 * vLLM's QuantizationConfig.get_min_capability - fp8.py Fp8Config 80 (FP8 Marlin below sm 89),
 * awq.py AWQConfig 75 ("The AWQ kernel only supports Turing or newer GPUs"); SGLang loads the
 * same configs. TensorRT-LLM's FP8 linears and experts run FP8 x FP8 GEMMs, refused
 * below sm 89 - cpp/tensorrt_llm/plugins/mixtureOfExperts/
 * mixtureOfExpertsPlugin.cpp MixtureOfExpertsPlugin::init ("MoE FP8 is not supported for
 * architectures less than SM89"), cpp/tensorrt_llm/kernels/cutlass_kernels/fp8_rowwise_gemm/
 * fp8_rowwise_gemm_template.h CutlassFp8RowwiseGemmRunner::dispatchToArch (sm 89, 90, >= 120,
 * else "Arch unsupported"), and the per-tensor FP8Linear / FP8QDQLinearMethod GEMMs
 * (tensorrt_llm/quantization/layers.py, tensorrt_llm/_torch/modules/linear.py) go to cuBLASLt's
 * FP8 matmul (thop/cublasScaledMM.cpp, gemmPlugin use_fp8), which exists from sm 89. An FP8 KV
 * cache is not refused there: tensorrt_llm/builder.py build() only turns FP8 context FMHA off
 * below sm 89, so kv_cache_dtype has no capability rule here. */
static int min_capability(enum core_engine e, enum core_quant q)
{
    if (q == CORE_QUANT_FP8)
        return e == CORE_ENGINE_TRTLLM ? 89 : e == CORE_ENGINE_LLAMACPP ? 0 : 80;
    if (q == CORE_QUANT_AWQ && e != CORE_ENGINE_LLAMACPP)
        return 75;
    return 0;
}

/* TensorRT-LLM's trtllm-build refuses integer quantization on SM 10.x - tensorrt_llm/builder.py
 * build(): `if get_sm_version() >= 100 and get_sm_version() < 120:` it raises "INT8/INT4
 * quantization is not supported on SM>=100." for is_int8_weight_only(), is_int4_weight_only()
 * and has_int8_kv_cache(), "SmoothQuant is not supported on SM>=100." for
 * has_act_and_weight_quant(), and the same for per-channel or per-token scaling
 * (tensorrt_llm/quantization/mode.py: is_int4_weight_only = INT4_WEIGHTS alone within
 * INT4_WEIGHTS | INT8_WEIGHTS | ACTIVATIONS, so per-group W4A16 too). memwall's awq and gptq are
 * TensorRT-LLM's W4A16_AWQ / W4A16_GPTQ (int4 weight-only, per group) and its int8 is W8A8
 * (SmoothQuant, per-channel): all refused on B200, GB200 and GB300, none on the sm 120 parts.
 * memwall has no int8 KV cache, so kv_cache_dtype meets no such rule. Returns the builder's
 * words, or NULL. */
static const char *trtllm_sm100_refusal(enum core_engine e, enum core_quant q, int cc)
{
    if (e != CORE_ENGINE_TRTLLM || cc < 100 || cc >= 120)
        return NULL;
    if (q == CORE_QUANT_AWQ || q == CORE_QUANT_GPTQ)
        return "INT8/INT4 quantization is not supported on SM>=100";
    if (q == CORE_QUANT_INT8)
        return "SmoothQuant is not supported on SM>=100";
    return NULL;
}

/* The one rule on which catalog parts the serving model describes under engine e (both
 * /inference's check and /inference/plan's search ask it): the GPUs only. Its memory terms are
 * CUDA / ROCm ones - torch.cuda's caching allocator, the CUDA graphs, cuBLAS workspaces, NCCL
 * buffers (docs/serving.md, "Checks") - and vLLM's and SGLang's TPU back-ends (JAX / XLA) size
 * memory their own way, so a TPU row is no part any modelled engine runs on. */
/* Why engine e is not modelled on catalog row gpu, or NULL when it is. No engine is modelled on
 * a TPU (vLLM's and SGLang's TPU back-ends size memory through XLA, not the caching allocator);
 * TensorRT-LLM builds CUDA engines only (NVIDIA GPUs), while vLLM, SGLang and llama.cpp also run
 * on ROCm. */
static const char *engine_part_refusal(enum core_engine e, int gpu)
{
    enum core_gpu_generation g = core_gpus[gpu].generation;

    if (g == CORE_GEN_TPU)
        return "the serving model describes GPUs only (CUDA / ROCm memory: the caching "
               "allocator, CUDA graphs, NCCL), not its TPU back-end";
    if (e == CORE_ENGINE_TRTLLM && g == CORE_GEN_CDNA3)
        return "TensorRT-LLM builds CUDA engines for NVIDIA GPUs only";
    return NULL;
}

bool core_serve_engine_models(enum core_engine e, int gpu)
{
    return gpu >= 0 && (size_t)gpu < core_gpu_count && engine_part_refusal(e, gpu) == NULL;
}

bool core_serve_gpu_runs(int gpu, enum core_precision precision, bool peak_given,
                         enum core_engine e, enum core_quant q)
{
    int cc = capability(gpu), need = min_capability(e, q);

    if (!core_serve_engine_models(e, gpu))
        return false;
    if (!peak_given && core_catalog_peak_tflops(gpu, precision) <= 0)
        return false; /* evaluate.c's rule: the catalog has no peak for the dtype */
    if (trtllm_sm100_refusal(e, q, cc) != NULL)
        return false;
    return cc == 0 || need == 0 || cc >= need;
}

void core_serve_check_capability(enum core_engine e, enum core_quant q, int gpu,
                                 struct core_problems *p)
{
    struct core_serve_resolved r = {.engine = e, .quantization = q};
    const struct core_serve_resolved *s = &r;
    int cc = capability(gpu), need = min_capability(e, q);

    if (!core_serve_engine_models(e, gpu)) {
        core_problem_add(p, "gpu", "%s is a %s part: under engine %s %s", core_gpus[gpu].id,
                         core_generation_names[core_gpus[gpu].generation], core_engine_names[e],
                         engine_part_refusal(e, gpu));
        return;
    }
    if (cc > 0 && need > 0 && cc < need)
        core_problem_add(p, "quantization",
                         "%s weights need compute capability %d.%d under %s "
                         "(get_min_capability of its quantization config); %s is %d.%d",
                         core_quant_names[s->quantization], need / 10, need % 10,
                         core_engine_names[s->engine], core_gpus[gpu].id, cc / 10, cc % 10);
    else if (trtllm_sm100_refusal(s->engine, s->quantization, cc) != NULL)
        core_problem_add(p, "quantization",
                         "%s is TensorRT-LLM's %s, refused on sm 100-119 (builder.py: "
                         "\"%s\"); %s is %d.%d",
                         core_quant_names[s->quantization],
                         s->quantization == CORE_QUANT_INT8 ? "W8A8 SmoothQuant"
                                                            : "int4 weight-only W4A16",
                         trtllm_sm100_refusal(s->engine, s->quantization, cc), core_gpus[gpu].id,
                         cc / 10, cc % 10);
}

/* One linear layer of a rank as vLLM's create_weights sees it. */
struct rank_linear {
    const char *name;
    int64_t in, out, tp_in; /* input size, output size, and the divisor of the input (row) */
};

/*
 * AWQ and GPTQ per tensor-parallel rank (vLLM, SGLang): awq.py and gptq.py create_weights raise
 * when input_size_per_partition % group_size != 0 or output_size_per_partition % pack_factor
 * != 0 (8 4-bit codes per int32), and the Marlin kernels they run on sm >= 80
 * (marlin_utils.py verify_marlin_supports_shape) ask the same of the group. Column-parallel
 * layers (q, k, v, gate, up) keep every input channel and split the output; row-parallel ones
 * (o, down) split the input over tp. The MoE layers (fused MoE kernels, shared experts) and MLA
 * attention are not checked.
 */
static void check_group_shapes(const struct core_arch *a, const struct core_serve_resolved *s,
                               struct core_problems *p)
{
    int64_t tp = s->tp, g = s->quant_group_size, kv = core_serve_kv_heads_per_rank(a->kv_heads, tp);
    struct rank_linear l[4];
    int n = 0;

    if ((s->quantization != CORE_QUANT_AWQ && s->quantization != CORE_QUANT_GPTQ) || g <= 0 ||
        s->engine == CORE_ENGINE_TRTLLM || s->engine == CORE_ENGINE_LLAMACPP)
        return;
    if (a->kv_lora_rank == 0) {
        l[n++] =
            (struct rank_linear){"qkv_proj", a->hidden, (a->heads / tp + 2 * kv) * a->head_dim, 1};
        l[n++] = (struct rank_linear){"o_proj", a->heads * a->head_dim, a->hidden, tp};
    }
    if (core_arch_moe_layers(a) < a->layers) {
        l[n++] = (struct rank_linear){"gate_up_proj", a->hidden,
                                      (a->gated_mlp ? 2 : 1) * a->ffn_hidden / tp, 1};
        l[n++] = (struct rank_linear){"down_proj", a->ffn_hidden, a->hidden, tp};
    }
    for (int i = 0; i < n; i++) {
        int64_t in = l[i].in / l[i].tp_in;

        if (in % g != 0) {
            core_problem_add(p, l[i].in % g == 0 ? "tp" : "quant_group_size",
                             "%s at tp %lld: %s has %lld input channels per rank, not a multiple "
                             "of the group size %lld (vLLM %s.py create_weights: "
                             "input_size_per_partition %% group_size)",
                             core_quant_names[s->quantization], (long long)tp, l[i].name,
                             (long long)in, (long long)g, core_quant_names[s->quantization]);
            return;
        }
        if (l[i].out % 8 != 0) {
            core_problem_add(p, "tp",
                             "%s at tp %lld: %s has %lld output channels per rank, not a "
                             "multiple of the 8 4-bit codes packed per int32 (vLLM %s.py "
                             "create_weights: output_size_per_partition %% pack_factor)",
                             core_quant_names[s->quantization], (long long)tp, l[i].name,
                             (long long)l[i].out, core_quant_names[s->quantization]);
            return;
        }
    }
}

/*
 * vLLM's scheduler rule (vllm/config/scheduler.py, SchedulerConfig.verify_max_model_len in the
 * 0.10-0.11 releases, _verify_args before, the same two checks since v0.2): max_num_batched_tokens
 * >= max_num_seqs (every scheduled sequence gets a token per step), and without chunked prefill
 * >= max_model_len (a prompt is prefilled in one step). V1 always chunks its prefill; V0 chunks
 * only above 32k (arg_utils.py) and the vllm_0.2 / vllm_0.4 releases modelled here never did.
 */
void core_serve_check_scheduler(const struct core_serve_input *in,
                                const struct core_serve_resolved *s, struct core_problems *p)
{
    const char *field = in->max_num_batched_tokens > 0 ? "max_num_batched_tokens" : "max_num_seqs";
    bool chunked =
        s->engine == CORE_ENGINE_VLLM ||
        (!core_serve_releases[s->engine_version].prefill_whole && s->max_model_len > 32768);

    if (s->engine != CORE_ENGINE_VLLM && s->engine != CORE_ENGINE_VLLM_V0)
        return;
    if (s->max_num_batched_tokens < s->max_num_seqs)
        core_problem_add(p, field,
                         "max_num_batched_tokens %lld is below max_num_seqs %lld: vLLM refuses it "
                         "(vllm/config/scheduler.py, SchedulerConfig)",
                         (long long)s->max_num_batched_tokens, (long long)s->max_num_seqs);
    else if (!chunked && s->max_num_batched_tokens < s->max_model_len)
        core_problem_add(p, in->max_num_batched_tokens > 0 ? field : "max_model_len",
                         "max_num_batched_tokens %lld is below max_model_len %lld without chunked "
                         "prefill: vLLM refuses it (vllm/config/scheduler.py, SchedulerConfig)",
                         (long long)s->max_num_batched_tokens, (long long)s->max_model_len);
}

/*
 * Expert parallelism as each engine defines and validates it (docs/serving.md, "Checks"); W =
 * moe_width, the ranks of a stage the MoE layers span:
 *  - vLLM: --enable-expert-parallel is a switch: the EP group is all W = tp x dp ranks
 *    (FusedMoEParallelConfig.make: use_ep -> ep_size = the flattened tp x dp size, the experts'
 *    tp 1), so ep is 1 or W. E need not divide: determine_expert_map gives the first E mod ep
 *    ranks one more. Without EP the experts are split W ways: FusedMoEConfig.__post_init__
 *    asserts intermediate_size % tp_size == 0. No expert parallelism before 0.8 (PR #14305).
 *  - SGLang: --ep-size splits its tp_size (W) group: moe_tp_size = tp_size / ep_size
 *    (distributed/parallel_state.py, initialize_model_parallel), and FusedMoE
 *    (layers/moe/fused_moe_triton/layer.py) asserts num_experts % moe_ep_size == 0 and
 *    intermediate_size % moe_tp_size == 0.
 *  - TensorRT-LLM: Mapping (tensorrt_llm/mapping.py) raises "tp_size must equal to moe_tp_size
 *    * moe_ep_size * moe_cluster_size" (moe_tp_size = tp_size // moe_ep_size when only ep is
 *    given), its MoE modules assert num_experts % ep_size == 0 (tensorrt_llm/_torch/modules/
 *    fused_moe), and with attention DP (enable_attention_dp, the dp groups of W) attention and
 *    the dense MLP run unsplit on each rank (tp 1).
 *  - llama.cpp: no expert parallelism (--split-mode none, layer or row).
 */
static void check_experts(const struct core_arch *a, const struct core_serve_resolved *s,
                          struct core_problems *p)
{
    int64_t E = a->experts, ep = s->ep, W = s->moe_width;
    int64_t f = a->moe_ffn_hidden > 0 ? a->moe_ffn_hidden : a->ffn_hidden;
    bool vllm = s->engine == CORE_ENGINE_VLLM || s->engine == CORE_ENGINE_VLLM_V0;

    if (E == 0)
        return; /* ep > 1 on a dense model: serve.c's check_parallel */
    if (ep > 1 && (s->engine == CORE_ENGINE_LLAMACPP ||
                   (vllm && s->engine_version != CORE_VERSION_CURRENT))) {
        core_problem_add(
            p, "ep", "ep = %lld: %s has no expert parallelism (%s); ep must be 1", (long long)ep,
            s->engine == CORE_ENGINE_LLAMACPP ? "llama.cpp"
                                              : core_serve_releases[s->engine_version].name,
            s->engine == CORE_ENGINE_LLAMACPP
                ? "it splits a model by --split-mode none, layer or row"
                : "vLLM added --enable-expert-parallel in 0.8, PR #14305");
        return;
    }
    if (vllm) {
        if (ep > 1 && ep != W)
            core_problem_add(p, "ep",
                             "ep = %lld: vLLM's --enable-expert-parallel spreads the experts over "
                             "the tp x dp = %lld GPUs of a stage (gpus %lld / pp %lld; "
                             "FusedMoEParallelConfig: ep_size = tp_size x dp_size): ep is 1 or "
                             "%lld",
                             (long long)ep, (long long)W, (long long)s->gpus, (long long)s->pp,
                             (long long)W);
        else if (ep == 1 && f % W != 0)
            core_problem_add(p, "tp",
                             "the experts' %lld intermediate channels do not split over the %lld "
                             "tp x dp GPUs of a stage (vLLM FusedMoEConfig: intermediate_size %% "
                             "tp_size); expert parallelism (ep %lld) keeps them whole",
                             (long long)f, (long long)W, (long long)W);
        return;
    }
    if (W % ep != 0)
        core_problem_add(p, "ep",
                         "ep = %lld does not divide the %lld GPUs of a pipeline stage (gpus %lld "
                         "/ pp %lld): %s",
                         (long long)ep, (long long)W, (long long)s->gpus, (long long)s->pp,
                         s->engine == CORE_ENGINE_SGLANG
                             ? "SGLang splits its tp_size by ep_size (parallel_state.py: "
                               "moe_tp_size = tp_size / ep_size)"
                             : "TensorRT-LLM's Mapping asks tp_size = moe_tp_size x "
                               "moe_ep_size (tensorrt_llm/mapping.py)");
    else if (E % ep != 0)
        core_problem_add(p, "ep",
                         "ep = %lld must divide the model's %lld routed experts (%s requires "
                         "num_experts %% ep_size == 0)",
                         (long long)ep, (long long)E,
                         s->engine == CORE_ENGINE_SGLANG ? "SGLang's FusedMoE"
                                                         : "TensorRT-LLM's MoE");
    else if (s->engine == CORE_ENGINE_SGLANG && f % (W / ep) != 0)
        core_problem_add(p, "ep",
                         "the experts' %lld intermediate channels do not split over SGLang's "
                         "moe_tp_size = %lld / ep %lld = %lld (FusedMoE: intermediate_size %% "
                         "moe_tp_size)",
                         (long long)f, (long long)W, (long long)ep, (long long)(W / ep));
    if (s->engine == CORE_ENGINE_TRTLLM && W > s->tp && s->tp > 1)
        core_problem_add(p, "tp",
                         "gpus %lld over pp %lld hold %lld attention groups of tp %lld: "
                         "TensorRT-LLM's attention DP (enable_attention_dp) runs attention and "
                         "the dense layers unsplit on each of the %lld GPUs, so tp is 1 there",
                         (long long)s->gpus, (long long)s->pp, (long long)(W / s->tp),
                         (long long)s->tp, (long long)W);
}

void core_serve_check_rules(const struct core_serve_input *in, const struct core_resolved *m,
                            const struct core_serve_resolved *s, struct core_problems *p)
{
    core_serve_check_capability(s->engine, s->quantization, m->gpu, p);
    check_experts(&m->shape.arch, s, p);
    check_group_shapes(&m->shape.arch, s, p);
    core_serve_check_scheduler(in, s, p);
}
