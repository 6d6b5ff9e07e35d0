/*
 * validation.c - the models' error on measured runs that informed none of their constants
 * (validation.h). Every figure is what `script/validate --cv` prints (test_throughput --cv,
 * test_memory --cv) over the CSVs of tests/validation, and the validation suites fail when the data
 * give another: change a constant or a row and this table must follow.
 *
 * A fold leaves one source out. The constants were chosen by hand, so no fold refits anything,
 * and a fold counts only when no constant was chosen looking at that source's rows ("unseen");
 * the sources that did inform one are "tuning" runs and are counted apart. Which constants were
 * chosen looking at which rows: docs/model.md ("Validation") and docs/frameworks.md.
 */
#include "validation.h"

/* Step time (tests/validation/throughput-calibration.csv and -tuning-2.csv): only A100 and
 * H100 runs were ever measured. */
const struct core_validation core_perf_validation[CORE_GEN_COUNT] = {
    /* LFH: llm-foundry's A100 FSDP rows of the second set; every calibration source (K22, N21,
     * LF, BL, VT) informed the Ampere constants. */
    [CORE_GEN_AMPERE] = {.expected_error = 0.117,
                         .unseen_runs = 10,
                         .tuning_runs = 94,
                         .unseen = "LFH"},
    /* TT: torchtitan's Float8 runs; LF's H100 rows set the first Hopper constants, NM, MB and L3
     * the current ones. */
    [CORE_GEN_HOPPER] = {.expected_error = 0.210,
                         .unseen_runs = 5,
                         .tuning_runs = 24,
                         .unseen = "TT"},
    [CORE_GEN_BLACKWELL] = {.expected_error = -1, .borrowed = "copied from Hopper"},
    [CORE_GEN_VOLTA] = {.expected_error = -1, .borrowed = "by analogy with Ampere"},
    [CORE_GEN_ADA] = {.expected_error = -1, .borrowed = "by analogy with Ampere and Hopper"},
    [CORE_GEN_CDNA3] = {.expected_error = -1, .borrowed = "by analogy with Ampere and Hopper"},
    [CORE_GEN_TPU] = {.expected_error = -1, .borrowed = "by analogy with Ampere and Hopper"},
};

/* Step time of MoE layouts (tests/validation/moe-measured.csv, test_moe_throughput): the mean
 * absolute step-time error over the rows no constant was chosen on - Megatron-Bridge's 25.11
 * table (6) and the 26.04.01 Kimi-K2 GB300 row (scored after the constants were set). Tuning:
 * the other 26.04.01 rows set MOE_SYNC_S and MOE_EXPERT_HOST_S (perf.c); the DeepSeek-V3 GB200
 * write-up's steps set perf.c's CG_* host shares (the deepep row's own 829.93 among them), the
 * DeepEP rates over NVL72 and the NCCL all-to-all's floor there, so its three rows are tuning
 * rows too. */
const struct core_validation core_perf_moe_validation = {
    .expected_error = 0.106,
    .unseen_runs = 7,
    .tuning_runs = 9,
    .unseen = "MB-2511, MB-26041-KIMI-GB300",
};

/* memory.peak (tests/validation/memory-measured.csv and -tuning-2.csv), per framework profile. */
const struct core_validation core_peak_validation[CORE_FW_COUNT] = {
    /* generic is the textbook ledger, not a framework's allocator: no profile to measure. */
    [CORE_FW_GENERIC] = {.expected_error = -1, .borrowed = "the ledger (no framework profile)"},
    /* MPP: Megatron-LM's pp 4 interleaved CI peaks; MLM and VSM set the profile. */
    [CORE_FW_MEGATRON] = {.expected_error = 0.041,
                          .unseen_runs = 3,
                          .tuning_runs = 5,
                          .unseen = "MPP"},
    /* TTH: torchtitan's 8B on H200; TT set the profile and TTB its TP, PP and loss terms. */
    [CORE_FW_TORCHTITAN] = {.expected_error = 0.046,
                            .unseen_runs = 2,
                            .tuning_runs = 18,
                            .unseen = "TTH"},
    [CORE_FW_TORCHTUNE] = {.expected_error = -1,
                           .tuning_runs = 7,
                           .borrowed = "its 7 measured peaks (TTN), all of which it was tuned on"},
    [CORE_FW_DEEPSPEED] = {.expected_error = -1, .borrowed = "no measured peak"},
    [CORE_FW_HF_TRAINER] = {.expected_error = -1, .borrowed = "no measured peak"},
};

/* memory.peak of adapter fine-tunes (tests/validation/peft-measured.csv, test_peft: the allocated
 * and nvidia-smi readings, each a peak, as the memory table counts them). The split was frozen
 * before any adapter term was chosen (PROVENANCE-peft.md): fms-acceleration's Mistral 7B runs
 * (FMS-M7B, 8 allocated + 8 nvidia-smi readings) and torchtune's Llama 3.2 3B ablation (TT32, 2)
 * informed the terms; fms-acceleration's Llama 2 70B QLoRA run on 2 GPUs informed nothing. */
const struct core_validation core_adapter_peak_validation[CORE_FW_COUNT] = {
    [CORE_FW_GENERIC] = {.expected_error = -1, .borrowed = "the ledger (no framework profile)"},
    [CORE_FW_MEGATRON] = {.expected_error = -1, .borrowed = "no measured adapter fine-tune"},
    [CORE_FW_TORCHTITAN] = {.expected_error = -1, .borrowed = "no measured adapter fine-tune"},
    [CORE_FW_TORCHTUNE] = {.expected_error = -1,
                           .tuning_runs = 2,
                           .borrowed = "its 2 measured adapter peaks (TT32), both of which "
                                       "informed its terms"},
    [CORE_FW_DEEPSPEED] = {.expected_error = -1, .borrowed = "no measured adapter fine-tune"},
    [CORE_FW_HF_TRAINER] = {.expected_error = 0.016,
                            .unseen_runs = 2,
                            .tuning_runs = 16,
                            .unseen = "FMS-L2-70B"},
};

const struct core_validation *core_peak_validation_of(const struct core_resolved *r)
{
    bool adapters = r->adapters.finetune != CORE_FT_FULL;

    return adapters ? &core_adapter_peak_validation[r->framework]
                    : &core_peak_validation[r->framework];
}
