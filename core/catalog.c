/*
 * catalog.c - the static tables: enum names, the GPU catalog and the model presets.
 *
 * Everything the model knows about hardware and published architectures lives here as data,
 * so adding a GPU or a preset is one row and no code. Peaks are dense (no sparsity) vendor
 * figures; capacities are nominal decimal GB. Preset rows carry the architecture, the count
 * the source publishes and the citation; core_arch_params() re-derives each count, and the
 * derived-vs-published table is in docs/model.md.
 */
#include <math.h>
#include <string.h>

#include "core.h"
#include "serve.h"
#include "internal.h"

const char *const core_precision_names[4] = {"bf16", "fp16", "fp32", "fp8"};
const char *const core_optimizer_names[7] = {"adamw",        "adam", "adamw_8bit", "sgd",
                                             "sgd_momentum", "lion", "adafactor"};
const char *const core_checkpointing_names[3] = {"none", "selective", "full"};
const char *const core_attention_flops_names[2] = {"full", "causal"};
const char *const core_count_names[3] = {"six_nd", "model", "hardware"};
const char *const core_bottleneck_names[3] = {"none", "state", "activations"};
const char *const core_offload_names[2] = {"none", "cpu"};
const char *const core_moe_dispatcher_names[CORE_MOE_DISPATCHER_COUNT] = {"alltoall", "deepep",
                                                                          "hybridep"};
/* /inference's names (serve.h); here with the other names, so the input table (inputs.c) needs
 * nothing from serve.c. */
const char *const core_engine_names[CORE_ENGINE_COUNT] = {"vllm", "vllm_v0", "sglang", "trtllm",
                                                          "llama.cpp"};
const char *const core_kv_dtype_names[CORE_KV_DTYPE_COUNT] = {"auto", "fp8", "fp8_e4m3",
                                                              "fp8_e5m2"};
const char *const core_shape_source_names[5] = {"preset", "architecture", "nearest_preset",
                                                "aspect_ratio", "config"};
const char *const core_framework_names[CORE_FW_COUNT] = {"generic",   "megatron",  "torchtitan",
                                                         "torchtune", "deepspeed", "hf_trainer"};
const char *const core_loss_names[CORE_LOSS_COUNT] = {"fp32_logits",  "vocab_parallel_fused",
                                                      "unfused_fp32", "compiled",
                                                      "chunked",      "unfused_fp32_shifted"};
const char *const core_memory_metric_names[CORE_METRIC_COUNT] = {"allocated", "reserved", "active",
                                                                 "device"};
const char *const core_generation_names[CORE_GEN_COUNT] = {
    [CORE_GEN_VOLTA] = "Volta",   [CORE_GEN_AMPERE] = "Ampere",       [CORE_GEN_ADA] = "Ada",
    [CORE_GEN_HOPPER] = "Hopper", [CORE_GEN_BLACKWELL] = "Blackwell", [CORE_GEN_CDNA3] = "CDNA3",
    [CORE_GEN_TPU] = "TPU",
};

/* ---------------------------------------------------------------------------------------------
 * GPU catalog. Columns: bf16, fp16, fp8, tf32 dense TFLOP/s (0 = unsupported), memory GB,
 * HBM TB/s, board watts (0 = unpublished); then the interconnect the time model uses: scale-up
 * GB/s per GPU per direction, scale-out network GB/s per GPU per direction, GPUs per scale-up
 * domain, generation. h100-sxm must stay first (CORE_GPU_DEFAULT); new rows go at the end.
 *
 * Interconnect sources (docs/model.md, "GPU catalog", has the table):
 *  - NVLink is quoted as a bidirectional total per GPU; per direction is half: A100 NVLink 3
 *    600 GB/s -> 300, H100/H200 NVLink 4 900 -> 450, B200/GB200 NVLink 5 1800 -> 900, V100
 *    NVLink 2 300 -> 150 (NVIDIA A100, H100, H200, B200, GB200 NVL72 and V100 datasheets).
 *  - PCIe cards without a full NVLink mesh talk over PCIe x16 per direction: Gen5 64 (H100
 *    PCIe), Gen4 32 (L40S).
 *  - Network: DGX reference designs put one NIC per GPU: DGX A100 8 x 200 Gb/s HDR -> 25 GB/s,
 *    DGX H100/H200 and DGX B200 8 x 400 Gb/s NDR -> 50, GB200 NVL72 one 400 Gb/s ConnectX per
 *    GPU -> 50, DGX-1 V100 4 x 100 Gb/s EDR per 8 GPUs -> 6.25. MI300X/MI325X platforms pair
 *    each GPU with a 400 Gb/s NIC -> 50. L40S and H100 PCIe servers: one 200 Gb/s NIC per GPU
 *    assumed -> 25 (no reference design).
 *  - MI300X/MI325X Infinity Fabric: 7 links x 64 GB/s per direction = 448 per GPU (AMD
 *    MI300X datasheet, 896 GB/s bidirectional aggregate).
 *  - TPU: ICI per chip 2400 Gb/s (v4) and 4800 Gb/s (v5p) per Google Cloud's TPU docs, taken as
 *    bidirectional -> 150 and 300 per direction; the ICI domain is the pod (4096 v4, 8960 v5p
 *    chips); the data-centre network between pods is assumed 12.5 / 25 GB/s per chip.
 *  - GB200 (one Blackwell GPU of a GB200 NVL72 rack, NVIDIA GB200 NVL72 datasheet): the rack's
 *    dense 180 PF bf16, 360 PF fp8 and 90 PF tf32 over 72 GPUs = 2500, 5000, 1250 TFLOP/s;
 *    13.5 TB HBM3e / 72 = 186 GB at 576 TB/s / 72 = 8 TB/s; ~1200 W per GPU (2700 W per
 *    superchip of 2 GPUs + 1 Grace, less the CPU); 72 GPUs in one NVLink domain.
 *  - GB300 (one Blackwell Ultra GPU of a GB300 NVL72 rack, NVIDIA GB300 NVL72 specifications):
 *    the rack's dense 180 PF bf16 and 360 PF fp8 over 72 GPUs = 2500 and 5000 TFLOP/s (tf32 as
 *    GB200, 1250); up to 288 GB HBM3e per GPU at 576 TB/s / 72 = 8 TB/s; 1400 W per GPU; the same
 *    72-GPU NVLink 5 domain (1.8 TB/s bidirectional -> 900); one 800 Gb/s ConnectX-8 SuperNIC per
 *    GPU -> 100; NVLink-C2C to Grace as GB200 -> 450. Blackwell Ultra drops the INT8 tensor
 *    rate (~0.17 POPS dense), so int8_tops is 0 (no INT8 tensor path).
 *  - pcie_gbs, the host link per GPU per direction (offload traffic): PCIe 5.0 x16 = 32 GT/s x
 *    16 lanes x 128/130 = 63 GB/s, rounded to 64 (H100, H200, B200 and MI300X/MI325X datasheets
 *    list PCIe Gen5 x16); PCIe 4.0 x16 = 32 (A100, L40S datasheets); PCIe 3.0 x16 = 16 (V100).
 *    GB200: NVLink-C2C to its Grace CPU, 900 GB/s bidirectional = 450 per direction (GB200
 *    datasheet). TPU hosts: assumed 16 (v4) and 32 (v5p), no published per-chip figure.
 * ------------------------------------------------------------------------------------------- */

