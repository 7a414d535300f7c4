#!/usr/bin/env python3
"""Signed /thumb requests through nginx, one after another, until STOP-FILE exists.

Usage: load-through.py NGINX-PORT ORIGIN-PORT KEY-HEX OUT-FILE STOP-FILE

Every request is a new size (w counts up) of one of the sources, so nginx's cache misses and it
goes to a thumbd instance. One line per answer in OUT-FILE: status, the instance that answered
(X-Upstream-Addr, which deploy/test-nginx.sh adds to its copy of the config: every instance
tried, comma-separated, the one that answered last), X-Cache-Status.
Used by deploy/test-nginx.sh to watch failover while one instance stops.
"""

import base64
import hashlib
import hmac
import http.client
import os
import sys
import urllib.parse

SOURCES = ["photo.jpg", "photo.png", "photo.webp", "photo.gif", "photo.avif", "photo.tif", "alpha.png"]


def sign(key, target):
    mac = hmac.new(key, target.encode(), hashlib.sha256).digest()
    return target + "&sig=" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def main():
    nginx_port, origin_port, key_hex, out_path, stop_path = sys.argv[1:6]
    key = bytes.fromhex(key_hex)
    width = 100
    connection = http.client.HTTPConnection("127.0.0.1", int(nginx_port), timeout=30)
    with open(out_path, "w", buffering=1) as out:
        while not os.path.exists(stop_path):
            source = SOURCES[width % len(SOURCES)]
            url = urllib.parse.quote(f"http://127.0.0.1:{origin_port}/{source}", safe="")
            target = sign(key, f"/thumb?url={url}&w={width}")
            width += 1
            try:
                connection.request("GET", target)
                response = connection.getresponse()
                response.read()
                status = response.status
                upstream = response.getheader("X-Upstream-Addr", "-").replace(" ", "")
                cache = response.getheader("X-Cache-Status", "-")
            except (OSError, http.client.HTTPException) as error:
                status, upstream, cache = f"error:{type(error).__name__}", "-", "-"
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", int(nginx_port), timeout=30)
            print(status, upstream, cache, source, width - 1, file=out)


if __name__ == "__main__":
    main()
