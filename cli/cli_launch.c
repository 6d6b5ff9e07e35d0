/*
 * cli_launch.c - `--launch FILE` (cli_launch.h). What is read of each kind of file, and no more:
 *
 * - .toml: the whole text is torchtitan_config.
 * - .json: an object holding a DeepSpeed batch or ZeRO key is deepspeed_config.
 * - a Kubernetes manifest (.yaml/.yml or text starting with "apiVersion:"): the first command:
 *   and args: lists (yaml.c's reading, below), joined; `sh|bash -c SCRIPT` is read as a script.
 * - anything else is a shell script: continuations joined, comments dropped, NAME=value,
 *   export NAME=value, NAME=(...) and NAME+=(...) recorded, $NAME ${NAME} ${NAME[@]} and
 *   ${NAME:-default} expanded, and the first line running a .py with Megatron flags is the
 *   command (cut at a pipe, ';', '&&' or a redirection). Conditionals, functions, $(...) and
 *   arithmetic are not evaluated.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"
#include "cli_launch.h"

#define VARS_MAX  256
#define VALUE_MAX 16384

struct shvar {
    char name[64];
    char *value;
};

struct shell {
    struct shvar vars[VARS_MAX];
    size_t count;
};

static const char *var_get(const struct shell *sh, const char *name, size_t n)
{
    for (size_t i = 0; i < sh->count; i++)
        if (strlen(sh->vars[i].name) == n && memcmp(sh->vars[i].name, name, n) == 0)
            return sh->vars[i].value;
    return NULL;
}

static void var_set(struct shell *sh, const char *name, size_t n, const char *value, bool append)
{
    size_t i;

    for (i = 0; i < sh->count; i++)
        if (strlen(sh->vars[i].name) == n && memcmp(sh->vars[i].name, name, n) == 0)
            break;
    if (i == sh->count) {
        if (sh->count == VARS_MAX || n >= sizeof sh->vars[0].name)
            return;
        memcpy(sh->vars[i].name, name, n);
        sh->vars[i].name[n] = '\0';
        sh->vars[i].value = NULL;
        sh->count++;
    }
    if (append && sh->vars[i].value != NULL) {
        size_t a = strlen(sh->vars[i].value), b = strlen(value);
        char *v = malloc(a + b + 2);

        if (v == NULL)
            return;
        memcpy(v, sh->vars[i].value, a);
        v[a] = ' ';
        memcpy(v + a + 1, value, b + 1);
        free(sh->vars[i].value);
        sh->vars[i].value = v;
        return;
    }
    free(sh->vars[i].value);
    sh->vars[i].value = strdup(value);
}

static void shell_free(struct shell *sh)
{
    for (size_t i = 0; i < sh->count; i++)
        free(sh->vars[i].value);
}

struct buf {
    char *s;
    size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->s, cap);

        if (p == NULL)
            return;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* ${NAME}, ${NAME[@]}, ${NAME[*]}, ${NAME:-default} at s (after "${"): appended to out;
 * returns the bytes consumed after "${", 0 when malformed. */
static size_t braced(const struct shell *sh, const char *s, struct buf *out)
{
    size_t n = 0, end;
    const char *v;

    while (name_char(s[n]))
        n++;
    end = n;
    if (strncmp(s + end, "[@]", 3) == 0 || strncmp(s + end, "[*]", 3) == 0)
        end += 3;
    v = var_get(sh, s, n);
    if (s[end] == ':' && s[end + 1] == '-') {
        const char *def = s + end + 2, *close = strchr(def, '}');

        if (close == NULL)
            return 0;
        if (v == NULL || v[0] == '\0') {
            put(out, def, (size_t)(close - def));
            return (size_t)(close - s) + 1;
        }
        end = (size_t)(close - s);
    }
    if (s[end] != '}')
        return 0;
    if (v != NULL)
        put(out, v, strlen(v));
    return end + 1;
}

