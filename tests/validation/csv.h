/*
 * csv.h - the small CSV reader the validation suites share: comma-separated fields, optionally
 * double-quoted (quotes hold commas, no escapes), empty cells meaning "the source does not say".
 * A malformed number ends the process with a message (the suites run inside Check, which counts
 * the exit, and in a table mode where ck_assert cannot report).
 */
#ifndef MEMWALL_TESTS_VALIDATION_CSV_H
#define MEMWALL_TESTS_VALIDATION_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Split line into nfields fields of field_max bytes each (fields is nfields * field_max bytes);
 * returns how many fields the line had (at most nfields). */
static inline int csv_split(const char *line, char *fields, int nfields, size_t field_max)
{
    int n = 0;
    size_t len = 0;
    bool quoted = false;

    memset(fields, 0, (size_t)nfields * field_max);
    for (const char *p = line; *p != '\0' && *p != '\n' && *p != '\r'; p++) {
        if (*p == '"') {
            quoted = !quoted;
        } else if (*p == ',' && !quoted) {
            if (++n >= nfields)
                return n;
            len = 0;
        } else if (len + 1 < field_max) {
            fields[(size_t)n * field_max + len++] = *p;
        }
    }
    return n + 1;
}

/* The cell as a number, `empty` when the cell is empty. */
static inline double csv_num(const char *s, double empty)
{
    char *end;
    double v;

    if (s[0] == '\0')
        return empty;
    v = strtod(s, &end);
    if (end == s || *end != '\0') {
        fprintf(stderr, "validation data: not a number: '%s'\n", s);
        exit(EXIT_FAILURE);
    }
    return v;
}

static inline int64_t csv_whole(const char *s, int64_t empty)
{
    return (int64_t)csv_num(s, (double)empty);
}

#endif
