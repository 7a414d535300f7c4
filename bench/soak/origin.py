#!/usr/bin/env python3
"""The misbehaving origins of bench/soak.sh (stdlib only, threaded, 127.0.0.1 only).

    origin.py --corpus DIR --base-port P [--trickle-seconds S] [--stall-seconds S]
              [--flap-up S] [--flap-down S]

One listening port per fault, so that each fault has its own origin (scheme, host, port) in
thumbd: its own --max-fetches-per-host slots and its own circuit breaker. Every path is
/<name>[?anything] with <name> a corpus file; the query is ignored (the load uses it to make a
source URL new). Port P + i, in this order:

  0 trickle   the whole image with a correct Content-Length, in 64 chunks over --trickle-seconds
  1 stall     headers and Content-Length, 1 KiB of body, then nothing for --stall-seconds, close
  2 reset     headers and Content-Length, half the body, then a TCP reset (SO_LINGER 0)
  3 5xx       500, 502, 503 in turn (small text body)
  4 badlen    /long/<name>: Content-Length 100 000 bytes more than the body, then close;
              /short/<name>: Content-Length of 60 % of the body, the whole body sent;
              /good/<name>: the plain image (to show what a short answer does to the next one)
  5 truncated the first 55 % of the image, Content-Length of exactly that
  6 loop      302 to itself with one more hop counter, for ever
  7 flap      the plain image while up; its listening socket closed (connection refused) while
              down: --flap-up seconds up, --flap-down seconds down, in turn

Prints one line "ready" on stdout when every port listens.
"""
import argparse
import http.server
import itertools
import os
import socket
import socketserver
import struct
import sys
import threading
import time

KINDS = ["trickle", "stall", "reset", "5xx", "badlen", "truncated", "loop", "flap"]


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def make_handler(kind, corpus, args):
    counter = itertools.count()
    cache = {}
    lock = threading.Lock()

    def load(name):
        with lock:
            if name not in cache:
                path = os.path.join(corpus, os.path.basename(name))
                with open(path, "rb") as f:
                    cache[name] = f.read()
            return cache[name]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def ctype(self, name):
            return "image/png" if name.endswith(".png") else "image/jpeg"

        def head_only(self, status, length, ctype, extra=()):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(length))
            self.send_header("Cache-Control", "max-age=60")
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()

        def do_GET(self):
            try:
                self.serve()
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                pass

        def serve(self):
            path = self.path.split("?", 1)[0]
            parts = [p for p in path.split("/") if p]
            if kind == "loop":
                hop = int(self.path.rsplit("hop=", 1)[1]) if "hop=" in self.path else 0
                base = self.path.split("hop=", 1)[0].rstrip("&?")
                sep = "&" if "?" in base else "?"
                self.send_response(302)
                self.send_header("Location", f"{base}{sep}hop={hop + 1}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if kind == "5xx":
                status = (500, 502, 503)[next(counter) % 3]
                body = b"origin says no\n"
                self.head_only(status, len(body), "text/plain")
                self.wfile.write(body)
                return
            mode = None
            if kind == "badlen" and len(parts) == 2:
                mode, parts = parts[0], parts[1:]
            if len(parts) != 1:
                self.send_error(404)
                return
            try:
                data = load(parts[0])
            except OSError:
                self.send_error(404)
                return
            ct = self.ctype(parts[0])
            if kind == "trickle":
                self.head_only(200, len(data), ct)
                step = (len(data) + 63) // 64
                pause = args.trickle_seconds / 64
                for i in range(0, len(data), step):
                    self.wfile.write(data[i:i + step])
                    self.wfile.flush()
                    time.sleep(pause)
            elif kind == "stall":
                self.head_only(200, len(data), ct)
                self.wfile.write(data[:1024])
                self.wfile.flush()
                time.sleep(args.stall_seconds)
                self.close_connection = True
            elif kind == "reset":
                self.head_only(200, len(data), ct)
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
            elif kind == "badlen" and mode == "long":
                self.head_only(200, len(data) + 100_000, ct)
                self.wfile.write(data)
                self.wfile.flush()
                self.close_connection = True
            elif kind == "badlen" and mode == "short":
                self.head_only(200, int(len(data) * 0.6), ct)
                self.wfile.write(data)
                self.close_connection = True
            elif kind == "truncated":
                cut = data[: int(len(data) * 0.55)]
                self.head_only(200, len(cut), ct)
                self.wfile.write(cut)
            else:  # flap (while up), badlen /good/
                self.head_only(200, len(data), ct)
                self.wfile.write(data)

    return Handler


def serve(kind, port, corpus, args):
    server = Server(("127.0.0.1", port), make_handler(kind, corpus, args))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def flapper(port, corpus, args, server):
    while True:
        time.sleep(args.flap_up)
        server.shutdown()
        server.server_close()
        time.sleep(args.flap_down)
        for _ in range(50):
            try:
                server = serve("flap", port, corpus, args)
                break
            except OSError:
                time.sleep(0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", required=True)
    p.add_argument("--base-port", type=int, required=True)
    p.add_argument("--trickle-seconds", type=float, default=2.0)
    p.add_argument("--stall-seconds", type=float, default=30.0)
    p.add_argument("--flap-up", type=float, default=10.0)
    p.add_argument("--flap-down", type=float, default=5.0)
    args = p.parse_args()
    servers = {}
    for i, kind in enumerate(KINDS):
        servers[kind] = serve(kind, args.base_port + i, args.corpus, args)
    threading.Thread(
        target=flapper, args=(args.base_port + KINDS.index("flap"), args.corpus, args, servers["flap"]), daemon=True
    ).start()
    print("ready", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