/* s with its variables expanded (single-quoted text left alone); malloc'd. */
static char *expand(const struct shell *sh, const char *s, size_t len)
{
    struct buf out = {NULL, 0, 0};
    bool single = false;

    put(&out, "", 0);
    for (size_t i = 0; i < len; i++) {
        size_t used;

        if (s[i] == '\'')
            single = !single;
        if (single || s[i] != '$' || i + 1 >= len) {
            put(&out, s + i, 1);
            continue;
        }
        if (s[i + 1] == '{' && (used = braced(sh, s + i + 2, &out)) > 0) {
            i += 1 + used;
        } else if (s[i + 1] == '(') { /* $(...) and $((...)): not evaluated, left empty */
            int depth = 0;

            for (i++; i < len; i++) {
                depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
                if (depth == 0)
                    break;
            }
        } else if (name_char(s[i + 1])) {
            size_t n = 1;
            const char *v;

            while (i + 1 + n < len && name_char(s[i + 1 + n]) && !isdigit((unsigned char)s[i + 1]))
                n++;
            v = var_get(sh, s + i + 1, n);
            if (v != NULL)
                put(&out, v, strlen(v));
            else if (isdigit((unsigned char)s[i + 1]))
                put(&out, s + i, n + 1); /* $1: the script's argument, kept as written */
            i += n;
        } else
            put(&out, s + i, 1);
    }
    return out.s;
}

/* Words of text (quotes removed) joined by single spaces; malloc'd; NULL when it does not
 * split (an open quote). */
static char *words_joined(const char *text)
{
    struct api_words w;
    struct buf out = {NULL, 0, 0};
    size_t at;
    const char *why;

    if (!api_split_args(text, strlen(text), &w, &at, &why))
        return NULL;
    put(&out, "", 0);
    for (size_t i = 0; i < w.count; i++) {
        if (i > 0)
            put(&out, " ", 1);
        put(&out, w.word[i], strlen(w.word[i]));
    }
    api_words_free(&w);
    return out.s;
}

/* The text of a line without its comment (a '#' at a word start, outside quotes). */
static size_t code_length(const char *s, size_t n)
{
    char q = 0;

    for (size_t i = 0; i < n; i++) {
        if (q != 0) {
            q = s[i] == q ? 0 : q;
            continue;
        }
        if (s[i] == '\'' || s[i] == '"')
            q = s[i];
        else if (s[i] == '#' && (i == 0 || isspace((unsigned char)s[i - 1])))
            return i;
    }
    return n;
}

/* NAME=, NAME+= at s (after "export "): the name length and *append; 0 when not one. */
static size_t assignment(const char *s, bool *append)
{
    size_t n = 0;

    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (name_char(s[n]))
        n++;
    *append = s[n] == '+';
    return s[n + (*append ? 1 : 0)] == '=' ? n : 0;
}

/* A serving engine's command line (vllm_args, /inference). */
static bool serving_command(const char *expanded)
{
    static const char *const marks[] = {"vllm serve ", "vllm.entrypoints", "sglang.launch_server",
                                        "trtllm-serve "};

    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (strstr(expanded, marks[i]) != NULL)
            return true;
    return false;
}

static bool megatron_command(const char *expanded)
{
    static const char *const flags[] = {"--num-layers", "--tensor-model-parallel-size",
                                        "--micro-batch-size", "--hidden-size"};

    if (strstr(expanded, ".py") == NULL)
        return false;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strstr(expanded, flags[i]) != NULL)
            return true;
    return false;
}

/* A shell word quoted so that api_split_args gives it back unchanged. */
static void put_quoted(struct buf *out, const char *w)
{
    put(out, "'", 1);
    for (const char *p = w; *p != '\0'; p++)
        if (*p == '\'')
            put(out, "'\\''", 4);
        else
            put(out, p, 1);
    put(out, "'", 1);
}

/* The command's words up to a pipe, list operator or redirection, each quoted. */
static char *command_words(const char *expanded)
{
    struct api_words w;
    struct buf out = {NULL, 0, 0};
    size_t at;
    const char *why;

    if (!api_split_args(expanded, strlen(expanded), &w, &at, &why))
        return NULL;
    put(&out, "", 0);
    for (size_t i = 0; i < w.count; i++) {
        const char *x = w.word[i];

        if (strcmp(x, "|") == 0 || strcmp(x, "||") == 0 || strcmp(x, "&&") == 0 ||
            strcmp(x, ";") == 0 || strcmp(x, "&") == 0 || x[0] == '>' || x[0] == '<' ||
            ((x[0] == '1' || x[0] == '2' || x[0] == '&') && x[1] == '>'))
            break;
        if (i > 0)
            put(&out, " ", 1);
        put_quoted(&out, x);
    }
    api_words_free(&w);
    return out.s;
}