/* Where a row's usable (driver-reported) memory comes from: a start-up log that prints it
 * (vLLM's total_gpu_memory), or nvidia-smi / rocm-smi's total less the ~0.5 GiB the driver keeps
 * (the gap between nvidia-smi and cudaMemGetInfo on the logged parts), or nothing published
 * (the nominal capacity is used). GB200 and GB300 (no start-up log found): nvidia-smi
 * --query-gpu=memory.total prints 189,471 MiB on a GB200 and 284,208 MiB on a GB300 (public run
 * logs of GB200 / GB300 NVL72 nodes, drivers 580.95 and 580.105), less the ~0.5 GiB reserve as
 * for the other nvidia-smi rows: 189,471 / 1024 - 0.5 = 184.53 GiB, 284,208 / 1024 - 0.5 =
 * 277.05 GiB - above the nominal 186e9 B = 173.2 GiB and 288e9 B = 268.2 GiB, as the B200's
 * 183,359 MiB is above its nominal 180 GB. */
#define USABLE_LOG_H100   "vLLM start-up logs: total_gpu_memory 79.1-79.3 GiB on H100 80GB"
#define USABLE_LOG(what)  "a start-up log: total_gpu_memory " what
#define USABLE_SMI(what)  "nvidia-smi total " what " less the driver's reserve"
#define USABLE_ROCM(what) "rocm-smi total " what " less the driver's reserve"
#define NOMINAL           "no driver figure published: the nominal capacity"

