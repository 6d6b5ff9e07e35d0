/*
 * cli_reply.h - reading one answer of the api: its exit status and its table for people.
 *
 * Every table is laid out by one row table in cli_reply.c ({label, member path in the reply,
 * printf format}), so a member of the reply schema is named once on this side, in that table.
 */
#ifndef MEMWALL_CLI_REPLY_H
#define MEMWALL_CLI_REPLY_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* What an answer is read as: one view per command, and the problem+json of a bad input. */
enum cli_view {
    CLI_VIEW_FLOPS,
    CLI_VIEW_MEMORY,
    CLI_VIEW_FIT,
    CLI_VIEW_RUNTIME,
    CLI_VIEW_PLAN,
    CLI_VIEW_INFERENCE,
    CLI_VIEW_SERVE_PLAN, /* `memwall plan --inference`: POST /inference/plan */
    CLI_VIEW_PROBLEM,
};

/* The view of a command ("fit": CLI_VIEW_FIT), or -1 when name is not a command. */
int cli_view_of(const char *name);

/* Is the answer a problem+json object (an invalid request or batch item)? */
bool cli_reply_is_problem(json_t *answer);

/* The exit status of one answer read as view: CLI_EXIT_BAD for a problem, CLI_EXIT_NO when
 * the view's deciding row says no (it does not fit, no plan), else CLI_EXIT_OK. */
int cli_reply_verdict(enum cli_view view, json_t *answer);

/* The answer as the view's table on to. */
void cli_reply_print(FILE *to, enum cli_view view, json_t *answer);

#endif