/* One logical line: an assignment is recorded (arrays may continue over the next lines:
 * *open says so), else a Megatron command is returned. */
static char *logical_line(struct shell *sh, const char *s, size_t n, struct buf *array, bool *open,
                          bool *append_to, char *pending, size_t pending_size)
{
    bool append = false;
    size_t name, close;
    char *value, *joined;

    n = code_length(s, n);
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    if (*open) {
        close = n;
        while (close > 0 && isspace((unsigned char)s[close - 1]))
            close--;
        if (close > 0 && s[close - 1] == ')') {
            put(array, " ", 1);
            put(array, s, close - 1);
            *open = false;
            value = expand(sh, array->s, array->n);
            joined = value != NULL ? words_joined(value) : NULL;
            if (joined != NULL)
                var_set(sh, pending, strlen(pending), joined, *append_to);
            free(value);
            free(joined);
        } else {
            put(array, " ", 1);
            put(array, s, n);
        }
        return NULL;
    }
    if (n >= 7 && strncmp(s, "export ", 7) == 0)
        s += 7, n -= 7;
    name = assignment(s, &append);
    if (name > 0 && name < pending_size) {
        const char *rhs = s + name + (append ? 2 : 1);
        size_t rlen = n - (size_t)(rhs - s);

        if (rlen > 0 && rhs[0] == '(') {
            memcpy(pending, s, name);
            pending[name] = '\0';
            *append_to = append;
            array->n = 0;
            put(array, "", 0);
            *open = true;
            return logical_line(sh, rhs + 1, rlen - 1, array, open, append_to, pending,
                                pending_size);
        }
        value = expand(sh, rhs, rlen);
        joined = value != NULL ? words_joined(value) : NULL;
        var_set(sh, s, name, joined != NULL ? joined : "", append);
        free(value);
        free(joined);
        return NULL;
    }
    value = expand(sh, s, n);
    if (value != NULL && (megatron_command(value) || serving_command(value))) {
        char *cmd = command_words(value);

        free(value);
        return cmd;
    }
    free(value);
    return NULL;
}

char *cli_launch_script_command(const char *text, int *line)
{
    struct shell sh = {.count = 0};
    struct buf logical = {NULL, 0, 0}, array = {NULL, 0, 0};
    bool open = false, append = false;
    char pending[64], *cmd = NULL;
    int at = 1, start = 1;

    put(&logical, "", 0);
    for (const char *p = text; *p != '\0' && cmd == NULL; p++) {
        if (*p == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))) {
            p += p[1] == '\r' ? 2 : 1; /* a continuation */
            at++;
            continue;
        }
        if (*p != '\n') {
            put(&logical, p, 1);
            continue;
        }
        cmd = logical_line(&sh, logical.s, logical.n, &array, &open, &append, pending,
                           sizeof pending);
        if (cmd != NULL)
            *line = start;
        logical.n = 0;
        logical.s[0] = '\0';
        start = ++at;
    }
    if (cmd == NULL && logical.n > 0) {
        cmd = logical_line(&sh, logical.s, logical.n, &array, &open, &append, pending,
                           sizeof pending);
        *line = start;
    }
    free(logical.s);
    free(array.s);
    shell_free(&sh);
    return cmd;
}

/* ---------------------------------------------------------------------------------------------
 * Kubernetes manifests: only the first command: and args: lists
 * ------------------------------------------------------------------------------------------- */

static size_t indent_of(const char *line)
{
    size_t n = 0;

    while (line[n] == ' ')
        n++;
    return n;
}

/* A YAML scalar (plain, 'single' or "double" quoted) s[0..n) appended as one word. */
static void yaml_scalar(const char *s, size_t n, json_t *items)
{
    struct buf out = {NULL, 0, 0};

    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    put(&out, "", 0);
    if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'') {
        for (size_t i = 1; i + 1 < n; i++) {
            put(&out, s + i, 1);
            if (s[i] == '\'' && s[i + 1] == '\'')
                i++;
        }
    } else if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        for (size_t i = 1; i + 1 < n; i++) {
            if (s[i] == '\\' && i + 2 < n) {
                i++;
                put(&out, s[i] == 'n' ? "\n" : s[i] == 't' ? "\t" : s + i, 1);
            } else
                put(&out, s + i, 1);
        }
    } else
        put(&out, s, n);
    json_array_append_new(items, json_string(out.s != NULL ? out.s : ""));
    free(out.s);
}

