#!/usr/bin/env python3
"""The proof of deploy/cluster/ on loopback (stdlib only; deploy/cluster/test.sh runs it).

  test.py --balancer nginx|haproxy --thumbd BIN [--out REPORT.md]

Starts an nginx origin serving the bench corpus (its access log is the fetch count), then
clusters of 3 thumbd instances behind the balancer with deploy/cluster/run.sh, each instance
with its own disk cache folder (--disk-cache-root), and checks:

  1. placement: the corpus at 5 widths, every source fetched exactly once across the cluster,
     each instance's variants = 5 x its originals (its own /metrics), a second pass all hits;
     with nginx, each instance holds exactly the sources bench/cluster-sim.py's ketama ring
     says it should;
  2. capacity: a working set 2x one instance's budget, the second pass's hit rate on the
     cluster (>= 95 %) and on one instance alone with the same budget, each against the
     simulation's prediction;
  3. failure: SIGKILL one instance under load (its disk writes done first): every answer a 200
     or a 503 with Retry-After, only the dead instance's share of sources fetched again, the
     others' requests still hits; restarted on its port and its own disk folder, it is ready
     within 5 s and answers its share from the folder (X-Cache: disk, the same ETag and bytes as
     before the kill, no origin fetch), and the balancer sends its sources to it again;
  4. purge, signed URLs and format=auto through the balancer.

Exit 1 on any failed check; a Markdown report on --out.
"""
import argparse
import collections
import csv
import hashlib
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "bench", "corpus")
WIDTHS = [200, 300, 400, 600, 800]
ADMIN = "cluster-test-admin-token"
KEY = "7f" * 32

results = []  # (section, check, ok, figure)
notes = []


def check(section, name, ok, figure=""):
    results.append((section, name, bool(ok), str(figure)))
    print(f"[cluster-test] {'PASS' if ok else 'FAIL'} {section}: {name} {figure}", file=sys.stderr, flush=True)


