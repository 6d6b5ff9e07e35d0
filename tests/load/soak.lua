-- soak.lua - wrk script for tests/load/soak.sh: a rotating mix of valid and invalid requests
-- over every route (compute GET and POST, catalogs, health, contract, and 400/404/405/413/415/
-- 422 cases), and a count of 5xx replies reported by done() as "soak: 5xx=N".
local json = { ["Content-Type"] = "application/json" }
local plain = { ["Content-Type"] = "text/plain" }
local big = '{"model": "' .. string.rep("a", 70000) .. '"}'

local mix = {
  wrk.format("GET", "/fit"),
  wrk.format("GET", "/fit?params=70e9&gpus=8&zero_stage=3&checkpointing=full"),
  wrk.format("GET", "/memory?model=llama2-13b&batch=4&seq_len=4096"),
  wrk.format("GET", "/flops?model=gpt3-175b&attention_flops=causal"),
  wrk.format("GET", "/runtime?params=7B&tokens=1.4T&gpus=8&usd_per_gpu_hour=2"),
  wrk.format("POST", "/fit", json, '{"params": "13B", "gpus": 2, "batch": 2}'),
  wrk.format("POST", "/runtime", json, '{"tokens_per_second": 3000, "gpus": 8}'),
  wrk.format("GET", "/gpus"),
  wrk.format("GET", "/models"),
  wrk.format("GET", "/healthz"),
  wrk.format("GET", "/openapi.yaml"),
  wrk.format("GET", "/fit?batch=0&params=NaN"),                 -- 400
  wrk.format("POST", "/memory", json, '{"batch": [1], "x": 1'),  -- 400 malformed
  wrk.format("POST", "/flops", json, '{"batch": 1, "batch": 2}'), -- 400 duplicate
  wrk.format("GET", "/fit?gpus=4&tp=8"),                        -- 422
  wrk.format("GET", "/fit?params=1e15&seq_len=1e8&batch=1e5"),  -- 422 out of range
  wrk.format("GET", "/nope"),                                   -- 404
  wrk.format("DELETE", "/fit"),                                 -- 405
  wrk.format("POST", "/fit", plain, "{}"),                      -- 415
  wrk.format("POST", "/fit", json, big),                        -- 413
}

local i = 0
errors5xx = 0 -- global: done() reads it from each thread
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  i = tonumber(wrk.thread:get("id")) or 0
end

function request()
  i = i + 1
  return mix[(i % #mix) + 1]
end

function response(status, headers, body)
  if status >= 500 then
    errors5xx = errors5xx + 1
  end
end

function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do
    n = n + (tonumber(t:get("errors5xx")) or 0)
  end
  io.write(string.format("soak: requests=%d 5xx=%d\n", summary.requests, n))
end
