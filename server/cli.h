/*
 * cli.h - `memwall flops|memory|fit|runtime|plan`: the API without a server.
 *
 * The command builds the same POST request the HTTP API would get (flags become a JSON object
 * of strings, decoded by the same field table; or a JSON job file, or stdin) and answers it
 * with api_dispatch() in-process, so `--json` prints exactly the HTTP reply body. Exit status:
 * 0 ok (fits, plans found), 1 does not fit / no plan, 2 bad input (the problem on stderr).
 */
#ifndef MEMWALL_CLI_H
#define MEMWALL_CLI_H

#include <stdbool.h>

/* Is name one of the CLI's commands (flops, memory, fit, runtime, plan)? */
bool server_cli_is_command(const char *name);

/* The value of the option argv[*i]: after its '=' ("--name=value"), or the next argument
 * ("--name value", *i then points at it). NULL, with a message on stderr, when there is none.
 * Both the commands and `memwall serve` parse their options with it. */
const char *server_cli_option_value(int argc, char **argv, int *i);

/* Run a command: argv[0] is the command name. Returns the exit status. */
int server_cli(int argc, char **argv);

#endif