def log(text):
    print(f"[cluster-test {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, target, method="GET", headers=None, timeout=60):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, target, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def wait_ready(port, limit=10.0, interval=0.05):
    """Until the instance on `port` answers /readyz 200 (bounded: `limit` seconds)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if request(port, "/readyz", timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(interval)
    raise RuntimeError(f"the instance on port {port} is not ready")


def metrics(port):
    """One instance's /metrics, as {(name, frozenset(labels)): value}."""
    status, _, body = request(port, "/metrics")
    assert status == 200, f"/metrics on {port}: {status}"
    values = {}
    for line in body.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)", line)
        if not m:
            continue
        labels = frozenset(re.findall(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        values[(m.group(1), labels)] = float(m.group(4))
    return values


def entries(port, kind):
    return int(metrics(port).get(("thumbd_cache_entries", frozenset({("kind", kind)})), 0))


class Origin:
    """nginx serving the corpus under /src/, logging each request's URI."""

    def __init__(self, work):
        self.dir = os.path.join(work, "origin")
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        self.port = free_port()
        self.small = os.path.join(work, "small")
        os.makedirs(self.small, exist_ok=True)
        self.log = os.path.join(self.dir, "access.log")
        conf = os.path.join(self.dir, "nginx.conf")
        open(conf, "w").write(f"""
worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format uri "$request_uri";
    access_log {self.log} uri;
    client_body_temp_path {self.dir}/body;
    types {{ image/jpeg jpg; image/png png; }}
    server {{
        listen 127.0.0.1:{self.port};
        location /src/ {{ alias {CORPUS}/; }}
        location /small/ {{ alias {self.small}/; }}
    }}
}}
""")
        self.process = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c", conf])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("origin did not start")

    def fetches(self):
        """{URI: count} so far (nginx writes each line at once when the log is unbuffered)."""
        if not os.path.exists(self.log):
            return collections.Counter()
        return collections.Counter(line.strip() for line in open(self.log) if line.strip())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Cluster:
    """deploy/cluster/run.sh in the background; its `instance I port P pid PID` lines parsed.
    Each instance I has its own disk cache folder, disk/instance-I, kept for its restart."""

    def __init__(self, balancer, work, name, thumbd, args, instances=3):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        self.thumbd, self.args = thumbd, args
        self.disk_root = os.path.join(self.dir, "disk")
        env = dict(os.environ, THUMBD_BIN=thumbd, CLUSTER_DIR=self.dir)
        self.process = subprocess.Popen(
            [os.path.join(HERE, "run.sh"), "--instances", str(instances), "--port", str(self.port),
             "--balancer", balancer, "--disk-cache-root", self.disk_root, "--"] + args,
            stdout=subprocess.PIPE, text=True, env=env)
        self.instances = []  # [port, pid]
        for line in self.process.stdout:
            m = re.match(r"instance (\d+) port (\d+) pid (\d+)", line)
            if m:
                self.instances.append([int(m.group(2)), int(m.group(3))])
            if line.startswith("balancer "):
                break
        if len(self.instances) != instances:
            raise RuntimeError(f"run.sh gave {len(self.instances)} instances")
        self.restarted = []

    def servers(self):
        return [f"127.0.0.1:{p}" for p, _ in self.instances]

    def kill(self, index):
        os.kill(self.instances[index][1], signal.SIGKILL)

    def disk_dir(self, index):
        return os.path.join(self.disk_root, f"instance-{index + 1}")

    def restart_log(self, index):
        return os.path.join(self.dir, f"restarted-{index + 1}.log")

    def restart(self, index):
        """The killed instance again, on its port and its disk folder (as a supervisor would
        restart it); returns the seconds from its start to /readyz 200."""
        port = self.instances[index][0]
        started = time.monotonic()
        process = subprocess.Popen(
            [self.thumbd, "--host", "127.0.0.1", "--port", str(port), "--disk-cache-dir", self.disk_dir(index)]
            + self.args,
            stderr=open(self.restart_log(index), "w"))
        self.restarted.append(process)
        self.instances[index][1] = process.pid
        wait_ready(port, limit=30, interval=0.01)
        return time.monotonic() - started

    def stop(self):
        for process in self.restarted:
            process.terminate()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        for process in self.restarted:
            process.wait(timeout=30)


def corpus():
    rows = list(csv.DictReader(open(os.path.join(CORPUS, "manifest.tsv")), delimiter="\t"))
    return [(r["file"], int(r["bytes"]), int(r["width"]), int(r["height"])) for r in rows]


def source_url(origin, name, copy=0):
    return f"http://127.0.0.1:{origin.port}/src/{name}" + (f"?copy={copy}" if copy else "")


def thumb_target(url, width, extra=""):
    return f"/thumb?url={urllib.parse.quote(url, safe='')}&w={width}{extra}"


def run_pass(port, items, headers=None):
    """Requests each (url, width) in order; returns [(url, width, status, x-cache, bytes)]."""
    out = []
    for url, width in items:
        status, h, body = request(port, thumb_target(url, width), headers=headers)
        out.append((url, width, status, h.get("x-cache", "-"), len(body)))
    return out


def predict(servers, trace_rows, budget):
    """bench/cluster-sim.py predict over one pass of trace_rows, two passes."""
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for row in trace_rows:
            f.write("\t".join(map(str, row)) + "\n")
        name = f.name
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "cluster-sim.py"), "predict", "--servers", ",".join(servers),
         "--keys", name, "--budget", str(budget), "--passes", "2"],
        check=True, capture_output=True, text=True).stdout
    os.unlink(name)
    return json.loads(out)


