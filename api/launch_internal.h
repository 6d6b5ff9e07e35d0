/*
 * launch_internal.h - what the launch formats share (launch.c): the resolution's state, reading
 * a configuration through its rows, setting inputs and reporting problems.
 */
#ifndef MEMWALL_API_LAUNCH_INTERNAL_H
#define MEMWALL_API_LAUNCH_INTERNAL_H

#include <stdint.h>

#include "launch.h"

struct api_launch_ctx {
    const struct api_launch_format *format;
    const json_t *body; /* the request body: the explicit inputs */
    json_t *seen;       /* {key: value} as read, typed by its row */
    json_t *out;        /* the resolved memwall inputs */
    json_t *from;       /* {input: key} the configuration key that set each input */
    json_t *warnings;   /* [{code, message}] */
    json_t *unknown;    /* keys no row knows, in order */
    json_t *errors;     /* borrowed: problems (400, or 422 when contradictory) */
    bool contradictory;
    size_t error_count; /* errors added by this resolution */
};

/* A problem naming <member>.<key> (key may be NULL: the member itself). */
void api_launch_error(struct api_launch_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like api_launch_error, but the values contradict each other (422). */
void api_launch_conflict(struct api_launch_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void api_launch_warn(struct api_launch_ctx *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The input `input` (a core_inputs name) gets value (stolen), set by the configuration's key.
 * An input this build does not have becomes a warning naming the key. */
void api_launch_set(struct api_launch_ctx *c, const char *input, json_t *value, const char *key);
void api_launch_set_int(struct api_launch_ctx *c, const char *input, int64_t v, const char *key);
void api_launch_set_str(struct api_launch_ctx *c, const char *input, const char *v,
                        const char *key);
void api_launch_set_bool(struct api_launch_ctx *c, const char *input, bool v, const char *key);

/* The row for key (exact, or a "prefix.*" row), NULL when none. */
const struct api_launch_row *api_launch_row_of(const struct api_launch_format *f, const char *key);

/* A typed value for the row from a command-line word: new reference, or NULL with the error
 * reported against key. */
json_t *api_launch_word_value(struct api_launch_ctx *c, const struct api_launch_row *row,
                              const char *key, const char *word);
/* Record key = value (stolen) for a row: SET rows set their input, WARN rows warn, unknown keys
 * are collected; every known key lands in seen for the derive step. A JSON/TOML value whose
 * type the row does not take is an error. */
void api_launch_take(struct api_launch_ctx *c, const char *key, json_t *value);

/* Is w a long flag (--x)? */
bool api_launch_is_flag(const char *w);
/* The flags of words[from, to), each with its value(s), into api_launch_take: `--flag value`,
 * `--flag=value`, '_' in a name read as '-'; a switch takes no value, a list or an unknown flag
 * every word up to the next flag. prefix names a launcher's flags ("torchrun "); a launcher flag
 * no row knows is skipped silently, a stray word of the command itself is listed as unknown. */
void api_launch_read_flags(struct api_launch_ctx *c, char **words, size_t from, size_t to,
                           const char *prefix);

/* What was read for key: present?, an integer (def when absent), a string (NULL). */
bool api_launch_has(const struct api_launch_ctx *c, const char *key);
int64_t api_launch_int(const struct api_launch_ctx *c, const char *key, int64_t def);
const char *api_launch_str(const struct api_launch_ctx *c, const char *key);
bool api_launch_on(const struct api_launch_ctx *c, const char *key); /* a switch given (or true) */
/* The resolved input so far (an integer), def when unset or not an integer. */
int64_t api_launch_out_int(const struct api_launch_ctx *c, const char *input, int64_t def);
/* The body's explicit integer member (a JSON integer or an integral string), def when absent. */
int64_t api_launch_body_int(const struct api_launch_ctx *c, const char *member, int64_t def);

/* *out = a * b for a, b >= 0; false (and *out 0) on a negative operand or int64 overflow. The
 * values come from users: every product of them goes through here. */
bool api_launch_mul(int64_t a, int64_t b, int64_t *out);

/* Known Hugging Face ids: the preset id for id (case-insensitive; suffixes like -Instruct
 * allowed where listed), or NULL. */
const char *api_launch_preset_of_hf_id(const char *id);

/* The derive steps: run after every key was taken; they read c->seen and c->body. */
void api_launch_megatron_derive(struct api_launch_ctx *c);
void api_launch_torchtitan_derive(struct api_launch_ctx *c);
void api_launch_deepspeed_derive(struct api_launch_ctx *c);
void api_launch_vllm_derive(struct api_launch_ctx *c);

/* Reading a configuration member into seen: an argument string (launch_megatron.c reads
 * the torchrun words before the script), a TOML text, a JSON object. */
void api_launch_read_args(struct api_launch_ctx *c, const char *text, size_t len);
void api_launch_read_toml(struct api_launch_ctx *c, const char *text, size_t len);
void api_launch_read_json(struct api_launch_ctx *c, const json_t *object, const char *prefix);
void api_launch_read_vllm(struct api_launch_ctx *c, const char *text, size_t len);

#endif
