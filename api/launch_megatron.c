/*
 * launch_megatron.c - megatron_args: Megatron-LM's pretrain_gpt.py arguments (Megatron-Core and
 * NeMo share the names) into memwall's inputs.
 *
 * The argument string may start with its launcher: every word before the first one ending in
 * ".py" is the launcher's (torchrun / python -m torch.distributed.run), whose --nproc-per-node
 * times --nnodes is the GPU count. Flags take `--flag value` or `--flag=value`; '_' in a flag
 * name reads as '-'. Files: arguments.py is megatron/training/arguments.py, whose parser builds
 * most flags from the dataclasses in megatron/core/transformer/transformer_config.py (TC) and
 * megatron/core/model_parallel_config.py (MPC) through ArgumentGroupFactory.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"
#include "core.h"
#include "inputs.h"
#include "value.h"
#include "launch_internal.h"
#include "launch_rows.h"

#define ARGS "megatron/training/arguments.py"
#define TC   "megatron/core/transformer/transformer_config.py"
#define MPC  "megatron/core/model_parallel_config.py"
#define DDPC "megatron/core/distributed/distributed_data_parallel_config.py"
#define TOK  "megatron/core/tokenizers/utils/build_tokenizer.py"

#define NO_TIME "no effect on memory or time"

/* clang-format off */
static const struct api_launch_row rows[] = {
    /* ---- the launcher ---- */
    DERIVED("torchrun --nproc-per-node", API_LAUNCH_STRING, "gpus", "torch/distributed/run.py",
            "gpus = --nproc-per-node x --nnodes"),
    DERIVED("torchrun --nnodes", API_LAUNCH_STRING, "gpus", "torch/distributed/run.py",
            "N, or MIN:MAX (elastic: MAX is used, with a warning)"),
    /* ---- the network ---- */
    SET("--num-layers", API_LAUNCH_INT, "layers", TC, "L"),
    SET("--hidden-size", API_LAUNCH_INT, "hidden", TC, "d"),
    SET("--num-attention-heads", API_LAUNCH_INT, "heads", TC, "a"),
    DERIVED("--group-query-attention", API_LAUNCH_SWITCH, "kv_heads", ARGS,
            "kv_heads = --num-query-groups (default 1); without it kv_heads = heads"),
    DERIVED("--num-query-groups", API_LAUNCH_INT, "kv_heads", TC, "read only with --group-query-attention"),
    SET("--kv-channels", API_LAUNCH_INT, "head_dim", TC, "default hidden/heads, as memwall's"),
    DERIVED("--ffn-hidden-size", API_LAUNCH_INT, "ffn_hidden", TC,
            "f; default 4*hidden, or int((4*hidden*2/3)/64)*64 with --swiglu (arguments.py)"),
    DERIVED("--swiglu", API_LAUNCH_SWITCH, "gated_mlp, ffn_hidden", ARGS, "gated_mlp = true"),
    DERIVED("--untie-embeddings-and-output-weights", API_LAUNCH_SWITCH, "tied_embeddings", ARGS,
            "tied_embeddings = false (Megatron ties them by default)"),
    DERIVED("--vocab-size", API_LAUNCH_INT, "vocab", TOK,
            "padded up to a multiple of --make-vocab-size-divisible-by x tp"),
    DERIVED("--make-vocab-size-divisible-by", API_LAUNCH_INT, "vocab", ARGS, "default 128"),
    DERIVED("--tokenizer-type", API_LAUNCH_STRING, "vocab", TOK,
            "GPT2BPETokenizer: 50257 tokens before padding"),
    DERIVED("--tokenizer-model", API_LAUNCH_STRING, "vocab", TOK,
            "a known Hugging Face id: its preset's vocabulary (and the preset when no shape is given)"),
    DERIVED("--vocab-file", API_LAUNCH_STRING, "vocab", TOK,
            "with --merge-file and no --tokenizer-type: GPT-2 BPE (50257), with a warning"),
    IGNORED("--merge-file", API_LAUNCH_STRING, TOK, "read with --vocab-file"),
    DERIVED("--position-embedding-type", API_LAUNCH_STRING, "(warning)", TC,
            "learned_absolute (the default) adds max-position-embeddings x hidden weights, "
            "which memwall does not count: a warning; rope and none add none"),
    IGNORED("--max-position-embeddings", API_LAUNCH_INT, ARGS, "used only in the learned_absolute warning"),
    IGNORED("--normalization", API_LAUNCH_STRING, TC,
            "norm weights (d or 2d per layer, under 0.01 % of N) are not among memwall's inputs"),
    IGNORED("--disable-bias-linear", API_LAUNCH_SWITCH, TC,
            "linear biases (about 9d per layer) are not among memwall's inputs"),
    IGNORED("--use-mcore-models", API_LAUNCH_SWITCH, ARGS, "the model classes, not their size"),
    IGNORED("--rotary-base", API_LAUNCH_REAL, TC, NO_TIME), IGNORED("--rotary-percent", API_LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--use-rotary-position-embeddings", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--rotary-seq-len-interpolation-factor", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--attention-dropout", API_LAUNCH_REAL, TC, "dropout masks are fused into the kernels memwall prices"),
    IGNORED("--hidden-dropout", API_LAUNCH_REAL, TC, "dropout masks are fused into the kernels memwall prices"),
    IGNORED("--init-method-std", API_LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--apply-layernorm-1p", API_LAUNCH_SWITCH, TC, NO_TIME),
    IGNORED("--norm-epsilon", API_LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--no-masked-softmax-fusion", API_LAUNCH_SWITCH, TC, NO_TIME),
    IGNORED("--attention-softmax-in-fp32", API_LAUNCH_SWITCH, TC, NO_TIME),
    SET("--seq-length", API_LAUNCH_INT, "seq_len", ARGS, "T"),
    /* ---- batch and length of training ---- */
    SET("--micro-batch-size", API_LAUNCH_INT, "batch", ARGS, "b"),
    SET("--global-batch-size", API_LAUNCH_INT, "global_batch", ARGS, "default micro x dp (memwall's too)"),
    DERIVED("--train-iters", API_LAUNCH_INT, "tokens", ARGS, "tokens = train-iters x global-batch x seq-length"),
    DERIVED("--train-samples", API_LAUNCH_INT, "tokens", ARGS, "tokens = train-samples x seq-length"),
    WARN("--step-batch-size-schedule", API_LAUNCH_LIST, ARGS,
         "the batch schedule is not modelled (priced at --global-batch-size throughout)"),
    WARN("--rampup-batch-size", API_LAUNCH_LIST, ARGS,
         "the ramp-up's smaller batches are not modelled (tokens assume the full global batch)"),
    /* ---- parallelism ---- */
    SET("--tensor-model-parallel-size", API_LAUNCH_INT, "tp", MPC, "t"),
    SET("--pipeline-model-parallel-size", API_LAUNCH_INT, "pp", MPC, "p"),
    SET("--context-parallel-size", API_LAUNCH_INT, "cp", MPC, "cp"),
    SET("--expert-model-parallel-size", API_LAUNCH_INT, "ep", MPC, "ep"),
    SET("--expert-tensor-parallel-size", API_LAUNCH_INT, "etp", MPC, "expert tensor parallel"),
    DERIVED("--num-layers-per-virtual-pipeline-stage", API_LAUNCH_INT, "virtual_stages", ARGS,
            "virtual_stages = (layers / pp) / N; both divisions exact (arguments.py asserts)"),
    SET("--num-virtual-stages-per-pipeline-rank", API_LAUNCH_INT, "virtual_stages", ARGS, "as is"),
    SET("--decoder-first-pipeline-num-layers", API_LAUNCH_INT, "decoder_first_pipeline_num_layers", TC,
        "layers on the first pipeline stage"),
    SET("--decoder-last-pipeline-num-layers", API_LAUNCH_INT, "decoder_last_pipeline_num_layers", TC,
        "layers on the last pipeline stage"),
    SET("--pipeline-model-parallel-layout", API_LAUNCH_STRING, "pipeline_model_parallel_layout", TC,
        "the layout text as is (E t m L, |, (...)*n)"),
    SET("--account-for-embedding-in-pipeline-split", API_LAUNCH_SWITCH,
        "account_for_embedding_in_pipeline_split", TC, "true"),
    SET("--account-for-loss-in-pipeline-split", API_LAUNCH_SWITCH,
        "account_for_loss_in_pipeline_split", TC, "true"),
    DERIVED("--sequence-parallel", API_LAUNCH_SWITCH, "sequence_parallel", MPC,
            "true when tp > 1 (arguments.py turns it off at tp 1); absent = false"),
    DERIVED("--tp-comm-overlap", API_LAUNCH_SWITCH, "tp_comm_overlap", MPC, "absent = false"),
    DERIVED("--overlap-grad-reduce", API_LAUNCH_SWITCH, "dp_comm_overlap", DDPC,
            "dp_comm_overlap = --overlap-grad-reduce or --overlap-param-gather; absent = false"),
    DERIVED("--overlap-param-gather", API_LAUNCH_SWITCH, "dp_comm_overlap", DDPC, "as above"),
    DERIVED("--use-distributed-optimizer", API_LAUNCH_SWITCH, "zero_stage", ARGS,
            "zero_stage 1 (optimizer state sharded over dp); absent = 0"),
    DERIVED("--use-torch-fsdp2", API_LAUNCH_SWITCH, "zero_stage", ARGS, "zero_stage 3"),
    DERIVED("--use-megatron-fsdp", API_LAUNCH_SWITCH, "zero_stage", ARGS,
            "zero_stage from --data-parallel-sharding-strategy (optim 1, optim_grads 2, "
            "optim_grads_params 3, the default)"),
    DERIVED("--data-parallel-sharding-strategy", API_LAUNCH_STRING, "zero_stage", DDPC, "with --use-megatron-fsdp"),
    /* ---- recomputation ---- */
    DERIVED("--recompute-granularity", API_LAUNCH_STRING, "checkpointing", TC,
            "selective or full; absent = none"),
    DERIVED("--recompute-method", API_LAUNCH_STRING, "checkpointing", TC,
            "uniform: every layer; block: the first --recompute-num-layers of each stage "
            "(fewer than a stage holds: modelled as none, the memory upper bound, with a warning)"),
    DERIVED("--recompute-num-layers", API_LAUNCH_INT, "checkpointing", TC, "with --recompute-method"),
    DERIVED("--recompute-activations", API_LAUNCH_SWITCH, "checkpointing", ARGS, "selective (arguments.py)"),
    DERIVED("--recompute-modules", API_LAUNCH_LIST, "recompute_modules", TC,
            "the modules, joined by commas (default core_attn)"),
    /* ---- CUDA graphs ---- */
    DERIVED("--cuda-graph-impl", API_LAUNCH_STRING, "cuda_graph_modules", TC,
            "transformer_engine or local: the --cuda-graph-modules graphs; none (the default): "
            "none; full_iteration: not modelled (a warning)"),
    DERIVED("--cuda-graph-modules", API_LAUNCH_LIST, "cuda_graph_modules", TC,
            "with a per-layer --cuda-graph-impl: attn, moe_router, moe_preprocess joined by "
            "commas (others, and the whole layer, with a warning)"),
    DERIVED("--cuda-graph-scope", API_LAUNCH_LIST, "cuda_graph_modules", TC,
            "the older name of --cuda-graph-modules"),
    WARN("--distribute-saved-activations", API_LAUNCH_SWITCH, TC,
         "saved activations split over tp ranks are not modelled"),
    /* ---- precision and optimizer ---- */
    DERIVED("--bf16", API_LAUNCH_SWITCH, "precision, grad_precision", ARGS,
            "bf16 weights; gradients accumulated in fp32 unless --grad-reduce-in-bf16 (arguments.py)"),
    DERIVED("--fp16", API_LAUNCH_SWITCH, "precision, grad_precision", ARGS,
            "fp16 weights and gradients (fp32 with --accumulate-allreduce-grads-in-fp32)"),
    DERIVED("--fp8-format", API_LAUNCH_STRING, "precision", TC, "e4m3 or hybrid: precision fp8"),
    DERIVED("--grad-reduce-in-bf16", API_LAUNCH_SWITCH, "grad_precision", ARGS, "bf16 gradients"),
    DERIVED("--accumulate-allreduce-grads-in-fp32", API_LAUNCH_SWITCH, "grad_precision", ARGS, "fp32 gradients"),
    IGNORED("--fp8-amax-history-len", API_LAUNCH_INT, TC, "scaling bookkeeping (a few values per tensor)"),
    IGNORED("--fp8-amax-compute-algo", API_LAUNCH_STRING, TC, "scaling bookkeeping"),
    IGNORED("--fp8-recipe", API_LAUNCH_STRING, TC, "the scaling recipe, not the bytes"),
    WARN("--fp8-param-gather", API_LAUNCH_SWITCH, ARGS,
         "fp8 compute weights kept instead of bf16 ones are not modelled"),
    DERIVED("--optimizer", API_LAUNCH_STRING, "optimizer", ARGS,
            "adam (the default; decoupled weight decay) = adamw; sgd = sgd_momentum (sgd with "
            "--sgd-momentum 0)"),
    DERIVED("--sgd-momentum", API_LAUNCH_REAL, "optimizer", ARGS, "0 makes sgd plain"),
    DERIVED("--exp-avg-dtype", API_LAUNCH_STRING, "optimizer_state_dtype", ARGS,
            "with --exp-avg-sq-dtype: both fp32 or both bf16 (the precision-aware optimizer); "
            "other choices warn"),
    DERIVED("--exp-avg-sq-dtype", API_LAUNCH_STRING, "optimizer_state_dtype", ARGS, "as above"),
    WARN("--main-params-dtype", API_LAUNCH_STRING, ARGS, "master weights in another precision are not modelled"),
    WARN("--optimizer-cpu-offload", API_LAUNCH_SWITCH, ARGS,
         "Megatron's hybrid optimizer offload is not modelled (use offload_optimizer)"),
    /* ---- attention and fusions ---- */
    DERIVED("--use-flash-attn", API_LAUNCH_SWITCH, "flash_attention", ARGS, "flash_attention = true"),
    DERIVED("--attention-backend", API_LAUNCH_STRING, "flash_attention", TC,
            "auto (the default), flash, fused: true; unfused, local: false"),
    IGNORED("--cross-entropy-loss-fusion", API_LAUNCH_SWITCH, TC,
            "the megatron profile already prices the vocabulary-parallel fused loss"),
    IGNORED("--cross-entropy-fusion-impl", API_LAUNCH_STRING, TC, "as above"),
    /* ---- mixture of experts ---- */
    SET("--num-experts", API_LAUNCH_INT, "experts", TC, "E"),
    DERIVED("--moe-router-topk", API_LAUNCH_INT, "experts_per_token", TC, "default 2 when --num-experts"),
    SET("--moe-ffn-hidden-size", API_LAUNCH_INT, "moe_ffn_hidden", TC, "default ffn_hidden, as memwall's"),
    DERIVED("--moe-shared-expert-intermediate-size", API_LAUNCH_INT, "shared_experts", TC,
            "shared_experts = size / moe_ffn_hidden (exact, else a warning)"),
    DERIVED("--moe-layer-freq", API_LAUNCH_STRING, "dense_layers", ARGS,
            "1 (the default): every layer MoE; ([0]*K+[1]*M): dense_layers K; other patterns warn"),
    SET("--mtp-num-layers", API_LAUNCH_INT, "mtp_layers", TC, "multi-token prediction layers"),
    SET("--moe-router-num-groups", API_LAUNCH_INT, "moe_router_num_groups", TC,
        "group-limited routing: expert groups"),
    SET("--moe-router-group-topk", API_LAUNCH_INT, "moe_router_group_topk", TC,
        "groups a token's experts come from"),
    IGNORED("--moe-router-load-balancing-type", API_LAUNCH_STRING, TC, NO_TIME),
    IGNORED("--moe-aux-loss-coeff", API_LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--moe-grouped-gemm", API_LAUNCH_SWITCH, TC, "the kernel, not the bytes"),
    DERIVED("--moe-token-dispatcher-type", API_LAUNCH_STRING, "moe_dispatcher", TC,
            "alltoall: alltoall; flex: --moe-flex-dispatcher-backend (deepep, the default, or "
            "hybridep); allgather (the default) and ncclep are priced as alltoall, with a warning"),
    DERIVED("--moe-flex-dispatcher-backend", API_LAUNCH_STRING, "moe_dispatcher", TC, "with flex"),
    DERIVED("--moe-enable-deepep", API_LAUNCH_SWITCH, "moe_dispatcher", TC, "deepep (deprecated flag)"),
    SET("--overlap-moe-expert-parallel-comm", API_LAUNCH_SWITCH, "moe_comm_overlap", TC, "true"),
    WARN("--moe-router-dtype", API_LAUNCH_STRING, TC, "router logits in fp32 are not modelled"),
    WARN("--moe-expert-capacity-factor", API_LAUNCH_REAL, TC, "token dropping is not modelled"),
    /* ---- regularization, learning rate, data, checkpoints, logging: no effect ---- */
    IGNORED("--lr", API_LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--min-lr", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--lr-decay-style", API_LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--lr-decay-iters", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-decay-samples", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-warmup-fraction", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--lr-warmup-iters", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-warmup-samples", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--decoupled-lr", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--decoupled-min-lr", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--weight-decay", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--clip-grad", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--adam-beta1", API_LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--adam-beta2", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--adam-eps", API_LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--seed", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--loss-scale", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--initial-loss-scale", API_LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--data-path", API_LAUNCH_ANY, ARGS, NO_TIME), IGNORED("--split", API_LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--mock-data", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--data-cache-path", API_LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--num-workers", API_LAUNCH_INT, ARGS, "data-loader processes on the host"),
    IGNORED("--tiktoken-pattern", API_LAUNCH_STRING, TOK, NO_TIME),
    IGNORED("--no-create-attention-mask-in-dataloader", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--no-mmap-bin-files", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--save", API_LAUNCH_ANY, ARGS, NO_TIME), IGNORED("--load", API_LAUNCH_ANY, ARGS, NO_TIME),
    IGNORED("--save-interval", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--ckpt-format", API_LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--eval-iters", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--eval-interval", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--log-interval", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--log-throughput", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--tensorboard-dir", API_LAUNCH_ANY, ARGS, NO_TIME),
    IGNORED("--wandb-project", API_LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--profile", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--profile-step-start", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--profile-step-end", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--distributed-timeout-minutes", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--exit-duration-in-mins", API_LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--calculate-per-token-loss", API_LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--manual-gc", API_LAUNCH_SWITCH, ARGS, "host garbage collection"),
    WARN("--empty-unused-memory-level", API_LAUNCH_INT, ARGS,
         "torch.cuda.empty_cache() between steps changes the reserved peak, not modelled"),
};
/* clang-format on */

const struct api_launch_format api_launch_megatron = {"megatron_args", "megatron", rows,
                                                      sizeof rows / sizeof rows[0], NULL};

/* ---------------------------------------------------------------------------------------------
 * Reading the words
 * ------------------------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

void api_launch_read_args(struct api_launch_ctx *c, const char *text, size_t len)
{
    struct api_words w;
    size_t at, script = 0;
    const char *why;

    if (!api_split_args(text, len, &w, &at, &why)) {
        api_launch_error(c, NULL, "at byte %zu: %s", at, why);
        return;
    }
    for (size_t i = 0; i < w.count; i++)
        if (ends_with(w.word[i], ".py")) {
            script = i + 1;
            break;
        }
    if (script > 0)
        api_launch_read_flags(c, w.word, 0, script - 1, "torchrun ");
    api_launch_read_flags(c, w.word, script, w.count, "");
    api_words_free(&w);
}

/* ---------------------------------------------------------------------------------------------
 * What Megatron derives
 * ------------------------------------------------------------------------------------------- */

static bool text_int(const char *s, int64_t *v)
{
    char *end;
    long long x;

    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    x = strtoll(s, &end, 10);
    *v = x;
    return errno == 0 && *end == '\0' && x > 0 && x < 1000000000;
}

/* torchrun's --nproc-per-node x --nnodes (run.py: nnodes "N" or "MIN:MAX"). */
static void gpus_from_launcher(struct api_launch_ctx *c)
{
    const char *nproc = api_launch_str(c, "torchrun --nproc-per-node");
    const char *nnodes = api_launch_str(c, "torchrun --nnodes");
    const char *colon = nnodes != NULL ? strchr(nnodes, ':') : NULL;
    int64_t per = 1, nodes = 1;

    if (nproc == NULL && nnodes == NULL)
        return;
    if (nproc != NULL && !text_int(nproc, &per)) {
        api_launch_warn(c, "launch_assumed",
                        "torchrun --nproc-per-node %.20s is not a number of processes; give gpus",
                        nproc);
        return;
    }
    if (nnodes != NULL && !text_int(colon != NULL ? colon + 1 : nnodes, &nodes)) {
        api_launch_error(c, "torchrun --nnodes", "expected N or MIN:MAX, got '%.40s'", nnodes);
        return;
    }
    if (colon != NULL)
        api_launch_warn(c, "launch_assumed",
                        "torchrun --nnodes %.40s is elastic: priced at %lld nodes", nnodes,
                        (long long)nodes);
    api_launch_set_int(c, "gpus", per * nodes, "torchrun --nproc-per-node x --nnodes");
}

/* tp and pp as the job runs: the body's own value when it overrides the flag. */
static int64_t degree(const struct api_launch_ctx *c, const char *input, const char *flag)
{
    return api_launch_body_int(c, input, api_launch_int(c, flag, 1));
}

/* The vocabulary before padding: --vocab-size, the tokenizer's, or 0 when unknown. */
static int64_t base_vocab(struct api_launch_ctx *c)
{
    const char *type = api_launch_str(c, "--tokenizer-type");
    const char *model = api_launch_str(c, "--tokenizer-model");

    if (api_launch_has(c, "--vocab-size"))
        return api_launch_int(c, "--vocab-size", 0);
    if (type != NULL && strcmp(type, "GPT2BPETokenizer") == 0)
        return 50257; /* GPT-2's BPE: 50,257 entries in gpt2-vocab.json */
    if (type == NULL && api_launch_has(c, "--vocab-file") && api_launch_has(c, "--merge-file")) {
        api_launch_warn(c, "launch_assumed",
                        "no --tokenizer-type: --vocab-file with --merge-file read as "
                        "GPT2BPETokenizer (50257 tokens)");
        return 50257;
    }
    if (model != NULL && api_launch_preset_of_hf_id(model) != NULL) {
        int idx = api_find_catalog(false, api_launch_preset_of_hf_id(model),
                                   strlen(api_launch_preset_of_hf_id(model)));
        return idx >= 0 ? core_presets[idx].arch.vocab : 0;
    }
    return 0;
}

/* megatron/core/tokenizers/utils/build_tokenizer.py, vocab_size_with_padding(). */
static void vocab(struct api_launch_ctx *c)
{
    int64_t v = base_vocab(c), tp = degree(c, "tp", "--tensor-model-parallel-size");
    int64_t multiple;

    if (!api_launch_mul(api_launch_int(c, "--make-vocab-size-divisible-by", 128), tp, &multiple) ||
        multiple > CORE_VOCAB_MAX || v > CORE_VOCAB_MAX) {
        api_launch_error(c, "--make-vocab-size-divisible-by",
                         "the padding multiple (x tp) or the vocabulary is out of range");
        return;
    }
    if (v <= 0) {
        if (!json_object_get(c->body, "vocab") && !json_object_get(c->out, "model"))
            api_launch_warn(c, "launch_assumed",
                            "the vocabulary is not in the arguments (--vocab-size, or "
                            "--tokenizer-type GPT2BPETokenizer, or a known --tokenizer-model): "
                            "give vocab");
        return;
    }
    if (multiple <= 0) {
        api_launch_error(c, "--make-vocab-size-divisible-by", "must be positive");
        return;
    }
    api_launch_set_int(c, "vocab", (v + multiple - 1) / multiple * multiple,
                       "--vocab-size padded to --make-vocab-size-divisible-by x tp");
}

static void shape(struct api_launch_ctx *c)
{
    int64_t hidden = api_launch_int(c, "--hidden-size", 0);
    const char *model = api_launch_str(c, "--tokenizer-model");
    const char *pos = api_launch_str(c, "--position-embedding-type");

    if (!api_launch_has(c, "--num-layers") && !api_launch_has(c, "--hidden-size")) {
        const char *preset = model != NULL ? api_launch_preset_of_hf_id(model) : NULL;

        if (preset != NULL)
            api_launch_set_str(c, "model", preset, "--tokenizer-model");
        else if (!json_object_get(c->body, "config") && !json_object_get(c->body, "model") &&
                 !json_object_get(c->body, "layers"))
            api_launch_error(
                c, NULL,
                "no model shape: give --num-layers and --hidden-size, a known "
                "--tokenizer-model, or the body's config (a Hugging Face config.json)");
        vocab(c);
        return;
    }
    if (api_launch_on(c, "--group-query-attention"))
        api_launch_set_int(c, "kv_heads", api_launch_int(c, "--num-query-groups", 1),
                           "--group-query-attention --num-query-groups");
    api_launch_set_bool(c, "gated_mlp", api_launch_on(c, "--swiglu"), "--swiglu");
    if (api_launch_has(c, "--ffn-hidden-size"))
        api_launch_set_int(c, "ffn_hidden", api_launch_int(c, "--ffn-hidden-size", 0),
                           "--ffn-hidden-size");
    else if (hidden > 0 && hidden <= CORE_HIDDEN_MAX) /* arguments.py: int((4h*2/3)/64)*64 */
        api_launch_set_int(c, "ffn_hidden",
                           api_launch_on(c, "--swiglu")
                               ? (int64_t)floor(4.0 * (double)hidden * 2.0 / 3.0 / 64.0) * 64
                               : 4 * hidden,
                           "--hidden-size (Megatron's default --ffn-hidden-size)");
    api_launch_set_bool(c, "tied_embeddings",
                        !api_launch_on(c, "--untie-embeddings-and-output-weights"),
                        "--untie-embeddings-and-output-weights");
    if (pos == NULL || strcmp(pos, "learned_absolute") == 0)
        api_launch_warn(c, "launch_not_modelled",
                        "--position-embedding-type learned_absolute (Megatron's default): the "
                        "learned position table (--max-position-embeddings %lld x hidden %lld "
                        "weights) is not counted",
                        (long long)api_launch_int(c, "--max-position-embeddings",
                                                  api_launch_int(c, "--seq-length", 0)),
                        (long long)hidden);
    vocab(c);
}

/* TC's recompute rules: full needs a method and a layer count; block with fewer layers than a
 * stage holds recomputes only part of it. */
static void recompute(struct api_launch_ctx *c)
{
    const char *g = api_launch_str(c, "--recompute-granularity");
    const char *method = api_launch_str(c, "--recompute-method");
    int64_t n = api_launch_int(c, "--recompute-num-layers", 0);
    int64_t pp = degree(c, "pp", "--pipeline-model-parallel-size");
    int64_t per_stage = pp > 0 ? api_launch_int(c, "--num-layers", 0) / pp : 0;

    if (g == NULL && api_launch_on(c, "--recompute-activations"))
        g = "selective";
    if (g == NULL) {
        api_launch_set_str(c, "checkpointing", "none", "--recompute-granularity (absent)");
        return;
    }
    if (strcmp(g, "selective") == 0) {
        api_launch_set_str(c, "checkpointing", "selective", "--recompute-granularity");
        return;
    }
    if (strcmp(g, "full") != 0) {
        api_launch_error(c, "--recompute-granularity", "expected full or selective, got '%.40s'",
                         g);
        return;
    }
    if (method == NULL || (strcmp(method, "uniform") != 0 && strcmp(method, "block") != 0)) {
        api_launch_error(c, "--recompute-method",
                         "--recompute-granularity full needs --recompute-method uniform or block");
        return;
    }
    if (n < 1) {
        api_launch_error(c, "--recompute-num-layers",
                         "--recompute-granularity full needs --recompute-num-layers >= 1");
        return;
    }
    if (strcmp(method, "block") == 0 && per_stage > 0 && n < per_stage) {
        api_launch_warn(c, "launch_not_modelled",
                        "--recompute-method block recomputes %lld of the %lld layers per stage: "
                        "priced as no recomputation (the memory upper bound)",
                        (long long)n, (long long)per_stage);
        api_launch_set_str(c, "checkpointing", "none", "--recompute-method block");
        return;
    }
    api_launch_set_str(c, "checkpointing", "full", "--recompute-granularity full");
}

static void precision(struct api_launch_ctx *c)
{
    const char *fp8 = api_launch_str(c, "--fp8-format");
    bool bf16 = api_launch_on(c, "--bf16"), fp16 = api_launch_on(c, "--fp16");
    const char *grads;

    if (bf16 && fp16) {
        api_launch_conflict(c, "--fp16", "--bf16 and --fp16 together (arguments.py asserts)");
        return;
    }
    if (fp8 != NULL && strcmp(fp8, "e4m3") != 0 && strcmp(fp8, "hybrid") != 0) {
        api_launch_error(c, "--fp8-format", "expected e4m3 or hybrid, got '%.40s'", fp8);
        return;
    }
    api_launch_set_str(c, "precision",
                       fp8 != NULL ? "fp8"
                       : bf16      ? "bf16"
                       : fp16      ? "fp16"
                                   : "fp32",
                       fp8 != NULL ? "--fp8-format"
                       : bf16      ? "--bf16"
                       : fp16      ? "--fp16"
                                   : "no --bf16/--fp16");
    /* arguments.py: bf16 accumulates and all-reduces gradients in fp32 unless
     * --grad-reduce-in-bf16; fp16 keeps them fp16 unless asked for fp32. */
    if (bf16)
        grads = api_launch_on(c, "--grad-reduce-in-bf16") ? "bf16" : "fp32";
    else if (fp16)
        grads = api_launch_on(c, "--accumulate-allreduce-grads-in-fp32") ? "fp32" : "fp16";
    else
        grads = "fp32";
    api_launch_set_str(c, "grad_precision", grads,
                       bf16   ? "--bf16"
                       : fp16 ? "--fp16"
                              : "fp32 training");
}

static void optimizer(struct api_launch_ctx *c)
{
    const char *o = api_launch_str(c, "--optimizer");

    if (o == NULL || strcmp(o, "adam") == 0)
        api_launch_set_str(c, "optimizer", "adamw", "--optimizer adam");
    else if (strcmp(o, "sgd") == 0) {
        const json_t *m = json_object_get(c->seen, "--sgd-momentum");

        api_launch_set_str(c, "optimizer",
                           m != NULL && json_number_value(m) == 0 ? "sgd" : "sgd_momentum",
                           "--optimizer sgd");
    } else
        api_launch_warn(c, "launch_not_modelled",
                        "--optimizer %.40s is not modelled; optimizer "
                        "left at memwall's default",
                        o);
}

static void parallel(struct api_launch_ctx *c)
{
    int64_t tp = degree(c, "tp", "--tensor-model-parallel-size");
    int64_t pp = degree(c, "pp", "--pipeline-model-parallel-size");
    int64_t layers = api_launch_int(c, "--num-layers", 0);
    int64_t per_vstage = api_launch_int(c, "--num-layers-per-virtual-pipeline-stage", 0);
    const char *strategy = api_launch_str(c, "--data-parallel-sharding-strategy");
    int zero = api_launch_on(c, "--use-distributed-optimizer") ? 1 : 0;

    api_launch_set_bool(c, "sequence_parallel", tp > 1 && api_launch_on(c, "--sequence-parallel"),
                        "--sequence-parallel");
    api_launch_set_bool(c, "tp_comm_overlap", api_launch_on(c, "--tp-comm-overlap"),
                        "--tp-comm-overlap");
    api_launch_set_bool(c, "dp_comm_overlap",
                        api_launch_on(c, "--overlap-grad-reduce") ||
                            api_launch_on(c, "--overlap-param-gather"),
                        "--overlap-grad-reduce");
    if (api_launch_on(c, "--use-torch-fsdp2"))
        zero = 3;
    if (api_launch_on(c, "--use-megatron-fsdp"))
        zero = strategy == NULL || strcmp(strategy, "optim_grads_params") == 0 ? 3
               : strcmp(strategy, "optim_grads") == 0                          ? 2
               : strcmp(strategy, "optim") == 0                                ? 1
                                                                               : 0;
    api_launch_set_int(c, "zero_stage", zero, "--use-distributed-optimizer");
    if (per_vstage > 0 && layers > 0 && pp > 0) {
        if (layers % pp != 0 || (layers / pp) % per_vstage != 0) {
            api_launch_conflict(c, "--num-layers-per-virtual-pipeline-stage",
                                "%lld layers over %lld stages do not split into stages of %lld "
                                "(arguments.py asserts both divisions)",
                                (long long)layers, (long long)pp, (long long)per_vstage);
            return;
        }
        api_launch_set_int(c, "virtual_stages", layers / pp / per_vstage,
                           "--num-layers-per-virtual-pipeline-stage");
    }
    if (json_object_get(c->body, "gpus") == NULL && json_object_get(c->out, "gpus") == NULL) {
        int64_t g, tpp;

        if (!api_launch_mul(tp, pp, &tpp) ||
            !api_launch_mul(tpp, api_launch_int(c, "--context-parallel-size", 1), &g))
            return; /* the decoder names the degree out of bounds */

        api_launch_warn(c, "launch_assumed",
                        "the GPU count is not in the arguments: priced at tp x pp x cp = %lld (one "
                        "data-parallel rank); give gpus or the torchrun launcher",
                        (long long)g);
        api_launch_set_int(c, "gpus", g, "tp x pp x cp (assumed)");
    }
}

static void attention(struct api_launch_ctx *c)
{
    const char *backend = api_launch_str(c, "--attention-backend");
    bool fused = backend == NULL || strcmp(backend, "auto") == 0 || strcmp(backend, "flash") == 0 ||
                 strcmp(backend, "fused") == 0;

    if (backend != NULL && !fused && strcmp(backend, "unfused") != 0 &&
        strcmp(backend, "local") != 0) {
        api_launch_error(c, "--attention-backend",
                         "expected auto, flash, fused, unfused or local, got '%.40s'", backend);
        return;
    }
    api_launch_set_bool(c, "flash_attention", fused || api_launch_on(c, "--use-flash-attn"),
                        backend != NULL ? "--attention-backend" : "--attention-backend (auto)");
}

/* "([0]*K+[1]*M)": K leading dense layers; 0 when the pattern is not that shape. */
static bool dense_prefix(const char *s, int64_t *k)
{
    static const char lead[] = "([0]*", mid[] = "+[1]*";
    char *end;
    long long dense, moe;

    if (strncmp(s, lead, sizeof lead - 1) != 0)
        return false;
    errno = 0;
    dense = strtoll(s + sizeof lead - 1, &end, 10);
    if (errno != 0 || dense < 0 || strncmp(end, mid, sizeof mid - 1) != 0)
        return false;
    moe = strtoll(end + sizeof mid - 1, &end, 10);
    if (errno != 0 || moe < 1 || strcmp(end, ")") != 0)
        return false;
    *k = dense;
    return true;
}

/* transformer_config.py: moe_token_dispatcher_type (default allgather), flex's backend. */
static void dispatcher(struct api_launch_ctx *c)
{
    const char *t = api_launch_str(c, "--moe-token-dispatcher-type");
    const char *backend = api_launch_str(c, "--moe-flex-dispatcher-backend");

    if (api_launch_on(c, "--moe-enable-deepep"))
        t = "flex", backend = "deepep";
    if (t == NULL)
        t = "allgather";
    if (strcmp(t, "flex") == 0) {
        backend = backend != NULL ? backend : "deepep";
        if (strcmp(backend, "deepep") == 0 || strcmp(backend, "hybridep") == 0) {
            api_launch_set_str(c, "moe_dispatcher", backend, "--moe-flex-dispatcher-backend");
            return;
        }
        t = backend;
    } else if (strcmp(t, "alltoall") == 0) {
        api_launch_set_str(c, "moe_dispatcher", "alltoall", "--moe-token-dispatcher-type");
        return;
    } else if (strcmp(t, "allgather") != 0) {
        api_launch_error(c, "--moe-token-dispatcher-type",
                         "expected allgather, alltoall or flex, got '%.30s'", t);
        return;
    }
    api_launch_warn(
        c, "launch_not_modelled",
        "MoE dispatcher %.20s (Megatron's default is allgather) is not modelled: priced "
        "as alltoall",
        t);
}

static void experts(struct api_launch_ctx *c)
{
    const char *freq = api_launch_str(c, "--moe-layer-freq");
    int64_t moe_ffn =
        api_launch_int(c, "--moe-ffn-hidden-size", api_launch_out_int(c, "ffn_hidden", 0));
    int64_t shared = api_launch_int(c, "--moe-shared-expert-intermediate-size", 0), k;

    if (!api_launch_has(c, "--num-experts"))
        return;
    dispatcher(c);
    api_launch_set_int(c, "experts_per_token", api_launch_int(c, "--moe-router-topk", 2),
                       "--moe-router-topk");
    if (shared > 0) {
        if (moe_ffn > 0 && shared % moe_ffn == 0)
            api_launch_set_int(c, "shared_experts", shared / moe_ffn,
                               "--moe-shared-expert-intermediate-size / --moe-ffn-hidden-size");
        else
            api_launch_warn(c, "launch_not_modelled",
                            "--moe-shared-expert-intermediate-size %lld is not a multiple of the "
                            "expert size %lld: the shared expert is not counted",
                            (long long)shared, (long long)moe_ffn);
    }
    if (freq == NULL || strcmp(freq, "1") == 0)
        return;
    if (dense_prefix(freq, &k))
        api_launch_set_int(c, "dense_layers", k, "--moe-layer-freq");
    else
        api_launch_warn(c, "launch_not_modelled",
                        "--moe-layer-freq %.40s: only 1 and ([0]*K+[1]*M) are modelled; every "
                        "layer priced as MoE",
                        freq);
}

static void tokens(struct api_launch_ctx *c)
{
    int64_t seq = api_launch_int(c, "--seq-length", 0);
    int64_t global = api_launch_int(c, "--global-batch-size", 0);

    if (seq <= 0)
        return;
    if (api_launch_has(c, "--train-samples"))
        api_launch_set(c, "tokens",
                       json_real((double)api_launch_int(c, "--train-samples", 0) * (double)seq),
                       "--train-samples x --seq-length");
    else if (api_launch_has(c, "--train-iters") && global > 0)
        api_launch_set(
            c, "tokens",
            json_real((double)api_launch_int(c, "--train-iters", 0) * (double)global * (double)seq),
            "--train-iters x --global-batch-size x --seq-length");
}

/* --recompute-modules a b (nargs '*') as "a,b"; the optimizer's moment precision. */
static void modules_and_moments(struct api_launch_ctx *c)
{
    const json_t *mods = json_object_get(c->seen, "--recompute-modules");
    const char *avg = api_launch_str(c, "--exp-avg-dtype");
    const char *sq = api_launch_str(c, "--exp-avg-sq-dtype");
    char list[256] = "";
    size_t i, n = 0;
    json_t *m;

    json_array_foreach (mods, i, m) {
        int k = snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", json_string_value(m));

        if (k < 0 || (size_t)k >= sizeof list - n)
            break;
        n += (size_t)k;
    }
    if (json_is_string(mods))
        snprintf(list, sizeof list, "%s", json_string_value(mods));
    if (list[0] != '\0')
        api_launch_set_str(c, "recompute_modules", list, "--recompute-modules");
    if (avg == NULL && sq == NULL)
        return;
    avg = avg != NULL ? avg : "fp32";
    sq = sq != NULL ? sq : "fp32";
    if (strcmp(avg, sq) == 0 && (strcmp(avg, "fp32") == 0 || strcmp(avg, "bf16") == 0))
        api_launch_set_str(c, "optimizer_state_dtype", avg, "--exp-avg-dtype");
    else
        api_launch_warn(c, "launch_not_modelled",
                        "--exp-avg-dtype %.8s with --exp-avg-sq-dtype %.8s: moments in fp16, fp8 "
                        "or two precisions are not modelled",
                        avg, sq);
}

/* --cuda-graph-impl with --cuda-graph-modules (or its older name --cuda-graph-scope):
 * transformer_config.py: the modules mean nothing with impl none (the default), and an empty
 * list with a per-layer impl captures the whole layer. */
static void cuda_graphs(struct api_launch_ctx *c)
{
    const char *impl = api_launch_str(c, "--cuda-graph-impl");
    const json_t *mods = json_object_get(c->seen, "--cuda-graph-modules");
    char list[256] = "";
    size_t i, n = 0;
    json_t *m;

    if (impl == NULL || strcmp(impl, "none") == 0)
        return;
    if (strcmp(impl, "full_iteration") == 0) {
        api_launch_warn(c, "launch_not_modelled",
                        "--cuda-graph-impl full_iteration (one graph per step, drop-and-pad MoE) "
                        "is not modelled: priced without CUDA graphs");
        return;
    }
    if (strcmp(impl, "transformer_engine") != 0 && strcmp(impl, "local") != 0) {
        api_launch_error(c, "--cuda-graph-impl",
                         "expected none, local, transformer_engine or full_iteration, got '%.30s'",
                         impl);
        return;
    }
    if (mods == NULL)
        mods = json_object_get(c->seen, "--cuda-graph-scope");
    json_array_foreach (mods, i, m) {
        const char *v = json_string_value(m);
        int k;

        if (v == NULL || v[0] == '\0' || core_cuda_graph_text_check(v, strlen(v)) != NULL) {
            api_launch_warn(c, "launch_not_modelled",
                            "--cuda-graph-modules %.20s is not modelled: priced without it",
                            v != NULL ? v : "?");
            continue;
        }
        k = snprintf(list + n, sizeof list - n, "%s%s", n ? "," : "", v);
        if (k < 0 || (size_t)k >= sizeof list - n)
            break;
        n += (size_t)k;
    }
    if (json_is_string(mods))
        snprintf(list, sizeof list, "%s", json_string_value(mods));
    if (mods == NULL || (json_is_array(mods) && json_array_size(mods) == 0))
        api_launch_warn(c, "launch_not_modelled",
                        "whole-layer CUDA graphs (no --cuda-graph-modules) need drop-and-pad MoE "
                        "and are not modelled: priced without CUDA graphs");
    if (list[0] != '\0')
        api_launch_set_str(c, "cuda_graph_modules", list, "--cuda-graph-modules");
}

void api_launch_megatron_derive(struct api_launch_ctx *c)
{
    gpus_from_launcher(c);
    shape(c);
    experts(c);
    recompute(c);
    precision(c);
    optimizer(c);
    attention(c);
    tokens(c);
    modules_and_moments(c);
    cuda_graphs(c);
    parallel(c);
}
