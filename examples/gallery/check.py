#!/usr/bin/env python3
"""Checks one headless Chromium run of the gallery: the DOM it dumped and the requests it made.

Usage: check.py DOM-FILE VIEWPORT-WIDTH DPR ACCESS-LOG-SLICE EXPECTED-WIDTH

- every image loaded (naturalWidth > 0), its natural size the slot's (pixel size / density);
- each image's slot is what `sizes` says for this viewport (so gallery.css and build.sh agree);
- the candidate chosen is EXPECTED-WIDTH, which is also what both common selection rules give
  for that slot and DPR (the smallest w >= slot x DPR; Chromium's geometric-mean rule), so the
  expectation does not hang on one browser's heuristic;
- the browser asked for that candidate only (nginx's access log of the run), and every answer
  was a 200.
Prints one line per check; exits 1 if any failed.
"""

import html
import json
import math
import re
import sys

WIDTHS = [200, 400, 800]


def slot_for(viewport):
    # build.sh's sizes: (min-width: 1000px) calc((100vw - 80px) / 4), calc((100vw - 64px) / 3)
    return (viewport - 80) / 4 if viewport >= 1000 else (viewport - 64) / 3


def smallest_enough(slot, dpr):
    return next((w for w in WIDTHS if w >= slot * dpr), WIDTHS[-1])


def geometric_mean_rule(slot, dpr):
    densities = [w / slot for w in WIDTHS]
    i = 0
    while i < len(WIDTHS) - 1:
        if (dpr <= 1 and densities[i] > dpr) or math.sqrt(densities[i] * densities[i + 1]) >= dpr:
            break
        i += 1
    return WIDTHS[i]


def main():
    dom_path, viewport, dpr, log_path, expected = sys.argv[1:6]
    viewport, dpr, expected = int(viewport), float(dpr), int(expected)
    failures = []

    def check(ok, text):
        print(("PASS " if ok else "FAIL ") + text)
        if not ok:
            failures.append(text)

    dom = open(dom_path, encoding="utf-8").read()
    match = re.search(r'<pre id="report"[^>]*data-done="true"[^>]*>(.*?)</pre>', dom, re.S)
    check(match is not None, "the page wrote its report (every image settled)")
    if match is None:
        return 1
    report = json.loads(html.unescape(match.group(1)))
    images = report["images"]
    check(report["viewport"] == viewport and report["dpr"] == dpr,
          f"viewport {report['viewport']} px at DPR {report['dpr']} (asked {viewport} at {dpr})")
    slot = slot_for(viewport)
    rules = (smallest_enough(slot, dpr), geometric_mean_rule(slot, dpr))
    check(rules == (expected, expected), f"slot {slot:.1f} px x DPR {dpr}: both selection rules give {rules}, expected {expected}")
    broken = [i["name"] for i in images if i["naturalWidth"] <= 0]
    check(len(images) > 0 and not broken, f"{len(images)} images loaded, none broken {broken or ''}")
    off_slot = [i["name"] for i in images if abs(i["slot"] - slot) > 0.5]
    check(not off_slot, f"every slot is {slot:.1f} px as sizes says {off_slot or ''}")
    chosen = sorted({i["chosen"] for i in images})
    check(chosen == [expected], f"candidate chosen: {chosen} w")
    # A w-descriptor candidate's natural size is its pixel size divided by its density (w / slot):
    # the slot's width, and the 3:2 crop's height at that width.
    wrong_size = [(i["name"], i["naturalWidth"], i["naturalHeight"]) for i in images
                  if abs(i["naturalWidth"] - slot) > 1 or abs(i["naturalHeight"] - slot * 2 / 3) > 1.5]
    check(not wrong_size, f"natural sizes {sorted({(i['naturalWidth'], i['naturalHeight']) for i in images})}: "
          f"the {expected}w crop at density {expected / slot:.2f} {wrong_size or ''}")

    requests = [line for line in open(log_path, encoding="utf-8") if '"GET /thumb?' in line]
    widths = sorted({int(re.search(r"[?&]w=(\d+)", line).group(1)) for line in requests})
    statuses = sorted({line.split('"')[2].split()[0] for line in requests})
    check(len(requests) == len(images) and widths == [expected],
          f"the browser asked for {len(requests)} thumbnails, widths {widths}")
    check(statuses == ["200"], f"nginx answered them {statuses}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
