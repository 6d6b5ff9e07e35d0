#!/usr/bin/env bash
# tests/container/run.sh SRC - build the memwall image from SRC/Dockerfile and prove it works.
#
# No Docker engine runs here, so Debian's buildah does the work: `buildah bud --isolation
# chroot --pull=never` builds (the build stage runs the core and API suites itself), and
# `buildah run --isolation chroot` runs the image's entrypoint with the host's network, so the
# server inside answers on 127.0.0.1 and curl checks it from outside. Asserted:
#   - the image config: user 65532 (not root), entrypoint ["memwall","serve"], port 8080
#     exposed, MEMWALL_BIND=0.0.0.0 in its environment;
#   - the running server's process really has uid 65532 (from /proc, not from the config);
#   - /healthz answers {"status":"ok",...}; /fit with the defaults reproduces the lesson:
#     7e9 params x 16 bytes (bf16 2 + fp32 master 4 + AdamW moments 8 + bf16 grads 2) =
#     112e9 bytes of state > 80e9 bytes on one H100, so "fits":false with "bottleneck":"state";
#     a POST of a 125M-parameter run fits (125e6 x 16 = 2e9 bytes of state, far below 80e9);
#   - SIGTERM stops it with exit status 0.
# The port is a free loopback port found in /proc/net (the test binds 127.0.0.1, overriding
# the image's 0.0.0.0 so nothing is exposed beyond this machine). It prints the build time, the
# image and runtime-layer sizes and the server's RSS; the containers it made are removed on exit.
# Needs root (or a rootless buildah setup), buildah, debootstrap and curl: script/bootstrap.
set -euo pipefail

