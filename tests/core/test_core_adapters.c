/*
 * test_core_adapters.c - fine-tuning with adapters (core/adapters.c), every expected value derived
 * by hand below from the frameworks' code (docs/model.md, "Fine-tuning with adapters").
 *
 * The model is Llama 3 8B (preset llama3-8b): d = 4096, a = 32 heads, k = 8 KV heads of h_d =
 * 128 (GQA: q_proj is 4096 -> 4096, k_proj and v_proj 4096 -> 1024), f = 14336 gated, V =
 * 128256 untied, L = 32, N = 8,030,261,248:
 *   per layer: q, o 16,777,216; k, v 4,194,304; gate, up, down 58,720,256 -> 218,103,808 linear
 *   weights, plus two norms of 4096; embeddings 2 x 525,336,576; final norm 4096.
 *   decoder linears 32 x 218,103,808 = 6,979,321,856; the rest 1,050,939,392.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "internal.h" /* core_adapters_transient */
#include "peak.h"
#include "perf.h"

static struct core_result res;

static void llama3_8b(struct core_input *in, enum core_finetune ft)
{
    core_input_init(in);
    in->preset = core_preset_find("llama3-8b");
    in->finetune = ft;
}

/* LoRA A (in -> r) and B (r -> out) on q and v, r = 8 (PEFT's default targets):
 *   q_proj: 8 (4096 + 4096) = 65,536; v_proj: 8 (4096 + 1024) = 40,960 (GQA: a narrower out)
 *   per layer 106,496; x 32 = 3,407,872. */
START_TEST(gqa_adapter_counts)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_LORA);
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.adapters.trainable, 3407872);
    in.lora_targets = (int)CORE_MOD_BIT(CORE_MOD_Q);
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.adapters.trainable, 65536 * 32);
    in.lora_targets = (int)CORE_MOD_BIT(CORE_MOD_V);
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.adapters.trainable, 40960 * 32);
    /* all-linear at r = 16: q, o 16 x 8192; k, v 16 x 5120; gate, up, down 16 x 18432
     * -> 16 (2 x 8192 + 2 x 5120 + 3 x 18432) = 16 x 81,920 = 1,310,720 per layer, x 32. */
    in.lora_targets = (int)CORE_MOD_ALL_LINEAR;
    in.lora_rank = 16;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.adapters.trainable, 1310720LL * 32);
    /* DoRA adds a magnitude per output row: q 4096 + v 1024 per layer -> 3,407,872 + 163,840. */
    in.finetune = CORE_FT_DORA;
    in.lora_targets = -1;
    in.lora_rank = 8;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.adapters.trainable, 3407872 + 5120 * 32);
}
END_TEST

/* Bytes per weight of each layout, from its block structure:
 *   torchao NF4Tensor: 4-bit codes 1/2, an int8 scaler per 64 weights 1/64, a bf16 factor per
 *     256 scalers 2/(64*256): 0.5 + 0.015625 + 0.0001220703125 = 0.5157470703125;
 *   bitsandbytes, fp32 absmax per 64: 0.5 + 4/64 = 0.5625;
 *   bitsandbytes double-quantized: uint8 absmax per 64, fp32 absmax per 256 blocks:
 *     0.5 + 0.015625 + 0.000244140625 = 0.515869140625.
 * One 4096 x 4096 tensor (16,777,216 weights, 262,144 blocks, 1,024 groups):
 *   torchao 8,388,608 + 262,144 + 2 x 1,024 + 2 (mean) + 32 (table) = 8,652,834;
 *   bnb 8,388,608 + 4 x 262,144 = 9,437,184; bnb dq 8,388,608 + 262,144 + 4 x 1,024 + 4 =
 *   8,654,852; int8 16,777,216 + 4 x 4096 = 16,793,600. */
START_TEST(nf4_bytes_per_weight)
{
    ck_assert(core_base_quant_bytes_per_weight(CORE_BASEQ_NF4_TORCHAO) == 0.5157470703125);
    ck_assert(core_base_quant_bytes_per_weight(CORE_BASEQ_NF4_BNB) == 0.5625);
    ck_assert(core_base_quant_bytes_per_weight(CORE_BASEQ_NF4_BNB_DQ) == 0.515869140625);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_TORCHAO, 16777216, 4096), 8652834);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_BNB, 16777216, 4096), 9437184);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_BNB_DQ, 16777216, 4096), 8654852);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_INT8, 16777216, 4096), 16793600);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NONE, 16777216, 4096), 0);
}
END_TEST

