/*
 * launch_titan.c - torchtitan_config: a torchtitan TOML job file into memwall's inputs.
 *
 * Two layouts are read: the current one (2025: [parallelism], [compile], training.local_batch_size,
 * [model] converters; torchtitan/config/job_config.py) and the 2024 one (degrees under
 * [training], pipeline_parallel_degree under [experimental], training.batch_size, [float8]
 * enable_float8_linear; torchtitan/config_manager.py). A key torchtitan defaults is set to
 * torchtitan's default, not memwall's (local_batch_size 8, seq_len 2048, selective AC every 2nd
 * layer...). The -1 shard degree is resolved as ParallelDims._validate does
 * (torchtitan/distributed/parallel_dims.py): world / (replicate x cp x tp x pp), where the world
 * is the body's gpus.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inputs.h"
#include "launch_internal.h"
#include "launch_rows.h"
#include "toml.h"

#define JC   "torchtitan/config/job_config.py"
#define JC24 "torchtitan/config_manager.py (2024)"
#define PD   "torchtitan/distributed/parallel_dims.py"
#define PIPE "torchtitan/models/llama3/infra/pipeline.py"
#define PAR  "torchtitan/models/llama3/infra/parallelize.py"
#define FLAV "torchtitan/models/llama3/__init__.py"

#define NO_TIME "no effect on memory or time"

/* clang-format off */
static const struct api_launch_row rows[] = {
    DERIVED("model.name", API_LAUNCH_STRING, "model or the architecture", JC,
            "with model.flavor: llama3 8B/70B/405B, llama2 7B/13B/70B, llama3 debugmodel"),
    DERIVED("model.flavor", API_LAUNCH_STRING, "model or the architecture", FLAV, "see model.name"),
    DERIVED("model.converters", API_LAUNCH_LIST, "precision", JC,
            "float8 (or quantize.linear.float8): precision fp8; other converters warn"),
    IGNORED("model.tokenizer_path", API_LAUNCH_STRING, JC, NO_TIME),
    IGNORED("model.hf_assets_path", API_LAUNCH_STRING, JC, NO_TIME),
    IGNORED("model.norm_type", API_LAUNCH_STRING, JC24, "norm weights are not among memwall's inputs"),
    IGNORED("model.print_after_conversion", API_LAUNCH_SWITCH, JC, NO_TIME),
    DERIVED("optimizer.name", API_LAUNCH_STRING, "optimizer", JC, "AdamW: adamw; Adam: adam; others warn"),
    SET("optimizer.early_step_in_backward", API_LAUNCH_SWITCH, "optimizer_in_backward", JC, "as is"),
    IGNORED("optimizer.*", API_LAUNCH_ANY, JC, "learning rate, betas, eps, weight decay: " NO_TIME),
    IGNORED("lr_scheduler.*", API_LAUNCH_ANY, JC, NO_TIME),
    DERIVED("training.local_batch_size", API_LAUNCH_INT, "batch, global_batch", JC,
            "default 8; the micro-batch without pp; with pp, split into "
            "parallelism.pipeline_parallel_microbatch_size micro-batches"),
    DERIVED("training.batch_size", API_LAUNCH_INT, "batch, global_batch", JC24, "the 2024 name of local_batch_size"),
    DERIVED("training.global_batch_size", API_LAUNCH_INT, "global_batch", JC,
            "-1 (the default): local_batch_size x dp"),
    DERIVED("training.seq_len", API_LAUNCH_INT, "seq_len", JC, "default 2048"),
    DERIVED("training.steps", API_LAUNCH_INT, "tokens", JC, "tokens = steps x global batch x seq_len (default 10000)"),
    DERIVED("training.enable_cpu_offload", API_LAUNCH_SWITCH, "offload_optimizer, offload_params", JC,
            "FSDP2 CPUOffloadPolicy: parameters, gradients and the optimizer step on the host"),
    DERIVED("training.mixed_precision_param", API_LAUNCH_STRING, "precision", JC,
            "bfloat16 (default): bf16; float32: fp32"),
    IGNORED("training.mixed_precision_reduce", API_LAUNCH_STRING, JC,
            "float32 is the only choice; the torchtitan profile prices fp32 gradients"),
    DERIVED("training.compile", API_LAUNCH_SWITCH, "compile", JC24, "the 2024 switch: the blocks compiled (not the loss)"),
    DERIVED("training.data_parallel_degree", API_LAUNCH_INT, "gpus, zero_stage", JC24, "the 2024 FSDP degree (-1 allowed)"),
    DERIVED("training.data_parallel_replicate_degree", API_LAUNCH_INT, "gpus, zero_stage", JC24, "2024 layout"),
    DERIVED("training.data_parallel_shard_degree", API_LAUNCH_INT, "gpus, zero_stage", JC24, "2024 layout"),
    DERIVED("training.tensor_parallel_degree", API_LAUNCH_INT, "tp", JC24, "2024 layout"),
    DERIVED("training.pipeline_parallel_degree", API_LAUNCH_INT, "pp", JC24, "2024 layout"),
    DERIVED("training.context_parallel_degree", API_LAUNCH_INT, "cp", JC24, "2024 layout"),
    DERIVED("experimental.pipeline_parallel_degree", API_LAUNCH_INT, "pp", JC24, "2024 layout"),
    DERIVED("experimental.context_parallel_degree", API_LAUNCH_INT, "cp", JC24, "2024 layout"),
    DERIVED("training.enable_float8_linear", API_LAUNCH_SWITCH, "precision", JC24, "2024: fp8"),
    DERIVED("float8.enable_float8_linear", API_LAUNCH_SWITCH, "precision", JC24, "2024: fp8"),
    DERIVED("training.enable_async_tensor_parallel", API_LAUNCH_SWITCH, "tp_comm_overlap", JC24, "2024 layout"),
    IGNORED("training.*", API_LAUNCH_ANY, JC, "dataset, clipping, seed, gc, warm-up: " NO_TIME),
    DERIVED("parallelism.data_parallel_replicate_degree", API_LAUNCH_INT, "gpus, zero_stage", JC, "default 1"),
    DERIVED("parallelism.data_parallel_shard_degree", API_LAUNCH_INT, "gpus, zero_stage", PD,
            "default -1: world / (replicate x cp x tp x pp); > 1 (or cp > 1) is FSDP"),
    DERIVED("parallelism.fsdp_reshard_after_forward", API_LAUNCH_STRING, "zero_stage", PAR,
            "default: reshard unless pp > 1; always: zero_stage 3; never: zero_stage 2"),
    DERIVED("parallelism.tensor_parallel_degree", API_LAUNCH_INT, "tp, sequence_parallel", JC,
            "tp; torchtitan's TP plan is sequence parallel"),
    DERIVED("parallelism.enable_async_tensor_parallel", API_LAUNCH_SWITCH, "tp_comm_overlap", JC, "as is"),
    DERIVED("parallelism.pipeline_parallel_degree", API_LAUNCH_INT, "pp", JC, "pp"),
    DERIVED("parallelism.pipeline_parallel_schedule", API_LAUNCH_STRING, "virtual_stages", PIPE,
            "1F1B, GPipe: one stage per rank; looped schedules: 2, or from layers_per_stage"),
    DERIVED("parallelism.pipeline_parallel_layers_per_stage", API_LAUNCH_INT, "virtual_stages", PIPE,
            "ceil((layers + first_less + last_less) / N) stages over pp ranks"),
    DERIVED("parallelism.pipeline_parallel_microbatch_size", API_LAUNCH_INT, "batch", JC, "default 1"),
    DERIVED("parallelism.pipeline_parallel_first_stage_less_layers", API_LAUNCH_INT, "virtual_stages", PIPE, "default 1"),
    DERIVED("parallelism.pipeline_parallel_last_stage_less_layers", API_LAUNCH_INT, "virtual_stages", PIPE, "default 1"),
    WARN("parallelism.pipeline_parallel_split_points", API_LAUNCH_LIST, JC,
         "hand-placed split points are not modelled (layers are split evenly)"),
    DERIVED("parallelism.context_parallel_degree", API_LAUNCH_INT, "cp", JC, "cp"),
    IGNORED("parallelism.context_parallel_rotate_method", API_LAUNCH_STRING, JC, "the rotation, not the bytes"),
    SET("parallelism.expert_parallel_degree", API_LAUNCH_INT, "ep", JC, "ep"),
    SET("parallelism.expert_tensor_parallel_degree", API_LAUNCH_INT, "etp", JC, "expert tensor parallel"),
    WARN("parallelism.disable_loss_parallel", API_LAUNCH_SWITCH, JC,
         "the loss is priced as torchtitan's default (loss_parallel when tp > 1)"),
    IGNORED("parallelism.enable_compiled_autograd", API_LAUNCH_SWITCH, JC, NO_TIME),
    IGNORED("parallelism.*", API_LAUNCH_ANY, JC, NO_TIME),
    DERIVED("activation_checkpoint.mode", API_LAUNCH_STRING, "checkpointing", JC,
            "none, selective (the default), full"),
    DERIVED("activation_checkpoint.selective_ac_option", API_LAUNCH_STRING, "checkpointing", JC,
            "op: selective; 1: every layer (full); N > 1 (default 2): every Nth layer, priced "
            "as none (the memory upper bound) with a warning"),
    IGNORED("activation_checkpoint.*", API_LAUNCH_ANY, JC, "recompute policy details"),
    DERIVED("compile.enable", API_LAUNCH_SWITCH, "compile, loss", JC, "with components (default model and loss)"),
    DERIVED("compile.components", API_LAUNCH_LIST, "compile, loss", JC,
            "model: compile true; loss: loss compiled"),
    DERIVED("float8.enable_fsdp_float8_all_gather", API_LAUNCH_SWITCH, "(warning)", JC24,
            "true: fp8 all-gather traffic is not modelled"),
    DERIVED("quantize.linear.float8.enable_fsdp_float8_all_gather", API_LAUNCH_SWITCH, "(warning)", JC,
            "true: fp8 all-gather traffic is not modelled"),
    IGNORED("float8.*", API_LAUNCH_ANY, JC24, "scaling and filters: the bytes follow precision"),
    IGNORED("quantize.*", API_LAUNCH_ANY, JC, "scaling and filters: the bytes follow precision"),
    IGNORED("job.*", API_LAUNCH_ANY, JC, NO_TIME), IGNORED("profiling.*", API_LAUNCH_ANY, JC, NO_TIME),
    IGNORED("metrics.*", API_LAUNCH_ANY, JC, NO_TIME), IGNORED("checkpoint.*", API_LAUNCH_ANY, JC, NO_TIME),
    IGNORED("validation.*", API_LAUNCH_ANY, JC, "evaluation between steps: not priced"),
    IGNORED("comm.*", API_LAUNCH_ANY, JC, "timeouts and tracing: " NO_TIME),
    IGNORED("fault_tolerance.*", API_LAUNCH_ANY, JC, NO_TIME),
    IGNORED("memory_estimation.*", API_LAUNCH_ANY, JC, NO_TIME),
    IGNORED("experimental.*", API_LAUNCH_ANY, JC, "custom model imports: " NO_TIME),
};
/* clang-format on */