src=$(cd "${1:?usage: run.sh SRC}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# One tag per source tree, so two worktrees testing at once do not overwrite each other's image.
image=localhost/memwall-test:$(printf '%s' "$src" | cksum | cut -d' ' -f1)
base=docker.io/library/debian:bookworm-slim

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

for tool in buildah curl flock; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool not found: run script/bootstrap"
done

work=$(mktemp -d)
ctr=
runner=
cleanup() {
    if [ -n "$runner" ] && kill -0 "$runner" 2>/dev/null; then
        kill -TERM "$runner" 2>/dev/null || true
        wait "$runner" 2>/dev/null || true
    fi
    [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

"$here/base-image.sh"

# ---- build ---------------------------------------------------------------------------------
# --layers keeps the apt-get layers between runs; everything from COPY on is rebuilt when the
# sources change.
start=$(date +%s)
buildah bud --isolation chroot --pull=never --layers --quiet \
    --build-arg MEMWALL_JOBS="${MEMWALL_JOBS:-2}" -t "$image" -f "$src/Dockerfile" "$src" \
    >"$work/build.log" 2>&1 || {
    # the image's own ctest failures first (they can sit far above the tail), then the tail
    grep -n -E '\*\*\*(Failed|Timeout|Exception)|^[^:]+:[0-9]+:[EF]:|tests FAILED' \
        "$work/build.log" | head -40 >&2 || true
    tail -60 "$work/build.log" >&2
    fail "buildah bud failed"
}
build_s=$(($(date +%s) - start))

# ---- image config --------------------------------------------------------------------------
inspect() { buildah inspect --type image --format "$1" "$image"; }
user=$(inspect '{{.OCIv1.Config.User}}')
[ "${user%%:*}" = 65532 ] || fail "image user is '$user', expected 65532 (non-root)"
entry=$(inspect '{{.OCIv1.Config.Entrypoint}}')
[ "$entry" = '[memwall serve]' ] || fail "entrypoint is $entry"
inspect '{{range $k, $v := .OCIv1.Config.ExposedPorts}}{{$k}} {{end}}' | grep -qw '8080/tcp' ||
    fail "8080/tcp is not exposed"
inspect '{{range .OCIv1.Config.Env}}{{.}} {{end}}' | grep -qw 'MEMWALL_BIND=0.0.0.0' ||
    fail "MEMWALL_BIND=0.0.0.0 is not in the image environment"

# Sizes from the layers' uncompressed sizes: what the image adds on top of its base.
layer_sizes() { # one size per layer, in bytes, base first
    buildah inspect --type image --format '{{.Manifest}}' "$1" |
        grep -o '"layers":\[.*\]' | grep -o '"size":[0-9]*' | cut -d: -f2
}
base_layers=$(layer_sizes "$base" | wc -l)
base_size=$(layer_sizes "$base" | awk '{s += $1} END {print s}')
runtime_size=$(layer_sizes "$image" | tail -n +"$((base_layers + 1))" | awk '{s += $1} END {print s + 0}')

# ---- run -----------------------------------------------------------------------------------
# A port nobody on this machine is bound to (listening or not): local ports of every socket
# in /proc/net/tcp{,6}, hex, second field.
used_ports() {
    local _sl local_addr _rest
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _sl local_addr _rest; do
        [ "$_sl" = sl ] || echo $((16#${local_addr##*:}))
    done | sort -u
}
free_port() {
    local used p i
    used=$(used_ports)
    for i in $(seq 1 50); do
        p=$((20000 + RANDOM % 12000))
        grep -qx "$p" <<<"$used" || { echo "$p"; return; }
    done
    fail "no free port found"
}

ctr=$(buildah from --pull=never --quiet "$image")
url=
for attempt in 1 2 3; do
    port=$(free_port)
    # buildah run wants a command: the entrypoint checked above. It runs as the image's user.
    buildah run --isolation chroot --env MEMWALL_BIND=127.0.0.1 --env MEMWALL_PORT="$port" \
        "$ctr" -- memwall serve >"$work/server.log" 2>&1 &
    runner=$!
    for _ in $(seq 1 100); do
        if curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; then
            url=http://127.0.0.1:$port
            break 2
        fi
        kill -0 "$runner" 2>/dev/null || break
        sleep 0.1
    done
    kill -TERM "$runner" 2>/dev/null || true
    wait "$runner" 2>/dev/null || true
    runner=
    echo "attempt $attempt on port $port failed:" >&2
    cat "$work/server.log" >&2
done
[ -n "$url" ] || fail "the server in the container never answered /healthz"

# The memwall process: a descendant of our buildah run whose command name is memwall.
server_pid() {
    local pids=("$runner") seen=() p c comm
    while [ ${#pids[@]} -gt 0 ]; do
        p=${pids[0]}
        pids=("${pids[@]:1}")
        comm=$(cat "/proc/$p/comm" 2>/dev/null || true)
        if [ "$comm" = memwall ]; then
            echo "$p"
            return
        fi
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do pids+=("$c"); done
    done
    return 1
}
pid=$(server_pid) || fail "no memwall process under buildah run (pid $runner)"
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
[ "$uid" = 65532 ] || fail "the server runs as uid $uid, expected 65532"

health=$(curl -fsS "$url/healthz")
grep -q '"status":"ok"' <<<"$health" || fail "/healthz said $health"

fit=$(curl -fsS "$url/fit")
grep -q '"fits":false' <<<"$fit" || fail "/fit defaults: expected \"fits\":false in $fit"
grep -q '"bottleneck":"state"' <<<"$fit" || fail "/fit defaults: expected bottleneck state"
small=$(curl -fsS -H 'Content-Type: application/json' -d '{"params":125e6}' "$url/fit")
grep -q '"fits":true' <<<"$small" || fail "/fit 125M: expected \"fits\":true in $small"

rss_idle=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
# Some load: 400 /fit requests over 8 parallel connections, then the peak RSS.
for i in $(seq 1 8); do
    (for j in $(seq 1 50); do
        printf 'url = "%s/fit?params=%dB&batch=%d"\noutput = "/dev/null"\n' "$url" "$j" "$i"
    done | curl -fsS -K -) &
done
wait_fail=0
for job in $(jobs -p); do
    [ "$job" = "$runner" ] && continue
    wait "$job" || wait_fail=1
done
[ "$wait_fail" -eq 0 ] || fail "a /fit request under load failed"
rss_hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")

# ---- stop ----------------------------------------------------------------------------------
kill -TERM "$pid"
rc=0
wait "$runner" || rc=$?
runner=
[ "$rc" -eq 0 ] || { cat "$work/server.log" >&2; fail "memwall exited $rc after SIGTERM"; }

echo "container: image $image user $user entrypoint $entry"
echo "container: build ${build_s}s (buildah bud --layers; the apt layers are cached after the first run)"
echo "container: base layers $base_size bytes, runtime layers $runtime_size bytes"
echo "container: server RSS idle ${rss_idle} kB, peak after 400 /fit requests ${rss_hwm} kB"
echo "container: ok"
