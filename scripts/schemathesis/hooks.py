"""schemathesis hooks for scripts/schemathesis.sh.

Gives the generated requests sources that exist: the query examples added here point at the
local origin (THUMBD_ORIGIN, on 127.0.0.1, also thumbd's --source-base-url, so the framework
routes' paths like /a.png are its files), so some thumbnails are really made, cached, purged
and revalidated. schemathesis runs them in its examples phase and mixes them into its fuzzing;
every other generated URL is refused by thumbd without a fetch (403: --allowed-source-hosts
127.0.0.1), or fails on a port of 127.0.0.1 where nothing listens.
"""

import os

import schemathesis


@schemathesis.hook
def before_load_schema(context, raw_schema):
    base = os.environ["THUMBD_ORIGIN"]
    a, b = f"{base}/a.png", f"{base}/b.png"
    parameters = raw_schema["components"]["parameters"]
    parameters["ThumbQuery"]["examples"] = {
        "inside": {"value": {"url": a, "w": 40}},
        "cover": {"value": {"url": b, "w": 30, "h": 30, "fit": "cover", "crop": "attention", "format": "webp"}},
        "fill": {"value": {"url": a, "w": 20, "h": 50, "fit": "fill", "dpr": 1.5, "q": 50, "format": "auto"}},
        "missing": {"value": {"url": f"{base}/missing.png", "w": 10}},
    }
    parameters["PrefetchQuery"]["examples"] = {
        "original": {"value": {"url": b}},
        "thumbnail": {"value": {"url": a, "w": 24, "format": "png"}},
    }
    parameters["InfoQuery"]["examples"] = {
        "a": {"value": {"url": a}},
        "missing": {"value": {"url": f"{base}/missing.png"}},
    }
    purge = raw_schema["paths"]["/cache"]["delete"]["parameters"][0]
    purge["examples"] = {"a": {"value": a}, "b": {"value": b}}
    parameters["NextImageQuery"]["examples"] = {
        "path": {"value": {"url": "/a.png", "w": 64, "q": 75}},
        "absolute": {"value": {"url": b, "w": 32, "q": 50}},
    }
    parameters["WeservQuery"]["examples"] = {
        "nuxt": {"value": {"url": a, "w": 30, "h": 20, "fit": "cover", "a": "attention", "output": "webp", "q": 80,
                           "we": "", "filename": "a.png"}},
        "path": {"value": {"url": "/b.png", "h": 24, "dpr": 2}},
    }
    parameters["AstroQuery"]["examples"] = {
        "path": {"value": {"href": "/a.png", "w": 40, "h": 40, "q": "high", "f": "avif", "fit": "cover"}},
        "absolute": {"value": {"href": b, "w": 20}},
    }
    parameters["IPXModifiers"]["examples"] = {"size": {"value": "s_30x20&fit_cover"}, "none": {"value": "_"}}
    parameters["IPXSource"]["examples"] = {"a": {"value": "a.png"}, "b": {"value": "b.png"}}