const struct core_gpu core_gpus[] = {
    {"h100-sxm", "NVIDIA H100 SXM", 989.4, 989.4, 1978.9, 494.7, 80, 3.35, 700, 450, 50, 8,
     CORE_GEN_HOPPER, 64, 1978.9, 79.19, USABLE_LOG_H100},
    {"h100-pcie", "NVIDIA H100 PCIe", 756, 756, 1513, 378, 80, 2.0, 350, 64, 25, 8, CORE_GEN_HOPPER,
     64, 1513, 79.19, USABLE_LOG_H100},
    {"h200-sxm", "NVIDIA H200 SXM", 989.4, 989.4, 1978.9, 494.7, 141, 4.8, 700, 450, 50, 8,
     CORE_GEN_HOPPER, 64, 1978.9, 139.8, USABLE_SMI("143,771 MiB")},
    {"a100-sxm-80gb", "NVIDIA A100 SXM 80GB", 312, 312, 0, 156, 80, 2.039, 400, 300, 25, 8,
     CORE_GEN_AMPERE, 32, 624, 79.15, USABLE_SMI("81,920 MiB")},
    {"a100-sxm-40gb", "NVIDIA A100 SXM 40GB", 312, 312, 0, 156, 40, 1.555, 400, 300, 25, 8,
     CORE_GEN_AMPERE, 32, 624, 39.38, USABLE_LOG("39.38 GiB (serving-measured K08, K39)")},
    {"b200", "NVIDIA B200", 2250, 2250, 4500, 1100, 180, 8.0, 1000, 900, 50, 8, CORE_GEN_BLACKWELL,
     64, 4500, 178.36, USABLE_SMI("183,359 MiB")},
    {"mi300x", "AMD Instinct MI300X", 1307.4, 1307.4, 2614.9, 653.7, 192, 5.3, 750, 448, 50, 8,
     CORE_GEN_CDNA3, 64, 2614.9, 191.98, USABLE_ROCM("196,592 MiB")},
    {"mi325x", "AMD Instinct MI325X", 1307.4, 1307.4, 2614.9, 653.7, 256, 6.0, 1000, 448, 50, 8,
     CORE_GEN_CDNA3, 64, 2614.9, 255.98, USABLE_ROCM("262,128 MiB")},
    {"l40s", "NVIDIA L40S", 362, 362, 733, 183, 48, 0.864, 350, 32, 25, 8, CORE_GEN_ADA, 32, 733,
     44.42, USABLE_LOG("44.42 GiB (serving-measured K22, K23)")},
    /* Volta has fp16 tensor cores but no bf16 and no tf32. */
    {"v100-sxm-32gb", "NVIDIA V100 SXM2 32GB", 0, 125, 0, 0, 32, 0.9, 300, 150, 6.25, 8,
     CORE_GEN_VOLTA, 16, 0, 31.74, USABLE_SMI("32,510 MiB")},
    /* TPU matrix units are bf16 only. */
    {"tpu-v4", "Google TPU v4", 275, 0, 0, 0, 32, 1.2, 0, 150, 12.5, 4096, CORE_GEN_TPU, 16, 275, 0,
     NOMINAL},
    {"tpu-v5p", "Google TPU v5p", 459, 0, 0, 0, 95, 2.765, 0, 300, 25, 8960, CORE_GEN_TPU, 32, 918,
     0, NOMINAL},
    {"gb200", "NVIDIA GB200 (NVL72)", 2500, 2500, 5000, 1250, 186, 8.0, 1200, 900, 50, 72,
     CORE_GEN_BLACKWELL, 450, 5000, 184.53, USABLE_SMI("189,471 MiB")},
    /* Parts people serve on (datasheets cited in docs/serving.md, "GPU catalog"). GeForce
     * cards run 16-bit tensor math with fp32 accumulation at half their fp16-accumulate rate;
     * the table keeps the fp32-accumulate figure frameworks use. Turing (T4) has no bf16 and
     * shares Volta's time-model constants. */
    {"l4", "NVIDIA L4", 121, 121, 242, 60, 24, 0.3, 72, 32, 25, 8, CORE_GEN_ADA, 32, 242, 22.49,
     USABLE_LOG("23,034 MiB (serving-measured K35)")},
    {"a10", "NVIDIA A10", 125, 125, 0, 62.5, 24, 0.6, 150, 32, 25, 8, CORE_GEN_AMPERE, 32, 250,
     22.19, USABLE_SMI("23,028 MiB")},
    {"a10g", "NVIDIA A10G", 70, 70, 0, 35, 24, 0.6, 300, 32, 25, 8, CORE_GEN_AMPERE, 32, 140, 22.19,
     USABLE_SMI("23,028 MiB")},
    {"t4", "NVIDIA T4", 0, 65, 0, 0, 16, 0.32, 70, 16, 12.5, 8, CORE_GEN_VOLTA, 16, 130, 14.58,
     USABLE_SMI("15,360 MiB")},
    {"rtx-3090", "NVIDIA GeForce RTX 3090", 71, 71, 0, 35.6, 24, 0.936, 350, 32, 12.5, 8,
     CORE_GEN_AMPERE, 32, 284, 23.58, USABLE_LOG("23.58 GiB (serving-measured K19)")},
    {"rtx-4090", "NVIDIA GeForce RTX 4090", 165.2, 165.2, 330.3, 82.6, 24, 1.008, 450, 32, 12.5, 8,
     CORE_GEN_ADA, 32, 660.6, 23.64, USABLE_SMI("24,564 MiB")},
    {"rtx-5090", "NVIDIA GeForce RTX 5090", 209.5, 209.5, 419, 104.8, 32, 1.792, 575, 64, 12.5, 8,
     CORE_GEN_BLACKWELL, 64, 838, 31.36, USABLE_SMI("32,607 MiB")},
    {"rtx-a6000", "NVIDIA RTX A6000", 154.8, 154.8, 0, 77.4, 48, 0.768, 300, 32, 25, 8,
     CORE_GEN_AMPERE, 32, 309.7, 47.50, USABLE_LOG("47.50 GiB (serving-measured K29)")},
    {"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", 503.8, 503.8, 1007.6, 251.9, 96, 1.792, 600,
     64, 50, 8, CORE_GEN_BLACKWELL, 64, 1007.6, 94.97, USABLE_SMI("97,887 MiB")},
    /* Blackwell Ultra in a GB300 NVL72 rack (appended so the other rows keep their indices). */
    {"gb300", "NVIDIA GB300 (NVL72)", 2500, 2500, 5000, 1250, 288, 8.0, 1400, 900, 100, 72,
     CORE_GEN_BLACKWELL, 450, 0, 277.05, USABLE_SMI("284,208 MiB")},
};
const size_t core_gpu_count = sizeof core_gpus / sizeof core_gpus[0];

/* The configs' max_position_embeddings where they exceed the trained context (core.h). Sources:
 * Mistral-7B-v0.1 config.json (tests/validation/hf-configs.json: 32768); Qwen3-*-config.json
 * 40960 (test_hfconfig.c's Qwen3-30B-A3B); DeepSeek-V2-Lite (hf-configs.json), V2 and V3
 * 163840 with yarn factor 40 over 4096; Qwen2-57B-A14B 131072 (its row's comment). */
static const struct {
    const char *id;
    int64_t positions;
} preset_positions[] = {
    {"mistral-7b", 32768},        {"qwen3-30b-a3b", 40960}, {"qwen3-8b", 40960},
    {"qwen3-14b", 40960},         {"qwen3-32b", 40960},     {"qwen3-235b-a22b", 40960},
    {"deepseek-v2-lite", 163840}, {"deepseek-v2", 163840},  {"deepseek-v3", 163840},
    {"qwen2-57b-a14b", 131072},
};

int64_t core_preset_positions(int i)
{
    if (i < 0 || (size_t)i >= core_preset_count)
        return 0;
    for (size_t k = 0; k < sizeof preset_positions / sizeof preset_positions[0]; k++)
        if (strcmp(preset_positions[k].id, core_presets[i].id) == 0)
            return preset_positions[k].positions;
    return core_presets[i].context;
}

