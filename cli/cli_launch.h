/*
 * cli_launch.h - `--launch FILE`: a launch script, a torchtitan .toml, a ds_config .json or a
 * Kubernetes manifest turned into the body member the api resolves (api/launch.h).
 */
#ifndef MEMWALL_CLI_LAUNCH_H
#define MEMWALL_CLI_LAUNCH_H

#include <jansson.h>

/* Read path, say on stderr what it holds, and set the matching member (megatron_args,
 * torchtitan_config, deepspeed_config) in flags. 0, or -1 after reporting the problem. */
int cli_launch_read(const char *path, json_t *flags);

/* The command line a shell script runs the framework with (its variables expanded, its
 * continuations joined), as one argument string; *line the script line it starts on. NULL when
 * the script holds none. malloc'd. Exposed for the tests. */
char *cli_launch_script_command(const char *text, int *line);

#endif
