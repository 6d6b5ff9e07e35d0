/*
 * launch_deepspeed.c - deepspeed_config: a DeepSpeed ds_config object into memwall's inputs.
 *
 * Keys are read as dotted paths (zero_optimization.offload_optimizer.device). The batch triple
 * is resolved as DeepSpeedConfig._set_batch_related_parameters and _batch_assertion do
 * (deepspeed/runtime/config.py): any two of train_batch_size, train_micro_batch_size_per_gpu
 * and gradient_accumulation_steps give the third over the data-parallel world, and all three
 * must satisfy train = micro x accumulation x dp. The world is the body's gpus / (tp x pp); with
 * no gpus but all three given, dp = train / (micro x accumulation). A value "auto" (the Hugging
 * Face Trainer fills it in) is treated as not given, with a warning.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "launch_internal.h"
#include "launch_rows.h"

#define CFG  "deepspeed/runtime/config.py"
#define ZERO "deepspeed/runtime/zero/config.py"
#define OFF  "deepspeed/runtime/zero/offload_config.py"
#define PREC "deepspeed/runtime/precision_config.py"
#define ACK  "deepspeed/runtime/activation_checkpointing/config.py"
#define ENG  "deepspeed/runtime/engine.py"

#define NO_TIME "no effect on memory or time"
#define BUCKETS "communication buckets and prefetch limits are not modelled"

/* clang-format off */
static const struct api_launch_row rows[] = {
    DERIVED("train_batch_size", API_LAUNCH_ANY, "global_batch", CFG, "train = micro x accumulation x dp"),
    DERIVED("train_micro_batch_size_per_gpu", API_LAUNCH_ANY, "batch", CFG, "b"),
    DERIVED("gradient_accumulation_steps", API_LAUNCH_ANY, "global_batch", CFG, "default 1 when not derivable"),
    DERIVED("zero_optimization.stage", API_LAUNCH_ANY, "zero_stage", ZERO, "0 to 3; absent = 0"),
    DERIVED("zero_optimization", API_LAUNCH_ANY, "zero_stage", CFG, "the old boolean form: true = stage 1"),
    DERIVED("zero_optimization.offload_optimizer.device", API_LAUNCH_STRING, "offload_optimizer", OFF,
            "cpu: cpu; nvme: priced as cpu (GPU memory is the same) with a warning; none"),
    DERIVED("zero_optimization.offload_param.device", API_LAUNCH_STRING, "offload_params", OFF, "as above"),
    DERIVED("zero_optimization.cpu_offload", API_LAUNCH_SWITCH, "offload_optimizer", ZERO, "the old switch: cpu"),
    IGNORED("zero_optimization.offload_optimizer.*", API_LAUNCH_ANY, OFF, "pinning, buffers, ratio: host side"),
    IGNORED("zero_optimization.offload_param.*", API_LAUNCH_ANY, OFF, "pinning, buffers: host side"),
    DERIVED("zero_optimization.overlap_comm", API_LAUNCH_SWITCH, "dp_comm_overlap", ZERO, "as is; absent = false"),
    IGNORED("zero_optimization.contiguous_gradients", API_LAUNCH_SWITCH, ZERO, "fragmentation, not the bytes counted"),
    IGNORED("zero_optimization.reduce_scatter", API_LAUNCH_SWITCH, ZERO, NO_TIME),
    IGNORED("zero_optimization.allgather_partitions", API_LAUNCH_SWITCH, ZERO, NO_TIME),
    IGNORED("zero_optimization.round_robin_gradients", API_LAUNCH_SWITCH, ZERO, NO_TIME),
    IGNORED("zero_optimization.load_from_fp32_weights", API_LAUNCH_SWITCH, ZERO, NO_TIME),
    IGNORED("zero_optimization.stage3_gather_16bit_weights_on_model_save", API_LAUNCH_SWITCH, ZERO, "checkpoint saving"),
    IGNORED("zero_optimization.gather_16bit_weights_on_model_save", API_LAUNCH_SWITCH, ZERO, "checkpoint saving"),
    WARN("zero_optimization.reduce_bucket_size", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.allgather_bucket_size", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.stage3_prefetch_bucket_size", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.stage3_max_live_parameters", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.stage3_max_reuse_distance", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.stage3_param_persistence_threshold", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.sub_group_size", API_LAUNCH_ANY, ZERO, BUCKETS),
    WARN("zero_optimization.zero_hpz_partition_size", API_LAUNCH_ANY, ZERO, "ZeRO++ secondary partitions are not modelled"),
    WARN("zero_optimization.zero_quantized_weights", API_LAUNCH_SWITCH, ZERO, "ZeRO++ quantized all-gather is not modelled"),
    WARN("zero_optimization.zero_quantized_gradients", API_LAUNCH_SWITCH, ZERO, "ZeRO++ quantized gradients are not modelled"),
    DERIVED("bf16.enabled", API_LAUNCH_ANY, "precision", PREC, "bf16"),
    DERIVED("bfloat16.enabled", API_LAUNCH_ANY, "precision", PREC, "the old name of bf16"),
    DERIVED("fp16.enabled", API_LAUNCH_ANY, "precision", PREC, "fp16 (neither: fp32)"),
    IGNORED("fp16.*", API_LAUNCH_ANY, PREC, "loss scaling: " NO_TIME),
    IGNORED("bf16.*", API_LAUNCH_ANY, PREC, NO_TIME),
    WARN("amp.enabled", API_LAUNCH_ANY, PREC, "apex AMP is not modelled (priced as fp32 unless bf16/fp16)"),
    IGNORED("amp.*", API_LAUNCH_ANY, PREC, NO_TIME),
    DERIVED("data_types.grad_accum_dtype", API_LAUNCH_STRING, "grad_precision", CFG, "fp32, bf16 or fp16"),
    DERIVED("optimizer.type", API_LAUNCH_STRING, "optimizer", ENG,
            "Adam, FusedAdam, CPUAdam (adam_w_mode default true): adamw; AdamW: adamw; SGD: sgd; others warn"),
    DERIVED("optimizer.params.adam_w_mode", API_LAUNCH_SWITCH, "optimizer", ENG, "false: adam"),
    DERIVED("optimizer.params.torch_adam", API_LAUNCH_SWITCH, "optimizer", ENG, "true: torch.optim.Adam(W)"),
    IGNORED("optimizer.params.*", API_LAUNCH_ANY, CFG, "learning rate, betas, eps, weight decay: " NO_TIME),
    IGNORED("scheduler.*", API_LAUNCH_ANY, CFG, NO_TIME),
    WARN("activation_checkpointing.partition_activations", API_LAUNCH_ANY, ACK,
         "DeepSpeed's activation partitioning is not modelled; checkpointing is the model's "
         "own choice: give checkpointing"),
    WARN("activation_checkpointing.cpu_checkpointing", API_LAUNCH_ANY, ACK,
         "checkpoints in host memory are not modelled (activation_offload is the closest)"),
    IGNORED("activation_checkpointing.*", API_LAUNCH_ANY, ACK, "buffer layout and profiling"),
    IGNORED("gradient_clipping", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("steps_per_print", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("wall_clock_breakdown", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("prescale_gradients", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("gradient_predivide_factor", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("zero_allow_untested_optimizer", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("zero_force_ds_cpu_optimizer", API_LAUNCH_ANY, CFG, NO_TIME),
    WARN("communication_data_type", API_LAUNCH_ANY, CFG, "the gradient communication precision is not modelled"),
    IGNORED("flops_profiler.*", API_LAUNCH_ANY, CFG, NO_TIME), IGNORED("tensorboard.*", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("wandb.*", API_LAUNCH_ANY, CFG, NO_TIME), IGNORED("csv_monitor.*", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("comms_logger.*", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("checkpoint.*", API_LAUNCH_ANY, CFG, NO_TIME),
    IGNORED("elasticity.*", API_LAUNCH_ANY, CFG, "elastic batch search: give the batch you run"),
    IGNORED("data_efficiency.*", API_LAUNCH_ANY, CFG, NO_TIME),
};
/* clang-format on */

const struct api_launch_format api_launch_deepspeed = {"deepspeed_config", "deepspeed", rows,
                                                       sizeof rows / sizeof rows[0], NULL};

/* A positive integer value (a number or a numeric string), 0 when absent, -1 when "auto", -2
 * when malformed (reported). */
static int64_t count_of(struct api_launch_ctx *c, const char *key)
{
    const json_t *v = json_object_get(c->seen, key);

    if (v == NULL)
        return 0;
    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        api_launch_warn(c, "launch_assumed",
                        "%s is \"auto\" (filled in by the Hugging Face Trainer): "
                        "treated as not given",
                        key);
        return -1;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 1)
        return (int64_t)json_integer_value(v);
    api_launch_error(c, key, "expected a positive integer");
    return -2;
}

/* Any of the "enabled" forms: true, "true"; "auto" warns and counts as false. */
static bool enabled(struct api_launch_ctx *c, const char *key)
{
    const json_t *v = json_object_get(c->seen, key);

    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        api_launch_warn(c, "launch_assumed", "%s is \"auto\": treated as false", key);
        return false;
    }
    if (v != NULL && !json_is_boolean(v))
        api_launch_error(c, key, "expected a boolean");
    return json_is_true(v);
}

/* config.py: the two-of-three rules, then the assertion. */
static void batch(struct api_launch_ctx *c)
{
    int64_t train = count_of(c, "train_batch_size");
    int64_t micro = count_of(c, "train_micro_batch_size_per_gpu");
    int64_t accum = count_of(c, "gradient_accumulation_steps");
    int64_t gpus = api_launch_body_int(c, "gpus", 0);
    int64_t mp, dp, ma, mad;

    if (!api_launch_mul(api_launch_body_int(c, "tp", 1), api_launch_body_int(c, "pp", 1), &mp))
        mp = 0; /* the decoder names the degree out of bounds */
    dp = gpus > 0 && mp > 0 ? gpus / mp : 0;

    if (train < -1 || micro < -1 || accum < -1)
        return;
    train = train < 0 ? 0 : train, micro = micro < 0 ? 0 : micro, accum = accum < 0 ? 0 : accum;
    if (!api_launch_mul(micro, accum, &ma) || !api_launch_mul(ma, dp > 0 ? dp : 1, &mad)) {
        api_launch_error(c, "train_micro_batch_size_per_gpu", "the batch product is out of range");
        return;
    }
    if (dp == 0 && train > 0 && micro > 0 && accum > 0 && train % ma == 0) {
        dp = train / ma;
        api_launch_set_int(
            c, "gpus", dp * mp,
            "train_batch_size / (train_micro_batch_size_per_gpu x gradient_accumulation_steps)");
    }
    if (dp == 0) {
        dp = 1;
        if (train > 0 || micro > 0)
            api_launch_warn(
                c, "launch_assumed",
                "the data-parallel size is not in the ds_config: priced at 1; give gpus");
    }
    if (train > 0 && micro > 0 && accum == 0)
        accum = train / (micro * dp);
    else if (train > 0 && accum > 0 && micro == 0)
        micro = train / (accum * dp);
    else if (train > 0 && micro == 0 && accum == 0)
        accum = 1, micro = train / dp;
    else if (micro > 0 && train == 0)
        accum = accum > 0 ? accum : 1,
        train = api_launch_mul(micro, accum, &ma) && api_launch_mul(ma, dp, &mad) ? mad : -1;
    if (train == 0)
        return;
    if (micro < 1 || accum < 1 || !api_launch_mul(micro, accum, &ma) ||
        !api_launch_mul(ma, dp, &mad) || train != mad) {
        api_launch_conflict(
            c, "train_batch_size",
            "%lld != train_micro_batch_size_per_gpu %lld x gradient_accumulation_steps "
            "%lld x data-parallel size %lld (config.py's _batch_assertion)",
            (long long)train, (long long)micro, (long long)accum, (long long)dp);
        return;
    }
    api_launch_set_int(c, "batch", micro, "train_micro_batch_size_per_gpu");
    api_launch_set_int(c, "global_batch", train, "train_batch_size");
}

static void zero(struct api_launch_ctx *c)
{
    const json_t *z = json_object_get(c->seen, "zero_optimization");
    const json_t *stage = json_object_get(c->seen, "zero_optimization.stage");
    const char *off_o = api_launch_str(c, "zero_optimization.offload_optimizer.device");
    const char *off_p = api_launch_str(c, "zero_optimization.offload_param.device");
    int64_t s = json_is_true(z) ? 1 : 0;

    if (stage != NULL) {
        if (!json_is_integer(stage) || json_integer_value(stage) < 0 ||
            json_integer_value(stage) > 3) {
            api_launch_error(c, "zero_optimization.stage", "expected 0, 1, 2 or 3");
            return;
        }
        s = (int64_t)json_integer_value(stage);
    }
    api_launch_set_int(c, "zero_stage", s, "zero_optimization.stage");
    api_launch_set_bool(c, "dp_comm_overlap", api_launch_on(c, "zero_optimization.overlap_comm"),
                        "zero_optimization.overlap_comm");
    if (api_launch_on(c, "zero_optimization.cpu_offload") && off_o == NULL)
        off_o = "cpu";
    for (int k = 0; k < 2; k++) {
        const char *dev = k == 0 ? off_o : off_p;
        const char *key = k == 0 ? "zero_optimization.offload_optimizer.device"
                                 : "zero_optimization.offload_param.device";

        if (dev == NULL)
            continue;
        if (strcmp(dev, "nvme") == 0)
            api_launch_warn(c, "launch_not_modelled",
                            "%s nvme: priced as cpu (the same GPU memory; NVMe bandwidth is not "
                            "modelled)",
                            key);
        else if (strcmp(dev, "cpu") != 0 && strcmp(dev, "none") != 0) {
            api_launch_error(c, key, "expected cpu, nvme or none, got '%.30s'", dev);
            continue;
        }
        api_launch_set_str(c, k == 0 ? "offload_optimizer" : "offload_params",
                           strcmp(dev, "none") == 0 ? "none" : "cpu", key);
    }
}

static void precision(struct api_launch_ctx *c)
{
    bool bf16 = enabled(c, "bf16.enabled") || enabled(c, "bfloat16.enabled");
    bool fp16 = enabled(c, "fp16.enabled");
    const char *acc = api_launch_str(c, "data_types.grad_accum_dtype");
    const char *type = api_launch_str(c, "optimizer.type");

    if (bf16 && fp16) {
        api_launch_conflict(c, "fp16.enabled", "bf16 and fp16 both enabled (config.py asserts)");
        return;
    }
    api_launch_set_str(c, "precision",
                       bf16   ? "bf16"
                       : fp16 ? "fp16"
                              : "fp32",
                       bf16 ? "bf16.enabled" : "fp16.enabled");
    if (acc != NULL) {
        if (strcmp(acc, "fp32") != 0 && strcmp(acc, "bf16") != 0 && strcmp(acc, "fp16") != 0)
            api_launch_error(c, "data_types.grad_accum_dtype", "expected fp32, bf16 or fp16");
        else
            api_launch_set_str(c, "grad_precision", acc, "data_types.grad_accum_dtype");
    }
    if (type == NULL)
        return;
    if (strcasecmp(type, "Adam") == 0 || strcasecmp(type, "FusedAdam") == 0 ||
        strcasecmp(type, "CPUAdam") == 0 || strcasecmp(type, "DeepSpeedCPUAdam") == 0)
        api_launch_set_str(c, "optimizer",
                           json_is_false(json_object_get(c->seen, "optimizer.params.adam_w_mode"))
                               ? "adam"
                               : "adamw",
                           "optimizer.type");
    else if (strcasecmp(type, "AdamW") == 0)
        api_launch_set_str(c, "optimizer", "adamw", "optimizer.type");
    else if (strcasecmp(type, "SGD") == 0)
        api_launch_set_str(c, "optimizer", "sgd", "optimizer.type");
    else
        api_launch_warn(c, "launch_not_modelled", "optimizer.type %.30s is not modelled", type);
}

void api_launch_deepspeed_derive(struct api_launch_ctx *c)
{
    batch(c);
    zero(c);
    precision(c);
}