def placement(balancer, origin, work, thumbd):
    section = "placement"
    sources = corpus()
    cluster = Cluster(balancer, work, "placement", thumbd,
                      ["--allow-loopback-sources", "--cache-bytes", "1G", "--admin-token", ADMIN])
    try:
        before = origin.fetches()
        items = [(source_url(origin, name), w) for name, _, _, _ in sources for w in WIDTHS]
        first = run_pass(cluster.port, items)
        check(section, "first pass: every answer 200", all(r[2] == 200 for r in first),
              f"{sum(r[2] == 200 for r in first)}/{len(first)}")
        fetched = origin.fetches() - before
        uris = {urllib.parse.urlsplit(source_url(origin, n)).path for n, _, _, _ in sources}
        once = all(fetched[u] == 1 for u in uris) and set(fetched) == uris
        check(section, "every source fetched exactly once across the cluster", once,
              f"{len(uris)} sources, {sum(fetched.values())} fetches")
        per_instance = [(entries(p, "original"), entries(p, "variant")) for p, _ in cluster.instances]
        check(section, "each instance's variants = 5 x its originals (its /metrics)",
              all(v == 5 * o for o, v in per_instance) and sum(o for o, _ in per_instance) == len(sources),
              "originals/variants per instance: " + ", ".join(f"{o}/{v}" for o, v in per_instance))
        second = run_pass(cluster.port, items)
        hits = sum(r[3] == "hit" for r in second)
        check(section, "second pass: every request a hit", hits == len(second), f"{hits}/{len(second)}")
        if balancer == "nginx":
            rows = [(urllib.parse.quote(source_url(origin, n), safe=""), w, b, 1, sw, sh)
                    for n, b, sw, sh in sources for w in WIDTHS]
            predicted = predict(cluster.servers(), rows, 1 << 30)["sources_per_instance"]
            predicted = [predicted.get(str(i), 0) for i in range(3)]
            check(section, "sources per instance as cluster-sim.py's ketama ring predicts",
                  predicted == [o for o, _ in per_instance], f"predicted {predicted}")
        variant_bytes = {(r[0], r[1]): r[4] for r in first}
        stats = [json.loads(request(p, "/cache/stats", headers={"Authorization": f"Bearer {ADMIN}"})[2])
                 for p, _ in cluster.instances]
        total_bytes = sum(s["total"]["bytes"] for s in stats)
        largest = max(b for _, b, _, _ in sources)
        return variant_bytes, total_bytes, largest, per_instance
    finally:
        cluster.stop()


def small_corpus(origin):
    """The corpus photos at 1600 px (made once with vips into the origin's /small/): many sources of
    similar size, so that each instance's share of a working set is close to a third."""
    out = []
    for name, _, _, _ in corpus():
        path = os.path.join(origin.small, name)
        if not os.path.exists(path):
            subprocess.run(["vips", "thumbnail", os.path.join(CORPUS, name), path + "[Q=85,strip]", "1600"],
                           check=True)
        w, h = (int(subprocess.run(["vipsheader", "-f", f, path], check=True, capture_output=True,
                                   text=True).stdout) for f in ("width", "height"))
        out.append((name, os.path.getsize(path), w, h))
    return out


