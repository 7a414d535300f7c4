-- Shared by the bench's wrk scripts: setup() numbers the threads (each script reads `tid` to
-- pick its own offset), and a done() hook that prints one machine-readable line with
-- exact percentiles (wrk's --latency table is rounded) and req/s = requests / duration.
function bench_done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "rps": %.3f, ' ..
    '"p50_us": %d, "p75_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f, ' ..
    '"err_connect": %d, "err_read": %d, "err_write": %d, "err_status": %d, "err_timeout": %d}\n',
    summary.requests, summary.duration, summary.bytes, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(75), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end

local nthreads = 0
function setup(thread)
  thread:set("tid", nthreads)
  nthreads = nthreads + 1
end