const struct api_launch_format api_launch_torchtitan = {"torchtitan_config", "torchtitan", rows,
                                                        sizeof rows / sizeof rows[0], NULL};

/* ---------------------------------------------------------------------------------------------
 * Reading the TOML: every leaf (a scalar or an array) under its dotted key
 * ------------------------------------------------------------------------------------------- */

static void take_leaves(struct api_launch_ctx *c, json_t *table, const char *prefix, int depth)
{
    const char *key;
    json_t *v;

    json_object_foreach (table, key, v) {
        char path[200];
        int n = snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", key);

        if (n < 0 || (size_t)n >= sizeof path) {
            json_array_append_new(c->unknown, json_string("(a key over 200 bytes)"));
            continue;
        }
        if (json_is_object(v) && depth < 8)
            take_leaves(c, v, path, depth + 1);
        else
            api_launch_take(c, path, json_incref(v));
    }
}

void api_launch_read_toml(struct api_launch_ctx *c, const char *text, size_t len)
{
    char why[160];
    int line = 0;
    json_t *doc = api_toml_parse(text, len, &line, why, sizeof why);

    if (doc == NULL) {
        api_launch_error(c, NULL, "line %d: %s", line, why);
        return;
    }
    take_leaves(c, doc, "", 0);
    json_decref(doc);
}