def capacity(balancer, origin, work, thumbd, variant_bytes, corpus_bytes, largest):
    section = "capacity"
    # A working set of many sources: the corpus at 1600 px in COPIES copies under distinct URLs
    # (?copy=N; the origin ignores the query). With the corpus itself (24 sources, 0.5-16 MB) one
    # instance's share is far from a third (7/15/2 sources in one run) and the fullest instance
    # overflows; that is the corpus's skew, not the ring's.
    sources = small_corpus(origin)
    copies = 17
    items, rows = [], []
    working_set = 0
    for copy in range(1, copies + 1):
        for name, nbytes, sw, sh in sources:
            url = f"http://127.0.0.1:{origin.port}/small/{name}?copy={copy}"
            scale = min(1.0, 1024 / max(sw, sh))
            copy_width = math.ceil(sw * scale)
            working_set += nbytes + 256
            if any(w <= copy_width * 0.505 for w in WIDTHS):
                working_set += copy_width * math.ceil(sh * scale) * 3 + 256
            for w in WIDTHS:
                items.append((url, w))
                vb = variant_bytes[(source_url(origin, name), w)]
                working_set += vb + 256
                rows.append((urllib.parse.quote(url, safe=""), min(w, sw), nbytes, vb, sw, sh))
    # Each budget holds half the working set, so the three hold 1.5x it. Not less: a consistent
    # hash does not split it in thirds. On nginx's ring with random instance ports, the fullest
    # instance gets over 40 % of these sources' bytes for 15 % of port triples (45 % at the 99th
    # percentile, 49 % at most, of 2000 simulated), and an instance given more than its budget
    # holds loses every hit on this looped pass. With working set / 2.5 (40 %) a run got 59.6 %
    # hits: the fullest instance (39.5 % of the sources' bytes, 40.4 % of the requests) had
    # none, exactly as cluster-sim.py predicted.
    budget = int(working_set / 2)
    log(f"capacity: {copies} copies of the corpus at 1600 px, {len(items)} requests a pass, working set "
        f"{working_set >> 20} MiB, budget {budget >> 20} MiB per instance")
    args = ["--allow-loopback-sources", "--cache-bytes", str(budget), "--admin-token", ADMIN]
    cluster = Cluster(balancer, work, "capacity", thumbd, args)
    try:
        first = run_pass(cluster.port, items)
        second = run_pass(cluster.port, items)
        servers = cluster.servers()
        answered = sum(r[2] == 200 for r in first + second)
        check(section, "every answer 200 (both passes, the cluster)", answered == 2 * len(items),
              f"{answered}/{2 * len(items)}")
    finally:
        cluster.stop()
    cluster_rate = sum(r[3] == "hit" for r in second) / len(second)
    # One instance alone, same budget, same two passes.
    port = free_port()
    single = subprocess.Popen([thumbd, "--host", "127.0.0.1", "--port", str(port)] + args,
                              stderr=open(os.path.join(work, "single.log"), "w"))
    try:
        wait_ready(port)
        run_pass(port, items)
        second_single = run_pass(port, items)
    finally:
        single.terminate()
        single.wait(timeout=30)
    single_rate = sum(r[3] == "hit" for r in second_single) / len(second_single)
    predicted = predict(servers, rows, budget)
    check(section, "second pass through 3 instances >= 95 % hits", cluster_rate >= 0.95,
          f"{cluster_rate:.1%} (one instance alone, same budget: {single_rate:.1%})")
    tolerance = 0.05
    if balancer == "nginx":
        check(section, "cluster hit rate as cluster-sim.py predicts (within 5 points)",
              abs(cluster_rate - predicted["cluster_last_pass_hit_rate"]) <= tolerance,
              f"predicted {predicted['cluster_last_pass_hit_rate']:.1%}")
    else:
        notes.append(f"HAProxy hashes with its own function, so the simulation's ketama owners do not apply; "
                     f"its ring prediction for nginx was {predicted['cluster_last_pass_hit_rate']:.1%}.")
    check(section, "one instance's hit rate as cluster-sim.py predicts (within 5 points)",
          abs(single_rate - predicted["single_last_pass_hit_rate"]) <= tolerance,
          f"predicted {predicted['single_last_pass_hit_rate']:.1%}")
    return cluster_rate, single_rate, predicted, budget, copies


def disk_gauges(port):
    """The disk tier's figures on one instance's /metrics (None where a metric is missing)."""
    values = metrics(port)
    names = ["write_queue", "writes_total", "entries", "bytes", "hits_total", "write_queue_dropped_total",
             "write_failures_total", "rejected_total"]
    return {n: values.get((f"thumbd_disk_cache_{n}", frozenset())) for n in names}


def wait_written(port, limit=30.0):
    """Until the instance's disk writer is idle: its write queue at 0 and its write count the same
    over 0.5 s (a SIGKILL loses what is still queued). Returns its disk figures then."""
    deadline = time.monotonic() + limit
    last = disk_gauges(port)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = disk_gauges(port)
        if now["write_queue"] == 0 and now["writes_total"] == last["writes_total"]:
            return now
        last = now
    return last


def thumb_requests(port):
    """The /thumb requests the instance has answered since it started."""
    return sum(v for (name, labels), v in metrics(port).items()
               if name == "thumbd_requests_total" and ("route", "/thumb") in labels)


