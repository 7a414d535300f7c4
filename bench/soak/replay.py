#!/usr/bin/env python3
"""The cache-policy replay of bench/replay.sh (stdlib only).

  replay.py run --port P --origin URL --names FILE --requests N [--crawl-every K] --out RUN.json
      Replays a Zipf-like trace (s = --zipf, default 1.0) over every corpus image at --widths
      (default 160,320,640,960), the items ranked in a fixed random order (--seed), with
      --clients client threads taking the requests in trace order. With --crawl-every K, after
      every K-1 trace requests one crawl request is mixed in: a never-seen source
      (<image>?crawl=N, images in turn, w=320), a one-pass crawl. The trace is the same with and
      without the crawl. Records every request's item, status, X-Cache and Content-Length.
  replay.py report --budget BYTES --manifest TSV --warmup F A.json B.json --out REPORT.md
      Hit rates (X-Cache: hit, over the trace requests after the first F of them; crawl requests
      are never counted) of A (trace alone) and B (with the crawl), their ratio (target >= 0.9),
      and the same for plain LRU simulated over the same request sequences with the entry sizes
      thumbd reported (each variant's Content-Length, each original's file size: a crawl source
      is a new original of that image's size), under the same byte budget. Exit 1 below target.
"""
import argparse
import collections
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse


def trace(names, widths, n, s, seed):
    rnd = random.Random(seed)
    items = [(name, w) for name in names for w in widths]
    rnd.shuffle(items)
    weights = [1.0 / (rank + 1) ** s for rank in range(len(items))]
    return rnd.choices(items, weights, k=n)


def cmd_run(a):
    names = [l.strip() for l in open(a.names) if l.strip()]
    widths = [int(x) for x in a.widths.split(",")]
    reqs = []
    crawl = 0
    for i, (name, w) in enumerate(trace(names, widths, a.requests, a.zipf, a.seed)):
        if a.crawl_every and (len(reqs) + 1) % a.crawl_every == 0:
            cname = names[crawl % len(names)]
            crawl += 1
            reqs.append({"kind": "crawl", "name": cname, "w": 320, "src": f"{a.origin}/{cname}?crawl={crawl}"})
        reqs.append({"kind": "trace", "name": name, "w": w, "src": f"{a.origin}/{name}"})
    nxt = iter(range(len(reqs)))
    lock = threading.Lock()

    def client():
        c = None
        while True:
            with lock:
                i = next(nxt, None)
            if i is None:
                break
            r = reqs[i]
            path = "/thumb?url=" + urllib.parse.quote(r["src"], safe="") + f"&w={r['w']}"
            for attempt in range(5):
                try:
                    if c is None:
                        c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=120)
                    c.request("GET", path)
                    resp = c.getresponse()
                    body = resp.read()
                    r["status"] = resp.status
                    r["xcache"] = resp.getheader("X-Cache", "")
                    r["bytes"] = len(body)
                    if resp.status == 503:
                        time.sleep(float(resp.getheader("Retry-After", "1")))
                        continue
                    break
                except Exception as e:
                    r["status"], r["xcache"] = f"error {type(e).__name__}", ""
                    c = None
                    time.sleep(0.5)

    start = time.monotonic()
    ts = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stats = None
    if a.admin_token:
        try:
            c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=10)
            c.request("GET", "/cache/stats", headers={"Authorization": f"Bearer {a.admin_token}"})
            stats = json.loads(c.getresponse().read())
        except Exception:
            stats = None
    json.dump({"requests": reqs, "seconds": time.monotonic() - start, "crawl_every": a.crawl_every,
               "stats": stats}, open(a.out, "w"))


def lru(reqs, budget, orig_size, var_size):
    """Plain LRU over originals and variants, one byte budget; a variant miss touches (or fetches)
    its original. Returns the hit flags of the requests."""
    cache = collections.OrderedDict()
    used = 0
    flags = []

    def put(key, size):
        nonlocal used
        if key in cache:
            cache.move_to_end(key)
            return
        if size > budget:
            return
        cache[key] = size
        used += size
        while used > budget:
            _, s = cache.popitem(last=False)
            used -= s

    for r in reqs:
        src = r["name"] + (f"?crawl" + r["src"].rsplit("crawl=", 1)[1] if r["kind"] == "crawl" else "")
        vkey = ("v", src, r["w"])
        if vkey in cache:
            cache.move_to_end(vkey)
            flags.append(True)
            continue
        flags.append(False)
        put(("o", src), orig_size[r["name"]])
        put(vkey, var_size.get((r["name"], r["w"]), 20000))
    return flags