/* The layouts are core/quant.c's rows; int8's per-row scale follows the tensor's own rows
 * (bitsandbytes Int8Params: one fp32 SCB per output row), not quant.c's 4096-wide default:
 *   Mistral 7B's down_proj, 14,336 in x 4,096 out = 58,720,256 weights: + 4 x 4,096 = 58,736,640
 *     (a 4096-wide block would give 4 x 14,336 = 57,344: 58,777,600);
 *   its k_proj, 4,096 in x 1,024 out = 4,194,304 weights: + 4 x 1,024 = 4,198,400.
 * The NF4 rows match quant.c's test (test_core_quant.c, 8,652,800 and 8,654,848 for 2^24
 * weights) plus the per-tensor objects: torchao 8,652,800 + 34, bitsandbytes dq 8,654,848 + 4. */
START_TEST(quant_layouts_shared)
{
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_INT8, 58720256, 4096), 58736640);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_INT8, 4194304, 1024), 4198400);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_TORCHAO, 16777216, 4096), 8652800 + 34);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_BNB_DQ, 16777216, 4096), 8654848 + 4);
    ck_assert(core_base_quant_bytes_per_weight(CORE_BASEQ_INT8) == 1.0009765625);
    ASSERT_I64(core_base_quant_tensor_bytes(CORE_BASEQ_NF4_BNB, INT64_MAX, 1), -1);
}
END_TEST

/* The frozen base of QLoRA, whole model:
 * torchtune (torchao NF4 on every decoder linear, the rest bf16): per layer 2 x 8,652,834 (q, o)
 *   + 2 x 2,163,234 (k, v: 2,097,152 + 65,536 + 2 x 256 + 34) + 3 x 30,284,834 (MLP:
 *   29,360,128 + 917,504 + 2 x 3,584 + 34) = 112,486,638; x 32 = 3,599,572,416; plus
 *   1,050,939,392 x 2 = 2,101,878,784 -> 5,701,451,200.
 * PEFT (bitsandbytes double-quantized; prepare_model_for_kbit_training makes the rest fp32):
 *   per layer 2 x 8,654,852 + 2 x 2,163,716 + 3 x 30,291,972 = 112,513,052; x 32 =
 *   3,600,417,664; plus 1,050,939,392 x 4 = 4,203,757,568 -> 7,804,175,232. */
START_TEST(qlora_frozen_base)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_QLORA);
    in.framework = CORE_FW_TORCHTUNE;
    EVAL_OK(in, res);
    ck_assert_int_eq(res.resolved.adapters.base_quant, CORE_BASEQ_NF4_TORCHAO);
    ASSERT_I64(res.memory.adapters.frozen, 5701451200LL);
    in.framework = CORE_FW_HF_TRAINER;
    EVAL_OK(in, res);
    ck_assert_int_eq(res.resolved.adapters.base_quant, CORE_BASEQ_NF4_BNB_DQ);
    ASSERT_I64(res.memory.adapters.frozen, 7804175232LL);
}
END_TEST

/* No gradient and no optimizer state for the frozen base. LoRA q, v (3,407,872 parameters)
 * under the ledger (PEFT's fp32 adapters, AdamW's fp32 m and v, no master copy):
 *   grads 3,407,872 x 4 = 13,631,488; optimizer 3,407,872 x 8 = 27,262,976;
 *   params N x 2 + 13,631,488 = 16,060,522,496 + 13,631,488 = 16,074,153,984.
 * torchtune (adapters in bf16, torch.optim states like the parameter): grads x 2 = 6,815,744,
 * optimizer x 4 = 13,631,488. */
START_TEST(frozen_base_has_no_state)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_LORA);
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.grads, 13631488);
    ASSERT_I64(res.memory.optimizer, 27262976);
    ASSERT_I64(res.memory.params, 16074153984LL);
    ASSERT_I64(res.memory.adapters.params, 13631488);
    ASSERT_I64(res.memory.adapters.frozen, 16060522496LL);
    in.framework = CORE_FW_TORCHTUNE;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.grads, 6815744);
    ASSERT_I64(res.memory.optimizer, 13631488);
    /* bf16 moments asked for under PEFT's rules: 3,407,872 x 4. */
    in.framework = CORE_FW_GENERIC;
    in.optimizer_state_dtype = CORE_STATE_BF16;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.optimizer, 13631488);
}
END_TEST

