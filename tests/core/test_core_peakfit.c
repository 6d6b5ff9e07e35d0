/*
 * test_core_peakfit.c - /fit's verdict with a framework profile: the device peak is judged,
 * not the ledger (docs/model.md, "Fit"; docs/frameworks.md). The peak's own numbers are
 * validated against measured runs in tests/validation/test_memory.c; here the rule is tested.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "peak.h"

/* Llama 3 8B on 8 GPUs, s 8192, b 1, FlashAttention, selective recompute, ZeRO-3. */
static void llama8b(struct core_input *in)
{
    core_input_init(in);
    in->preset = core_preset_find("llama3-8b");
    in->gpus = 8;
    in->seq_len = 8192;
    in->flash_attention = CORE_FLAG_YES;
    in->checkpointing = CORE_CKPT_SELECTIVE;
}

/* The megatron profile's gradients at the optimizer step on the only stage (pp 1). */
static double megatron_step_grads(int zero, struct core_result *r)
{
    struct core_input in;
    struct core_peak_options o;
    static struct core_peak pk;

    llama8b(&in);
    in.preset = core_preset_find("llama2-7b");
    in.seq_len = 4096;
    in.framework = CORE_FW_MEGATRON;
    in.zero_stage = zero;
    EVAL_OK(in, *r);
    core_peak_options_resolved(&r->resolved, &o);
    core_peak_compute(&r->resolved, &o, &pk);
    return pk.stages[0][CORE_MOMENT_OPTIMIZER].grads;
}

/* zero_stage 2 under megatron is Megatron-FSDP's optim_grads (arguments.py:
 * --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads; Megatron-LM's distributed
 * optimizer alone shards only the optimizer state, stage 1). Llama 2 7B, N = 6,738,415,616 (the
 * published count), 8 GPUs as dp 8, bf16: Megatron keeps fp32 main gradients (b_g = 4).
 *   stage 1: the whole buffer, 4 N = 26,953,662,464 B
 *   stage 2: sharded over dp 8, 26,953,662,464 / 8 = 3,369,207,808 B
 * and stage 2 carries the warning zero2_megatron_fsdp; stage 1 does not. */
START_TEST(megatron_zero2_is_megatron_fsdp_optim_grads)
{
    static struct core_result r;

    ck_assert_double_eq(megatron_step_grads(1, &r), 26953662464.0);
    ASSERT_I64(r.resolved.params, INT64_C(6738415616));
    ck_assert_ptr_null(find_warning(&r, "zero2_megatron_fsdp"));
    ck_assert_double_eq(megatron_step_grads(2, &r), 3369207808.0);
    ck_assert_ptr_nonnull(find_warning(&r, "zero2_megatron_fsdp"));
}
END_TEST

START_TEST(generic_is_judged_by_the_ledger_and_reports_it_as_its_peak)
{
    struct core_input in;
    struct core_result r;

    llama8b(&in);
    EVAL_OK(in, r);
    ck_assert(!r.fit.judged_peak);
    /* generic: the peak is the ledger's total, at the end of the forward, on the only stage */
    ASSERT_I64(r.memory.peak.bytes, r.memory.total);
    ck_assert_str_eq(r.memory.peak.stage, "only");
    /* As the device shows it (docs/frameworks.md, "Constants"): the allocator's reserve, 1.08x
     * the ledger for eager blocks, plus the CUDA context (0.75 GiB = 805,306,368 bytes) and, with
     * 8 GPUs, the communicators' 0.75 GiB: well below the 80 GB cap here. */
    ASSERT_I64(r.memory.peak.device, llround(1.08 * (double)r.memory.total + 2.0 * 805306368.0));
    in.gpus = 1;
    in.preset = -1; /* the lesson's 7B on one GPU: 115,689,414,656 bytes, no communicator */
    in.seq_len = 512;
    in.flash_attention = CORE_FLAG_NO;
    in.checkpointing = CORE_CKPT_NONE;
    EVAL_OK(in, r);
    /* 115.69 GB is already over the 80 GB less the context: the allocator holds no more than
     * what is allocated (it would free its cache and retry), so device = ledger + context. */
    ASSERT_I64(r.memory.total, 115689414656LL);
    ASSERT_I64(r.memory.peak.device, 115689414656LL + 805306368LL);
}
END_TEST