void api_launch_read_json(struct api_launch_ctx *c, const json_t *object, const char *prefix)
{
    take_leaves(c, (json_t *)object, prefix, 0);
}

/* ---------------------------------------------------------------------------------------------
 * What torchtitan derives
 * ------------------------------------------------------------------------------------------- */

/* The first of two keys that was given (current layout first), else def. */
static int64_t either(const struct api_launch_ctx *c, const char *now, const char *then,
                      int64_t def)
{
    return api_launch_int(c, now, api_launch_int(c, then, def));
}

/* (model.name, model.flavor) to a preset, or the debug model's architecture (FLAV). Returns
 * the layer count, 0 when the model is not known. */
static int64_t model(struct api_launch_ctx *c)
{
    static const struct {
        const char *name, *flavor, *preset;
        int64_t layers;
    } flavors[] = {
        {"llama3", "8B", "llama3-8b", 32},        {"llama3", "70B", "llama3-70b", 80},
        {"llama3", "405B", "llama3.1-405b", 126}, {"llama2", "7B", "llama2-7b", 32},
        {"llama2", "13B", "llama2-13b", 40},      {"llama2", "70B", "llama2-70b", 80},
    };
    const char *name = api_launch_str(c, "model.name"), *flavor = api_launch_str(c, "model.flavor");

    if (name == NULL)
        name = "llama3"; /* job_config.py's defaults */
    if (flavor == NULL)
        flavor = "debugmodel";
    for (size_t i = 0; i < sizeof flavors / sizeof flavors[0]; i++)
        if (strcmp(name, flavors[i].name) == 0 && strcmp(flavor, flavors[i].flavor) == 0) {
            api_launch_set_str(c, "model", flavors[i].preset, "model.flavor");
            return flavors[i].layers;
        }
    if (strcmp(name, "llama3") == 0 && strcmp(flavor, "debugmodel") == 0) {
        /* dim 256, 6 layers, 16 heads, vocab 2048; FFN 256 * ceil(int(2 * 4 * 256 / 3) / 256) */
        api_launch_set_int(c, "layers", 6, "model.flavor debugmodel");
        api_launch_set_int(c, "hidden", 256, "model.flavor debugmodel");
        api_launch_set_int(c, "heads", 16, "model.flavor debugmodel");
        api_launch_set_int(c, "ffn_hidden", 768, "model.flavor debugmodel");
        api_launch_set_int(c, "vocab", 2048, "model.flavor debugmodel");
        api_launch_set_bool(c, "gated_mlp", true, "model.flavor debugmodel");
        api_launch_set_bool(c, "tied_embeddings", false, "model.flavor debugmodel");
        return 6;
    }
    if (json_object_get(c->body, "config") == NULL && json_object_get(c->body, "model") == NULL &&
        json_object_get(c->body, "layers") == NULL)
        api_launch_error(c, "model.flavor",
                         "no memwall preset for %.30s %.30s: give config (its Hugging Face "
                         "config.json) or the architecture inputs",
                         name, flavor);
    return api_launch_body_int(c, "layers", 0);
}