/* One activation inventory, LoRA on q and v, the ledger's Korthikanti table (10 d replicated +
 * 24 d split bytes per token and layer), FlashAttention (no score term), tp = 1:
 *   the QKV input (2 d) stays: q and v's lora_a read it; the MLP input (2 d, no gate/up adapter),
 *   the output projection's input (2 d, o frozen) and the second MLP GEMM's input (8 d, down
 *   frozen) are not saved for any weight gradient; each adapter's r-wide lora_a output is
 *   (2 r bytes, q and v): 8 d + 14 d + 4 r = 22 x 4096 + 32 = 90,144 bytes per token per layer.
 *   Layers: 512 tokens x 90,144 x 32 = 1,476,919,296; the fp32 logits 512 x 128,256 x 4 =
 *   262,668,288; total 1,739,587,584. */
START_TEST(lora_qv_activations)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_LORA);
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.activation_layers, 1476919296LL);
    ASSERT_I64(res.memory.activation_logits, 262668288LL);
    ASSERT_I64(res.memory.activations, 1739587584LL);
}
END_TEST

/* The same LoRA (q, v) under torchtune's profile, the PyTorch inventory of a compiled Llama block
 * with FlashAttention, bytes per token of one layer (peak.c, pytorch_layer): norm inputs 4 h,
 * norm outputs 4 d, attention 10 q (q, k and v repeated to 32 heads, the output and its copy),
 * the gated MLP 6 f: 16,384 + 16,384 + 40,960 + 86,016 = 159,744. The frozen base drops the MLP
 * norm output (2 d = 8,192: no gate/up adapter), the o_proj input copy (2 q = 8,192) and the
 * down_proj input (2 f = 28,672); the attention norm output stays (lora_a of q and v read it,
 * torchtune's adapters are bf16 like the model, so it is the same tensor); q and v add their
 * r-wide intermediates (2 x 2 x 8 = 32): 159,744 - 45,056 + 32 = 114,720.
 * End of the forward, 512 tokens: weights 16,060,522,496 + 3,407,872 x 2 = 16,067,338,240;
 * optimizer 3,407,872 x 4 (bf16 m, v like the bf16 adapters) = 13,631,488; no gradient yet;
 * activations 114,720 x 512 x 32 = 1,879,572,480; chunked compiled loss 2 bytes x 512 x 128,256
 * = 131,334,144: 18,091,876,352 bytes. */
START_TEST(lora_qv_torchtune_inventory)
{
    struct core_input in;
    struct core_peak_options o;
    struct core_peak pk;

    llama3_8b(&in, CORE_FT_LORA);
    in.framework = CORE_FW_TORCHTUNE;
    in.compile = true;
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, res);
    core_peak_options_resolved(&res.resolved, &o);
    core_peak_compute(&res.resolved, &o, &pk);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].weights, 16067338240.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].optimizer, 13631488.0, 1e-12);
    ck_assert(pk.stages[0][CORE_MOMENT_FORWARD_END].grads == 0);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].activations, 1879572480.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].logits, 131334144.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].total, 18091876352.0, 1e-12);
}
END_TEST

/* The top layer's backward without the logits' gradient (frozen output layer): the same LoRA
 * under full checkpointing, 512 tokens. Saved: each layer's input, 2 h = 8,192 bytes per token:
 * 8,192 x 512 x 32 = 134,217,728; the recomputed layer's working set is the inventory above,
 * 114,720 x 512 = 58,736,640. Logits 512 x 128,256 = 65,667,072; the compiled chunked loss
 * holds 2.25 bytes per logit at its backward (bf16 logits + one chunk's bf16 gradient):
 * 147,750,912. Instants of the backward (weights 16,067,338,240, optimizer 13,631,488):
 *   the loss's: + 134,217,728 + 147,750,912 = 16,362,938,368;
 *   the top layer's: + 134,217,728 + 58,736,640 = 16,273,924,096 (with the logits' 2 bytes
 *     per logit still counted it would be 16,405,258,240 and the peak);
 *   the end: + adapter gradients 6,815,744 + the first layer's input 4,194,304 + 58,736,640
 *     = 16,150,716,416.
 * So the backward moment is the loss's, and it is the peak (the forward's end holds 2 bytes per
 * logit: 16,346,521,600). */
