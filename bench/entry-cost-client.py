#!/usr/bin/env python3
"""COUNT new small variants of one source, over CONNECTIONS keep-alive connections, for
bench/entry-cost.sh: request i (FIRST <= i < FIRST + COUNT) is w = 16 + i // 70, q = 30 + i % 70,
format=auto (its key depends on Accept, so the service's target memo keeps none of them: what RSS
gains is the cache's). Exits 1 unless every answer is 200.

    entry-cost-client.py PORT SOURCE_URL FIRST COUNT [CONNECTIONS]
"""
import http.client
import sys
import threading
import urllib.parse

port, source, first, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
connections = int(sys.argv[5]) if len(sys.argv) > 5 else 2
failures = []


def run(offset):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for i in range(first + offset, first + count, connections):
        query = urllib.parse.urlencode({"url": source, "w": 16 + i // 70, "q": 30 + i % 70, "format": "auto"})
        conn.request("GET", "/thumb?" + query)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            failures.append((i, response.status))


threads = [threading.Thread(target=run, args=(k,)) for k in range(connections)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if failures:
    sys.exit(f"entry-cost: {len(failures)} answers were not 200, the first: {failures[0]}")
