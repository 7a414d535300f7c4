// Every URL shape of the examples, against a running thumbd (examples/frontends/test.sh): the
// URLs Next.js (its default loader with next.config.mjs, and thumbd-loader.mjs), Nuxt Image's
// weserv provider (nuxt.config.ts; both its URL styles) and Astro (astro.config.mjs and its image
// service) build, each fetched: a 200, the type asked for (or negotiated), and the decoded size
// asked for, after thumbd rounded the width up to an allowed one (--snap-widths). Then what the
// safe recipe refuses, and the cache a /_next/image request shares with /thumb.
//
// Usage: node check-urls.mjs THUMBD-URL SITE-URL SOURCES-DIR WORK-DIR
// (thumbd runs with --allowed-widths next,astro --snap-widths --allowed-qualities 50,75,80 and
// --source-base-url SITE-URL). Prints a line per check; exits 1 if any failed.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as fw from "./frameworks.mjs";

const [thumbd, site, sources, work] = process.argv.slice(2);
const ex = await fw.loadExamples(thumbd, site);
const ALLOWED = [16, ...fw.NEXT_IMAGE_SIZES, ...fw.NEXT_DEVICE_SIZES, ...fw.ASTRO_BREAKPOINTS].sort((a, b) => a - b);
const snap = (w) => ALLOWED.find((a) => a >= w) ?? ALLOWED.at(-1);
const LOADERS = { "image/jpeg": "jpegload", "image/png": "pngload", "image/webp": "webpload", "image/avif": "heifload" };
const ACCEPT = { avif: "image/avif,image/webp,*/*", webp: "image/webp,*/*", any: "*/*" };
const NEXT_CSP = "script-src 'none'; frame-src 'none'; sandbox;";

let failures = 0;
function check(ok, text) {
  console.log(`${ok ? "PASS" : "FAIL"} ${text}`);
  if (!ok) failures++;
}
// vipsheader's first line: "FILE: 640x427 uchar, 3 bands, srgb, jpegload"
function header(file) {
  const m = execFileSync("vipsheader", [file], { stdio: ["ignore", "pipe", "ignore"] })
    .toString()
    .match(/: (\d+)x(\d+) .*, (\w+)\s*$/);
  return { width: Number(m[1]), height: Number(m[2]), loader: m[3] };
}
const sourceOf = (src) => header(join(sources, src.replace(/^https?:\/\/[^/]+/, "").split("?")[0]));
const sourceType = (src) => (src.split("?")[0].endsWith(".png") ? "image/png" : "image/jpeg");
// The size thumbd makes: w (and h) after snapping, fit inside unless cover, never enlarged.
function expectedSize(src, w, h, fit) {
  const o = sourceOf(src);
  const sw = snap(w);
  const sh = h && Math.round((h * sw) / w);
  if (sh && fit === "cover") return { width: sw, height: sh };
  const s = Math.min(1, sw / o.width, sh ? sh / o.height : 1);
  return { width: Math.round(o.width * s), height: Math.round(o.height * s) };
}

