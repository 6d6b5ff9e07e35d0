/*
 * argsplit.c - shell-like word splitting (argsplit.h): one pass, one output buffer.
 *
 * Every word is copied into buf with its quotes and escapes removed; the output is never
 * longer than the input plus one NUL per word, so buf is sized 2*len + 1 up front.
 */
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"

struct splitter {
    const char *s;
    size_t len, i; /* input and position */
    char *out;     /* next output byte */
    bool in_word;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Inside "...": the byte after a backslash is an escape only for these (POSIX). */
static bool dq_escapable(char c)
{
    return c == '"' || c == '\\' || c == '$' || c == '`' || c == '\n';
}

/* One quoted span starting at the opening quote; false when it never closes. */
static bool quoted(struct splitter *p)
{
    char q = p->s[p->i++];

    while (p->i < p->len && p->s[p->i] != q) {
        char c = p->s[p->i++];

        if (q == '"' && c == '\\' && p->i < p->len && dq_escapable(p->s[p->i])) {
            c = p->s[p->i++];
            if (c == '\n')
                continue; /* a continuation inside double quotes */
        }
        *p->out++ = c;
    }
    if (p->i >= p->len)
        return false;
    p->i++; /* the closing quote */
    return true;
}

static void end_word(struct splitter *p, struct api_words *w, char **start)
{
    if (!p->in_word)
        return;
    *p->out++ = '\0';
    w->word[w->count++] = *start;
    *start = p->out;
    p->in_word = false;
}

bool api_split_args(const char *s, size_t len, struct api_words *w, size_t *at, const char **why)
{
    struct splitter p = {s, len, 0, NULL, false};
    char *start;

    memset(w, 0, sizeof *w);
    w->buf = malloc(2 * len + 1);
    w->word = malloc(API_ARGS_MAX * sizeof *w->word);
    if (w->buf == NULL || w->word == NULL) {
        api_words_free(w);
        *at = 0;
        *why = "out of memory";
        return false;
    }
    p.out = start = w->buf;
    while (p.i < len) {
        char c = s[p.i];
        size_t here = p.i;

        if (is_blank(c)) {
            end_word(&p, w, &start);
            p.i++;
            continue;
        }
        if (c == '#' && !p.in_word) { /* a comment runs to the end of the line */
            while (p.i < len && s[p.i] != '\n')
                p.i++;
            continue;
        }
        if (!p.in_word && w->count >= API_ARGS_MAX) {
            *at = here;
            *why = "too many words (at most 4096)";
            api_words_free(w);
            return false;
        }
        if (c == '\\') {
            if (p.i + 1 >= len) {
                *at = here;
                *why = "a lone backslash at the end";
                api_words_free(w);
                return false;
            }
            if (s[here + 1] == '\r' && here + 2 < len && s[here + 2] == '\n')
                p.i++; /* a continuation written with CRLF */
            p.i += 2;
            if (s[p.i - 1] == '\n')
                continue; /* a line continuation joins nothing into the word */
            p.in_word = true;
            *p.out++ = s[here + 1];
            continue;
        }
        p.in_word = true;
        if (c == '\'' || c == '"') {
            if (!quoted(&p)) {
                *at = here;
                *why = c == '"' ? "a double quote that is never closed"
                                : "a single quote that is never closed";
                api_words_free(w);
                return false;
            }
            continue;
        }
        *p.out++ = c;
        p.i++;
    }
    end_word(&p, w, &start);
    return true;
}

void api_words_free(struct api_words *w)
{
    free(w->buf);
    free(w->word);
    memset(w, 0, sizeof *w);
}