def answers(port, items):
    """{(url, width): (status, x-cache, etag, sha-256 of the body)}, asked of one instance directly."""
    out = {}
    for url, w in items:
        status, h, body = request(port, thumb_target(url, w))
        out[(url, w)] = (status, h.get("x-cache"), h.get("etag"), hashlib.sha256(body).hexdigest())
    return out


def failure(balancer, origin, work, thumbd):
    section = "failure"
    sources = corpus()
    cluster = Cluster(balancer, work, "failure", thumbd,
                      ["--allow-loopback-sources", "--cache-bytes", "1G", "--admin-token", ADMIN])
    try:
        items = [(source_url(origin, name), w) for name, _, _, _ in sources for w in WIDTHS]
        start = origin.fetches()
        run_pass(cluster.port, items)
        owner = {}
        for index, (port, _) in enumerate(cluster.instances):
            for name, _, _, _ in sources:
                status, h, _ = request(port, thumb_target(source_url(origin, name), WIDTHS[0]),
                                       headers={"Cache-Control": "only-if-cached"})
                if status == 200:
                    owner[source_url(origin, name)] = index
        victim = 0
        victim_port = cluster.instances[victim][0]
        victim_sources = {u for u, i in owner.items() if i == victim}
        victim_paths = {urllib.parse.urlsplit(u).path for u in victim_sources}
        victim_items = [(u, w) for u in sorted(victim_sources) for w in WIDTHS]
        # What it served: each of its variants' ETag and bytes (memory hits, asked of it directly).
        served = answers(victim_port, victim_items)
        before = origin.fetches()
        counts = collections.Counter()
        bad = []
        survivors_misses = []
        stop = threading.Event()
        killed = threading.Event()

        def client(seed):
            rnd = random.Random(seed)
            while not stop.is_set():
                url, w = rnd.choice(items)
                try:
                    status, h, _ = request(cluster.port, thumb_target(url, w), timeout=30)
                except Exception as error:  # a reset or a cut-off answer is a failure here
                    bad.append(f"{type(error).__name__}: {error}")
                    continue
                counts[status] += 1
                if status != 200 and not (status == 503 and "retry-after" in h):
                    bad.append(f"{status} for {url} w={w}")
                if killed.is_set() and owner.get(url) != victim and h.get("x-cache") != "hit":
                    survivors_misses.append((url, w, h.get("x-cache")))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        time.sleep(3)
        # A SIGKILL loses the writes still queued: the victim's must be done first.
        disk = wait_written(victim_port)
        n = lambda value, scale=1: "-" if value is None else f"{value / scale:.0f}"
        check(section, "before the kill: the victim's disk writes done (write queue 0, none dropped or failed)",
              disk["write_queue"] == 0 and disk["write_queue_dropped_total"] == 0
              and disk["write_failures_total"] == 0,
              f"{n(disk['writes_total'])} writes, {n(disk['entries'])} entries, {n(disk['bytes'], 2**20)} MiB on "
              f"disk; queue {n(disk['write_queue'])}, dropped {n(disk['write_queue_dropped_total'])}, "
              f"failed {n(disk['write_failures_total'])}")
        at_kill = origin.fetches()
        cluster.kill(victim)
        killed.set()
        log(f"failure: SIGKILLed instance 1 (port {victim_port}) under load")
        time.sleep(8)
        stop.set()
        for t in threads:
            t.join()
        after_outage = origin.fetches()
        refetched = after_outage - before
        refetched_sources = {u for u in refetched}
        check(section, "every answer a 200 or a 503 with Retry-After while an instance is killed", not bad,
              f"{dict(counts)}; {len(bad)} bad" + (f", first: {bad[0]}" if bad else ""))
        check(section, "only the dead instance's sources fetched again",
              refetched_sources <= victim_paths,
              f"{len(refetched_sources)} sources fetched again of its {len(victim_sources)} "
              f"(of {len(sources)}; {len(victim_sources) / len(sources):.0%} share)")
        check(section, "the other instances' requests stay hits", not survivors_misses,
              f"{len(survivors_misses)} misses among requests for their sources")
        ready = cluster.restart(victim)
        event = next((m.group(1).split(": ", 1)[-1] for m in (re.search(r'event=disk-cache msg="([^"]*)"', line)
                                           for line in open(cluster.restart_log(victim))) if m), "")
        check(section, "restarted on its port and its disk folder: /readyz 200 within 5 s", ready <= 5,
              f"{ready:.2f} s from its start; log: {event or 'no disk-cache event'}")
        # Its share, asked of it directly before anything else reaches it: from its folder.
        again = answers(victim_port, victim_items)
        after_restart = origin.fetches()
        check(section, "after the restart its share answers 200", all(a[0] == 200 for a in again.values()),
              f"{sum(a[0] == 200 for a in again.values())}/{len(again)}")
        outcomes = collections.Counter(a[1] for a in again.values())
        check(section, "each variant's first request after the restart is X-Cache: disk",
              outcomes == {"disk": len(again)}, dict(outcomes))
        same = sum(again[k][2:] == served[k][2:] and served[k][0] == 200 for k in again)
        check(section, "the same ETag and bytes as before the kill", same == len(again), f"{same}/{len(again)}")
        kill_fetches = sum((at_kill - start)[p] for p in victim_paths)
        outage_fetches = sum((after_outage - at_kill)[p] for p in victim_paths)
        new_fetches = after_restart - after_outage
        check(section, "no origin fetch for its sources after the restart",
              not any(new_fetches[p] for p in victim_paths),
              f"its {len(victim_sources)} sources: {kill_fetches} fetches before the kill, {outage_fetches} by "
              f"the others during the outage, {sum(new_fetches[p] for p in victim_paths)} after the restart "
              f"({sum(new_fetches.values())} origin requests in all)")
        # The balancer takes it back: nginx after fail_timeout (5 s), HAProxy after 2 good checks.
        time.sleep(6)
        answered_before = thumb_requests(victim_port)
        back = run_pass(cluster.port, victim_items)
        answered = thumb_requests(victim_port) - answered_before
        hits = sum(r[3] == "hit" for r in back)
        check(section, "restarted, its share returns to it through the balancer (all hits)",
              answered == len(victim_items) and hits == len(back),
              f"it answered {answered:.0f} of the {len(victim_items)} requests for its sources, {hits} hits")
        return {"refetched": len(refetched_sources), "share": len(victim_sources), "ready": ready,
                "fetches": (kill_fetches, outage_fetches, sum(new_fetches[p] for p in victim_paths)),
                "disk": dict(outcomes), "event": event}
    finally:
        cluster.stop()


