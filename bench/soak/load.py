#!/usr/bin/env python3
"""The load, the checks and the report of bench/soak.sh (stdlib only). Exit status 1 when a
check fails. Every request goes to 127.0.0.1 on a new connection (so one answer is one
request, and a connection thumbd closes after an error cannot swallow the next request).

Each operation knows the statuses it may get. A 503 is accepted for every operation that can
make work (the worker queue is full; it must carry Retry-After). Every status >= 400 must be
application/problem+json whose JSON "status" is the HTTP status. An answer is "at once" (hit
deadline) when it needed no work: a cache hit (X-Cache: hit), a 202, a 304 of a hit, every
4xx that is decided from the request alone, an only-if-cached 504; everything else has the work
deadline, --fetch-timeout + --work-margin (the fetch deadline covers waiting for a fetch slot and
the whole transfer; the margin covers the queue and the resize on this shared machine).
"""
import argparse
import http.client
import itertools
import json
import os
import random
import socket
import sys
import threading
import time
import urllib.parse

p = argparse.ArgumentParser()
p.add_argument("--thumbd-port", type=int, required=True)
p.add_argument("--pid", type=int, required=True)
p.add_argument("--origin", required=True, help="nginx base URL of the good corpus, e.g. http://127.0.0.1:18111/src")
p.add_argument("--fault-base", type=int, required=True)
p.add_argument("--names", required=True, help="file with one corpus file name a line")
p.add_argument("--seconds", type=float, default=600)
p.add_argument("--threads", type=int, default=6)
p.add_argument("--fetch-timeout", type=float, required=True)
p.add_argument("--head-timeout", type=float, required=True)
p.add_argument("--hit-deadline", type=float, default=2.0)
p.add_argument("--work-margin", type=float, default=20.0)
p.add_argument("--cache-bytes", type=int, required=True)
p.add_argument("--work-bytes", type=int, required=True)
p.add_argument("--warmup", type=float, default=None, help="seconds; default 20 %% of the run, at least 10")
p.add_argument("--report", required=True)
p.add_argument("--thumbd-log", default="")
p.add_argument("--describe", default="", help="a line about the setup, for the report")
p.add_argument("--seed", type=int, default=8)
a = p.parse_args()

HOST = "127.0.0.1"
PORT = a.thumbd_port
WORK_DEADLINE = a.fetch_timeout + a.work_margin
SOCK_TIMEOUT = WORK_DEADLINE + 30  # past this an answer is "none"
names = [l.strip() for l in open(a.names) if l.strip()]
FAULTS = ["trickle", "stall", "reset", "5xx", "badlen", "truncated", "loop", "flap"]
fault_port = {k: a.fault_base + i for i, k in enumerate(FAULTS)}
seq = itertools.count(1)
enc = lambda s: urllib.parse.quote(s, safe="")


def thumb(src, **q):
    return "/thumb?url=" + enc(src) + "".join(f"&{k}={v}" for k, v in q.items())


def good(name, query=""):
    return f"{a.origin}/{name}" + (f"?{query}" if query else "")


def fault_src(kind, name, sub=""):
    return f"http://127.0.0.1:{fault_port[kind]}/{sub + '/' if sub else ''}{name}?n={next(seq)}"


# ------------------------------------------------------------------ results
lock = threading.Lock()
results = []  # (t, op, status, seconds, ok, problem, xcache)
failures = []  # (t, op, what)
t0 = time.monotonic()


def now():
    return time.monotonic() - t0


def fail(op, what):
    with lock:
        failures.append((round(now(), 1), op, what))


