// Writes the page next/image would render for a few sources, built as a Next.js page is: each
// source's /info fetched once at build time, its `lqip` the placeholder (placeholder="blur" with
// blurDataURL, here as the <img>'s own background, on its dominantColor) and its width and height
// the <img>'s box; the srcset of /_next/image URLs at Next.js' sizes, made by the default loader
// with examples/nextjs/next.config.mjs. page.js removes the placeholder once the image has loaded.
//
// Usage: node build-page.mjs THUMBD-URL SITE-URL OUT-DIR PATH...
//   writes OUT-DIR/index.html, page.js, and placeholders.json (what /info said, for the checks)
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as fw from "./frameworks.mjs";

const [thumbd, site, out, ...paths] = process.argv.slice(2);
const ex = await fw.loadExamples(thumbd, site);
// One column on a phone, three from 1000 px (page.css below lays them out exactly so).
const sizes = "(min-width: 1000px) 33vw, 100vw";
const escape = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

const placeholders = {};
const figures = [];
for (const path of paths) {
  const res = await fetch(`${thumbd}/info?url=${encodeURIComponent(site + path)}`);
  if (res.status !== 200) throw new Error(`/info for ${path}: ${res.status} ${await res.text()}`);
  const info = await res.json();
  const name = path.slice(path.lastIndexOf("/") + 1);
  placeholders[name] = info;
  const img = fw.nextImgAttrs({ config: ex.next, src: path, sizes });
  const style =
    `color:transparent;background-color:${info.dominantColor};background-size:cover;` +
    `background-position:50% 50%;background-repeat:no-repeat;background-image:url("${info.lqip}")`;
  figures.push(
    `<figure><img alt="${escape(name)}" data-name="${escape(name)}" loading="lazy" decoding="async" ` +
      `width="${info.width}" height="${info.height}" style="${escape(style)}" sizes="${escape(img.sizes)}" ` +
      `srcset="${escape(img.srcset)}" src="${escape(img.src)}"><figcaption>${escape(name)}</figcaption></figure>`,
  );
}

await mkdir(out, { recursive: true });
await copyFile(join(dirname(fileURLToPath(import.meta.url)), "page.js"), join(out, "page.js"));
await writeFile(join(out, "placeholders.json"), JSON.stringify(placeholders));
await writeFile(
  join(out, "index.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>thumbd behind next/image</title>
<style>
body { margin: 0; font: 14px sans-serif; background: #fff; }
main { display: grid; grid-template-columns: 100vw; align-items: start; }
@media (min-width: 1000px) { main { grid-template-columns: repeat(3, 33vw); } }
figure { margin: 0; }
img { display: block; width: 100%; height: auto; }
figcaption { padding: 4px 8px 12px; }
</style>
</head>
<body>
<main>
${figures.join("\n")}
</main>
<pre id="report" hidden></pre>
<script src="page.js"></script>
</body>
</html>
`,
);
console.error(`build-page: ${join(out, "index.html")}, ${paths.length} images`);