def admin_and_formats(balancer, origin, work, thumbd):
    section = "purge, signing, format=auto, framework routes"
    sources = corpus()
    cluster = Cluster(balancer, work, "admin", thumbd,
                      ["--allow-loopback-sources", "--cache-bytes", "1G", "--admin-token", ADMIN])
    try:
        url = source_url(origin, sources[0][0])
        run_pass(cluster.port, [(url, w) for w in WIDTHS])
        status, _, body = request(cluster.port, f"/cache?url={urllib.parse.quote(url, safe='')}", "DELETE",
                                  headers={"Authorization": f"Bearer {ADMIN}"})
        removed = json.loads(body).get("removed", {}).get("entries", 0) if status == 200 else 0
        check(section, "DELETE /cache?url= through the balancer removes the source's variants on the owner",
              status == 200 and removed >= 1 + len(WIDTHS), f"{status}, {removed} entries removed")
        status, h, _ = request(cluster.port, thumb_target(url, WIDTHS[0]))
        check(section, "after the purge the next request is a miss", status == 200 and h.get("x-cache") == "miss",
              h.get("x-cache"))
        webp = request(cluster.port, thumb_target(url, 320, "&format=auto"), headers={"Accept": "image/webp,*/*"})
        jpeg = request(cluster.port, thumb_target(url, 320, "&format=auto"), headers={"Accept": "image/jpeg"})
        check(section, "format=auto through the balancer: webp for Accept: image/webp, jpeg otherwise, Vary: Accept",
              webp[0] == jpeg[0] == 200 and webp[1].get("content-type") == "image/webp"
              and jpeg[1].get("content-type") == "image/jpeg" and "accept" in webp[1].get("vary", "").lower(),
              f"{webp[1].get('content-type')} / {jpeg[1].get('content-type')}, Vary {webp[1].get('vary')}")
        # Each framework route names its source its own way (url=, href=, the IPX path): each
        # source's sizes must still meet on one instance, which then fetches it once.
        quoted = lambda u: urllib.parse.quote(u, safe="")
        routes = {
            "/info": lambda u, w: f"/info?url={quoted(u)}",
            "/_next/image": lambda u, w: f"/_next/image?url={quoted(u)}&w={w}&q=75",
            "/_image": lambda u, w: f"/_image?href={quoted(u)}&w={w}",
            "/_ipx/": lambda u, w: f"/_ipx/w_{w}/{u}",
            "/ (weserv)": lambda u, w: f"/?w={w}&url={u}",
        }
        outcomes = []
        for copy, (route, target) in enumerate(routes.items(), start=100):
            url = source_url(origin, sources[2][0], copy)
            statuses = [request(cluster.port, target(url, w))[0] for w in (640, 750, 828, 1080)]
            uri = url.split(f":{origin.port}", 1)[1]
            outcomes.append((route, statuses, origin.fetches()[uri]))
        check(section, "framework routes and /info through the balancer: 200, each source fetched once",
              all(set(s) == {200} and n == 1 for _, s, n in outcomes),
              ", ".join(f"{r} {sorted(set(s))} {n}x" for r, s, n in outcomes))
    finally:
        cluster.stop()
    cluster = Cluster(balancer, work, "signed", thumbd,
                      ["--allow-loopback-sources", "--cache-bytes", "256M", "--signing-keys", KEY])
    try:
        target = thumb_target(source_url(origin, sources[1][0]), 300)
        signed = subprocess.run([thumbd, "sign", "--key", KEY, target], check=True, capture_output=True,
                                text=True).stdout.strip()
        good = request(cluster.port, signed)[0]
        again = request(cluster.port, signed)[1].get("x-cache")
        forged = request(cluster.port, signed.replace("w=300", "w=301"))[0]
        check(section, "signed URLs through the balancer: 200, then a hit; altered 403",
              good == 200 and again == "hit" and forged == 403, f"{good}, {again}, {forged}")
    finally:
        cluster.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--balancer", choices=["nginx", "haproxy"], required=True)
    p.add_argument("--thumbd", required=True)
    p.add_argument("--out")
    p.add_argument("--only", choices=["placement", "capacity", "failure", "disk", "admin"],
                   help="one section (capacity needs placement's figures: it runs both; disk is failure's "
                        "kill and restart on the disk folder)")
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix=f"thumbd-cluster-test-{a.balancer}.")
    os.chmod(work, 0o755)  # the origin's nginx workers (nobody) read the files made here
    origin = Origin(work)
    figures = {}
    try:
        wanted = lambda name: a.only in (None, name)
        if wanted("placement") or wanted("capacity"):
            variant_bytes, corpus_bytes, largest, per_instance = placement(a.balancer, origin, work, a.thumbd)
            figures["placement"] = per_instance
        if wanted("capacity"):
            figures["capacity"] = capacity(a.balancer, origin, work, a.thumbd, variant_bytes, corpus_bytes, largest)
        if wanted("failure") or a.only == "disk":
            figures["failure"] = failure(a.balancer, origin, work, a.thumbd)
        if wanted("admin"):
            admin_and_formats(a.balancer, origin, work, a.thumbd)
    finally:
        origin.stop()
    failed = [r for r in results if not r[2]]
    lines = [f"## {a.balancer}", "", "| check | result | figure |", "|---|---|---|"]
    for section, name, ok, figure in results:
        lines.append(f"| {section}: {name} | {'PASS' if ok else '**FAIL**'} | {figure} |")
    lines += [""] + [f"- {n}" for n in notes]
    report = "\n".join(lines) + "\n"
    if a.out:
        open(a.out, "a").write(report)
    print(report)
    if not failed:
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"kept {work} for the logs")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