/* [a, "b c", 'd'] possibly over lines, from s: items appended; returns the end. */
static const char *yaml_flow(const char *s, json_t *items)
{
    const char *item = ++s;
    char q = 0;

    for (; *s != '\0'; s++) {
        if (q != 0) {
            q = *s == q ? 0 : q;
            continue;
        }
        if (*s == '"' || *s == '\'')
            q = *s;
        else if (*s == ',' || *s == ']') {
            while (isspace((unsigned char)*item))
                item++;
            if (s > item)
                yaml_scalar(item, (size_t)(s - item), items);
            item = s + 1;
            if (*s == ']')
                return s;
        }
    }
    return s;
}

/* The lines after a "- |" item more indented than it, joined. */
static const char *yaml_block(const char *p, size_t item_indent, bool fold, json_t *items)
{
    struct buf out = {NULL, 0, 0};
    size_t base = 0;

    put(&out, "", 0);
    while (*p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p), ind = indent_of(p);

        if (ind <= item_indent && ind < len)
            break;
        if (base == 0)
            base = ind;
        if (out.n > 0)
            put(&out, fold ? " " : "\n", 1);
        if (len > base)
            put(&out, p + base, len - base);
        p = eol != NULL ? eol + 1 : p + len;
    }
    json_array_append_new(items, json_string(out.s));
    free(out.s);
    return p;
}

/* The list under the first `key:` (command or args) into items. */
static void yaml_list(const char *text, const char *key, json_t *items)
{
    size_t klen = strlen(key);

    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n'), *k = p + indent_of(p), *rest;
        size_t key_indent;

        if (k[0] == '-' && k[1] == ' ')
            k += 2 + indent_of(k + 2);
        key_indent = (size_t)(k - p);
        if (strncmp(k, key, klen) != 0 || k[klen] != ':') {
            p = eol != NULL ? eol + 1 : NULL;
            continue;
        }
        rest = k + klen + 1;
        while (*rest == ' ')
            rest++;
        if (*rest == '[') {
            yaml_flow(rest, items);
            return;
        }
        if (*rest != '\n' && *rest != '\0' && *rest != '\r' && *rest != '#') {
            yaml_scalar(rest, eol != NULL ? (size_t)(eol - rest) : strlen(rest), items);
            return;
        }
        for (p = eol != NULL ? eol + 1 : NULL; p != NULL && *p != '\0';) {
            const char *e = strchr(p, '\n'), *v = p + indent_of(p);
            size_t ind = indent_of(p), n;

            if (v[0] != '-' || (v[1] != ' ' && v[1] != '\n') || ind < key_indent)
                return;
            v += 2;
            n = e != NULL ? (size_t)(e - v) : strlen(v);
            if (v[0] == '|' || v[0] == '>')
                p = yaml_block(e != NULL ? e + 1 : v + n, ind, v[0] == '>', items);
            else {
                yaml_scalar(v, n, items);
                p = e != NULL ? e + 1 : NULL;
            }
        }
        return;
    }
}

