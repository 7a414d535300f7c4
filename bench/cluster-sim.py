#!/usr/bin/env python3
"""What consistent hashing buys a cluster of thumbd instances, simulated (stdlib only).

Each instance has its own byte-budgeted cache: a segmented LRU as thumbd's ImageCache (entries
start in probation, a variant asked for again moves to protected, at most 80 % of the budget;
eviction takes probation's oldest first; an entry over 1/8 of the budget is served, not kept;
cost = bytes + 256). A request for (source, width) is a hit when the instance holds the variant;
else a new size when it holds a decoded copy that can serve the width or the original (a later
size makes the 1024-px copy, as thumbd does); else an origin fetch, after which it keeps the
original and the variant.

  cluster-sim.py table [--sources N] [--widths 200,300,...] [--requests N] [--zipf S]
                       [--budget BYTES] [--max-instances 32] [--seed N] [--policy slru|lru]
      A trace with a Zipf-like popularity over sources (s = --zipf) and, per request, one of
      the widths (the first most asked for: weights 1, 1/2, 1/3, ...). Hit rate and origin
      fetches for N = 1, 2, 4, ... --max-instances instances with
      --budget bytes each, consistent hashing on the source URL (nginx's ketama ring: 160 points
      per server, CRC-32) against round-robin, and the fraction of sources whose owner changes
      when one instance leaves or joins. Source byte sizes are drawn from the bench corpus's
      real files (bench/corpus/manifest.tsv), variant sizes from the width and the source's
      aspect ratio at the 0.125 bytes per pixel a JPEG Q80 thumbnail takes. Markdown on stdout.

  cluster-sim.py predict --servers HOST:PORT,... --keys FILE --budget BYTES --passes 2
      The ring nginx builds from exactly these `server` lines (`hash $arg_url consistent`):
      for each request in FILE (one per line, in order, one pass: ARG_URL, output WIDTH,
      SOURCE_BYTES, VARIANT_BYTES, SOURCE_WIDTH, SOURCE_HEIGHT[, BANDS], tab-separated), the
      instance it lands on; then the hit
      rate of the last pass, on the cluster and on one instance with the same budget. JSON on
      stdout. deploy/cluster/test.sh compares it with what the cluster did.
"""
import argparse
import bisect
import collections
import csv
import json
import math
import os
import random
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY_OVERHEAD = 256
PROTECTED_FRACTION = 0.8
BYTES_PER_THUMBNAIL_PIXEL = 0.125


class SegmentedLRU:
    """thumbd's ImageCache policy, by bytes (see the module docstring)."""

    def __init__(self, budget, segmented=True):
        self.budget = budget
        self.protected_capacity = int(budget * PROTECTED_FRACTION) if segmented else 0
        self.segmented = segmented
        self.probation = collections.OrderedDict()
        self.protected = collections.OrderedDict()
        self.size = {}
        self.used = 0
        self.protected_used = 0

    def get(self, key, promotable):
        if key in self.protected:
            self.protected.move_to_end(key)
            return True
        if key in self.probation:
            if self.segmented and promotable:
                del self.probation[key]
                self.protected[key] = True
                self.protected_used += self.size[key]
                while self.protected_used > self.protected_capacity and self.protected:
                    old, _ = self.protected.popitem(last=False)
                    self.protected_used -= self.size[old]
                    self.probation[old] = True
            else:
                self.probation.move_to_end(key)
            return True
        return False

    def put(self, key, nbytes):
        cost = nbytes + ENTRY_OVERHEAD
        if cost > self.budget // 8 or key in self.size:
            return
        while self.used + cost > self.budget:
            segment = self.probation if self.probation else self.protected
            old, _ = segment.popitem(last=False)
            self.used -= self.size[old]
            if segment is self.protected:
                self.protected_used -= self.size[old]
            del self.size[old]
        self.size[key] = cost
        self.used += cost
        self.probation[key] = True


