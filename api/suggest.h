/*
 * suggest.h - the 400 for an unknown input name, with a suggestion (suggest.c).
 */
#ifndef MEMWALL_API_SUGGEST_H
#define MEMWALL_API_SUGGEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Which rows a request decodes through: the compute routes' (core_inputs), /plan's (its own rows
 * shadow them), /inference's (core_serve_inputs first). */
enum api_scope {
    API_SCOPE_COMPUTE = 0,
    API_SCOPE_PLAN = 1,
    API_SCOPE_SERVE = 2,
    API_SCOPE_SERVE_PLAN = 3, /* /inference/plan: its rows, /inference's, the compute rows */
};

/* Append {name, "unknown input; did you mean ...?"} to errors, suggesting among the scope's rows
 * (the inputs the planner chooses are never suggested for /plan). */
void api_add_unknown(json_t *errors, const char *name, size_t len, enum api_scope scope);

#endif
