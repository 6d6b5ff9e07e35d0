/*
 * cli.h - `memwall flops|memory|fit|runtime|plan`: the API without a server.
 *
 * A command builds the same POST request the HTTP API would get (flags become a JSON object of
 * strings, decoded by the api's field table; or a JSON job file, or stdin) and answers it with
 * api_dispatch() in-process, so `--json` prints exactly the HTTP reply body. Without --json a
 * short table is printed, laid out by one row table (cli_reply.c).
 *
 * Dependencies point one way: cli -> api -> core. The memwall executable (server/main.c) calls
 * cli_main() for these commands; nothing here knows the server.
 */
#ifndef MEMWALL_CLI_H
#define MEMWALL_CLI_H

#include <stdbool.h>

/* Exit status of a command (the worst item decides for a batch). */
#define CLI_EXIT_OK  0 /* answered; for fit: it fits; for plan: plans were found */
#define CLI_EXIT_NO  1 /* it does not fit, or no plan qualifies */
#define CLI_EXIT_BAD 2 /* bad input (the problem on stderr) or a usage error */

/* Is name one of the commands (flops, memory, fit, runtime, plan)? */
bool cli_is_command(const char *name);

/* The value of the option argv[*i]: after its '=' ("--name=value"), or the next argument
 * ("--name value", *i then points at it). NULL, with a message on stderr, when there is none.
 * The commands and `memwall serve` (server/config.c) parse their options with it. */
const char *cli_option_value(int argc, char **argv, int *i);

/* Run a command: argv[0] is the command's name. Returns its exit status. */
int cli_main(int argc, char **argv);

#endif