class Instance:
    def __init__(self, budget, segmented):
        self.cache = SegmentedLRU(budget, segmented)
        self.hits = self.new_sizes = self.fetches = 0

    def request(self, r):
        """r: a Request. Follows ThumbnailPipeline's order: the variant; a cached decoded copy that
        can serve the width; the cached original (a later size: make the copy when it could serve
        the width, as ThumbnailRenderer.renderKeepingCopy does); else fetch and stream (no copy)."""
        if self.cache.get(("v", r.source, r.width), promotable=True):
            self.hits += 1
            return "hit"
        copy_serves = r.width <= r.copy_width * 0.505 or r.copy_width >= r.source_width
        if copy_serves and self.cache.get(("d", r.source), promotable=False):
            self.new_sizes += 1
        elif self.cache.get(("o", r.source), promotable=False):
            self.new_sizes += 1
            if copy_serves:
                self.cache.put(("d", r.source), r.copy_bytes)
        else:
            self.fetches += 1
            self.cache.put(("o", r.source), r.source_bytes)
        self.cache.put(("v", r.source, r.width), r.variant_bytes)
        return "miss"


class Request:
    """One request: source URL (as the balancer hashes it), width, and the byte sizes of what it
    puts in a cache: the original, the variant, the 1024-px decoded copy (3 bands, 4 with alpha)."""

    __slots__ = ("source", "width", "source_bytes", "variant_bytes", "source_width", "copy_width", "copy_bytes")

    def __init__(self, source, width, source_bytes, variant_bytes, source_width, source_height, bands=3):
        self.source, self.width = source, width
        self.source_bytes, self.variant_bytes = source_bytes, variant_bytes
        scale = min(1.0, 1024 / max(source_width, source_height))
        self.source_width = source_width
        self.copy_width = math.ceil(source_width * scale)
        self.copy_bytes = self.copy_width * math.ceil(source_height * scale) * bands


class KetamaRing:
    """nginx's `hash KEY consistent` (ngx_http_upstream_hash.c): 160 points per server (weight
    1), point j = CRC-32 of "host\\0port" followed by point j-1 as 4 little-endian bytes (0 for
    the first); a key goes to the first point at or after CRC-32(key), wrapping around."""

    def __init__(self, servers):
        points = []
        for index, server in enumerate(servers):
            host, _, port = server.rpartition(":")
            base = host.encode() + b"\0" + port.encode()
            previous = 0
            for _ in range(160):
                point = zlib.crc32(base + previous.to_bytes(4, "little"))
                points.append((point, index))
                previous = point
        points.sort()
        self.servers = servers
        self.hashes = [p for p, _ in points]
        self.owners = [o for _, o in points]

    def owner(self, key):
        i = bisect.bisect_left(self.hashes, zlib.crc32(key.encode()))
        return self.owners[i % len(self.owners)]

    def owner_name(self, key):
        return self.servers[self.owner(key)]


def servers_for(n, first=0):
    return [f"10.0.0.{first + i + 1}:8080" for i in range(n)]


def corpus_sources():
    manifest = os.path.join(HERE, "corpus", "manifest.tsv")
    rows = list(csv.DictReader(open(manifest), delimiter="\t"))
    return [(int(r["bytes"]), int(r["width"]), int(r["height"])) for r in rows]


def make_trace(a):
    rnd = random.Random(a.seed)
    corpus = corpus_sources()
    widths = [int(w) for w in a.widths.split(",")]
    sources = []
    for i in range(a.sources):
        nbytes, w, h = rnd.choice(corpus)
        sources.append((f"https://images.example.org/{i}.jpg", nbytes, w, h))
    # Popularity by source, Zipf-like over a fixed random rank order; each request's width from
    # the page's few sizes, the first most asked for (weights 1, 1/2, 1/3, ...).
    ranked = list(range(a.sources))
    rnd.shuffle(ranked)
    source_weights = [1.0 / (rank + 1) ** a.zipf for rank in range(a.sources)]
    width_weights = [1.0 / (i + 1) for i in range(len(widths))]
    picks = zip(
        rnd.choices(ranked, source_weights, k=a.requests), rnd.choices(widths, width_weights, k=a.requests))
    trace = []
    for s, width in picks:
        url, nbytes, w, h = sources[s]
        out_w = min(width, w)
        variant = int(out_w * out_w * h / w * BYTES_PER_THUMBNAIL_PIXEL)
        trace.append(Request(url, out_w, nbytes, variant, w, h))
    return trace