let n = 0;
async function image(label, url, { accept = "any", type, size, headers = {} }) {
  const res = await fetch(url, { headers: { accept: ACCEPT[accept] } });
  const file = join(work, `answer-${++n}`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  let got = {};
  try {
    got = header(file);
  } catch {
    got = { loader: "undecodable" };
  }
  const contentType = res.headers.get("content-type");
  const wrongHeaders = Object.entries(headers).filter(([k, v]) => !(res.headers.get(k) ?? "").includes(v));
  check(
    res.status === 200 &&
      contentType === type &&
      got.loader === LOADERS[type] &&
      Math.abs(got.width - size.width) <= 1 &&
      Math.abs(got.height - size.height) <= 1 &&
      wrongHeaders.length === 0,
    `${label}: ${res.status} ${contentType} ${got.loader} ${got.width}x${got.height} ` +
      `(expected ${type} ${size.width}x${size.height}${wrongHeaders.length ? `; headers ${JSON.stringify(wrongHeaders)}` : ""}) ${url.slice(thumbd.length)}`,
  );
}
// A 400 problem+json whose invalid-params name `param` (and whose detail says `detail`).
async function refused(label, url, param, detail = "") {
  const res = await fetch(url);
  let problem = {};
  try {
    problem = JSON.parse(await res.text());
  } catch {}
  const named = (problem["invalid-params"] ?? []).map((p) => p.name);
  check(
    res.status === 400 &&
      res.headers.get("content-type") === "application/problem+json" &&
      named.includes(param) &&
      (problem.detail ?? "").includes(detail),
    `${label}: ${res.status} ${res.headers.get("content-type")} naming ${named} (${problem.detail}) ${url.slice(thumbd.length)}`,
  );
}

// Next.js: the default loader at images.path, and the loader file, build the same URL.
const nextSources = ["/images/bridge.jpg", "/_next/static/media/dragonfly.3f2a1b9c.jpg", `${site}/images/umang.png`];
const nextCases = [[640, undefined, "avif"], [384, 50, "webp"], [1080, 90, "any"], [64, 75, "avif"]];
for (const src of nextSources) {
  for (const [width, quality, accept] of nextCases) {
    const url = fw.nextDefaultLoader({ config: ex.next, src, width, quality });
    const q = fw.nextQuality(quality, ex.next);
    const fromFile = ex.nextLoaderFile({ src, width, quality: q });
    check(fromFile === url, `Next.js: thumbd-loader.mjs builds the default loader's URL for w=${width} q=${q}`);
    const type = accept === "any" ? sourceType(src) : `image/${accept}`;
    const headers = { vary: "Accept", "x-content-type-options": "nosniff", "content-security-policy": NEXT_CSP };
    await image(`Next.js ${src} w=${width} q=${q} Accept ${accept}`, url, { accept, type, size: expectedSize(src, width), headers });
  }
}
await refused("Next.js: a width not in the sizes", `${ex.next.path}?url=%2Fimages%2Fbridge.jpg&w=500&q=75`, "w", '"w" parameter (width) of 500 is not allowed');
await refused("Next.js: a quality not allowed", `${ex.next.path}?url=%2Fimages%2Fbridge.jpg&w=640&q=90`, "q", '"q" parameter (quality) of 90 is not allowed');

// Nuxt Image, weserv: version 2 (URLSearchParams) and version 1 (url unencoded, last).
const nuxtCases = [
  ["/images/bridge.jpg", { width: 300, height: 200, format: "webp", fit: "cover" }, 'filename="bridge.webp"'],
  ["/images/sunset.jpg?v=2", { width: 640 }, "filename="],
  [`${site}/images/umang.png`, { width: 1280, height: 720, format: "png", fit: "inside" }, 'filename="umang.png"'],
  ["/images/bridge.jpg", { width: 1000, format: "avif" }, 'filename="bridge.avif"'],
];
for (const version of [2, 1]) {
  for (const [src, modifiers, disposition] of nuxtCases) {
    const url = fw.nuxtWeserv(src, modifiers, ex.nuxt, version);
    const type = modifiers.format ? `image/${modifiers.format}` : sourceType(src);
    const size = expectedSize(src, modifiers.width, modifiers.height, modifiers.fit);
    await image(`Nuxt weserv v${version} ${src} ${JSON.stringify(modifiers)}`, url, {
      type, size, headers: { "content-disposition": disposition },
    });
  }
}
await refused("Nuxt weserv: a fit thumbd does not do", fw.nuxtWeserv("/images/bridge.jpg", { width: 640, height: 400, fit: "contain" }, ex.nuxt, 2), "fit");

// Astro: an imported image in the config's layout (constrained: Astro's breakpoints up to twice
// its width and no wider than the source, 1068 px; webp, a quality preset), a remote one fixed.
const service = ex.astroService;
const wine = { src: "/_astro/wine.Bx9f2c.jpg", ...sourceOf("/_astro/wine.Bx9f2c.jpg"), format: "jpg" };
const astroCases = [
  [{ src: wine, alt: "Wine", width: 640, quality: "high", format: "webp" }, "640w, 750w, 828w, 960w"],
  [{ src: `${site}/images/bridge.jpg`, alt: "Bridge", width: 300, height: 200, layout: "fixed" }, "300w, 600w"],
];
for (const [props, descriptors] of astroCases) {
  const img = await fw.astroGetImage(service, props, ex.astroImageConfig);
  const name = typeof props.src === "string" ? props.src : props.src.src;
  const type = props.format ? `image/${props.format}` : sourceType(name);
  const srcset = img.srcSet.map((s) => s.descriptor).join(", ");
  check(srcset === descriptors, `Astro ${name}: srcset of ${srcset} (expected ${descriptors})`);
  const attrs = img.attributes;
  const leaked = ["src", "format", "quality", "fit", "position", "widths", "densities"].filter((k) => k in attrs);
  check(
    attrs.alt === props.alt && attrs.width === props.width && attrs.height > 0 && attrs.loading === "lazy" && !leaked.length,
    `Astro ${name}: <img> attributes ${JSON.stringify(attrs)}`,
  );
  for (const s of [{ url: img.src, transform: { width: props.width, height: attrs.height } }, ...img.srcSet]) {
    const { width, height } = s.transform;
    await image(`Astro ${name} ${s.descriptor ?? "src"} ${width}x${height}`, s.url, { type, size: expectedSize(name, width, height, "cover") });
  }
}
await refused("Astro: a format thumbd does not make", `${ex.astroImageConfig.service.config.thumbd}/_image?href=%2Fimages%2Fbridge.jpg&w=640&f=gif`, "f");

// One cache: the /_next/image answer is the /thumb entry of the same source, width, quality and format.
const hit = await fetch(`${thumbd}/thumb?url=${encodeURIComponent(`${site}/images/bridge.jpg`)}&w=640&q=75&format=auto`, {
  headers: { accept: ACCEPT.avif },
});
await hit.arrayBuffer();
check(hit.status === 200 && hit.headers.get("x-cache") === "hit", `/thumb of what /_next/image made: X-Cache ${hit.headers.get("x-cache")}`);

console.log(`${failures ? "FAIL" : "PASS"} ${n} images fetched, ${failures} checks failed`);
process.exit(failures ? 1 : 0);
