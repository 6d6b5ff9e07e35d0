/*
 * serve_timing.c - a sized deployment to the serving time model's input (serve_timing.h).
 *
 * What the time model reads, and where it comes from: the weights per GPU in their stored
 * format and the KV bytes per token per GPU from the memory side (core_serve); the input
 * embedding's and the routed experts' shares of those weights from the architecture's counts;
 * the GEMM arithmetic from the quantization (FP8 and INT8 W8A8 on the GPU's 8-bit peak where it
 * has one; everything else, 4-bit formats included, multiplied in 16 bits); bandwidth, link and
 * generation from the catalog (or the request's overrides).
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "serve_timing.h"

const char *const core_batching_names[CORE_BATCHING_COUNT] = {"auto", "static", "continuous"};

int64_t core_serve_max_concurrency(const struct core_serve_result *r, int64_t input_len,
                                   int64_t output_len)
{
    int64_t len = input_len + output_len, n;

    if (len <= 0 || r->kv.tokens <= 0)
        return 0;
    n = r->kv.tokens / len;
    if (r->resolved.max_num_seqs > 0 && n > r->resolved.max_num_seqs)
        n = r->resolved.max_num_seqs;
    return n;
}

bool core_serve_time_possible(const struct core_serve_result *r)
{
    const struct core_serve_resolved *w = &r->resolved;

    return r->fits && w->input_len + w->output_len <= w->max_model_len &&
           core_serve_max_concurrency(r, w->input_len, w->output_len) > 0;
}

/* Bytes per weight of the format's quantized linear layers (a large tensor, so per-block
 * scales count in full); the model's dtype when unquantized. */
static double linear_bytes_per_weight(enum core_quant q, int dtype_bytes)
{
    const int64_t n = (int64_t)1 << 20;
    int64_t b;

    if (q == CORE_QUANT_NONE || (unsigned)q >= CORE_QUANT_COUNT)
        return (double)dtype_bytes;
    b = core_quant_bytes(&core_quant_formats[q].linear, n, 0);
    return b > 0 ? (double)b / (double)n : (double)dtype_bytes;
}

static int dtype_bytes_of(enum core_precision p)
{
    return p == CORE_PREC_FP32 ? 4 : p == CORE_PREC_FP8 ? 1 : 2;
}

/* The GEMM arithmetic and its peak: W8A8 on the 8-bit tensor cores where the part has them,
 * else (vLLM's FP8 Marlin on Ampere, INT8 without an INT8 path) 16 bits. */
static void gemm_peak(const struct core_serve_result *r, enum core_quant q, double peak16,
                      struct core_serve_time_input *out)
{
    const struct core_gpu *g = &core_gpus[r->model.gpu];

    out->math = CORE_SERVE_MATH_16;
    out->gemm_tflops = peak16;
    if (q == CORE_QUANT_FP8 && g->fp8_tflops > 0) {
        out->math = CORE_SERVE_MATH_FP8;
        out->gemm_tflops = g->fp8_tflops;
    } else if (q == CORE_QUANT_INT8 && g->int8_tops > 0) {
        out->math = CORE_SERVE_MATH_INT8;
        out->gemm_tflops = g->int8_tops;
    }
}

void core_serve_time_input_of(const struct core_serve_result *r, struct core_serve_time_input *out)
{
    const struct core_serve_resolved *w = &r->resolved;
    const struct core_arch *a = &r->model.shape.arch;
    struct core_arch_counts c = {0};
    enum core_quant q = r->resolved.quantization;
    double tp = (double)(r->resolved.tp > 0 ? r->resolved.tp : 1);
    double pp = (double)(r->resolved.pp > 0 ? r->resolved.pp : 1);
    double ep = (double)(r->resolved.ep > 0 ? r->resolved.ep : 1);
    int dtype = dtype_bytes_of(r->model.precision);
    double peak16 = r->model.peak_tflops;
    int64_t conc = w->concurrency, cmax;

    memset(out, 0, sizeof *out);
    out->arch = *a;
    if (!core_arch_count(a, &c))
        memset(&c, 0, sizeof c);
    out->weight_bytes = (double)r->per_gpu.weights;
    out->linear_bytes_per_weight = linear_bytes_per_weight(q, dtype);
    /* The embedding table is split over tp (vocab-parallel) and held by the first stage. */
    out->embedding_bytes = (double)c.embedding * dtype / tp;
    /* The routed experts as the rank holds them (core_serve_weight_bytes_moe): ceil(E / ep)
     * experts, each split width / ep ways over the MoE group of `width` ranks (moe_width: the
     * tp x dp GPUs of a stage), then over the stages - E / width experts' worth when ep | E. */
    double E = (double)a->experts, width = (double)r->resolved.moe_width;
    if (width < ep || width < 1)
        width = ep > tp ? ep : tp; /* a resolution without a MoE group: tp x pp GPUs */
    double held = E > 0 ? ceil(E / ep) * ep / E : 1.0;
    out->expert_bytes = (double)c.experts * linear_bytes_per_weight(q, dtype) * held / (width * pp);
    if (out->embedding_bytes + out->expert_bytes > out->weight_bytes)
        out->expert_bytes = out->weight_bytes > out->embedding_bytes
                                ? out->weight_bytes - out->embedding_bytes
                                : 0.0;
    out->kv_bytes_per_token = (double)r->kv.bytes_per_token;
    out->attention_tflops = peak16;
    gemm_peak(r, q, peak16, out);
    out->hbm_tbps = r->resolved.hbm_tbps;
    out->link_gbs = r->model.intra_node_gbs;
    out->generation = core_gpus[r->model.gpu].generation;
    out->tp = r->resolved.tp;
    out->pp = r->resolved.pp;
    /* The time model's EP group: the MoE layers' ranks, whose width / tp attention groups' tokens
     * meet in the experts (vLLM's DP ranks step the MoE layers together with or without EP). */
    out->ep = (int64_t)width;
    out->cuda_graphs = !r->resolved.enforce_eager;
    out->input_len = w->input_len;
    out->output_len = w->output_len;
    /* `max` is what the pool and the scheduler hold; a number beyond that runs at that many:
     * the engine's scheduler admits no more (vLLM's, SGLang's, TensorRT-LLM's all queue the rest
     * until a sequence finishes). */
    cmax = core_serve_max_concurrency(r, w->input_len, w->output_len);
    if (conc == CORE_SERVE_CONCURRENCY_MAX || (cmax > 0 && conc > cmax))
        conc = cmax;
    out->concurrency = conc > 0 ? conc : 1;
    out->continuous =
        w->batching == CORE_BATCHING_CONTINUOUS ||
        (w->batching == CORE_BATCHING_AUTO && w->concurrency == CORE_SERVE_CONCURRENCY_MAX);
    out->usd_per_gpu_hour = w->usd_per_gpu_hour;
}

void core_serve_timing(const struct core_serve_result *r, struct core_serve_time *out)
{
    struct core_serve_time_input t;

    core_serve_time_input_of(r, &t);
    core_serve_time_compute(&t, NULL, out);
}
