/*
 * argsplit.h - a command line split into words the way a POSIX shell splits a plain command,
 * for the launch configurations (megatron_args, vllm_args, the CLI's --launch scripts).
 *
 * Supported: blanks (space, tab, newline) between words; '...' taken literally; "..." where
 * \" \\ \$ \` and backslash-newline are escapes; \x outside quotes is x; backslash-newline is a
 * line continuation (nothing); '#' at the start of a word comments out the rest of the line.
 * Not interpreted (left in the word as written): $VAR and ${...} expansions, $(...) and `...`
 * substitutions, globs, redirections. An unterminated quote or a trailing lone backslash is an
 * error with the byte offset where the quote (or backslash) began.
 */
#ifndef MEMWALL_API_ARGSPLIT_H
#define MEMWALL_API_ARGSPLIT_H

#include <stdbool.h>
#include <stddef.h>

#define API_ARGS_MAX 4096 /* words at most (a 64 KiB body cannot sensibly hold more) */

struct api_words {
    size_t count;
    char **word; /* count NUL-terminated words, pointing into buf */
    char *buf;   /* one allocation holding them */
};

/* Split s[0..len). On success fills w (free with api_words_free) and returns true; on failure
 * returns false with *at the byte offset of the problem and *why a sentence (static text). */
bool api_split_args(const char *s, size_t len, struct api_words *w, size_t *at, const char **why);
void api_words_free(struct api_words *w);

#endif
