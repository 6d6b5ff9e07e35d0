#!/bin/sh
# settings_doc.sh MEMWALL README: every setting `memwall serve --help` lists must be a row of
# README.md's settings table, written as that help writes it, so the two cannot drift apart.
# The help's two lines per setting
#   "  --port N      env MEMWALL_PORT      default 8080"
#   "      TCP port, 0 for an ephemeral one (an integer 0..65535)"
# become the row "| `--port N` | `MEMWALL_PORT` | `8080` | TCP port, ... |" (a | inside a cell
# is written \| in Markdown).
set -eu
memwall=$1
readme=$2
rows=$("$memwall" serve --help | awk '
    /^  --/ && / env / {
        line = $0
        sub(/^  /, "", line)
        e = index(line, " env ")
        flag = substr(line, 1, e - 1)
        sub(/ +$/, "", flag)
        rest = substr(line, e + 5)
        split(rest, f, / +default /)
        env = f[1]
        sub(/ +$/, "", env)
        def = f[2]
        getline doc
        sub(/^ +/, "", doc)
        gsub(/\|/, "\\|", flag)
        gsub(/\|/, "\\|", doc)
        printf "| `%s` | `%s` | `%s` | %s |\n", flag, env, def, doc
    }')
[ -n "$rows" ] || { echo "no settings in memwall serve --help"; exit 1; }
missing=0
n=0
while IFS= read -r row; do
    n=$((n + 1))
    if ! grep -Fqx -- "$row" "$readme"; then
        echo "README.md lacks: $row"
        missing=$((missing + 1))
    fi
done <<ROWS
$rows
ROWS
echo "$n settings, $missing missing from README.md"
[ "$missing" -eq 0 ]
