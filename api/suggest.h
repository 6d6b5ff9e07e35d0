/*
 * suggest.h - the 400 for an unknown input name, with a suggestion (suggest.c).
 */
#ifndef MEMWALL_API_SUGGEST_H
#define MEMWALL_API_SUGGEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Append {name, "unknown input; did you mean ...?"} to errors; plan: /plan's rows count too,
 * and the inputs the planner chooses are never suggested there. */
void api_add_unknown(json_t *errors, const char *name, size_t len, bool plan);

#endif