int64_t core_gpu_usable_bytes(int gpu)
{
    const struct core_gpu *g = &core_gpus[gpu];

    if (g->usable_gib > 0)
        return (int64_t)llround(g->usable_gib * 1073741824.0);
    return (int64_t)llround(g->memory_gb * 1e9);
}

/* ---------------------------------------------------------------------------------------------
 * Presets. Arch fields: L, d, a, k, h_d, f, V, gated, tied, learned_positions, rel. pos. proj.
 * ------------------------------------------------------------------------------------------- */

/* The original eleven fields in order; the MoE, MLA, bias and norm fields stay zero/false. */
#define ARCH(L, d, a, k, hd, f, V, gated, tied, pos, rel)                                          \
    {                                                                                              \
        .layers = (L), .hidden = (d), .heads = (a), .kv_heads = (k), .head_dim = (hd),             \
        .ffn_hidden = (f), .vocab = (V), .gated_mlp = (gated), .tied_embeddings = (tied),          \
        .learned_positions = (pos), .relative_position_projection = (rel)                          \
    }

#define BROWN  "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1"
#define LLAMA2 "Touvron et al. 2023, Llama 2, Table 1; Hugging Face config"
#define LLAMA3 "Llama Team 2024, The Llama 3 Herd of Models, Table 3; Hugging Face config"

#define LLAMA32 "Meta 2024, Llama 3.2 model card; Hugging Face config"

/* Qwen2.5 dense: V 152064, untied, gated, q/k/v biases, head size d / a. */
#define QWEN25(id, name, published, L, d, a, k, f)                                                 \
    {                                                                                              \
        id, name, "Qwen Team 2024, Qwen2.5 Technical Report, Table 1; Hugging Face config",        \
            published, 32768,                                                                      \
        {                                                                                          \
            .layers = (L), .hidden = (d), .heads = (a), .kv_heads = (k), .head_dim = (d) / (a),    \
            .ffn_hidden = (f), .vocab = 152064, .gated_mlp = true, .qkv_bias = true                \
        }                                                                                          \
    }

/* Qwen3 dense: V 151936, untied, gated, 8 KV heads of 128, QK-norm over the head size. */
#define QWEN3(id, name, published, L, d, a, f)                                                     \
    {                                                                                              \
        id, name, "Qwen Team 2025, Qwen3 Technical Report, Table 1; Hugging Face config",          \
            published, 32768,                                                                      \
        {                                                                                          \
            .layers = (L), .hidden = (d), .heads = (a), .kv_heads = 8, .head_dim = 128,            \
            .ffn_hidden = (f), .vocab = 151936, .gated_mlp = true, .qk_norm = CORE_QK_NORM_HEAD    \
        }                                                                                          \
    }

/* GPT-3: V 50257, tied, ungated, f = 4d, learned positions over a 2048 context. Brown et al.
 * publish two significant figures, so the derived count is checked by rounding to them; 1 %
 * holds except where that rounding is coarser (350M derives 355.6M, 1.3B 1.316B, 2.7B 2.652B). */
#define GPT3(id, name, published, L, d, a, hd)                                                     \
    {                                                                                              \
        id, name, BROWN, published, 2048,                                                          \
            ARCH(L, d, a, a, hd, 4 * (d), 50257, false, true, 2048, false)                         \
    }

