/*
 * cli_job.h - a command's arguments, and the request body they make.
 */
#ifndef MEMWALL_CLI_JOB_H
#define MEMWALL_CLI_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct cli_job {
    const char *cmd;  /* "fit", ... */
    bool json;        /* --json: print the reply body itself */
    const char *file; /* NULL, a path, or "-" for stdin */
    json_t *flags;    /* {name: "value"}, owned by the caller */
};

/* Parse argv (argv[0] is the command) into job, whose cmd and flags are set. Returns -1 to go
 * on, else the exit status (0 after --help; CLI_EXIT_BAD after an error, already reported). */
int cli_job_parse(int argc, char **argv, struct cli_job *job);

/* The request body: the file's bytes untouched when no flag is given, else the file's object
 * with the flags merged over it (flags alone without a file). malloc'd; NULL after reporting
 * a problem on stderr. */
char *cli_job_body(const struct cli_job *job, size_t *len);

#endif
