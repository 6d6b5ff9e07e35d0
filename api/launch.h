/*
 * launch.h - a job as the framework reads it (a launch configuration) resolved into memwall's
 * own inputs before the normal decoding (docs/launch.md).
 *
 * A POST body may carry one of megatron_args (Megatron-LM's pretrain_gpt.py argument string),
 * torchtitan_config (a torchtitan TOML job file), deepspeed_config (a ds_config object) or, for
 * /inference, vllm_args. Each format is a table of rows (launch_megatron.c, launch_titan.c,
 * launch_deepspeed.c): the framework's flag or key, the memwall input it sets (a name resolved
 * against core_inputs at run time), how its value converts, the framework file that defines
 * it, or why it is ignored / only warned about. A small function per format then derives what
 * the framework itself derives (Megatron's vocabulary padding, torchtitan's -1 degrees,
 * DeepSpeed's batch triple). The body's own members override the configuration's values, with
 * a warning each time they differ.
 */
#ifndef MEMWALL_API_LAUNCH_H
#define MEMWALL_API_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* What a row does with its flag or key. */
enum api_launch_use {
    API_LAUNCH_SET,     /* the value (converted) is the input named by .input */
    API_LAUNCH_DERIVED, /* read by the format's derive step; .input names what it feeds */
    API_LAUNCH_IGNORED, /* accepted silently: no effect on memory or time (.note says why) */
    API_LAUNCH_WARN,    /* changes memory or time but is not modelled: a warning (.note says how) */
};

/* The value a flag or key takes. */
enum api_launch_value {
    API_LAUNCH_SWITCH, /* a flag without a value (store_true); in TOML/JSON a boolean */
    API_LAUNCH_INT,    /* an integer */
    API_LAUNCH_REAL,   /* a number */
    API_LAUNCH_STRING, /* a string */
    API_LAUNCH_LIST,   /* one or more values (argparse nargs='+'); in TOML an array */
    API_LAUNCH_ANY,    /* anything (ignored rows); on a command line, zero or more words */
};

struct api_launch_row {
    const char *key; /* "--num-layers", "parallelism.tensor_parallel_degree", "a.*" */
    enum api_launch_value value;
    enum api_launch_use use;
    const char *input;      /* SET: the memwall input; DERIVED: the inputs it feeds (text) */
    const char *defined_in; /* the framework file that defines it */
    const char *note;       /* conversion, or why ignored / what is not modelled */
};

struct core_input_spec;

struct api_launch_format {
    const char *member;         /* the body member: "megatron_args" */
    const char *framework_name; /* the framework (or, for vllm_args, the default engine) */
    const struct api_launch_row *rows;
    size_t row_count;
    /* The input table an input name is looked up in; NULL: the compute routes' (core_inputs). */
    const struct core_input_spec *(*find)(const char *name, size_t len);
};

/* The formats, for docs and tests. */
extern const struct api_launch_format api_launch_megatron, api_launch_torchtitan,
    api_launch_deepspeed, api_launch_vllm;

/* What a resolution adds to the reply: inputs.source and its warnings. */
struct api_launch {
    const char *source; /* the member it came from, NULL when the body held none */
    json_t *warnings;   /* [{code, message}], owned (NULL when none) */
    json_t *from;       /* {input: flag or key} for the inputs the configuration set, owned */
};

/* body's members resolved: a new object holding the configuration's inputs with the body's
 * own members over them (the configuration member removed), or json_incref(body) when it holds
 * none. NULL on a bad configuration, with its problems appended to errors (borrowed) and
 * *contradictory set when the values contradict each other (422) rather than being malformed
 * (400). route_inference: vllm_args is accepted (and the training formats are not). */
json_t *api_launch_resolve(const json_t *body, bool route_inference, struct api_launch *out,
                           json_t *errors, bool *contradictory);
void api_launch_free(struct api_launch *out);

/* After the resolved inputs failed to decode: each problem with an input the configuration set
 * is renamed to the flag or key that set it (<member>.<flag>), the input named in the message,
 * so a 400 names what the user wrote. */
void api_launch_blame(const struct api_launch *launch, json_t *errors);

/* Is member one of the launch-configuration members (so not an unknown input)? */
bool api_launch_is_member(const char *member);

#endif
