/*
 * config.h - `memwall serve`'s settings: flags, environment variables, defaults, bounds, help.
 *
 * Every setting is a flag and an environment variable (MEMWALL_*); a flag beats the
 * environment, which beats the default. One table in config.c declares each setting once
 * (flag, variable, default, bounds, unit, doc); parsing, validation, the defaults (each is
 * parsed like a given value), the "config" log line and `memwall serve --help` all derive
 * from it, so they cannot disagree.
 */
#ifndef MEMWALL_SERVER_CONFIG_H
#define MEMWALL_SERVER_CONFIG_H

#include <stdio.h>

#include <jansson.h>

#include "server.h"

/* Fill cfg from the defaults, the environment and argv (the arguments after "serve"). A
 * variable is only read, and checked, for a setting no flag gave. Returns -1 to go on, else
 * the exit status: 0 after --help (printed on stdout), 2 after a bad flag or value (named on
 * stderr). Strings in cfg point into argv, the environment or the table. */
int server_config_parse(int argc, char **argv, struct server_config *cfg);

/* The effective settings as {key: value}, for the "config" log line. New reference or NULL. */
json_t *server_config_json(const struct server_config *cfg);

/* `memwall serve --help`. */
void server_config_help(FILE *to);

#endif