def cmd_report(a):
    runs = [json.load(open(p)) for p in a.runs]
    orig_size = {}
    for line in open(a.manifest):
        f = line.rstrip("\n").split("\t")
        if f[2] != "file":
            orig_size[f[2]] = int(f[7])
    var_size = {}
    for run in runs:
        for r in run["requests"]:
            if r.get("status") == 200 and r.get("bytes"):
                var_size[(r["name"], r["w"])] = r["bytes"]
    rows = []
    for label, run in zip(("trace alone", f"trace + crawl (1 in {runs[1]['crawl_every']})"), runs):
        reqs = run["requests"]
        trace_idx = [i for i, r in enumerate(reqs) if r["kind"] == "trace"]
        skip = int(len(trace_idx) * a.warmup)
        counted = trace_idx[skip:]
        hits = sum(1 for i in counted if reqs[i].get("xcache") == "hit")
        flags = lru(reqs, a.budget, orig_size, var_size)
        lru_hits = sum(1 for i in counted if flags[i])
        statuses = collections.Counter(str(r.get("status")) for r in reqs)
        xc = collections.Counter(reqs[i].get("xcache") or "-" for i in counted)
        rows.append({"label": label, "n": len(reqs), "counted": len(counted), "hit": hits / max(1, len(counted)),
                     "lru": lru_hits / max(1, len(counted)), "statuses": statuses, "xcache": xc,
                     "seconds": run["seconds"], "stats": run.get("stats")})
    ratio = rows[1]["hit"] / rows[0]["hit"] if rows[0]["hit"] else 0
    lru_ratio = rows[1]["lru"] / rows[0]["lru"] if rows[0]["lru"] else 0
    ok = ratio >= 0.9 and all(set(r["statuses"]) <= {"200"} for r in rows)
    out = [f"# thumbd cache-policy replay: a Zipf trace with and without a one-pass crawl\n",
           f"- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {a.describe}",
           f"- trace: {len(orig_size)} images x widths {a.widths}, Zipf s = {a.zipf}, {rows[0]['n']} requests; "
           f"with the crawl one request in {runs[1]['crawl_every']} is a never-seen source (`<image>?crawl=N`, w=320); "
           f"a fresh thumbd for each run; hit rate = `X-Cache: hit` over the trace requests after the first "
           f"{a.warmup:.0%} of them (crawl requests not counted)",
           f"- plain LRU: thumbd has no plain-LRU switch, so it is **simulated** over the same request sequences "
           f"(one LRU over originals and variants, {a.budget >> 20} MiB, a variant miss touches or loads its original; "
           f"sizes: each variant's Content-Length as thumbd answered it, each original's file size; thumbd's decoded "
           f"1024-px copies are not modelled)\n",
           f"**{'PASS' if ok else 'FAIL'}**: thumbd keeps **{ratio:.1%}** of its hit rate with the crawl (target >= 90 %); "
           f"plain LRU keeps {lru_ratio:.1%}\n",
           "| run | requests | thumbd hit rate | plain LRU (simulated) | statuses | X-Cache (counted) | seconds |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        st = ", ".join(f"{k}: {v}" for k, v in sorted(r["statuses"].items()))
        xc = ", ".join(f"{k}: {v}" for k, v in sorted(r["xcache"].items()))
        out.append(f"| {r['label']} | {r['n']} ({r['counted']} counted) | {r['hit']:.1%} | {r['lru']:.1%} | {st} | {xc} | {r['seconds']:.0f} |")
    out.append(f"| with ÷ without | | **{ratio:.3f}** | {lru_ratio:.3f} | | | |")
    for r in rows:
        if r["stats"]:
            out.append(f"\n`/cache/stats` after {r['label']}: `{json.dumps(r['stats'], separators=(',', ':'))[:1500]}`")
    text = "\n".join(out) + "\n"
    open(a.out, "w").write(text)
    print(text)
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--origin", required=True)
    r.add_argument("--names", required=True)
    r.add_argument("--requests", type=int, default=10000)
    r.add_argument("--crawl-every", type=int, default=0)
    r.add_argument("--widths", default="160,320,640,960")
    r.add_argument("--zipf", type=float, default=1.0)
    r.add_argument("--seed", type=int, default=8)
    r.add_argument("--clients", type=int, default=2)
    r.add_argument("--admin-token", default="")
    r.add_argument("--out", required=True)
    q = sub.add_parser("report")
    q.add_argument("--budget", type=int, required=True)
    q.add_argument("--manifest", required=True)
    q.add_argument("--warmup", type=float, default=0.2)
    q.add_argument("--widths", default="160,320,640,960")
    q.add_argument("--zipf", type=float, default=1.0)
    q.add_argument("--describe", default="")
    q.add_argument("--out", required=True)
    q.add_argument("runs", nargs=2)
    a = p.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
