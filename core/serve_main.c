/*
 * serve_main.c - core_serve() (serve.h), the entry point: resolve and check the inputs
 * (serve.c), size the replica (serve.c, serve_size.c), then the warnings and, when it does not
 * serve, the advice (serve_advice.c). The files call one way: serve_main -> serve_advice ->
 * serve -> serve_size.
 */
#include "internal.h"
#include "serve.h"
#include "serve_validation.h"
#include "serve_internal.h"

enum core_status core_serve(const struct core_serve_input *in, struct core_serve_result *out,
                            struct core_problems *problems)
{
    struct core_problems scratch;
    struct core_problems *p = problems != NULL ? problems : &scratch;
    const struct core_arch *a;
    enum core_status st;

    p->count = 0;
    if (in == NULL || out == NULL) {
        core_problem_add(p, "input", "no input or no result to fill");
        return CORE_EINVAL;
    }
    st = core_serve_resolve(in, out, p);
    if (st != CORE_OK)
        return st;
    a = &out->model.shape.arch;
    if (!core_serve_size_replica(a, out->model.gpu, &in->base, &out->resolved, out)) {
        core_problem_add(p, "params", "the replica's memory overflows 64-bit bytes");
        return CORE_ERANGE;
    }
    core_serve_warnings(out, in->max_num_seqs > 0, out);
    core_serve_validation_warnings(out);
    if (!out->fits)
        core_serve_advise(a, in, out, out);
    else
        core_serve_time_notes(a, in, out);
    return CORE_OK;
}