const struct core_preset core_presets[] = {
    GPT3("gpt3-125m", "GPT-3 Small", 125e6, 12, 768, 12, 64),
    GPT3("gpt3-350m", "GPT-3 Medium", 350e6, 24, 1024, 16, 64),
    GPT3("gpt3-760m", "GPT-3 Large", 760e6, 24, 1536, 16, 96),
    /* Brown et al. list 24 heads of 128 for 1.3B, i.e. a*h_d = 3072 != d; that cannot give the
     * published 1.3B. 16 heads of 128 (a*h_d = d) is what reproduces the count. */
    GPT3("gpt3-1.3b", "GPT-3 XL", 1.3e9, 24, 2048, 16, 128),
    GPT3("gpt3-2.7b", "GPT-3 2.7B", 2.7e9, 32, 2560, 32, 80),
    GPT3("gpt3-6.7b", "GPT-3 6.7B", 6.7e9, 32, 4096, 32, 128),
    /* d = 5140 as printed in Table 2.1, with 40 heads of 128 (a*h_d = 5120). */
    GPT3("gpt3-13b", "GPT-3 13B", 13e9, 40, 5140, 40, 128),
    GPT3("gpt3-175b", "GPT-3 175B", 175e9, 96, 12288, 96, 128),
    {"llama2-7b", "Llama 2 7B", LLAMA2, 6.74e9, 4096,
     ARCH(32, 4096, 32, 32, 128, 11008, 32000, true, false, 0, false)},
    {"llama2-13b", "Llama 2 13B", LLAMA2, 13.0e9, 4096,
     ARCH(40, 5120, 40, 40, 128, 13824, 32000, true, false, 0, false)},
    /* Published as 70B; the Hugging Face card's exact count is 68.98B. */
    {"llama2-70b", "Llama 2 70B", LLAMA2, 69.0e9, 4096,
     ARCH(80, 8192, 64, 8, 128, 28672, 32000, true, false, 0, false)},
    {"llama3-8b", "Llama 3 8B", LLAMA3, 8.03e9, 8192,
     ARCH(32, 4096, 32, 8, 128, 14336, 128256, true, false, 0, false)},
    {"llama3-70b", "Llama 3 70B", LLAMA3, 70.6e9, 8192,
     ARCH(80, 8192, 64, 8, 128, 28672, 128256, true, false, 0, false)},
    /* Published as 405B; the exact count is 405.9B. */
    {"llama3.1-405b", "Llama 3.1 405B", LLAMA3, 405e9, 131072,
     ARCH(126, 16384, 128, 8, 128, 53248, 128256, true, false, 0, false)},
    /* Mistral 7B v0.1: trained context 8192, every layer a 4096-token sliding window (Table 1;
     * config.json `sliding_window` 4096). */
    {"mistral-7b",
     "Mistral 7B",
     "Jiang et al. 2023, Mistral 7B, Table 1",
     7.24e9,
     8192,
     {.layers = 32,
      .hidden = 4096,
      .heads = 32,
      .kv_heads = 8,
      .head_dim = 128,
      .ffn_hidden = 14336,
      .vocab = 32000,
      .gated_mlp = true,
      .sliding_window = 4096}},
    /* Transformer-XL relative positions add a d x (a h_d) projection per layer. */
    {"chinchilla-70b", "Chinchilla 70B",
     "Hoffmann et al. 2022, Training Compute-Optimal Large Language Models, Table 4", 70e9, 2048,
     ARCH(80, 8192, 64, 64, 128, 32768, 32000, false, false, 0, true)},
    /* ALiBi: no position embeddings. */
    {"mpt-7b", "MPT-7B", "MosaicML 2023, Introducing MPT-7B; Hugging Face config", 6.7e9, 2048,
     ARCH(32, 4096, 32, 32, 128, 16384, 50432, false, true, 0, false)},
    /* ---- Mixtures of experts (issue 13). Each row is its Hugging Face config.json read by the
     * rules in docs/architectures.md; tests/validation decodes the config text and checks the
     * row against it, the published total and the published active count. Appended at the end
     * so the indexes above stay put; nearest-preset inference skips these rows. ---- */
    /* 46.70B total, 12.88B active (Mistral: 46.7B and 12.9B): 8 experts, top 2, untied. */
    {"mixtral-8x7b",
     "Mixtral 8x7B",
     "Jiang et al. 2024, Mixtral of Experts, Section 2; Hugging Face config",
     46.7e9,
     32768,
     {.layers = 32,
      .hidden = 4096,
      .heads = 32,
      .kv_heads = 8,
      .head_dim = 128,
      .ffn_hidden = 14336,
      .vocab = 32000,
      .gated_mlp = true,
      .experts = 8,
      .experts_per_token = 2}},
    /* 140.63B total, 39.16B active (Mistral: 141B and 39B). */
    {"mixtral-8x22b",
     "Mixtral 8x22B",
     "Mistral AI 2024, Mixtral 8x22B announcement; Hugging Face config",
     141e9,
     65536,
     {.layers = 56,
      .hidden = 6144,
      .heads = 48,
      .kv_heads = 8,
      .head_dim = 128,
      .ffn_hidden = 16384,
      .vocab = 32768,
      .gated_mlp = true,
      .experts = 8,
      .experts_per_token = 2}},
    /* 14.32B total, 2.69B active: 60 experts of 1408, top 4, one shared expert of 5632 with its
     * sigmoid gate, q/k/v biases. */
    {"qwen1.5-moe-a2.7b",
     "Qwen1.5-MoE-A2.7B",
     "Qwen Team 2024, Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters; "
     "Hugging Face config",
     14.3e9,
     32768,
     {.layers = 24,
      .hidden = 2048,
      .heads = 16,
      .kv_heads = 16,
      .head_dim = 128,
      .ffn_hidden = 5632,
      .vocab = 151936,
      .gated_mlp = true,
      .qkv_bias = true,
      .experts = 60,
      .experts_per_token = 4,
      .moe_ffn_hidden = 1408,
      .shared_experts = 1,
      .shared_ffn_hidden = 5632,
      .shared_expert_gate = true}},
    /* 30.53B total, 3.35B active (Qwen: 30.5B and 3.3B): 128 experts of 768, top 8, QK-norm. */
    {"qwen3-30b-a3b",
     "Qwen3-30B-A3B",
     "Qwen Team 2025, Qwen3 Technical Report, Table 2; Hugging Face config",
     30.5e9,
     32768,
     {.layers = 48,
      .hidden = 2048,
      .heads = 32,
      .kv_heads = 4,
      .head_dim = 128,
      .ffn_hidden = 6144,
      .vocab = 151936,
      .gated_mlp = true,
      .qk_norm = CORE_QK_NORM_HEAD,
      .experts = 128,
      .experts_per_token = 8,
      .moe_ffn_hidden = 768}},
    /* 6.92B total, 1.28B active (6.9B and 1.3B): 64 experts of 1024, top 8, full-width QK-norm. */
    {"olmoe-1b-7b",
     "OLMoE-1B-7B",
     "Muennighoff et al. 2024, OLMoE: Open Mixture-of-Experts Language Models, Table 1; Hugging "
     "Face config (0924)",
     6.9e9,
     4096,
     {.layers = 16,
      .hidden = 2048,
      .heads = 16,
      .kv_heads = 16,
      .head_dim = 128,
      .ffn_hidden = 1024,
      .vocab = 50304,
      .gated_mlp = true,
      .qk_norm = CORE_QK_NORM_WIDTH,
      .experts = 64,
      .experts_per_token = 8}},
    /* 131.60B total, 36.47B active (Databricks: 132B and 36B): 16 experts, top 4, bias-free
     * LayerNorms. */
    {"dbrx",
     "DBRX",
     "Databricks 2024, Introducing DBRX; Hugging Face config",
     132e9,
     32768,
     {.layers = 40,
      .hidden = 6144,
      .heads = 48,
      .kv_heads = 8,
      .head_dim = 128,
      .ffn_hidden = 10752,
      .vocab = 100352,
      .gated_mlp = true,
      .experts = 16,
      .experts_per_token = 4}},
    /* MLA without q-LoRA; 15.71B total (DeepSeek: 15.7B). Layer 0 dense, then 64 routed experts
     * of 1408 (top 6) and 2 shared. */
    {"deepseek-v2-lite",
     "DeepSeek-V2-Lite",
     "DeepSeek-AI 2024, DeepSeek-V2, Appendix B; Hugging Face config",
     15.7e9,
     32768,
     {.layers = 27,
      .hidden = 2048,
      .heads = 16,
      .kv_heads = 16,
      .head_dim = 192,
      .ffn_hidden = 10944,
      .vocab = 102400,
      .gated_mlp = true,
      .experts = 64,
      .experts_per_token = 6,
      .moe_ffn_hidden = 1408,
      .shared_experts = 2,
      .dense_layers = 1,
      .kv_lora_rank = 512,
      .qk_nope_head_dim = 128,
      .qk_rope_head_dim = 64,
      .v_head_dim = 128}},
    /* MLA with q-LoRA 1536; 235.74B total, 21.38B active (DeepSeek: 236B and 21B). */
    {"deepseek-v2",
     "DeepSeek-V2",
     "DeepSeek-AI 2024, DeepSeek-V2, Section 3.1.2; Hugging Face config",
     236e9,
     131072,
     {.layers = 60,
      .hidden = 5120,
      .heads = 128,
      .kv_heads = 128,
      .head_dim = 192,
      .ffn_hidden = 12288,
      .vocab = 102400,
      .gated_mlp = true,
      .experts = 160,
      .experts_per_token = 6,
      .moe_ffn_hidden = 1536,
      .shared_experts = 2,
      .dense_layers = 1,
      .q_lora_rank = 1536,
      .kv_lora_rank = 512,
      .qk_nope_head_dim = 128,
      .qk_rope_head_dim = 64,
      .v_head_dim = 128}},
    /* 671.03B total, 37.55B active (DeepSeek: 671B and 37B); the multi-token-prediction module
     * (another 14B in the checkpoint) is not part of the published total. 3 dense layers, 256
     * routed experts (top 8) with the score-correction bias, 1 shared. */
    {"deepseek-v3",
     "DeepSeek-V3",
     "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Section 4.2; Hugging Face config",
     671e9,
     131072,
     {.layers = 61,
      .hidden = 7168,
      .heads = 128,
      .kv_heads = 128,
      .head_dim = 192,
      .ffn_hidden = 18432,
      .vocab = 129280,
      .gated_mlp = true,
      .experts = 256,
      .experts_per_token = 8,
      .moe_ffn_hidden = 2048,
      .shared_experts = 1,
      .router_bias = true,
      .router_groups = 8,
      .router_group_topk = 4,
      .dense_layers = 3,
      .q_lora_rank = 1536,
      .kv_lora_rank = 512,
      .qk_nope_head_dim = 128,
      .qk_rope_head_dim = 64,
      .v_head_dim = 128}},
    /* ---- Sliding-window attention (docs/architectures.md, "Attention layer types"). Each row
     * is its Hugging Face config read by those rules (tests/validation/test_attention_types.c).
     * Appended after the mixtures of experts; a bare N never borrows these shapes. ---- */
    /* Gemma 2 9B: 9,241,705,984 = 8,324,201,984 non-embedding (Table 2) + 256000 x 3584 tied;
     * four norms per layer; sliding (4096) and full layers alternate, sliding first. */
    {"gemma-2-9b",
     "Gemma 2 9B",
     "Gemma Team 2024, Gemma 2, Table 2; Hugging Face config",
     9.24e9,
     8192,
     {.layers = 42,
      .hidden = 3584,
      .heads = 16,
      .kv_heads = 8,
      .head_dim = 256,
      .ffn_hidden = 14336,
      .vocab = 256000,
      .gated_mlp = true,
      .tied_embeddings = true,
      .norms_per_layer = 4,
      .sliding_window = 4096,
      .layer_period = 2,
      .full_layers = 0x2}},
    /* Gemma 2 27B: 27,227,128,320 = 26,047,480,320 non-embedding + 256000 x 4608 tied. */
    {"gemma-2-27b",
     "Gemma 2 27B",
     "Gemma Team 2024, Gemma 2, Table 2; Hugging Face config",
     27.2e9,
     8192,
     {.layers = 46,
      .hidden = 4608,
      .heads = 32,
      .kv_heads = 16,
      .head_dim = 128,
      .ffn_hidden = 36864,
      .vocab = 256000,
      .gated_mlp = true,
      .tied_embeddings = true,
      .norms_per_layer = 4,
      .sliding_window = 4096,
      .layer_period = 2,
      .full_layers = 0x2}},
    /* Gemma 3 27B, the language model (27,009,346,304; the ~0.4B SigLIP vision encoder of the
     * published 27B checkpoint is not counted): QK-norm, four norms, five sliding layers of
     * 1024 then one full (sliding_window_pattern 6). */
    {"gemma-3-27b",
     "Gemma 3 27B",
     "Gemma Team 2025, Gemma 3 Technical Report, Table 1; Hugging Face config (text_config)",
     27e9,
     131072,
     {.layers = 62,
      .hidden = 5376,
      .heads = 32,
      .kv_heads = 16,
      .head_dim = 128,
      .ffn_hidden = 21504,
      .vocab = 262208,
      .gated_mlp = true,
      .tied_embeddings = true,
      .norms_per_layer = 4,
      .qk_norm = CORE_QK_NORM_HEAD,
      .sliding_window = 1024,
      .layer_period = 6,
      .full_layers = 0x20}},
    /* gpt-oss-20b: 20,914,757,184 total, 4,187,440,704 active (3,608,307,264 without the input
     * embedding; OpenAI: 20.91B and 3.61B). 32 experts with biases, top 4, router bias, q/k/v/o
     * biases, one sink per head; sliding (128) and full layers alternate, sliding first. */
    {"gpt-oss-20b",
     "gpt-oss-20b",
     "OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card, Table 1; Hugging Face config",
     20.91e9,
     131072,
     {.layers = 24,
      .hidden = 2880,
      .heads = 64,
      .kv_heads = 8,
      .head_dim = 64,
      .ffn_hidden = 2880,
      .vocab = 201088,
      .gated_mlp = true,
      .qkv_bias = true,
      .o_bias = true,
      .mlp_bias = true,
      .experts = 32,
      .experts_per_token = 4,
      .router_bias = true,
      .sliding_window = 128,
      .layer_period = 2,
      .full_layers = 0x2,
      .attention_sinks = true}},
    /* gpt-oss-120b: 116,829,156,672 total, 5,711,982,912 active (5,132,849,472 without the
     * input embedding; OpenAI: 116.83B and 5.13B). As 20b with 36 layers of 128 experts. */
    {"gpt-oss-120b",
     "gpt-oss-120b",
     "OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card, Table 1; Hugging Face config",
     116.83e9,
     131072,
     {.layers = 36,
      .hidden = 2880,
      .heads = 64,
      .kv_heads = 8,
      .head_dim = 64,
      .ffn_hidden = 2880,
      .vocab = 201088,
      .gated_mlp = true,
      .qkv_bias = true,
      .o_bias = true,
      .mlp_bias = true,
      .experts = 128,
      .experts_per_token = 4,
      .router_bias = true,
      .sliding_window = 128,
      .layer_period = 2,
      .full_layers = 0x2,
      .attention_sinks = true}},
    /* Qwen3-Next-80B-A3B: 79,674,391,296 total (Qwen: 80B; the checkpoint's multi-token-
     * prediction layer is not counted), 3,874,929,408 active with the input embedding and head
     * (3,252,599,552 without either; Qwen names it A3B). Hybrid: in every four layers three
     * Gated DeltaNet layers, then one gated full-attention layer; 512 experts, top 10, one
     * gated shared expert. */
    {"qwen3-next-80b-a3b",
     "Qwen3-Next-80B-A3B",
     "Qwen Team 2025, Qwen3-Next model card; Hugging Face config",
     80e9,
     262144,
     {.layers = 48,
      .hidden = 2048,
      .heads = 16,
      .kv_heads = 2,
      .head_dim = 256,
      .ffn_hidden = 5120,
      .vocab = 151936,
      .gated_mlp = true,
      .qk_norm = CORE_QK_NORM_HEAD,
      .experts = 512,
      .experts_per_token = 10,
      .moe_ffn_hidden = 512,
      .shared_experts = 1,
      .shared_ffn_hidden = 512,
      .shared_expert_gate = true,
      .layer_period = 4,
      .full_layers = 0x8,
      .linear_layers = 0x7,
      .linear_key_heads = 16,
      .linear_key_dim = 128,
      .linear_value_heads = 32,
      .linear_value_dim = 128,
      .linear_conv_kernel = 4,
      .attention_output_gate = true}},
    /* ---- Presets users ask for every day, several in the measured data (tests/validation
     * moe-measured.csv, peft-measured.csv). Each row is its Hugging Face config.json read by
     * docs/architectures.md; test_core_presets.c derives every count by hand and decodes the
     * config text to the same row. Appended last: a bare N never borrows these shapes. ---- */
    /* Llama 3.2: tied embeddings, 128k context (Meta model card: 1.23B and 3.21B). */
    {"llama3.2-1b", "Llama 3.2 1B", LLAMA32, 1.23e9, 131072,
     ARCH(16, 2048, 32, 8, 64, 8192, 128256, true, true, 0, false)},
    {"llama3.2-3b", "Llama 3.2 3B", LLAMA32, 3.21e9, 131072,
     ARCH(28, 3072, 24, 8, 128, 8192, 128256, true, true, 0, false)},
    /* Llama 3.1: the shapes of llama3-8b/70b with the 128k context. */
    {"llama3.1-8b", "Llama 3.1 8B", LLAMA3, 8.03e9, 131072,
     ARCH(32, 4096, 32, 8, 128, 14336, 128256, true, false, 0, false)},
    {"llama3.1-70b", "Llama 3.1 70B", LLAMA3, 70.6e9, 131072,
     ARCH(80, 8192, 64, 8, 128, 28672, 128256, true, false, 0, false)},
    /* Qwen2.5: q/k/v biases, untied, native context 32768 (the Instruct configs'
     * max_position_embeddings; 128k needs YaRN). Model cards: 7.61B, 14.7B, 32.5B, 72.7B. */
    QWEN25("qwen2.5-7b", "Qwen2.5-7B", 7.61e9, 28, 3584, 28, 4, 18944),
    QWEN25("qwen2.5-14b", "Qwen2.5-14B", 14.7e9, 48, 5120, 40, 8, 13824),
    QWEN25("qwen2.5-32b", "Qwen2.5-32B", 32.5e9, 64, 5120, 40, 8, 27648),
    QWEN25("qwen2.5-72b", "Qwen2.5-72B", 72.7e9, 80, 8192, 64, 8, 29568),
    /* Qwen3 dense: head_dim 128, QK-norm, no biases, untied, native context 32768. Model cards:
     * 8.2B, 14.8B, 32.8B. */
    QWEN3("qwen3-8b", "Qwen3-8B", 8.2e9, 36, 4096, 32, 12288),
    QWEN3("qwen3-14b", "Qwen3-14B", 14.8e9, 40, 5120, 40, 17408),
    QWEN3("qwen3-32b", "Qwen3-32B", 32.8e9, 64, 5120, 64, 25600),
    /* 235.09B total, 22.19B active (Qwen: 235B and 22B): 94 layers of 128 experts of 1536, top
     * 8, QK-norm, 4 KV heads. */
    {"qwen3-235b-a22b",
     "Qwen3-235B-A22B",
     "Qwen Team 2025, Qwen3 Technical Report, Table 2; Hugging Face config",
     235e9,
     32768,
     {.layers = 94,
      .hidden = 4096,
      .heads = 64,
      .kv_heads = 4,
      .head_dim = 128,
      .ffn_hidden = 12288,
      .vocab = 151936,
      .gated_mlp = true,
      .qk_norm = CORE_QK_NORM_HEAD,
      .experts = 128,
      .experts_per_token = 8,
      .moe_ffn_hidden = 1536}},
    /* Qwen2-57B-A14B: 57,408,658,944 total (Qwen2 report: 57.4B, 56.3B without embeddings),
     * 14,249,270,784 active (A14B): 64 experts of 2560, top 8, one gated shared expert of
     * 20480, q/k/v biases; 64k context (Qwen2 announcement; the config states 131072). */
    {"qwen2-57b-a14b",
     "Qwen2-57B-A14B",
     "Qwen Team 2024, Qwen2 Technical Report, Table 1; Hugging Face config",
     57.4e9,
     65536,
     {.layers = 28,
      .hidden = 3584,
      .heads = 28,
      .kv_heads = 4,
      .head_dim = 128,
      .ffn_hidden = 18944,
      .vocab = 151936,
      .gated_mlp = true,
      .qkv_bias = true,
      .experts = 64,
      .experts_per_token = 8,
      .moe_ffn_hidden = 2560,
      .shared_experts = 1,
      .shared_ffn_hidden = 20480,
      .shared_expert_gate = true}},
    /* Kimi K2: the DeepSeek-V3 architecture with 64 heads, 384 routed experts (top 8), 1 shared,
     * only layer 0 dense, vocab 163840; no multi-token-prediction layer in the release
     * (num_nextn_predict_layers 0). 1,026.41B total, 32.86B active (31.69B without the input
     * embedding); Moonshot: 1T total (one significant figure) and 32B active. */
    {"kimi-k2",
     "Kimi K2",
     "Kimi Team 2025, Kimi K2: Open Agentic Intelligence; Hugging Face config "
     "(moonshotai/Kimi-K2-Instruct)",
     1e12,
     131072,
     {.layers = 61,
      .hidden = 7168,
      .heads = 64,
      .kv_heads = 64,
      .head_dim = 192,
      .ffn_hidden = 18432,
      .vocab = 163840,
      .gated_mlp = true,
      .experts = 384,
      .experts_per_token = 8,
      .moe_ffn_hidden = 2048,
      .shared_experts = 1,
      .router_bias = true,
      .dense_layers = 1,
      .q_lora_rank = 1536,
      .kv_lora_rank = 512,
      .qk_nope_head_dim = 128,
      .qk_rope_head_dim = 64,
      .v_head_dim = 128}},
    /* Phi-4: 10 KV heads, no biases, untied, 16k context (Hugging Face count 14.7B). */
    {"phi-4", "Phi-4",
     "Abdin et al. 2024, Phi-4 Technical Report, Section 3; Hugging Face config (14.7B)", 14.7e9,
     16384, ARCH(40, 5120, 40, 10, 128, 17920, 100352, true, false, 0, false)},
    /* Mistral NeMo 12B: 32 heads of 128 (a h_d = 4096 < d 5120), untied, context 128000 (the
     * Base-2407 config's max_position_embeddings; Hugging Face count 12.2B). */
    {"mistral-nemo-12b", "Mistral NeMo 12B",
     "Mistral AI 2024, Mistral NeMo announcement; Hugging Face config (Mistral-Nemo-Base-2407, "
     "12.2B)",
     12.2e9, 128000, ARCH(40, 5120, 32, 8, 128, 14336, 131072, true, false, 0, false)},
};
const size_t core_preset_count = sizeof core_presets / sizeof core_presets[0];

int core_gpu_find(const char *id)
{
    if (id == NULL)
        return -1;
    for (size_t i = 0; i < core_gpu_count; i++)
        if (strcmp(core_gpus[i].id, id) == 0)
            return (int)i;
    return -1;
}

int core_preset_find(const char *id)
{
    if (id == NULL)
        return -1;
    for (size_t i = 0; i < core_preset_count; i++)
        if (strcmp(core_presets[i].id, id) == 0)
            return (int)i;
    return -1;
}

/* Catalog peak for a precision in TFLOP/s; 0 = the GPU lacks it. fp32 trains on tf32 units. */
double core_catalog_peak_tflops(int gpu, enum core_precision precision)
{
    const struct core_gpu *g = &core_gpus[gpu];

    switch (precision) {
    case CORE_PREC_FP16:
        return g->fp16_tflops;
    case CORE_PREC_FP32:
        return g->tf32_tflops;
    case CORE_PREC_FP8:
        return g->fp8_tflops;
    case CORE_PREC_BF16:
    default:
        return g->bf16_tflops;
    }
}
