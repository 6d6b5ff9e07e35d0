-- wrk.lua - one wrk script for every benchmark run (script/bench, tests/bench/run).
--
-- Environment: BENCH_METHOD (GET or POST, default GET), BENCH_BODY (the POST JSON body),
-- BENCH_DELAY_MS (when > 0, each connection waits that long after every reply before it sends
-- the next request: the pacing that holds the latency runs near a chosen rate, since Debian has
-- no wrk2). done() prints one machine-readable line that tests/bench/run parses; latency is in
-- microseconds and p99.9 comes from wrk's own histogram (its --latency table stops at p99).
local method = os.getenv("BENCH_METHOD") or "GET"
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "0")

wrk.method = method
if method == "POST" then
    wrk.body = os.getenv("BENCH_BODY") or "{}"
    wrk.headers["Content-Type"] = "application/json"
end

if delay_ms > 0 then
    function delay()
        return delay_ms
    end
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "BENCH rps=%.0f requests=%d errors=%d p50_us=%d p99_us=%d p999_us=%d\n",
        summary.requests / (summary.duration / 1e6), summary.requests,
        e.connect + e.read + e.write + e.status + e.timeout,
        latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
