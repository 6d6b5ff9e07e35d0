#!/bin/sh
# symbol_graph.sh NAME ARCHIVE [NAME ARCHIVE ...] - fails when the objects of one static library
# (core/, api/, server/, cli/) use each other's symbols in a cycle. Read with nm from the built
# archive: object A -> object B when A uses (U) a global symbol B defines. The edges go to
# tsort, which reports any loop on stderr and exits non-zero (include_graph.sh does the same
# for #include). ARCHIVE may be several archives joined by ':', read as one graph (server/: the
# daemon's archive and the executable's own objects). --edges prints the graph instead.
set -u
# nm_each LIST OPTION...: nm -A over every archive of the ':'-separated LIST
nm_each() {
    list=$1
    shift
    (IFS=:; set -f; nm -A "$@" $list)
}
print=0
if [ "${1:-}" = --edges ]; then
    print=1
    shift
fi
status=0
while [ $# -ge 2 ]; do
    name=$1 archive=$2
    shift 2
    # "D object symbol" for every defined global symbol, "U object symbol" for every use; nm -A
    # names each line "archive:member:" (with the address glued on for a defined symbol)
    table=$({ nm_each "$archive" -g --defined-only | awk '{ print "D", $1, $NF }'
        nm_each "$archive" -u | awk '{ print "U", $1, $NF }'; } 2>/dev/null |
        awk '{ n = split($2, p, ":"); obj = p[n - 1]; sub(/\.c\.o$/, "", obj); sub(/\.o$/, "", obj)
               print $1, obj, $3 }')
    edges=$(echo "$table" | awk '
        $1 == "D" { def[$3] = $2; objs[$2] = 1 }
        $1 == "U" { use[NR] = $2 " " $3 }
        END {
            for (o in objs) print o, o
            for (k in use) { split(use[k], f, " "); if ((f[2] in def) && def[f[2]] != f[1]) print f[1], def[f[2]] }
        }' | sort -u)
    if [ -z "$edges" ]; then
        echo "$name: no objects read from $archive"
        status=1
        continue
    fi
    if [ "$print" = 1 ]; then
        echo "$edges" | awk -v n="$name" '$1 != $2 { print n ": " $1 " -> " $2 }'
        continue
    fi
    if ! loops=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
        echo "symbol cycle in $name/ (object -> object whose symbol it uses):"
        echo "$loops"
        status=1
    fi
done
exit $status
