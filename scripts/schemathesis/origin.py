"""The source images for scripts/schemathesis.sh: two small PNGs served on 127.0.0.1.

Usage: origin.py PORT_FILE. Binds an ephemeral port on 127.0.0.1, writes it to PORT_FILE and
serves until stopped. Any other path is a 404 (http.server's), which thumbd answers as a 404.
"""

import http.server
import struct
import sys
import zlib


def png(width, height, rgb):
    """A plain RGB PNG of one colour, made here so nothing needs fetching or committing."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


IMAGES = {"/a.png": png(64, 48, (200, 30, 30)), "/b.png": png(40, 90, (30, 30, 200))}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = IMAGES.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as port_file:
    port_file.write(str(server.server_address[1]))
server.serve_forever()