struct degrees {
    int64_t replicate, shard, tp, pp, cp;
};

static struct degrees read_degrees(const struct api_launch_ctx *c)
{
    struct degrees d;

    d.replicate = either(c, "parallelism.data_parallel_replicate_degree",
                         "training.data_parallel_replicate_degree", 1);
    d.shard =
        either(c, "parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree",
               api_launch_int(c, "training.data_parallel_degree", -1));
    d.tp = either(c, "parallelism.tensor_parallel_degree", "training.tensor_parallel_degree", 1);
    d.pp = api_launch_int(
        c, "parallelism.pipeline_parallel_degree",
        either(c, "training.pipeline_parallel_degree", "experimental.pipeline_parallel_degree", 1));
    d.cp = api_launch_int(
        c, "parallelism.context_parallel_degree",
        either(c, "training.context_parallel_degree", "experimental.context_parallel_degree", 1));
    return d;
}

/* ParallelDims._validate: every degree >= 1 but dp_shard (-1 or >= 1), -1 resolved from the
 * world, and the product equal to the world. Returns false after reporting. */
static bool resolve_degrees(struct api_launch_ctx *c, struct degrees *d)
{
    int64_t world = api_launch_body_int(c, "gpus", 0), rest, product;

    if (d->replicate < 1 || d->tp < 1 || d->pp < 1 || d->cp < 1 || d->shard == 0 || d->shard < -1) {
        api_launch_error(c, "parallelism",
                         "degrees must be >= 1 (data_parallel_shard_degree may be -1), as "
                         "ParallelDims._validate asserts");
        return false;
    }
    if (!api_launch_mul(d->replicate, d->cp, &rest) || !api_launch_mul(rest, d->tp, &rest) ||
        !api_launch_mul(rest, d->pp, &rest) || rest > CORE_GPUS_MAX) {
        api_launch_error(c, "parallelism", "the degrees' product is out of range");
        return false;
    }
    if (world <= 0) {
        if (d->shard < 0)
            api_launch_warn(c, "launch_assumed",
                            "data_parallel_shard_degree -1 takes the world size, which the TOML "
                            "does not hold: priced at 1 (gpus %lld); give gpus",
                            (long long)rest);
        d->shard = d->shard < 0 ? 1 : d->shard;
        if (!api_launch_mul(rest, d->shard, &world) || world > CORE_GPUS_MAX) {
            api_launch_error(c, "parallelism.data_parallel_shard_degree", "out of range");
            return false;
        }
        api_launch_set_int(c, "gpus", world, "the parallelism degrees' product");
        return true;
    }
    if (d->shard < 0)
        d->shard = world / rest;
    if (d->shard < 1 || !api_launch_mul(d->shard, rest, &product) || product != world) {
        api_launch_conflict(
            c, "parallelism",
            "replicate %lld x shard %lld x cp %lld x tp %lld x pp %lld != gpus %lld "
            "(ParallelDims._validate)",
            (long long)d->replicate, (long long)d->shard, (long long)d->cp, (long long)d->tp,
            (long long)d->pp, (long long)world);
        return false;
    }
    return true;
}

