#!/usr/bin/env bash
# soak.sh MEMWALL - soak and shutdown under load, against the real executable (label "load").
#
#   1. wrk, 256 connections (2 threads) for 30 s, soak.lua's mix of valid and invalid requests
#      over every route: zero 5xx, zero socket errors (connect/read/write/timeout), and the
#      daemon's RSS at second 29 within 5 % or 2 MiB of its RSS at second 10 (VmRSS,
#      /proc/PID/status).
#   2. wrk again for 8 s, SIGTERM to the daemon at second 3: it must exit 0 within its grace
#      period (+2 s). When the daemon has a graceful drain (`memwall serve --help` lists
#      --shutdown-grace) every request it accepted must be fully answered: its "stopped" log
#      line says in_flight_cut 0 and aborted 0 (it counts every request whose reply was not
#      fully sent), and wrk saw no timeouts. wrk's read errors are printed, not failed on: a
#      connection still in the kernel's listen backlog when the drain shuts the listener is
#      reset before the server ever accepted it, and wrk counts that as a read error exactly
#      like a dropped reply. Without a drain, everything is printed and only the exit status
#      and time are checked.
# Loopback only, port 0 (the daemon picks it and prints it). About 45 s in all.
set -euo pipefail

memwall=${1:?usage: soak.sh PATH-TO-MEMWALL}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "soak: FAIL: wrk is not installed (script/bootstrap)"; exit 1; }
ulimit -n 4096 2>/dev/null || true

start() { # start the daemon; sets pid and port
    : >"$work/out"
    "$memwall" serve --port 0 --bind 127.0.0.1 --threads 2 >"$work/out" 2>"$work/err" &
    pid=$!
    port=
    for _ in $(seq 100); do
        port=$(grep '"event":"listening"' "$work/out" | grep -o '"port":[0-9]*' | cut -d: -f2 || true)
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "soak: FAIL: memwall printed no port"; cat "$work/err"; exit 1
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# wrk's "Socket errors: connect A, read B, write C, timeout D" line, as "A B C D" (0s if absent)
socket_errors() {
    sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' "$1" | tail -1 | grep . || echo "0 0 0 0"
}

fail=0

# --- 1. soak ------------------------------------------------------------------------------
start
wrk -t2 -c256 -d30s --timeout 5s -s "$here/soak.lua" "http://127.0.0.1:$port" >"$work/wrk1" 2>&1 &
wrk_pid=$!
sleep 10
rss10=$(rss_kb "$pid")
sleep 19
rss29=$(rss_kb "$pid")
wait "$wrk_pid" || { echo "soak: FAIL: wrk exited non-zero"; fail=1; }
cat "$work/wrk1"
read -r c r w t < <(socket_errors "$work/wrk1")
n5xx=$(sed -n 's/^soak: requests=[0-9]* 5xx=\([0-9]*\)$/\1/p' "$work/wrk1")
requests=$(sed -n 's/^soak: requests=\([0-9]*\) .*/\1/p' "$work/wrk1")
growth=$(awk -v a="$rss10" -v b="$rss29" 'BEGIN { printf "%.2f", (b - a) * 100 / a }')
echo "soak: requests=$requests 5xx=$n5xx socket_errors=connect:$c,read:$r,write:$w,timeout:$t rss10_kb=$rss10 rss29_kb=$rss29 growth_pct=$growth"
[ -n "$requests" ] && [ "$requests" -gt 0 ] || { echo "soak: FAIL: no requests"; fail=1; }
[ "$n5xx" = 0 ] || { echo "soak: FAIL: $n5xx replies were 5xx"; fail=1; }
[ "$c$r$w$t" = 0000 ] || { echo "soak: FAIL: socket errors"; fail=1; }
# A leak grows with the requests; the number of connections alive at the two instants moves RSS
# too (each holds a 16 KiB pool), by up to ~1 MB under a busy neighbour. So the growth fails only
# when it is both over 5 % and over 2 MiB: at ~30k requests/s over 19 s that still catches a leak
# of 4 bytes a request.
awk -v g="$growth" -v a="$rss10" -v b="$rss29" 'BEGIN { exit !(g < 5 || b - a < 2048) }' ||
    { echo "soak: FAIL: RSS grew $growth % ($((rss29 - rss10)) kB)"; fail=1; }
kill -TERM "$pid"
wait "$pid" || { echo "soak: FAIL: memwall exited $? after the soak"; fail=1; }
pid=

# --- 2. SIGTERM under load ----------------------------------------------------------------
graceful=0
grace=0
if "$memwall" serve --help 2>&1 | grep -q -- '--shutdown-grace'; then
    graceful=1
    grace=10 # the documented default of --shutdown-grace
fi
start
wrk -t2 -c256 -d8s --timeout 5s -s "$here/soak.lua" "http://127.0.0.1:$port" >"$work/wrk2" 2>&1 &
wrk_pid=$!
sleep 3
kill -TERM "$pid"
t0=$(date +%s)
status=0
wait "$pid" || status=$?
took=$(($(date +%s) - t0))
pid=
wait "$wrk_pid" || true
read -r c r w t < <(socket_errors "$work/wrk2")
echo "shutdown: exit=$status seconds=$took graceful=$graceful socket_errors=connect:$c,read:$r,write:$w,timeout:$t"
[ "$status" = 0 ] || { echo "shutdown: FAIL: memwall exited $status on SIGTERM under load"; fail=1; }
[ "$took" -le $((grace + 2)) ] || { echo "shutdown: FAIL: took $took s (grace $grace s)"; fail=1; }
if [ "$graceful" = 1 ]; then
    stopped=$(grep '"event":"stopped"' "$work/out" | tail -1)
    echo "shutdown: $stopped"
    case $stopped in
    *'"in_flight_cut":0,'*'"aborted":0,'*) ;;
    *) echo "shutdown: FAIL: accepted requests went unanswered"; fail=1 ;;
    esac
    [ "$t" = 0 ] || { echo "shutdown: FAIL: $t requests timed out"; fail=1; }
else
    echo "shutdown: note: no graceful drain in this build; $r read errors, $t timeouts (not failed)"
fi
exit "$fail"
