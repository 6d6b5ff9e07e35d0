/*
 * serve_time_write.c - the `time` member of /inference (and of every /inference/plan plan):
 * the serving time model's figures (core/serve_time.h; docs/serving.md, "Time"), streamed
 * through the JSON writer like the other reply members.
 */
#include "serve_time_write.h"

static void real(struct api_jsonw *w, const char *key, double v)
{
    api_jsonw_key(w, key);
    api_jsonw_double(w, v);
}

static void step(struct api_jsonw *w, const char *key, const struct core_serve_step *s)
{
    api_jsonw_key(w, key);
    api_jsonw_open_object(w);
    real(w, "seconds", s->seconds);
    real(w, "weights_hbm", s->weights_hbm);
    real(w, "kv_hbm", s->kv_hbm);
    real(w, "compute", s->compute);
    real(w, "tp_comm", s->tp_comm);
    real(w, "overhead", s->overhead);
    real(w, "bytes", s->bytes);
    real(w, "flops", s->flops);
    api_jsonw_close_object(w);
}

void api_write_serve_time(struct api_jsonw *w, const struct core_serve_time_input *in,
                          const struct core_serve_time *t, double expected_error)
{
    api_jsonw_key(w, "time");
    api_jsonw_open_object(w);
    api_jsonw_key(w, "input_len");
    api_jsonw_int(w, in->input_len);
    api_jsonw_key(w, "output_len");
    api_jsonw_int(w, in->output_len);
    api_jsonw_key(w, "concurrency");
    api_jsonw_int(w, t->concurrency);
    api_jsonw_key(w, "batching");
    api_jsonw_string(w, in->continuous ? "continuous" : "static");
    real(w, "ttft_seconds", t->ttft_seconds);
    real(w, "tpot_seconds", t->tpot_seconds);
    real(w, "e2e_seconds", t->e2e_seconds);
    real(w, "output_tokens_per_second", t->output_tokens_per_second);
    real(w, "requests_per_second", t->requests_per_second);
    /* core/serve_validation.c: the engine's error on this generation's unseen rows; null where
     * none was measured (a warning says why). */
    api_jsonw_key(w, "expected_error");
    if (expected_error >= 0)
        api_jsonw_double(w, expected_error);
    else
        api_jsonw_null(w);
    api_jsonw_key(w, "bottleneck");
    api_jsonw_string(w, core_serve_bottleneck_names[t->bottleneck]);
    real(w, "mbu", t->mbu);
    real(w, "mfu", t->mfu);
    api_jsonw_key(w, "usd_per_million_output_tokens");
    if (t->usd_per_million_output_tokens >= 0)
        api_jsonw_double(w, t->usd_per_million_output_tokens);
    else
        api_jsonw_null(w);
    real(w, "knee_batch", t->knee_batch);
    real(w, "experts_touched", t->experts_touched);
    step(w, "decode_step", &t->decode);
    step(w, "prefill_step", &t->prefill);
    api_jsonw_close_object(w);
}
