#!/bin/sh
# include_graph.sh ROOT - fails when the #include "..." graph inside core/, api/, server/ or
# cli/ has a cycle. Each folder's edges (file -> a file of the same folder it includes) go to
# tsort, which reports any loop on stderr and exits non-zero.
set -u
root=$1
status=0
for dir in core api server cli; do
    cd "$root/$dir" || exit 1
    edges=$(for f in *.c *.h *.def; do
        [ -e "$f" ] || continue
        echo "$f $f" # every file a node, even one that includes nothing of its folder
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
            while read -r inc; do
                if [ -e "$inc" ]; then echo "$f $inc"; fi
            done
    done)
    if ! loops=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
        echo "include cycle in $dir/:"
        echo "$loops"
        status=1
    fi
done
exit $status
