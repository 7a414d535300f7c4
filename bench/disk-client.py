#!/usr/bin/env python3
"""bench/disk.sh's client (stdlib only; every request to 127.0.0.1).

  disk-client.py pass BASE LIST OUT.tsv [--threads N] [--save DIR]
      GETs every path of LIST (one a line) once on BASE (http://127.0.0.1:PORT), N keep-alive
      connections (2), and writes one TSV line per path: index, status, X-Cache, bytes, ETag,
      SHA-256 of the body, Content-Type, path. --save DIR keeps each 200's body as DIR/INDEX.EXT
      (EXT from the Content-Type). Prints one JSON line of counts: statuses and X-Cache values.

  disk-client.py start-ready READY_URL LOG -- COMMAND...
      Starts COMMAND (stdout to /dev/null, stderr appended to LOG) and polls READY_URL every 2 ms
      until it answers 200. Prints one JSON line: the pid, the milliseconds from just before the
      exec to the first 200, and VmRSS (kB) read at that moment. Then waits for COMMAND to end
      (the caller stops it by its pid; this process reaps it and exits with its status); exits 1
      (after killing it) if it dies or is not ready in 120 s.

  disk-client.py compare A.tsv B.tsv
      Per index: same status, same body (SHA-256), same ETag? Prints one JSON line of counts.
"""
import hashlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

EXT = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/avif": "avif", "image/gif": "gif"}


def host_port(base):
    u = urllib.parse.urlsplit(base)
    return u.hostname, u.port or 80


def run_pass(base, list_file, out_file, threads, save_dir):
    paths = [line.rstrip("\n") for line in open(list_file) if line.strip()]
    host, port = host_port(base)
    rows = [None] * len(paths)
    next_index = [0]
    lock = threading.Lock()

    def worker():
        conn = http.client.HTTPConnection(host, port, timeout=120)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(paths):
                break
            for attempt in (1, 2):  # one retry on a closed keep-alive connection
                try:
                    conn.request("GET", paths[i])
                    resp = conn.getresponse()
                    body = resp.read()
                    break
                except (http.client.HTTPException, OSError):
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=120)
                    if attempt == 2:
                        rows[i] = (i, "000", "-", 0, "-", "-", "-", paths[i])
                        body = None
            if body is None:
                continue
            ctype = (resp.getheader("Content-Type") or "-").split(";")[0].strip()
            rows[i] = (i, str(resp.status), resp.getheader("X-Cache") or "-", len(body),
                       resp.getheader("ETag") or "-", hashlib.sha256(body).hexdigest(), ctype, paths[i])
            if save_dir and resp.status == 200:
                with open(os.path.join(save_dir, f"{i}.{EXT.get(ctype, 'bin')}"), "wb") as f:
                    f.write(body)
        conn.close()

    start = time.monotonic()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    seconds = time.monotonic() - start
    status, cache = {}, {}
    with open(out_file, "w") as out:
        for r in rows:
            out.write("\t".join(str(x) for x in r) + "\n")
            status[r[1]] = status.get(r[1], 0) + 1
            cache[r[2]] = cache.get(r[2], 0) + 1
    print(json.dumps({"requests": len(rows), "seconds": round(seconds, 3), "status": status, "x_cache": cache,
                      "bytes": sum(r[3] for r in rows)}))


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def start_ready(url, log, command):
    host, port = host_port(url)
    path = urllib.parse.urlsplit(url).path or "/"
    logf = open(log, "ab")
    start = time.monotonic()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=logf)
    while True:
        if proc.poll() is not None:
            print(json.dumps({"pid": proc.pid, "error": f"exited with {proc.returncode} before ready"}), flush=True)
            sys.exit(1)
        if time.monotonic() - start > 120:
            proc.kill()
            proc.wait()
            print(json.dumps({"pid": proc.pid, "error": "not ready in 120 s"}), flush=True)
            sys.exit(1)
        try:
            conn = http.client.HTTPConnection(host, port, timeout=2)
            conn.request("GET", path)
            status = conn.getresponse().status
            conn.close()
            if status == 200:
                ms = (time.monotonic() - start) * 1000
                print(json.dumps({"pid": proc.pid, "ready_ms": round(ms, 1), "rss_kb": rss_kb(proc.pid)}), flush=True)
                sys.exit(proc.wait())
        except OSError:
            pass
        time.sleep(0.002)


def compare(a_file, b_file):
    def load(p):
        return {int(r[0]): r for r in (line.rstrip("\n").split("\t") for line in open(p))}
    a, b = load(a_file), load(b_file)
    same_body = sum(1 for i in a if i in b and a[i][1] == "200" and b[i][1] == "200" and a[i][5] == b[i][5])
    same_etag = sum(1 for i in a if i in b and a[i][1] == "200" and b[i][1] == "200" and a[i][4] == b[i][4])
    print(json.dumps({"compared": len(a), "same_body": same_body, "same_etag": same_etag}))


def main():
    args = sys.argv[1:]
    if args and args[0] == "pass" and len(args) >= 4:
        threads, save = 2, None
        rest = args[4:]
        while rest:
            if rest[0] == "--threads":
                threads = int(rest[1])
            elif rest[0] == "--save":
                save = rest[1]
            else:
                sys.exit(f"unknown option {rest[0]}")
            rest = rest[2:]
        run_pass(args[1], args[2], args[3], threads, save)
    elif args and args[0] == "start-ready" and len(args) >= 5 and args[3] == "--":
        start_ready(args[1], args[2], args[4:])
    elif args and args[0] == "compare" and len(args) == 3:
        compare(args[1], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