static void parallel(struct api_launch_ctx *c, const struct degrees *d, int64_t layers)
{
    const char *reshard = api_launch_str(c, "parallelism.fsdp_reshard_after_forward");
    const char *schedule = api_launch_str(c, "parallelism.pipeline_parallel_schedule");
    int64_t per_stage = api_launch_int(c, "parallelism.pipeline_parallel_layers_per_stage", 0);
    bool looped =
        schedule != NULL && strcmp(schedule, "1F1B") != 0 && strcmp(schedule, "GPipe") != 0;
    bool fsdp = d->shard * d->cp > 1;
    int zero = 0;

    api_launch_set_int(c, "tp", d->tp, "parallelism.tensor_parallel_degree");
    api_launch_set_int(c, "pp", d->pp, "parallelism.pipeline_parallel_degree");
    api_launch_set_int(c, "cp", d->cp, "parallelism.context_parallel_degree");
    api_launch_set_bool(c, "sequence_parallel", d->tp > 1, "parallelism.tensor_parallel_degree");
    api_launch_set_bool(c, "tp_comm_overlap",
                        api_launch_on(c, "parallelism.enable_async_tensor_parallel") ||
                            api_launch_on(c, "training.enable_async_tensor_parallel"),
                        "parallelism.enable_async_tensor_parallel");
    if (fsdp) { /* parallelize.py: reshard_after_forward per the policy */
        bool never = reshard != NULL && strcmp(reshard, "never") == 0;
        bool always = reshard != NULL && strcmp(reshard, "always") == 0;

        zero = never || (!always && d->pp > 1) ? 2 : 3;
        if (d->replicate > 1)
            api_launch_warn(c, "launch_not_modelled",
                            "HSDP: state is sharded over data_parallel_shard_degree x cp = %lld "
                            "ranks and replicated %lld times; memwall shards over all of dp x cp",
                            (long long)(d->shard * d->cp), (long long)d->replicate);
    }
    api_launch_set_int(c, "zero_stage", zero, "parallelism.data_parallel_shard_degree");
    if (d->pp > 1 && looped) {
        int64_t stages = 2 * d->pp; /* pipeline.py: 2 stages per rank for a looped schedule */

        if (per_stage > 0 && layers > 0 && layers <= CORE_LAYERS_MAX) {
            int64_t extra =
                api_launch_int(c, "parallelism.pipeline_parallel_first_stage_less_layers", 1) +
                api_launch_int(c, "parallelism.pipeline_parallel_last_stage_less_layers", 1);
            stages = extra >= 0 && extra <= CORE_LAYERS_MAX
                         ? (layers + extra + per_stage - 1) / per_stage
                         : -1;
        }
        if (stages % d->pp != 0) {
            api_launch_conflict(c, "parallelism.pipeline_parallel_layers_per_stage",
                                "%lld virtual stages do not divide over %lld ranks (pipeline.py)",
                                (long long)stages, (long long)d->pp);
            return;
        }
        api_launch_set_int(c, "virtual_stages", stages / d->pp,
                           "parallelism.pipeline_parallel_schedule");
    }
}