def request(method, path, headers=None):
    """One request on a new connection: (status, headers dict lower-case, body, seconds) or raises."""
    start = time.monotonic()
    c = http.client.HTTPConnection(HOST, PORT, timeout=SOCK_TIMEOUT)
    try:
        c.request(method, path, body=b"" if method == "POST" else None, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        h = {k.lower(): v for k, v in r.getheaders()}
        return r.status, h, body, time.monotonic() - start
    finally:
        c.close()


IMMEDIATE = {202, 400, 403, 404, 405, 414, 431, 505}


def run_op(op, method, path, expect, headers=None, work=True, check=None):
    """Sends one request and checks status, problem+json, Retry-After and the deadline."""
    try:
        status, h, body, secs = request(method, path, headers)
    except Exception as e:  # no answer: reset, closed without a status line, socket timeout
        with lock:
            results.append((now(), op, "none", 0.0, False, False, ""))
        fail(op, f"no answer ({type(e).__name__}: {e}) for {method} {path[:160]}")
        return None
    ok = True
    xc = h.get("x-cache", "")
    allowed = set(expect) | ({503} if work else set())
    if status == 500:
        ok = False
        fail(op, f"500 for {method} {path[:160]}: {body[:200]!r}")
    elif status not in allowed:
        ok = False
        fail(op, f"status {status} (expected {sorted(allowed)}) for {method} {path[:160]}: {body[:200]!r}")
    problem = False
    if status >= 400:
        ct = h.get("content-type", "")
        if not ct.startswith("application/problem+json"):
            ok = False
            fail(op, f"{status} with Content-Type {ct!r} for {method} {path[:120]}")
        elif method != "HEAD":
            try:
                doc = json.loads(body)
                problem = doc.get("status") == status and "type" in doc and "title" in doc
            except ValueError:
                problem = False
            if not problem:
                ok = False
                fail(op, f"{status} problem body not RFC 9457 ({body[:160]!r})")
        else:
            problem = True
    if status == 503 and "retry-after" not in h:
        ok = False
        fail(op, f"503 without Retry-After for {path[:120]}")
    at_once = status in IMMEDIATE or xc == "hit" or (status == 504 and op.startswith("only-if-cached"))
    deadline = a.hit_deadline if at_once else WORK_DEADLINE
    if secs > deadline:
        ok = False
        fail(op, f"{status} X-Cache={xc or '-'} took {secs:.2f} s > {deadline:.1f} s deadline for {path[:120]}")
    if check and ok and status in expect:
        why = check(status, h, body)
        if why:
            ok = False
            fail(op, why)
    with lock:
        results.append((now(), op, status, secs, ok, problem, xc))
    return status, h, body


# ------------------------------------------------------------------ warm-up: the hot set
hot = [thumb(good(n), w=300) for n in names]
etags = {}
for path in hot:
    r = run_op("warm-up", "GET", path, {200})
    if r and r[0] == 200 and "etag" in r[1]:
        etags[path] = r[1]["etag"]
warm_results = len(results)


# ------------------------------------------------------------------ operations
def op_hit(rnd):
    def check(s, h, b):
        return None if b and h.get("content-type", "").startswith("image/") else f"hit without an image body ({h.get('content-type')})"
    run_op("hit", "GET", rnd.choice(hot), {200}, check=check)


def op_head(rnd):
    def check(s, h, b):
        return None if not b and "content-length" in h else f"HEAD with a body of {len(b)} bytes or no Content-Length"
    run_op("head", "HEAD", rnd.choice(hot), {200}, check=check)


def op_revalidate(rnd):
    path = rnd.choice(hot)
    tag = etags.get(path)
    if not tag:
        return
    run_op("if-none-match", "GET", path, {304, 200}, headers={"If-None-Match": tag})


def op_new_size(rnd):
    run_op("new-size", "GET", thumb(good(rnd.choice(names)), w=rnd.randint(100, 1200)), {200})


def op_new_size_race(rnd):
    """A never-seen source asked for at three widths at once: one request fetches it and streams
    its first size while the others wait for that fetch and are cut from its decoded copy. This
    load (first fetches racing new sizes of the same source) found liborc's code-allocator race
    (docs/architecture.md, "Orc stays on")."""
    src = good(rnd.choice(names), f"race={next(seq)}")
    widths = rnd.sample(range(100, 1201), 3)
    start = threading.Barrier(len(widths))

    def one(w):
        try:
            start.wait(5)
        except threading.BrokenBarrierError:
            pass  # send it anyway: a late start is a weaker race, not a failure
        run_op("new-size race", "GET", thumb(src, w=w), {200})

    racers = [threading.Thread(target=one, args=(w,)) for w in widths]
    for t in racers:
        t.start()
    for t in racers:
        t.join()


def op_cold(rnd):
    run_op("cold-miss", "GET", thumb(good(rnd.choice(names), f"soak={next(seq)}"), w=rnd.randint(200, 399), format="jpeg"), {200})


def op_prefetch(rnd):
    q = {"w": rnd.randint(100, 600)} if rnd.random() < 0.5 else {}
    path = thumb(good(rnd.choice(names), f"pre={next(seq)}"), **q).replace("/thumb?", "/prefetch?", 1)
    run_op("prefetch", "POST", path, {202})


def op_only_if_cached(rnd):
    if rnd.random() < 0.6:
        run_op("only-if-cached (hot)", "GET", rnd.choice(hot), {200, 504}, headers={"Cache-Control": "only-if-cached"}, work=False)
    else:
        path = thumb(good(rnd.choice(names), f"never={next(seq)}"), w=300)
        run_op("only-if-cached (never seen)", "GET", path, {504}, headers={"Cache-Control": "only-if-cached"}, work=False)


def raw_exchange(data, read_timeout):
    """Sends raw bytes on a new connection; (status or None, headers, seconds)."""
    start = time.monotonic()
    s = socket.create_connection((HOST, PORT), timeout=read_timeout)
    try:
        s.sendall(data)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    secs = time.monotonic() - start
    if not buf.startswith(b"HTTP/1."):
        return None, {}, secs, buf
    head = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    h = {}
    for line in head[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            h[k.strip().lower()] = v.strip()
    return int(head[0].split()[1]), h, secs, buf


MALFORMED = [
    ("missing w", lambda: thumb(good(names[0]))),
    ("w=0", lambda: thumb(good(names[0]), w=0)),
    ("w=abc", lambda: thumb(good(names[0]), w="abc")),
    ("w repeated", lambda: thumb(good(names[0]), w=300) + "&w=400"),
    ("unknown parameter", lambda: thumb(good(names[0]), w=300, zoom=2)),
    ("cover without h", lambda: thumb(good(names[0]), w=300, fit="cover")),
    ("dpr=5", lambda: thumb(good(names[0]), w=300, dpr=5)),
    ("empty url", lambda: "/thumb?url=&w=300"),
]


def op_malformed(rnd):
    pick = rnd.randrange(len(MALFORMED) + 7)
    if pick < len(MALFORMED):
        label, mk = MALFORMED[pick]
        run_op("malformed: 400", "GET", mk(), {400}, work=False)
    elif pick == len(MALFORMED):
        run_op("malformed: ftp scheme 400", "GET", thumb("ftp://127.0.0.1/a.jpg", w=300), {400}, work=False)
    elif pick == len(MALFORMED) + 1:
        run_op("malformed: private address 403", "GET", thumb("http://10.0.0.1/a.jpg", w=300), {403}, work=False)
    elif pick == len(MALFORMED) + 2:
        def allow(s, h, b):
            return None if "allow" in h else "405 without Allow"
        run_op("malformed: PUT 405", "PUT", rnd.choice(hot), {405}, work=False, check=allow)
    elif pick == len(MALFORMED) + 3:
        run_op("malformed: no route 404", "GET", "/nope?x=1", {404}, work=False)
    elif pick == len(MALFORMED) + 4:
        run_op("not an image: 415", "GET", thumb(f"{a.origin}/manifest.tsv?n={next(seq)}", w=300), {415})
    else:
        raws = [
            ("raw: garbage 400", b"GARBAGE\r\n\r\n", {400}),
            ("raw: HTTP/2.0 505", b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", {505}),
            ("raw: 17 KiB target 414", b"GET /thumb?url=" + b"a" * 17000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", {414}),
            ("raw: CL + TE 400", b"POST /prefetch?url=x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {400}),
        ]
        label, data, expect = rnd.choice(raws)
        try:
            status, h, secs, buf = raw_exchange(data, SOCK_TIMEOUT)
        except Exception as e:
            with lock:
                results.append((now(), label, "none", 0.0, False, False, ""))
            fail(label, f"no answer ({type(e).__name__})")
            return
        ok = status in expect and h.get("content-type", "").startswith("application/problem+json") and secs <= a.hit_deadline
        if not ok:
            fail(label, f"status {status}, Content-Type {h.get('content-type')!r}, {secs:.2f} s: {buf[:160]!r}")
        with lock:
            results.append((now(), label, status if status else "none", secs, ok, ok, ""))


def op_fault(rnd):
    kind = rnd.choice(FAULTS + ["badlen"])
    name = rnd.choice(names)
    w = rnd.randint(150, 450)
    if kind == "badlen":
        sub = rnd.choice(["long", "short"])
        # short: Content-Length is 60 % of the body and the whole body is sent. That answer is cut
        # at its length (422); the excess left on the connection makes thumbd drop it, so the
        # next answer from this origin comes on a new one (it once read the excess: 502).
        expect = {502} if sub == "long" else {422}
        run_op(f"fault: badlen {sub}", "GET", thumb(fault_src(kind, name, sub), w=w), expect)
        return
    expect = {
        "trickle": {200},
        "stall": {504},
        "reset": {502},
        "5xx": {502},
        "truncated": {422},
        "loop": {502},
        "flap": {200, 502},
    }[kind]
    run_op(f"fault: {kind}", "GET", thumb(fault_src(kind, name), w=w), expect)


MIX = [
    (op_hit, 30), (op_head, 5), (op_revalidate, 8), (op_new_size, 8), (op_new_size_race, 3), (op_cold, 5), (op_prefetch, 3),
    (op_only_if_cached, 5), (op_malformed, 8), (op_fault, 16),
]
ops, weights = zip(*MIX)
stop = threading.Event()
end_at = time.monotonic() + a.seconds


def worker(i):
    rnd = random.Random(a.seed * 1000 + i)
    while time.monotonic() < end_at:
        rnd.choices(ops, weights)[0](rnd)


# ------------------------------------------------------------------ slow clients
slow = {"within": [], "beyond": []}


def slow_within(rnd):
    """A head trickled over 40 % of --head-timeout: must get its thumbnail."""
    path = rnd.choice(hot)
    data = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    pause = a.head_timeout * 0.4 / len(data)
    start = time.monotonic()
    try:
        s = socket.create_connection((HOST, PORT), timeout=SOCK_TIMEOUT)
        for i in range(len(data)):
            s.send(data[i:i + 1])
            time.sleep(pause)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        status = int(buf.split(b" ", 2)[1]) if buf.startswith(b"HTTP/1.") else None
    except Exception as e:
        status = f"error {type(e).__name__}"
    secs = time.monotonic() - start
    ok = status == 200
    slow["within"].append((status, secs))
    if not ok:
        fail("slow client (within head timeout)", f"status {status} after {secs:.1f} s")
    with lock:
        results.append((now(), "slow client: head within --head-timeout", status if status else "none", secs, ok, False, ""))


def slow_beyond(rnd):
    """A head trickled for ever (a byte every 200 ms): thumbd must cut it off within
    --head-timeout + 2 s (its watchdog ticks once a second), with no answer or a problem."""
    data = (f"GET {rnd.choice(hot)} HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "X-Pad: " + "a" * 4000).encode()
    start = time.monotonic()
    closed = None
    status = None
    try:
        s = socket.create_connection((HOST, PORT), timeout=1)
        for i in range(len(data)):
            try:
                s.send(data[i:i + 1])
            except OSError:
                closed = time.monotonic() - start
                break
            try:
                s.settimeout(0.2)
                chunk = s.recv(65536)
                if chunk.startswith(b"HTTP/1."):
                    status = int(chunk.split(b" ", 2)[1])
                closed = time.monotonic() - start  # an answer or the end of the stream
                break
            except socket.timeout:
                pass
            except OSError:
                closed = time.monotonic() - start
                break
            if time.monotonic() - start > a.head_timeout + 15:
                break
        s.close()
    except Exception as e:
        status = f"error {type(e).__name__}"
    limit = a.head_timeout + 2
    ok = closed is not None and closed <= limit and status in (None, 408, 400)
    slow["beyond"].append((status, closed))
    if not ok:
        fail("slow client (beyond head timeout)", f"closed after {closed} s (limit {limit} s), status {status}")
    with lock:
        results.append((now(), "slow client: head beyond --head-timeout (cut off)", "closed" if closed else "open", closed or 0.0, ok, False, ""))


def slow_clients():
    rnd = random.Random(a.seed)
    k = 0
    while time.monotonic() < end_at - a.head_timeout - 3:
        fn = slow_beyond if k % 3 == 2 else slow_within
        threading.Thread(target=fn, args=(random.Random(rnd.random()),), daemon=True).start()
        k += 1
        time.sleep(3)


# ------------------------------------------------------------------ health and RSS
health = []  # (t, status, seconds)
rss = []  # (t, kB)


def vm(key):
    try:
        with open(f"/proc/{a.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def monitor():
    while not stop.is_set():
        kb = vm("VmRSS")
        if kb is not None:
            rss.append((now(), kb))
        try:
            status, _, _, secs = request("GET", "/healthz")
        except Exception:
            status, secs = "none", None
        health.append((now(), status, secs))
        if status != 200 or secs is None or secs > a.hit_deadline:
            fail("healthz", f"status {status}, {secs} s")
        stop.wait(1.0)


mon = threading.Thread(target=monitor, daemon=True)
mon.start()
load_start = now()
threads = [threading.Thread(target=worker, args=(i,)) for i in range(a.threads)]
threads.append(threading.Thread(target=slow_clients))
for t in threads:
    t.start()
for t in threads:
    t.join()
time.sleep(a.head_timeout + 3)  # the last slow clients
stop.set()
mon.join()
load_seconds = now() - load_start
alive = os.path.exists(f"/proc/{a.pid}/status") and vm("VmRSS") is not None
try:
    final_health = request("GET", "/healthz")[0]
except Exception:
    final_health = "none"
hwm = vm("VmHWM")

# ------------------------------------------------------------------ checks and report
mib = lambda kb: kb / 1024
warm = a.warmup if a.warmup is not None else max(10.0, 0.2 * a.seconds)
post = [(t, kb) for t, kb in rss if t >= load_start + warm]
# RSS swings by a few hundred MiB within seconds (each large decode), so the flatness verdict
# compares peaks of windows long enough to catch such swings: the first and last fifth of what
# follows the warm-up, each at least 24 s (so at least 120 s after the warm-up); shorter runs
# give the figure without a verdict.
growth = None
long_enough = post and post[-1][0] - post[0][0] >= 120
if len(post) >= 10:
    fifth = max(2, len(post) // 5)
    first = max(kb for _, kb in post[:fifth])
    last = max(kb for _, kb in post[-fifth:])
    growth = last - first
peak_kb = max([kb for _, kb in rss] + [hwm or 0])
limit_kb = (a.cache_bytes + a.work_bytes) / 1024 + 80 * 1024
by_op = {}
for t, op, status, secs, ok, problem, xc in results:
    d = by_op.setdefault(op, {"n": 0, "statuses": {}, "lat": [], "bad": 0, "cache": {}})
    d["n"] += 1
    d["statuses"][status] = d["statuses"].get(status, 0) + 1
    d["lat"].append(secs)
    d["bad"] += 0 if ok else 1
    if xc:
        d["cache"][xc] = d["cache"].get(xc, 0) + 1
count = lambda pred: sum(1 for r in results if pred(r))
n500 = count(lambda r: r[2] == 500)
nnone = count(lambda r: r[2] == "none" and not r[1].startswith("slow client: head beyond"))
nlate = sum(1 for _, op, w in failures if "deadline" in w)
nstatus = sum(1 for _, op, w in failures if w.startswith("status "))
nproblem = sum(1 for _, op, w in failures if "Content-Type" in w or "problem body" in w or "Retry-After" in w)
hbad = sum(1 for _, s, secs in health if s != 200 or secs is None or secs > a.hit_deadline)
checks = [
    ("thumbd alive at the end and /healthz 200", alive and final_health == 200, f"alive={alive}, final /healthz {final_health}"),
    ("/healthz every second within the hit deadline", hbad == 0, f"{len(health) - hbad} of {len(health)}"),
    ("no 500", n500 == 0, f"{n500}"),
    ("every request answered", nnone == 0, f"{nnone} without an answer"),
    ("every answer within its deadline", nlate == 0, f"{nlate} late (hit deadline {a.hit_deadline:g} s, work deadline {WORK_DEADLINE:g} s)"),
    ("expected status for every operation and fault", nstatus == 0, f"{nstatus} unexpected"),
    ("errors are problem+json (503 with Retry-After)", nproblem == 0, f"{nproblem} not"),
    ("slow clients: a trickled head in time is served, one past --head-timeout is cut off",
     not any(op.startswith("slow client") for _, op, _ in failures),
     f"{len(slow['within'])} in time, {len(slow['beyond'])} cut off"),
    ("RSS after warm-up flat (growth < 50 MiB)", (None if growth is None or not long_enough else growth < 50 * 1024),
     "n/a (run too short)" if growth is None else f"{mib(growth):+.1f} MiB (peak of the last fifth vs the first fifth after {warm:.0f} s of warm-up)"
     + ("" if long_enough else "; no verdict: needs >= 120 s after the warm-up")),
    ("peak RSS <= cache + work + 80 MiB", peak_kb <= limit_kb, f"{mib(peak_kb):.0f} MiB vs {limit_kb / 1024:.0f} MiB"),
]
verdict = all(ok is not False for _, ok, _ in checks)  # None: no verdict (run too short)
total = len(results) - warm_results


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0


out = []
w = out.append
w(f"# thumbd soak: {a.seconds:g} s of mixed load against misbehaving origins\n")
w(f"- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {a.describe}")
w(f"- {total} requests after the warm-up of {warm_results} ({total / max(load_seconds, 1):.1f}/s), {a.threads} load threads, "
  f"one new connection per request, plus a slow client every 3 s and /healthz every second")
w(f"- deadlines: at once (cache hit, 202, 4xx from the request alone, only-if-cached 504) {a.hit_deadline:g} s; "
  f"work (anything else) --fetch-timeout {a.fetch_timeout:g} s + {a.work_margin:g} s = {WORK_DEADLINE:g} s; "
  f"a trickling head is cut off within --head-timeout {a.head_timeout:g} s + 2 s")
w(f"- RSS: start of load {mib(rss[0][1]) if rss else 0:.0f} MiB, peak {mib(peak_kb):.0f} MiB (VmHWM {mib(hwm or 0):.0f} MiB), "
  f"end {mib(rss[-1][1]) if rss else 0:.0f} MiB; budget --cache-bytes {a.cache_bytes >> 20} MiB + --work-bytes {a.work_bytes >> 20} MiB\n")
w(f"**{'PASS' if verdict else 'FAIL'}**\n")
w("| check | result | figure |\n|---|---|---|")
for name, ok, fig in checks:
    w(f"| {name} | {'n/a' if ok is None else 'PASS' if ok else '**FAIL**'} | {fig} |")
w("\n## Operations\n")
w("| operation | requests | statuses | X-Cache | p50 s | p99 s | max s | failed |\n|---|---|---|---|---|---|---|---|")
for op in sorted(by_op):
    d = by_op[op]
    st = ", ".join(f"{k}: {v}" for k, v in sorted(d["statuses"].items(), key=lambda kv: str(kv[0])))
    ca = ", ".join(f"{k}: {v}" for k, v in sorted(d["cache"].items()))
    w(f"| {op} | {d['n']} | {st} | {ca or '-'} | {pct(d['lat'], 0.5):.3f} | {pct(d['lat'], 0.99):.3f} | {max(d['lat']):.3f} | {d['bad']} |")
w("\nExpected: hit, head 200; if-none-match 304 (200 after an eviction); new-size, new-size race, cold-miss, trickle 200; prefetch 202; "
  "only-if-cached 200 or 504 (never seen: 504); malformed 400/403/404/405/414/505 as named; not an image 415; "
  "stall 504; reset, 5xx, badlen long (Content-Length past the body), redirect loop 502; truncated 422; badlen short 422; "
  "flap 200 or 502 (refused, or its breaker open); 503 + Retry-After allowed wherever work is made.")
if failures:
    w(f"\n## Failures ({len(failures)}; the first 40)\n")
    for t, op, what in failures[:40]:
        w(f"- t={t} s {op}: {what}")
if rss:
    w("\n## RSS (MiB) every 10 % of the run\n")
    step = max(1, len(rss) // 10)
    w(" ".join(f"{t:.0f}s:{mib(kb):.0f}" for t, kb in rss[::step]))
if a.thumbd_log and os.path.exists(a.thumbd_log):
    counts = {}
    with open(a.thumbd_log, errors="replace") as f:
        for line in f:
            for field in line.split():
                if field.startswith(("status=", "cache=", "error=")):
                    counts[field] = counts.get(field, 0) + 1
    w("\n## thumbd's request log\n")
    w(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
text = "\n".join(out) + "\n"
with open(a.report, "w") as f:
    f.write(text)
print(text)
sys.exit(0 if verdict else 1)