START_TEST(a_profile_is_judged_by_its_device_peak)
{
    struct core_input in;
    struct core_result probe, r;
    int64_t ledger, device;

    llama8b(&in);
    in.framework = CORE_FW_MEGATRON;
    EVAL_OK(in, probe);
    ledger = probe.memory.total;
    device = probe.memory.peak.device;
    /* Megatron keeps fp32 main gradients and the device adds the CUDA context and NCCL
     * buffers, so its device peak lies above the lesson's ledger here. */
    ck_assert_int_gt(device, ledger);
    /* A capacity between the two: the ledger would fit, the device peak does not. */
    in.memory_gb = (double)(ledger + device) / 2.0 / 1e9;
    EVAL_OK(in, r);
    ck_assert(r.fit.judged_peak);
    ck_assert(!r.fit.fits);
    ck_assert_ptr_nonnull(find_note(r.warnings, r.warning_count, "peak_exceeds_capacity"));
    in.framework = CORE_FW_GENERIC; /* the same capacity judged by the ledger fits */
    EVAL_OK(in, r);
    ck_assert(r.fit.fits);
    ck_assert_ptr_null(find_note(r.warnings, r.warning_count, "peak_exceeds_capacity"));
}
END_TEST

/* Apply an advice note's batch, seq_len, checkpointing or flash_attention change to in; false
 * when it changes anything else (the GPU count, a layout). */
static bool apply_single_gpu_change(const struct core_note *n, struct core_input *in)
{
    for (int i = 0; i < n->change_count; i++) {
        const struct core_change *c = &n->changes[i];

        if (strcmp(c->input, "batch") == 0)
            in->batch = c->int_value;
        else if (strcmp(c->input, "seq_len") == 0)
            in->seq_len = c->int_value;
        else if (strcmp(c->input, "flash_attention") == 0)
            in->flash_attention = c->bool_value ? CORE_FLAG_YES : CORE_FLAG_NO;
        else if (strcmp(c->input, "checkpointing") == 0)
            in->checkpointing = strcmp(c->string_value, "full") == 0        ? CORE_CKPT_FULL
                                : strcmp(c->string_value, "selective") == 0 ? CORE_CKPT_SELECTIVE
                                                                            : CORE_CKPT_NONE;
        else
            return false;
    }
    return true;
}

/* Under a profile, fit.max_batch and the advice judge what the verdict judges (the device
 * peak), not the ledger. The case a user hit: Llama 3 8B under megatron on 8 H100s at T 2048
 * was told "micro-batch can grow to 6" (the ledger's search); at batch 6 the device peak
 * overflows by 0.79 GB and the advice was "reduce_batch to 6", the batch already asked. The
 * rule, for every profile: at max_batch it fits and at max_batch + 1 it does not; no advice
 * changes the batch to the batch asked; every advice that says "enough on its own", taken,
 * fits. */
START_TEST(a_profile_searches_and_advises_by_its_device_peak)
{
    static const enum core_framework fws[] = {CORE_FW_MEGATRON, CORE_FW_TORCHTITAN,
                                              CORE_FW_TORCHTUNE, CORE_FW_HF_TRAINER,
                                              CORE_FW_DEEPSPEED};

    for (size_t f = 0; f < sizeof fws / sizeof fws[0]; f++) {
        struct core_input in, at;
        struct core_result r, q;
        int64_t b;

        llama8b(&in);
        in.framework = fws[f];
        in.seq_len = 2048;
        EVAL_OK(in, r);
        b = r.fit.max_batch;
        ck_assert_msg(b >= 1, "framework %d: max_batch %lld", (int)fws[f], (long long)b);
        for (int64_t k = 0; k <= 1; k++) {
            at = in;
            at.batch = b + k;
            EVAL_OK(at, q);
            ck_assert_msg(q.fit.fits == (k == 0), "framework %d batch %lld: fits %d", (int)fws[f],
                          (long long)at.batch, (int)q.fit.fits);
            ASSERT_I64(q.fit.max_batch, b);
            for (int a = 0; a < q.advice_count; a++) {
                struct core_input taken = at;
                struct core_result t;
                const struct core_note *n = &q.advice[a];

                for (int c = 0; c < n->change_count; c++)
                    ck_assert_msg(strcmp(n->changes[c].input, "batch") != 0 ||
                                      n->changes[c].int_value != at.batch,
                                  "framework %d: %s keeps batch %lld", (int)fws[f], n->code,
                                  (long long)at.batch);
                if (strstr(n->message, "(enough on its own)") == NULL ||
                    !apply_single_gpu_change(n, &taken))
                    continue;
                EVAL_OK(taken, t);
                ck_assert_msg(t.fit.fits, "framework %d: %s taken does not fit", (int)fws[f],
                              n->code);
            }
        }
    }
}
END_TEST

