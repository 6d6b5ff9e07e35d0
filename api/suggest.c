/*
 * suggest.c - an unknown input name is an error that suggests the nearest known one ("batch" for
 * "bacth"), within two edits, among the rows the request could have meant (suggest.h).
 */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "launch.h"
#include "suggest.h"
#include "value.h"

/* Edit distance with an early cap, to suggest "batch" for "bacth". Names are short. */
static size_t distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b), row[40], i, j;
    if (alen >= 40 || blen >= 40)
        return 99;
    for (j = 0; j <= blen; j++)
        row[j] = j;
    for (i = 1; i <= alen; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= blen; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[blen];
}

void api_add_unknown(json_t *errors, const char *name, size_t len, enum api_scope scope)
{
    char msg[API_MSG_MAX], member[32];
    const char *best = NULL;
    size_t best_d = 3; /* suggest only within two edits */
    bool plan = scope == API_SCOPE_PLAN;
    bool serve = scope == API_SCOPE_SERVE || scope == API_SCOPE_SERVE_PLAN;
    const struct core_input_spec *extra = plan    ? core_plan_inputs
                                          : serve ? core_serve_inputs
                                                  : NULL;
    size_t rows = core_input_count + (plan    ? core_plan_input_count
                                      : serve ? core_serve_input_count
                                              : 0);

    /* A launch configuration reaches here from a query string or a route that does not take
     * it (launch.h): say where it goes rather than suggest a name. */
    if (len < sizeof member) {
        memcpy(member, name, len);
        member[len] = '\0';
        if (api_launch_is_member(member)) {
            api_errors_add(errors, name, len,
                           "a launch configuration (docs/launch.md): POST it in the body of "
                           "/flops, /memory, /fit, /runtime or /evaluate (vllm_args: /inference)");
            return;
        }
    }
    for (size_t i = 0; i < rows; i++) {
        const struct core_input_spec *c =
            i < core_input_count ? &core_inputs[i] : &extra[i - core_input_count];
        size_t d = distance(name, len, c->name);
        if (d < best_d && !(plan && c->planned)) {
            best_d = d;
            best = c->name;
        }
    }
    /* /inference/plan: its own rows too. */
    for (size_t i = 0; scope == API_SCOPE_SERVE_PLAN && i < core_serve_plan_input_count; i++) {
        size_t d = distance(name, len, core_serve_plan_inputs[i].name);
        if (d < best_d) {
            best_d = d;
            best = core_serve_plan_inputs[i].name;
        }
    }
    if (best != NULL)
        snprintf(msg, sizeof msg, "unknown input; did you mean \"%s\"?", best);
    else
        snprintf(msg, sizeof msg, "unknown input");
    api_errors_add(errors, name, len, msg);
}