START_TEST(lora_top_layer_without_logits_gradient)
{
    struct core_input in;
    struct core_peak_options o;
    struct core_peak pk;

    llama3_8b(&in, CORE_FT_LORA);
    in.framework = CORE_FW_TORCHTUNE;
    in.compile = true;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_FULL;
    EVAL_OK(in, res);
    core_peak_options_resolved(&res.resolved, &o);
    core_peak_compute(&res.resolved, &o, &pk);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_BACKWARD].activations, 134217728.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_BACKWARD].logits, 147750912.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_BACKWARD].total, 16362938368.0, 1e-12);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].total, 16346521600.0, 1e-12);
    ck_assert_int_eq((int)pk.at, (int)CORE_MOMENT_BACKWARD);
    ASSERT_REL(pk.allocated, 16362938368.0, 1e-12);
}
END_TEST

/* The hf_trainer profile's loss by transformers era, bytes per logit at the end of the forward,
 * 512 tokens x 128,256 (Llama 3 8B's vocabulary) = 65,667,072 logits:
 * - unfused_fp32 (the default; ForCausalLMLoss since PR #35646 pads and shifts the labels):
 *   the bf16 logits the model still references 2 + the fp32 upcast 4 + the fp32 log-softmax 4
 *   = 10 -> 656,670,720 bytes;
 * - unfused_fp32_shifted (transformers 4.46-4.48: logits[..., :-1, :].contiguous() of the fp32
 *   upcast, 4 more) = 14 -> 919,339,008 bytes. */
START_TEST(hf_loss_by_transformers_era)
{
    struct core_input in;
    struct core_peak_options o;
    struct core_peak pk;

    llama3_8b(&in, CORE_FT_LORA);
    in.framework = CORE_FW_HF_TRAINER;
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, res);
    core_peak_options_resolved(&res.resolved, &o);
    core_peak_compute(&res.resolved, &o, &pk);
    ck_assert_int_eq(pk.loss, CORE_LOSS_UNFUSED_FP32);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].logits, 656670720.0, 1e-12);
    in.loss = CORE_LOSS_UNFUSED_SHIFTED;
    EVAL_OK(in, res);
    core_peak_options_resolved(&res.resolved, &o);
    core_peak_compute(&res.resolved, &o, &pk);
    ASSERT_REL(pk.stages[0][CORE_MOMENT_FORWARD_END].logits, 919339008.0, 1e-12);
}
END_TEST

/* optimizer_state_dtype belongs to full training too: the lesson's 7B with bf16 moments keeps
 * 4 (master) + 4 (m, v in bf16) bytes per parameter in the optimizer: 7e9 x 8 = 56e9 bytes. */
START_TEST(bf16_states_full_training)
{
    struct core_input in;

    core_input_init(&in);
    in.optimizer_state_dtype = CORE_STATE_BF16;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.optimizer, 56000000000LL);
    ck_assert_int_eq(res.memory.bytes_per_param.moments, 4);
}
END_TEST

/* finetune full ignores every adapter input: the same figures as the defaults. */
START_TEST(full_ignores_adapter_inputs)
{
    static struct core_result plain;
    struct core_input in;

    core_input_init(&in);
    in.mfu = CORE_MFU_PREDICTED;
    EVAL_OK(in, plain);
    in.lora_rank = 64;
    in.lora_alpha = 128;
    in.lora_targets = (int)CORE_MOD_ALL_LINEAR;
    EVAL_OK(in, res);
    ASSERT_I64(res.memory.total, plain.memory.total);
    ASSERT_I64(res.memory.peak.bytes, plain.memory.peak.bytes);
    ck_assert(res.performance.step_seconds == plain.performance.step_seconds);
    ck_assert(res.flops.model == plain.flops.model);
    ASSERT_I64(res.memory.adapters.trainable, 0);
}
END_TEST

static const struct core_note *warning_named(const struct core_result *r, const char *code)
{
    for (int i = 0; i < r->warning_count; i++)
        if (strcmp(r->warnings[i].code, code) == 0)
            return &r->warnings[i];
    return NULL;
}

