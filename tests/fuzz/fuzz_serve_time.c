/*
 * fuzz_serve_time.c - libFuzzer target: the serving time model (core/serve_time.c) fed arbitrary
 * architectures, byte counts, peaks, layouts and workloads within the API's bounds, and some
 * beyond them. Every figure must be finite and non-negative, TPOT must not fall when the
 * concurrency grows, and doubling the HBM bandwidth must not slow a step. A broken property
 * aborts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_time.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct gen {
    const uint8_t *p;
    size_t n;
};

/* The next 4 bytes as a number in [0, 1) (0 once the input is used up). */
static double unit(struct gen *g)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++) {
        v = v << 8 | (g->n > 0 ? *g->p : 0);
        if (g->n > 0) {
            g->p++;
            g->n--;
        }
    }
    return (double)v / 4294967296.0;
}

/* lo..hi spread logarithmically (lo >= 1). */
static double span(struct gen *g, double lo, double hi)
{
    return lo * pow(hi / lo, unit(g));
}

static int64_t whole(struct gen *g, double lo, double hi)
{
    return (int64_t)span(g, lo, hi);
}

static void fail(const char *what)
{
    fprintf(stderr, "property broken: %s\n", what);
    abort();
}

static void check(const struct core_serve_time *t)
{
    const double v[] = {t->ttft_seconds,
                        t->tpot_seconds,
                        t->e2e_seconds,
                        t->output_tokens_per_second,
                        t->requests_per_second,
                        t->mbu,
                        t->mfu,
                        t->knee_batch,
                        t->experts_touched,
                        t->decode.seconds,
                        t->prefill.seconds};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            fail("a figure that is not finite and non-negative");
    if (!isfinite(t->usd_per_million_output_tokens))
        fail("a non-finite price");
}

static void arch(struct gen *g, struct core_arch *a)
{
    memset(a, 0, sizeof *a);
    a->layers = whole(g, 1, 1000);
    a->heads = whole(g, 1, 256);
    a->kv_heads = a->heads / whole(g, 1, (double)a->heads + 1);
    a->head_dim = whole(g, 1, 512);
    a->hidden = whole(g, 1, 65536);
    a->ffn_hidden = whole(g, 1, 262144);
    a->vocab = whole(g, 1, 1e6);
    a->gated_mlp = unit(g) < 0.5;
    if (unit(g) < 0.4) {
        a->experts = whole(g, 1, 512);
        a->experts_per_token = whole(g, 1, (double)a->experts + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gen g = {data, size};
    struct core_serve_time_input in;
    struct core_serve_time a, b;

    memset(&in, 0, sizeof in);
    arch(&g, &in.arch);
    in.weight_bytes = span(&g, 1, 1e13);
    in.embedding_bytes = in.weight_bytes * unit(&g);
    in.expert_bytes = in.weight_bytes * unit(&g);
    in.kv_bytes_per_token = span(&g, 1, 1e8);
    in.gemm_tflops = span(&g, 1e-3, 1e6);
    in.attention_tflops = span(&g, 1e-3, 1e6);
    in.hbm_tbps = span(&g, 1e-3, 1000);
    in.link_gbs = span(&g, 1e-3, 1e6);
    in.math = (enum core_serve_math)(whole(&g, 1, 3.99) - 1);
    in.generation = (enum core_gpu_generation)(whole(&g, 1, CORE_GEN_COUNT + 0.99) - 1);
    in.tp = whole(&g, 1, 1e6);
    in.pp = whole(&g, 1, 1e3);
    in.cuda_graphs = unit(&g) < 0.5;
    in.input_len = whole(&g, 1, 1e8);
    in.output_len = whole(&g, 1, 1e8);
    in.concurrency = whole(&g, 1, 1e6);
    in.continuous = unit(&g) < 0.5;
    in.usd_per_gpu_hour = unit(&g) < 0.5 ? -1 : span(&g, 1, 1e6) - 1;
    core_serve_time_compute(&in, NULL, &a);
    check(&a);
    in.concurrency += whole(&g, 1, 1e4);
    core_serve_time_compute(&in, NULL, &b);
    check(&b);
    if (b.tpot_seconds < a.tpot_seconds * (1 - 1e-9))
        fail("TPOT fell as the concurrency grew");
    in.hbm_tbps *= 2;
    core_serve_time_compute(&in, NULL, &a);
    check(&a);
    if (a.tpot_seconds > b.tpot_seconds * (1 + 1e-9))
        fail("twice the bandwidth slowed the decode step");
    return 0;
}
