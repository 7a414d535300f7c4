#!/usr/bin/env python3
"""The site's origin for examples/frontends/test.sh: static files on 127.0.0.1, with a gate.

Usage: origin.py DIR PORT

While the gate is armed, every request for an image (anything outside /page/ and /_gate/) waits
until it is released (at most 30 s), so a browser run can look at the page while its images
cannot have arrived yet, without guessing how long anything takes:
  GET /_gate/arm           hold image requests from now on
  GET /_gate/release       let every held request through, and stop holding
  GET /_gate/status        {"armed": bool, "held": N}: image requests held since the last arm
  GET /_gate/status?held=N the same, once N are held or the gate is open (at most 30 s)
"""

import http.server
import json
import sys
import threading

changed = threading.Condition()
state = {"armed": False, "held": 0}


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path.startswith("/_gate/"):
            self.gate(path, query)
            return
        if not path.startswith("/page/"):
            with changed:
                if state["armed"]:
                    state["held"] += 1
                    changed.notify_all()
                    changed.wait_for(lambda: not state["armed"], timeout=30)
        super().do_GET()

    def gate(self, path, query):
        with changed:
            if path == "/_gate/arm":
                state.update(armed=True, held=0)
            elif path == "/_gate/release":
                state["armed"] = False
            elif query.startswith("held="):
                wanted = int(query[len("held="):])
                changed.wait_for(lambda: state["held"] >= wanted or not state["armed"], timeout=30)
            changed.notify_all()
            body = json.dumps(state).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("origin: " + (fmt % args) + "\n")


def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = lambda *a, **k: Handler(*a, directory=directory, **k)  # noqa: E731
    http.server.ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()


if __name__ == "__main__":
    main()
