#!/bin/sh
# function_length.sh ROOT [MAX] - fails when a function of core/, api/, server/ or cli/ is longer
# than MAX lines (80), from the line of its opening brace to its closing one. clang-format puts
# a function's braces alone in column 0, which is what this reads.
set -u
root=$1
max=${2:-80}
status=0
for f in "$root"/core/*.c "$root"/api/*.c "$root"/server/*.c "$root"/cli/*.c; do
    awk -v max="$max" -v file="${f#"$root"/}" '
        /^\{$/ { start = FNR; name = prev; next }
        /^\}/ && start { n = FNR - start - 1; if (n > max) { printf "%s:%d: %s is %d lines (> %d)\n", file, start, name, n, max; bad = 1 } start = 0 }
        { prev = $0 }
        END { exit bad }' "$f" || status=1
done
exit $status