/* ...but says so (qa3 "Found" 10): lora_rank 64, lora_alpha 128 and lora_targets under finetune
 * full are named in a lora_inputs_ignored warning; the defaults alone raise none. Under
 * framework megatron (Megatron-LM's loop has no LoRA: NeMo / Megatron-Bridge run it) and
 * torchtitan (its LoRA converter is still being added, pytorch/torchtitan#2515) a LoRA or QLoRA
 * fine-tune warns adapters_not_in_framework; under torchtune (its own LoRA recipes) none. */
START_TEST(ignored_adapter_inputs_and_frameworks_warn)
{
    static struct core_result r;
    struct core_input in;
    const struct core_note *n;

    core_input_init(&in);
    EVAL_OK(in, r);
    ck_assert_ptr_null(warning_named(&r, "lora_inputs_ignored"));
    in.lora_rank = 64;
    in.lora_alpha = 128;
    in.lora_targets = (int)CORE_MOD_ALL_LINEAR;
    EVAL_OK(in, r);
    n = warning_named(&r, "lora_inputs_ignored");
    ck_assert_ptr_nonnull(n);
    ck_assert(strstr(n->message, "lora_rank") && strstr(n->message, "lora_alpha") &&
              strstr(n->message, "lora_targets"));

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    in.finetune = CORE_FT_LORA;
    in.framework = CORE_FW_MEGATRON;
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(warning_named(&r, "adapters_not_in_framework"));
    in.framework = CORE_FW_TORCHTITAN;
    in.finetune = CORE_FT_QLORA;
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(warning_named(&r, "adapters_not_in_framework"));
    in.framework = CORE_FW_TORCHTUNE;
    EVAL_OK(in, r);
    ck_assert_ptr_null(warning_named(&r, "adapters_not_in_framework"));
}
END_TEST

/* FLOPs per token with a frozen base: forward 2 N + 2 A + att/3, backward 2 N + 4 A + 2 att/3,
 * att = 12 L s (a h_d) = 12 x 32 x 512 x 4096 = 805,306,368. N = 8,030,261,248, A = 3,407,872:
 *   forward 16,060,522,496 + 6,815,744 + 268,435,456 = 16,335,773,696;
 *   backward 16,060,522,496 + 13,631,488 + 536,870,912 = 16,611,024,896. */
START_TEST(frozen_base_flops)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_LORA);
    EVAL_OK(in, res);
    ck_assert(res.flops.per_token.forward == 16335773696.0);
    ck_assert(res.flops.per_token.backward == 16611024896.0);
    ck_assert(res.flops.six_nd == 6.0 * 8030261248.0 * 1.4e12); /* the convention stays */
}
END_TEST

/* The optimizer step reads each adapter gradient, reads and writes the adapter and its two fp32
 * moments: 3 x 4 + 2 x 8 = 28 bytes per adapter parameter, over HBM at Hopper's element-wise
 * efficiency (0.80 of 3.35 TB/s): 3,407,872 x 28 / 2.68e12 s. The frozen base's weight GEMMs
 * run twice (forward, input gradient) instead of three times, so compute falls by at most a
 * third. */
START_TEST(frozen_base_step_time)
{
    static struct core_result full;
    struct core_input in;

    llama3_8b(&in, CORE_FT_FULL);
    in.mfu = CORE_MFU_PREDICTED;
    in.flash_attention = CORE_FLAG_YES;
    EVAL_OK(in, full);
    in.finetune = CORE_FT_LORA;
    EVAL_OK(in, res);
    ASSERT_REL(res.performance.breakdown.optimizer, 3407872.0 * 28.0 / (3.35e12 * 0.80), 1e-12);
    ck_assert(res.performance.breakdown.compute < full.performance.breakdown.compute);
    ck_assert(res.performance.breakdown.compute > full.performance.breakdown.compute * 2.0 / 3.0);
}
END_TEST

/* The adapters' element-wise bytes per token of one layer (adapters.c adapter_elt), LoRA r 8 on
 * q and v: inputs 4096 + 4096 = 8,192 elements, outputs 4096 + 1024 = 5,120.
 * torchtune (lora.py, all bf16): forward per input lora_a reads x (2); per output lora_b writes
 * (2), the scaling reads and writes (4), out + lora_out reads two and writes one (6): 12.
 * Backward per output: the scaling (4), lora_b's two GEMMs read the gradient (4): 8; per input:
 * lora_a reads x and writes dx (4), dx is summed into the base's (r 2 r 2 w 2): 10.
 *   forward 2 x 8192 + 12 x 5120 = 77,824; backward 10 x 8192 + 8 x 5120 = 122,880. */
