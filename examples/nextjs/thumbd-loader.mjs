// A Next.js custom loader (next.config.mjs: `loader: "custom", loaderFile: "./thumbd-loader.mjs"`):
// the URL Next.js' default loader builds when `images.path` is thumbd's /_next/image.
export default function thumbdLoader({ src, width, quality }) {
  return `https://thumbd.example.org/_next/image?url=${encodeURIComponent(src)}&w=${width}&q=${quality || 75}`;
}