/* The same for the fewest GPUs: Llama 3 70B at T 4096 (FlashAttention, full recompute) on one
 * H100 was told "shard it across >= 17 GPUs" under megatron (the ledger's 16 + the usable
 * capacity), and at 17 its device peak overflowed by 9.5 GB, where the advice then was context
 * parallelism and "reduce_seq_len" with no length. For every profile: at min_gpus it fits, one
 * GPU fewer does not, and shard_state names min_gpus. */
START_TEST(a_profile_shards_by_its_device_peak)
{
    static const enum core_framework fws[] = {CORE_FW_MEGATRON, CORE_FW_TORCHTITAN,
                                              CORE_FW_TORCHTUNE, CORE_FW_HF_TRAINER,
                                              CORE_FW_DEEPSPEED};

    for (size_t f = 0; f < sizeof fws / sizeof fws[0]; f++) {
        struct core_input in, at;
        struct core_result r, q;
        const struct core_note *n;
        int64_t g;

        core_input_init(&in);
        in.preset = core_preset_find("llama3-70b");
        in.seq_len = 4096;
        in.flash_attention = CORE_FLAG_YES;
        in.checkpointing = CORE_CKPT_FULL;
        in.framework = fws[f];
        EVAL_OK(in, r);
        ck_assert(!r.fit.fits);
        g = r.fit.min_gpus;
        ck_assert_int_gt(g, 1);
        n = find_note(r.advice, r.advice_count, "shard_state");
        ck_assert_ptr_nonnull(n);
        ck_assert_str_eq(n->changes[0].input, "gpus");
        ASSERT_I64(n->changes[0].int_value, g);
        for (int64_t k = -1; k <= 0; k++) {
            at = in;
            at.gpus = g + k;
            EVAL_OK(at, q);
            ck_assert_msg(q.fit.fits == (k == 0), "framework %d, %lld GPUs: fits %d", (int)fws[f],
                          (long long)at.gpus, (int)q.fit.fits);
        }
    }
}
END_TEST

/* The generic ledger of a fine-tune holds the frozen layer's transient full-size weight (QLoRA's
 * dequantized base, adapters.c) beside the activations, so its max_batch must count it: Llama 3
 * 8B QLoRA over tp 4 x dp 4 at T 2048 said "micro-batch can grow to 181", where 181 overflows by
 * 0.02 GB (the search priced state + activations only). At max_batch it fits, at +1 not. */
START_TEST(a_fine_tune_max_batch_counts_its_transient_weight)
{
    struct core_input in;
    struct core_result r, q;

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    in.gpus = 16;
    in.tp = 4;
    in.seq_len = 2048;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_FULL;
    in.batch = 4;
    in.finetune = CORE_FT_QLORA;
    EVAL_OK(in, r);
    ck_assert_int_gt(r.fit.max_batch, 4);
    for (int64_t k = 0; k <= 1; k++) {
        in.batch = r.fit.max_batch + k;
        EVAL_OK(in, q);
        ck_assert_msg(q.fit.fits == (k == 0), "batch %lld: fits %d", (long long)in.batch,
                      (int)q.fit.fits);
    }
}
END_TEST

static Suite *peakfit_suite(void)
{
    Suite *s = suite_create("core_peakfit");
    TCase *t = tcase_create("peakfit");

    tcase_add_test(t, generic_is_judged_by_the_ledger_and_reports_it_as_its_peak);
    tcase_add_test(t, a_profile_is_judged_by_its_device_peak);
    tcase_add_test(t, a_profile_searches_and_advises_by_its_device_peak);
    tcase_add_test(t, a_profile_shards_by_its_device_peak);
    tcase_add_test(t, megatron_zero2_is_megatron_fsdp_optim_grads);
    tcase_add_test(t, a_fine_tune_max_batch_counts_its_transient_weight);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(peakfit_suite());
}
