// Checks one headless Chromium run of the page build-page.mjs wrote (examples/frontends/test.sh).
//
//   node check-page.mjs dom DOM-FILE PAGE-DIR VIEWPORT DPR EXPECTED-W
// the report page.js wrote into the dumped DOM: while the origin held a fetch for every image, each
// <img> showed its /info placeholder (the lqip as its background, on the dominant colour) and had no pixels;
// then every image loaded, from a /_next/image URL of its own source at EXPECTED-W (what `sizes`
// gives for this viewport and DPR), decoded at that width, and the placeholder was gone.
//
//   node check-page.mjs shot SCREENSHOT DOM-FILE PAGE-DIR WORK-DIR
// a screenshot taken while the origin held every image: inside each image's box (from the DOM
// run, the same layout) the colour is its lqip's.
// Prints a line per check; exits 1 if any failed.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

let failures = 0;
function check(ok, text) {
  console.log(`${ok ? "PASS" : "FAIL"} ${text}`);
  if (!ok) failures++;
}
function readReport(domFile) {
  const m = readFileSync(domFile, "utf8").match(/<pre id="report"[^>]*data-done="true"[^>]*>(.*?)<\/pre>/s);
  if (!m) return null;
  const text = m[1].replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
  return JSON.parse(text);
}
const rgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(", ")})`;

function checkDom([domFile, pageDir, viewport, dpr, expected]) {
  const report = readReport(domFile);
  check(report !== null, "page.js wrote its report (every image settled)");
  if (!report) return;
  const placeholders = JSON.parse(readFileSync(join(pageDir, "placeholders.json"), "utf8"));
  const names = Object.keys(placeholders);
  check(
    report.viewport === Number(viewport) && report.dpr === Number(dpr),
    `viewport ${report.viewport} px at DPR ${report.dpr} (asked ${viewport} at ${dpr})`,
  );
  check(report.final.length === names.length, `${report.final.length} images on the page, ${names.length} built`);
  check(
    report.gate.armed && report.gate.held === names.length,
    `the origin held ${report.gate.held} fetches (of ${names.length} sources) when the page looked`,
  );
  const early = report.early.filter(
    (e) =>
      e.naturalWidth !== 0 ||
      e.backgroundImage !== `url("${placeholders[e.name].lqip}")` ||
      e.backgroundColor !== rgb(placeholders[e.name].dominantColor),
  );
  check(!early.length, `before its image: every <img> without pixels, its lqip and dominant colour as background ${early.map((e) => e.name)}`);
  const slot = Number(viewport) >= 1000 ? 0.33 * Number(viewport) : Number(viewport);
  for (const f of report.final) {
    const url = f.currentSrc ? new URL(f.currentSrc) : null;
    const info = placeholders[f.name];
    const natural = [f.naturalWidth, f.naturalHeight];
    check(
      url !== null &&
        url.pathname === "/_next/image" &&
        url.searchParams.get("url").endsWith(`/${f.name}`) &&
        url.searchParams.get("w") === String(expected) &&
        url.searchParams.get("q") === "75",
      `${f.name}: loaded ${url ? url.pathname + url.search : "nothing"} (expected w=${expected})`,
    );
    // A w-descriptor candidate's natural width is its pixel width over its density (w / slot):
    // the slot when thumbd made it w wide (the source's width when that is less: thumbd never
    // enlarges), its height the source's aspect at that width.
    const width = (Math.min(Number(expected), info.width) * slot) / Number(expected);
    check(
      Math.abs(f.naturalWidth - width) <= 1 &&
        Math.abs(f.naturalHeight - (width * info.height) / info.width) <= 1.5 &&
        Math.abs(f.box[2] - slot) <= 1,
      `${f.name}: natural size ${natural.join("x")} (expected ${width.toFixed(1)} wide) in a ${f.box[2].toFixed(1)} px slot (${slot.toFixed(1)} as sizes says)`,
    );
    check(f.backgroundImage === "none", `${f.name}: placeholder removed once loaded (${f.backgroundImage.slice(0, 40)})`);
  }
}

const size = (file) => ["width", "height"].map((f) => Number(execFileSync("vipsheader", ["-f", f, file]).toString()));
// The middle half of a box [left, top, width, height] (the edges of a cover-scaled background
// are the least certain part of it).
const middle = ([left, top, width, height]) => [
  Math.round(left + width / 4), Math.round(top + height / 4), Math.max(1, Math.round(width / 2)), Math.max(1, Math.round(height / 2)),
];
// The mean colour of a region of an image file (vips: crop, shrink to one pixel, read it).
function meanColour(file, work, [left, top, width, height]) {
  const area = join(work, "area.v");
  const dot = join(work, "dot.v");
  execFileSync("vips", ["extract_area", file, area, left, top, width, height].map(String));
  execFileSync("vips", ["shrink", area, dot, String(width), String(height)]);
  return execFileSync("vips", ["getpoint", dot, "0", "0"]).toString().trim().split(/\s+/).slice(0, 3).map(Number);
}

function checkShot([shot, domFile, pageDir, work]) {
  const report = readReport(domFile);
  const placeholders = JSON.parse(readFileSync(join(pageDir, "placeholders.json"), "utf8"));
  const [shotWidth, shotHeight] = size(shot);
  check(
    shotWidth === report.viewport * report.dpr && shotHeight > 0,
    `screenshot ${shotWidth}x${shotHeight} (viewport ${report.viewport} at DPR ${report.dpr})`,
  );
  for (const f of report.final) {
    const lqip = join(work, `lqip-${f.name}.webp`);
    writeFileSync(lqip, Buffer.from(placeholders[f.name].lqip.split(",")[1], "base64"));
    const [w, h] = size(lqip);
    const expected = meanColour(lqip, work, middle([0, 0, w, h]));
    const shown = meanColour(shot, work, middle(f.box.map((v) => v * report.dpr)));
    const off = Math.max(...shown.map((v, i) => Math.abs(v - expected[i])));
    check(
      off <= 24,
      `${f.name}: while its image is held, its box shows rgb(${shown.map(Math.round)}), ` +
        `the middle of its ${w}x${h} lqip is rgb(${expected.map(Math.round)})`,
    );
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "dom") checkDom(args);
else if (mode === "shot") checkShot(args);
else throw new Error(`unknown mode ${mode}`);
process.exit(failures ? 1 : 0);