static void batch(struct api_launch_ctx *c, const struct degrees *d)
{
    int64_t local = either(c, "training.local_batch_size", "training.batch_size", 8);
    int64_t global = api_launch_int(c, "training.global_batch_size", -1);
    int64_t seq = api_launch_int(c, "training.seq_len", 2048);
    int64_t micro = api_launch_int(c, "parallelism.pipeline_parallel_microbatch_size", 1);
    int64_t dp = d->replicate * d->shard;

    if (d->pp > 1 && (micro < 1 || local % micro != 0)) {
        api_launch_conflict(c, "parallelism.pipeline_parallel_microbatch_size",
                            "local_batch_size %lld is not a multiple of the micro-batch %lld "
                            "(pipeline_parallel.py raises)",
                            (long long)local, (long long)micro);
        return;
    }
    if (global <= 0 && !api_launch_mul(local, dp, &global)) {
        api_launch_error(c, "training.local_batch_size", "out of range");
        return;
    }
    api_launch_set_int(c, "batch", d->pp > 1 ? micro : local, "training.local_batch_size");
    api_launch_set_int(c, "global_batch", global, "training.global_batch_size");
    api_launch_set_int(c, "seq_len", seq, "training.seq_len");
    api_launch_set(c, "tokens",
                   json_real((double)api_launch_int(c, "training.steps", 10000) * (double)global *
                             (double)seq),
                   "training.steps x global batch x seq_len");
}

static bool has_word(const json_t *list, const char *word)
{
    size_t i;
    json_t *v;

    if (json_is_string(list))
        return strstr(json_string_value(list), word) != NULL;
    json_array_foreach (list, i, v)
        if (json_is_string(v) && strstr(json_string_value(v), word) != NULL)
            return true;
    return false;
}