START_TEST(lora_qv_elementwise_torchtune)
{
    struct core_input in;
    struct core_perf_input p;

    llama3_8b(&in, CORE_FT_LORA);
    in.framework = CORE_FW_TORCHTUNE;
    EVAL_OK(in, res);
    core_perf_input_resolved(&p, &res.resolved);
    ck_assert_double_eq(p.lora_fwd_bytes, 77824.0);
    ck_assert_double_eq(p.lora_bwd_bytes, 122880.0);
    ck_assert_double_eq(p.dequant_cast_bpw, 0.0);
}
END_TEST

/* PEFT (layer.py Linear.forward) on pure bf16 weights without autocast: fp32 adapters.
 * Forward per input: x.to(fp32) (r 2 w 4), lora_A reads it (4): 10; per output: lora_B writes
 * (4), * scaling (r 4 w 4), result + (r 2 r 4 w 4), .to(bf16) (r 4 w 2): 28.
 * Backward per output: the cast back's gradient (r 2 w 4), the add's gradient to the bf16 base
 * output (r 4 w 2), the scaling (8), lora_B's GEMMs (2 x 4): 28; per input: lora_A (r 4 w 4),
 * the cast's gradient (r 4 w 2), the sum into dx (6): 20.
 *   forward 10 x 8192 + 28 x 5120 = 225,280; backward 20 x 8192 + 28 x 5120 = 307,200. */
START_TEST(lora_qv_elementwise_peft_fp32)
{
    struct core_input in;
    struct core_perf_input p;

    llama3_8b(&in, CORE_FT_LORA);
    in.framework = CORE_FW_HF_TRAINER;
    in.master_weights = CORE_FLAG_NO;
    EVAL_OK(in, res);
    core_perf_input_resolved(&p, &res.resolved);
    ck_assert_double_eq(p.lora_fwd_bytes, 225280.0);
    ck_assert_double_eq(p.lora_bwd_bytes, 307200.0);
}
END_TEST

/* PEFT QLoRA (bnb.py Linear4bit) under bf16 autocast with the k-bit preparation's fp32 stream.
 * Adapters, forward per input: autocast casts x for lora_A (r 4 w 2), lora_A reads (2): 8; per
 * output: lora_B (2), scaling (4), fp32 result + bf16 output (r 4 r 2 w 4), the clone of the
 * base output (r 4 w 4): 24. Backward per output: the add's gradient cast to the bf16 branch
 * (r 4 w 2), scaling (4), lora_B (4): 14; per input: lora_A (4), the cast's gradient (6), the
 * fp32 sum into dx (12): 22.
 * The stream (bitsandbytes Linear4bit with fp32 x): every linear's input cast (r 4 w 2) and
 * output cast back (r 2 w 4): 6 x sum(in + out) = 6 x (8192 + 2 x 5120 + 8192 + 3 x 18432) =
 * 6 x 81,920 = 491,520; the 11 d + 2 f + f element-wise elements at 4 bytes instead of 2:
 * 2 x (45,056 + 43,008) = 176,128; the stream's backward is twice its forward.
 *   forward 8 x 8192 + 24 x 5120 + 667,648 = 856,064;
 *   backward 22 x 8192 + 14 x 5120 + 2 x 667,648 = 1,587,200;
 *   the dequantized weight .to(fp32) (r 2 w 4) and autocast's cast back (r 4 w 2): 12 / weight. */
START_TEST(qlora_qv_elementwise_bnb_stream)
{
    struct core_input in;
    struct core_perf_input p;

    llama3_8b(&in, CORE_FT_QLORA);
    in.framework = CORE_FW_HF_TRAINER;
    in.master_weights = CORE_FLAG_YES;
    EVAL_OK(in, res);
    core_perf_input_resolved(&p, &res.resolved);
    ck_assert_double_eq(p.lora_fwd_bytes, 856064.0);
    ck_assert_double_eq(p.lora_bwd_bytes, 1587200.0);
    ck_assert_double_eq(p.dequant_cast_bpw, 12.0);
}
END_TEST

