#!/usr/bin/env python3
"""The two clients of bench/hit-latency.sh (stdlib only).

    hit-latency-client.py probe PORT PATH SECONDS INTERVAL_MS SAMPLES_OUT [hit]
        One keep-alive connection; every INTERVAL_MS (a fixed schedule, not "sleep after each")
        GET PATH, read the whole body, and time it with perf_counter_ns from just before the
        request is sent to the last byte. Writes one latency a line (microseconds) to SAMPLES_OUT
        and prints one JSON line: requests, errors (not 200, or a body of another length than the
        first), not_hit (with `hit`: answers without `X-Cache: hit`), skipped (ticks let go because
        the probe was more than an interval behind: a slow answer, or the probe itself was not
        scheduled in time), p50/p90/p99/max in ms.
        The same client on both sides, so thumbd and nginx pay the same client overhead.

    hit-latency-client.py flood PORT ORIGIN NAMES_FILE TAG CLIENTS SECONDS
        CLIENTS keep-alive connections, each asking for thumbnails nobody asked for before,
        until SIGTERM (or SECONDS at most): request k (one counter) is image k mod count of NAMES_FILE
        under a source URL new to thumbd (ORIGIN/NAME?r=TAG-k: nginx ignores the query, thumbd
        fetches it as a new source), width 200 + k mod 200, format=jpeg: bench/lua/misses.lua's
        cold mode. Prints one JSON line: requests, statuses, images (2xx), seconds.
"""
import http.client
import json
import math
import signal
import sys
import threading
import time
import urllib.parse


def percentile(sorted_values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


def probe(port, path, seconds, interval_ms, out, expect_hit):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    interval = int(interval_ms * 1_000_000)
    latencies, errors, not_hit, skipped, length = [], 0, 0, 0, None
    start = time.perf_counter_ns()
    end = start + int(seconds * 1e9)
    tick = start
    while tick < end:
        now = time.perf_counter_ns()
        if now < tick:
            time.sleep((tick - now) / 1e9)
        t0 = time.perf_counter_ns()
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            tick += interval
            continue
        t1 = time.perf_counter_ns()
        if length is None:
            length = len(body)
        if response.status != 200 or len(body) != length:
            errors += 1
        elif expect_hit and response.getheader("X-Cache") != "hit":
            not_hit += 1
        latencies.append((t1 - t0) // 1000)
        tick += interval
        # Behind by more than an interval (a slow answer, or the probe itself was not scheduled):
        # skip the ticks missed rather than send a burst that catches up, and count them.
        now = time.perf_counter_ns()
        if now > tick + interval:
            missed = (now - tick) // interval
            skipped += missed
            tick += missed * interval
    with open(out, "w") as f:
        f.writelines(f"{v}\n" for v in latencies)
    s = sorted(latencies)
    ms = lambda v: None if v is None else round(v / 1000, 3)  # noqa: E731
    print(json.dumps({
        "requests": len(latencies), "errors": errors, "not_hit": not_hit, "skipped": skipped, "bytes": length,
        "p50_ms": ms(percentile(s, 50)), "p90_ms": ms(percentile(s, 90)),
        "p99_ms": ms(percentile(s, 99)), "max_ms": ms(s[-1] if s else None),
    }))


def flood(port, origin, names_file, tag, clients, seconds):
    with open(names_file) as f:
        names = [line.strip() for line in f if line.strip()]
    counter = iter(range(10**12))
    lock = threading.Lock()
    statuses = {}
    deadline = time.monotonic() + seconds
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    start = time.monotonic()

    def run():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while not stop.is_set() and time.monotonic() < deadline:
            with lock:
                k = next(counter)
            source = f"{origin}/{names[k % len(names)]}?r={tag}-{k}"
            query = urllib.parse.urlencode({"url": source, "w": 200 + k % 200, "format": "jpeg"})
            try:
                conn.request("GET", "/thumb?" + query)
                response = conn.getresponse()
                response.read()
                status = str(response.status)
            except (OSError, http.client.HTTPException) as error:
                status = type(error).__name__
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        threads[0].join(0.1)  # with a timeout, so that SIGTERM's handler runs
    elapsed = time.monotonic() - start
    images = sum(n for s, n in statuses.items() if s.startswith("2"))
    print(json.dumps({"requests": sum(statuses.values()), "statuses": statuses, "images": images,
                      "seconds": round(elapsed, 2)}))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "probe":
        probe(int(args[0]), args[1], float(args[2]), float(args[3]), args[4], len(args) > 5 and args[5] == "hit")
    elif mode == "flood":
        flood(int(args[0]), args[1], args[2], args[3], int(args[4]), float(args[5]))
    else:
        sys.exit(f"unknown mode {mode}")