def replay(trace, n, budget, segmented, route):
    instances = [Instance(budget, segmented) for _ in range(n)]
    for i, r in enumerate(trace):
        instances[route(i, r.source)].request(r)
    hits = sum(x.hits for x in instances)
    fetches = sum(x.fetches for x in instances)
    return hits / len(trace), fetches


def moved(keys, before, after):
    return sum(before.owner_name(k) != after.owner_name(k) for k in keys) / len(keys)


def cmd_table(a):
    trace = make_trace(a)
    segmented = a.policy == "slru"
    keys = sorted({r.source for r in trace})
    distinct = len({(r.source, r.width) for r in trace})
    print(
        f"{a.requests} requests over {a.sources} sources (Zipf s={a.zipf}) x widths {a.widths} "
        f"(weights 1, 1/2, ...; {len(keys)} sources and {distinct} variants asked for), "
        f"{a.budget >> 20} MiB cache per instance, {a.policy}, seed {a.seed}\n"
    )
    print("| instances | hit rate, consistent hash | origin fetches | hit rate, round-robin | origin fetches "
          "| sources moved when one leaves | when one joins |")
    print("|---|---|---|---|---|---|---|")
    n = 1
    while n <= a.max_instances:
        ring = KetamaRing(servers_for(n))
        ch_hits, ch_fetches = replay(trace, n, a.budget, segmented, lambda i, url: ring.owner(url))
        rr_hits, rr_fetches = replay(trace, n, a.budget, segmented, lambda i, url: i % n)
        if n > 1:
            leave = moved(keys, ring, KetamaRing(servers_for(n)[1:]))
        join = moved(keys, ring, KetamaRing(servers_for(n + 1)))
        leave_text = f"{leave:.1%} (1/N = {1 / n:.1%})" if n > 1 else "-"
        print(f"| {n} | {ch_hits:.1%} | {ch_fetches} | {rr_hits:.1%} | {rr_fetches} | {leave_text} "
              f"| {join:.1%} (1/(N+1) = {1 / (n + 1):.1%}) |")
        n *= 2


def cmd_predict(a):
    servers = a.servers.split(",")
    ring = KetamaRing(servers)
    one_pass = []
    for line in open(a.keys):
        if line.strip():
            url, *numbers = line.rstrip("\n").split("\t")
            one_pass.append(Request(url, *map(int, numbers)))
    trace = one_pass * a.passes
    segmented = a.policy == "slru"
    owners = [ring.owner(r.source) for r in one_pass]

    def last_pass_hit_rate(n, route):
        instances = [Instance(a.budget, segmented) for _ in range(n)]
        last = 0
        for i, r in enumerate(trace):
            outcome = instances[route(r.source)].request(r)
            if i >= len(one_pass) * (a.passes - 1) and outcome == "hit":
                last += 1
        return last / len(one_pass), sum(x.fetches for x in instances)

    cluster_rate, cluster_fetches = last_pass_hit_rate(len(servers), ring.owner)
    single_rate, single_fetches = last_pass_hit_rate(1, lambda url: 0)
    json.dump(
        {
            "owners": owners,
            "sources_per_instance": collections.Counter(
                ring.owner(u) for u in {r.source for r in one_pass}),
            "cluster_last_pass_hit_rate": cluster_rate,
            "cluster_fetches": cluster_fetches,
            "single_last_pass_hit_rate": single_rate,
            "single_fetches": single_fetches,
        },
        sys.stdout,
        default=lambda c: {str(k): v for k, v in c.items()},
    )
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table")
    t.add_argument("--sources", type=int, default=20000)
    t.add_argument("--widths", default="200,300,400,600,800")
    t.add_argument("--requests", type=int, default=400000)
    t.add_argument("--zipf", type=float, default=0.9)
    t.add_argument("--budget", type=int, default=256 << 20)
    t.add_argument("--max-instances", type=int, default=32)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--policy", choices=["slru", "lru"], default="slru")
    t.set_defaults(run=cmd_table)
    q = sub.add_parser("predict")
    q.add_argument("--servers", required=True)
    q.add_argument("--keys", required=True)
    q.add_argument("--budget", type=int, required=True)
    q.add_argument("--passes", type=int, default=2)
    q.add_argument("--policy", choices=["slru", "lru"], default="slru")
    q.set_defaults(run=cmd_predict)
    a = p.parse_args()
    a.run(a)


if __name__ == "__main__":
    main()