/* The transient dequantized weight (the largest decoder linear, gate/up/down: 4096 x 14336 =
 * 58,720,256 weights): torchtune's linear_nf4 in bf16, 2 bytes each = 117,440,512; PEFT's fp32
 * stream (bitsandbytes MatMul4Bit .to(fp32), then autocast's bf16 cast of it): 4 + 2 bytes each =
 * 352,321,536. */
START_TEST(qlora_transient_weight)
{
    struct core_input in;

    llama3_8b(&in, CORE_FT_QLORA);
    in.framework = CORE_FW_TORCHTUNE;
    EVAL_OK(in, res);
    ck_assert_double_eq(core_adapters_transient(&res.resolved), 117440512.0);
    in.framework = CORE_FW_HF_TRAINER;
    in.master_weights = CORE_FLAG_YES;
    EVAL_OK(in, res);
    ck_assert_double_eq(core_adapters_transient(&res.resolved), 352321536.0);
}
END_TEST

/* Eager modules (perf.c eager_elt, full training, hf_trainer without torch.compile): per token
 * of a layer, two RMSNorms of 28 + 4 x 2 = 36 bytes per element instead of 4, residual adds
 * without dropout (one d element less): 62 d = 253,952; rotary 10 elements x 2 bytes over q and
 * k (4096 + 1024): 102,400; act_fn(gate) * up 2 f elements x 2 more: 57,344 -> 413,696 bytes.
 * Without checkpointing the element-wise forward counts three times (forward + backward), so
 * compile off minus on is 3 x 32 layers x 4096 tokens x 413,696 B over 0.80 x 3.35 TB/s. */
START_TEST(eager_modules_step_time)
{
    static struct core_result fused;
    struct core_input in;

    llama3_8b(&in, CORE_FT_FULL);
    in.framework = CORE_FW_HF_TRAINER;
    in.mfu = CORE_MFU_PREDICTED;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_NONE;
    in.batch = 1;
    in.seq_len = 4096;
    in.compile = true;
    EVAL_OK(in, fused);
    in.compile = false;
    EVAL_OK(in, res);
    ASSERT_REL(res.performance.breakdown.memory_bound - fused.performance.breakdown.memory_bound,
               3.0 * 32.0 * 4096.0 * 413696.0 / (0.80 * 3.35e12), 1e-9);
}
END_TEST