static void checkpointing(struct api_launch_ctx *c)
{
    const char *mode = api_launch_str(c, "activation_checkpoint.mode");
    const char *option = api_launch_str(c, "activation_checkpoint.selective_ac_option");

    if (mode == NULL)
        mode = "selective";
    if (option == NULL)
        option = "2";
    if (strcmp(mode, "none") == 0 || strcmp(mode, "full") == 0) {
        api_launch_set_str(c, "checkpointing", mode, "activation_checkpoint.mode");
        return;
    }
    if (strcmp(mode, "selective") != 0) {
        api_launch_error(c, "activation_checkpoint.mode",
                         "expected none, selective or full, got '%.30s'", mode);
        return;
    }
    if (strcmp(option, "op") == 0)
        api_launch_set_str(c, "checkpointing", "selective",
                           "activation_checkpoint.selective_ac_option");
    else if (strcmp(option, "1") == 0)
        api_launch_set_str(c, "checkpointing", "full", "activation_checkpoint.selective_ac_option");
    else if (option[0] >= '2' && option[0] <= '9') {
        api_launch_warn(c, "launch_not_modelled",
                        "activation_checkpoint.selective_ac_option %.20s checkpoints every %.20sth "
                        "layer: priced as no checkpointing (the memory upper bound)",
                        option, option);
        api_launch_set_str(c, "checkpointing", "none", "activation_checkpoint.selective_ac_option");
    } else
        api_launch_error(c, "activation_checkpoint.selective_ac_option",
                         "expected op or a positive integer, got '%.30s'", option);
}

static void precision_and_rest(struct api_launch_ctx *c)
{
    const char *param = api_launch_str(c, "training.mixed_precision_param");
    const char *opt = api_launch_str(c, "optimizer.name");
    const json_t *conv = json_object_get(c->seen, "model.converters");
    const json_t *parts = json_object_get(c->seen, "compile.components");
    bool fp8 = has_word(conv, "float8") || api_launch_on(c, "training.enable_float8_linear") ||
               api_launch_on(c, "float8.enable_float8_linear");
    bool compiled = api_launch_on(c, "compile.enable"),
         compiled_2024 = api_launch_on(c, "training.compile");

    if (param != NULL && strcmp(param, "bfloat16") != 0 && strcmp(param, "float32") != 0) {
        api_launch_error(c, "training.mixed_precision_param", "expected bfloat16 or float32");
        return;
    }
    api_launch_set_str(c, "precision",
                       fp8                                              ? "fp8"
                       : param != NULL && strcmp(param, "float32") == 0 ? "fp32"
                                                                        : "bf16",
                       fp8 ? "model.converters" : "training.mixed_precision_param");
    if (conv != NULL && json_array_size(conv) > (fp8 ? 1u : 0u))
        api_launch_warn(c, "launch_not_modelled",
                        "model.converters other than float8 are not modelled");
    if (api_launch_on(c, "float8.enable_fsdp_float8_all_gather") ||
        api_launch_on(c, "quantize.linear.float8.enable_fsdp_float8_all_gather"))
        api_launch_warn(
            c, "launch_not_modelled",
            "enable_fsdp_float8_all_gather: FSDP's fp8 all-gather traffic is not modelled");
    if (opt == NULL || strcmp(opt, "AdamW") == 0 || strcmp(opt, "Adam") == 0)
        api_launch_set_str(c, "optimizer",
                           opt != NULL && strcmp(opt, "Adam") == 0 ? "adam" : "adamw",
                           "optimizer.name");
    else
        api_launch_warn(c, "launch_not_modelled", "optimizer.name %.30s is not modelled", opt);
    api_launch_set_bool(c, "compile",
                        compiled_2024 || (compiled && (parts == NULL || has_word(parts, "model"))),
                        compiled_2024 ? "training.compile" : "compile.enable");
    if (compiled && (parts == NULL || has_word(parts, "loss")))
        api_launch_set_str(c, "loss", "compiled", "compile.components");
    if (api_launch_on(c, "training.enable_cpu_offload")) {
        api_launch_set_str(c, "offload_optimizer", "cpu", "training.enable_cpu_offload");
        api_launch_set_str(c, "offload_params", "cpu", "training.enable_cpu_offload");
    }
    api_launch_set_bool(c, "flash_attention", true, "torchtitan's attention (SDPA)");
}

void api_launch_torchtitan_derive(struct api_launch_ctx *c)
{
    struct degrees d = read_degrees(c);
    int64_t layers = model(c);

    if (c->error_count > 0 || !resolve_degrees(c, &d))
        return;
    parallel(c, &d, layers);
    batch(c, &d);
    checkpointing(c);
    precision_and_rest(c);
}