/* The manifest's command + args: a script (sh -c) or a command line. */
static char *manifest_command(const char *text, int *line)
{
    json_t *items = json_array();
    struct buf cmd = {NULL, 0, 0};
    const char *first, *base;
    char *out = NULL;

    yaml_list(text, "command", items);
    yaml_list(text, "args", items);
    first = json_string_value(json_array_get(items, 0));
    base = first != NULL && strrchr(first, '/') != NULL ? strrchr(first, '/') + 1 : first;
    *line = 0;
    if (base != NULL && (strcmp(base, "sh") == 0 || strcmp(base, "bash") == 0) &&
        json_array_size(items) >= 3 &&
        strstr(json_string_value(json_array_get(items, 1)), "c") != NULL) {
        out = cli_launch_script_command(json_string_value(json_array_get(items, 2)), line);
    } else if (first != NULL) {
        size_t i;
        json_t *w;
        char *plain;

        put(&cmd, "", 0);
        json_array_foreach (items, i, w) {
            if (i > 0)
                put(&cmd, " ", 1);
            put_quoted(&cmd, json_string_value(w));
        }
        /* detected on the words, not on their quotes: 'vllm' 'serve' is "vllm serve" */
        plain = words_joined(cmd.s);
        if (plain != NULL && (megatron_command(plain) || serving_command(plain)))
            out = cmd.s;
        else
            free(cmd.s);
        free(plain);
    }
    json_decref(items);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * Detection
 * ------------------------------------------------------------------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct buf b = {NULL, 0, 0};
    char chunk[4096];
    size_t got;

    if (f == NULL) {
        fprintf(stderr, "memwall: --launch: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    put(&b, "", 0);
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && b.n < 4 * 1024 * 1024)
        put(&b, chunk, got);
    fclose(f);
    if (b.s != NULL && strlen(b.s) != b.n) {
        fprintf(stderr, "memwall: --launch: '%s' holds a NUL byte\n", path);
        free(b.s);
        return NULL;
    }
    return b.s;
}

static bool has_suffix(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

static int from_json(const char *path, const char *text, json_t *flags)
{
    static const char *const keys[] = {"train_batch_size", "train_micro_batch_size_per_gpu",
                                       "gradient_accumulation_steps", "zero_optimization"};
    json_error_t err;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);

    for (size_t i = 0; json_is_object(doc) && i < sizeof keys / sizeof keys[0]; i++)
        if (json_object_get(doc, keys[i]) != NULL) {
            fprintf(stderr,
                    "memwall: --launch %s: a DeepSpeed ds_config; sent as deepspeed_config\n",
                    path);
            return json_object_set_new(flags, "deepspeed_config", doc) == 0 ? 0 : -1;
        }
    fprintf(stderr, "memwall: --launch %s: %s\n", path,
            doc == NULL ? "not valid JSON" : "a JSON file without DeepSpeed's batch or ZeRO keys");
    json_decref(doc);
    return -1;
}

static int from_command(const char *path, const char *kind, char *cmd, int line, json_t *flags)
{
    char *plain = cmd != NULL ? words_joined(cmd) : NULL; /* the quotes put_quoted added, gone */
    bool serving = plain != NULL && serving_command(plain);
    const char *what = serving ? "serving (vLLM, SGLang or TensorRT-LLM)" : "Megatron-LM";
    const char *member = serving ? "vllm_args" : "megatron_args";

    free(plain);
    if (cmd == NULL) {
        fprintf(stderr,
                "memwall: --launch %s: %s without a Megatron-LM command (a line running a .py "
                "script with --num-layers, --hidden-size, --micro-batch-size or "
                "--tensor-model-parallel-size) or a serving command (vllm serve, "
                "sglang.launch_server, trtllm-serve)\n",
                path, kind);
        return -1;
    }
    if (line > 0)
        fprintf(stderr, "memwall: --launch %s: %s; the %s command on line %d, sent as %s\n", path,
                kind, what, line, member);
    else
        fprintf(stderr, "memwall: --launch %s: %s; a %s command, sent as %s\n", path, kind, what,
                member);
    json_object_set_new(flags, member, json_string(cmd));
    free(cmd);
    return 0;
}

int cli_launch_read(const char *path, json_t *flags)
{
    char *text = read_text(path);
    int line = 0, rc;

    if (text == NULL)
        return -1;
    if (has_suffix(path, ".toml")) {
        fprintf(stderr, "memwall: --launch %s: a torchtitan TOML job; sent as torchtitan_config\n",
                path);
        rc = json_object_set_new(flags, "torchtitan_config", json_string(text)) == 0 ? 0 : -1;
    } else if (has_suffix(path, ".json"))
        rc = from_json(path, text, flags);
    else if (has_suffix(path, ".yaml") || has_suffix(path, ".yml") ||
             strncmp(text, "apiVersion:", 11) == 0) {
        char *cmd = manifest_command(text, &line);

        rc = from_command(path, "a Kubernetes manifest", cmd, line, flags);
    } else {
        char *cmd = cli_launch_script_command(text, &line);

        rc = from_command(path, "a shell script", cmd, line, flags);
    }
    free(text);
    return rc;
}