/* Contradictions are 422s naming the field. */
START_TEST(contradictions)
{
    struct core_input in;
    struct core_problems p;

    llama3_8b(&in, CORE_FT_QLORA);
    in.base_quant = CORE_BASEQ_NONE;
    ck_assert_int_eq(core_evaluate(&in, &res, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "base_quant");
    llama3_8b(&in, CORE_FT_FULL);
    in.base_quant = CORE_BASEQ_NF4;
    ck_assert_int_eq(core_evaluate(&in, &res, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "base_quant");
    core_input_init(&in);
    in.preset = core_preset_find("gpt3-125m"); /* a non-gated MLP */
    in.finetune = CORE_FT_LORA;
    in.lora_targets = (int)CORE_MOD_BIT(CORE_MOD_GATE);
    ck_assert_int_eq(core_evaluate(&in, &res, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "lora_targets");
    llama3_8b(&in, CORE_FT_LORA);
    in.lora_targets = 0; /* not a mask of any module: a range error */
    ck_assert_int_eq(core_evaluate(&in, &res, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "lora_targets");
    /* A quantized base computes in its 16- or 32-bit compute dtype (bitsandbytes'
     * bnb_4bit_compute_dtype, torchao's NF4Tensor dequantizing to bf16): QLoRA with fp8 GEMMs is
     * not a run either framework makes. LoRA on an unquantized base in fp8 is not refused. */
    llama3_8b(&in, CORE_FT_QLORA);
    in.precision = CORE_PREC_FP8;
    ck_assert_int_eq(core_evaluate(&in, &res, &p), CORE_EINVAL);
    ck_assert_str_eq(p.items[0].field, "precision");
    llama3_8b(&in, CORE_FT_LORA);
    in.precision = CORE_PREC_FP8;
    ck_assert_int_ne(core_evaluate(&in, &res, &p), CORE_EINVAL);
}
END_TEST

/* Advice that knows adapters. LoRA on Llama 3 70B (70.6e9 x 2 bytes = 141 GB of frozen bf16
 * weights) cannot fit one 80 GB GPU: the first advice is an NF4 base (70.6e9 x ~0.52 bytes for
 * the linears, ~36 GB, plus the bf16 embeddings), which fits. With r = 4096 on every linear the
 * adapters' own state dominates: halve the rank instead. A LoRA that fits gets neither. */
START_TEST(adapter_advice)
{
    struct core_input in;

    core_input_init(&in);
    in.preset = core_preset_find("llama3-70b");
    in.finetune = CORE_FT_LORA;
    in.framework = CORE_FW_TORCHTUNE;
    in.seq_len = 2048;
    in.checkpointing = CORE_CKPT_FULL;
    EVAL_OK(in, res);
    ck_assert(!res.fit.fits);
    ck_assert_int_ge(res.advice_count, 1);
    ck_assert_str_eq(res.advice[0].code, "use_qlora");
    ck_assert_str_eq(res.advice[0].changes[0].input, "finetune");
    ck_assert_str_eq(res.advice[0].changes[0].string_value, "qlora");
    ck_assert(strstr(res.advice[0].message, "which fits") != NULL);

    llama3_8b(&in, CORE_FT_LORA);
    in.lora_rank = 4096;
    in.lora_targets = (int)CORE_MOD_ALL_LINEAR;
    in.memory_gb = 24;
    in.checkpointing = CORE_CKPT_FULL;
    EVAL_OK(in, res);
    ck_assert_str_eq(res.advice[0].code, "reduce_lora_rank");
    ck_assert_int_eq(res.advice[0].changes[0].int_value, 2048);

    llama3_8b(&in, CORE_FT_LORA);
    EVAL_OK(in, res);
    ck_assert(res.fit.fits);
    for (int i = 0; i < res.advice_count; i++)
        ck_assert(strcmp(res.advice[i].code, "use_qlora") != 0 &&
                  strcmp(res.advice[i].code, "reduce_lora_rank") != 0);
}
END_TEST

/* Target names: Hugging Face, PEFT's alias, torchtune's spellings. */
START_TEST(module_names)
{
    ck_assert_uint_eq(core_module_mask("q_proj", 6), CORE_MOD_BIT(CORE_MOD_Q));
    ck_assert_uint_eq(core_module_mask("output_proj", 11), CORE_MOD_BIT(CORE_MOD_O));
    ck_assert_uint_eq(core_module_mask("output", 6), CORE_MOD_BIT(CORE_MOD_LM_HEAD));
    ck_assert_uint_eq(core_module_mask("w2", 2), CORE_MOD_BIT(CORE_MOD_DOWN));
    ck_assert_uint_eq(core_module_mask("all-linear", 10), 0x7Fu);
    ck_assert_uint_eq(core_module_mask("q_pro", 5), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core_adapters");
    TCase *tc = tcase_create("adapters");

    tcase_add_test(tc, gqa_adapter_counts);
    tcase_add_test(tc, lora_qv_elementwise_torchtune);
    tcase_add_test(tc, lora_qv_elementwise_peft_fp32);
    tcase_add_test(tc, qlora_qv_elementwise_bnb_stream);
    tcase_add_test(tc, eager_modules_step_time);
    tcase_add_test(tc, qlora_transient_weight);
    tcase_add_test(tc, nf4_bytes_per_weight);
    tcase_add_test(tc, quant_layouts_shared);
    tcase_add_test(tc, qlora_frozen_base);
    tcase_add_test(tc, frozen_base_has_no_state);
    tcase_add_test(tc, lora_qv_activations);
    tcase_add_test(tc, lora_qv_torchtune_inventory);
    tcase_add_test(tc, lora_top_layer_without_logits_gradient);
    tcase_add_test(tc, hf_loss_by_transformers_era);
    tcase_add_test(tc, bf16_states_full_training);
    tcase_add_test(tc, full_ignores_adapter_inputs);
    tcase_add_test(tc, frozen_base_flops);
    tcase_add_test(tc, frozen_base_step_time);
    tcase_add_test(tc, contradictions);
    tcase_add_test(tc, module_names);
    tcase_add_test(tc, adapter_advice);
    tcase_add_test(tc, ignored_adapter_inputs_and_frameworks_warn);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(suite());
}
