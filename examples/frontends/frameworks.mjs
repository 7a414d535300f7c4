// What Next.js, Nuxt Image and Astro do with the configurations in examples/, reproduced for
// examples/frontends/test.sh (none of them can be installed here): the example files are read
// as they are, so a change to one changes what the test asks thumbd for.
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const examples = join(dirname(fileURLToPath(import.meta.url)), "..");
// The hosts the example files name, and where the test runs them.
export const THUMBD = "https://thumbd.example.org";
export const SITE = "https://www.example.org";

// A config file evaluated as its framework would see it: `defineConfig` and friends are the
// identity, imports of the framework itself are dropped (nuxt.config.ts is plain JavaScript).
async function evaluate(file) {
  const text = (await readFile(join(examples, file), "utf8"))
    .replace(/^import .* from "(astro|nuxt)\/config";$/gm, "")
    .replace(/^export default /m, "return ");
  return new Function("defineConfig", "defineNuxtConfig", text)((c) => c, (c) => c);
}

// Every example configuration, with its hosts moved to the loopback ports of this run. A host
// other than the placeholders above fails: the test would otherwise ask something else.
export async function loadExamples(thumbd, site) {
  const move = (url, from, to) => {
    if (!url.startsWith(from)) throw new Error(`${url}: expected it to start with ${from}`);
    return to + url.slice(from.length);
  };
  const next = (await import(join(examples, "nextjs/next.config.mjs"))).default.images;
  const loaderFile = (await import(join(examples, "nextjs/thumbd-loader.mjs"))).default;
  const nuxt = (await evaluate("nuxt/nuxt.config.ts")).image;
  const astro = (await evaluate("astro/astro.config.mjs")).image;
  const service = (await import(join(examples, "astro", astro.service.entrypoint))).default;
  if (nuxt.provider !== "weserv") throw new Error(`nuxt.config.ts: provider ${nuxt.provider}, expected weserv`);
  return {
    next: { ...next, path: move(next.path, THUMBD, thumbd) },
    nextLoaderFile: (props) => move(loaderFile(props), THUMBD, thumbd),
    nuxt: {
      quality: nuxt.quality,
      baseURL: move(nuxt.weserv.baseURL, SITE, site),
      weservURL: move(nuxt.weserv.weservURL, THUMBD, thumbd),
    },
    astroService: service,
    astroImageConfig: {
      ...astro,
      service: { ...astro.service, config: { ...astro.service.config, thumbd: move(astro.service.config.thumbd, THUMBD, thumbd) } },
    },
  };
}

// Next.js (packages/next/src/shared/lib): image-config.ts's default sizes, find-closest-quality.ts,
// and image-loader.ts's default loader (without `&dpl=`, which it adds only when a deployment id
// is set; see docs/frontends.md).
export const NEXT_DEVICE_SIZES = [640, 750, 828, 1080, 1200, 1920, 2048, 3840];
export const NEXT_IMAGE_SIZES = [32, 48, 64, 96, 128, 256, 384];
export function nextQuality(quality, config) {
  const q = quality || 75;
  if (!config.qualities?.length) return q;
  return config.qualities.reduce((best, c) => (Math.abs(c - q) < Math.abs(best - q) ? c : best), 0);
}
export function nextDefaultLoader({ config, src, width, quality }) {
  return `${config.path}?url=${encodeURIComponent(src)}&w=${width}&q=${nextQuality(quality, config)}`;
}
// get-img-props.ts: the widths of a srcset with `sizes` (every size at least the smallest vw
// share of the smallest device size), the `w` descriptors, and `src` the largest.
export function nextImgAttrs({ config, src, quality, sizes, loader = nextDefaultLoader }) {
  const all = [...NEXT_DEVICE_SIZES, ...NEXT_IMAGE_SIZES].sort((a, b) => a - b);
  const shares = [...sizes.matchAll(/(^|\s)(1?\d?\d)vw/g)].map((m) => Number(m[2]));
  const widths = shares.length ? all.filter((s) => s >= NEXT_DEVICE_SIZES[0] * Math.min(...shares) * 0.01) : all;
  const url = (width) => loader({ config, src, quality, width });
  return { widths, srcset: widths.map((w) => `${url(w)} ${w}w`).join(", "), src: url(widths.at(-1)), sizes };
}

// Nuxt Image's weserv provider (src/runtime/providers/weserv.ts) with the modifiers in the order
// <NuxtImg> passes them (utils/props.ts: width, height, format, quality, background, fit) and
// ufo's withBase. `version` 2 writes the query with URLSearchParams (url encoded); version 1
// wrote `key=value` pairs as they are, so `url` comes unencoded and last.
const WESERV_KEYS = { format: "output", width: "w", height: "h", quality: "q", background: "bg" };
const WESERV_FORMATS = { jpeg: "jpg", jpg: "jpg", png: "png", webp: "webp" };
function withBase(input, base) {
  if (/^https?:\/\//.test(input)) return input;
  const b = base.endsWith("/") ? base.slice(0, -1) : base;
  return `${b}/${input.replace(/^\.?\//, "")}`;
}
export function nuxtWeserv(src, { width, height, format, quality, background, fit }, options, version) {
  const modifiers = { width, height, format, quality: quality || options.quality, background, fit };
  const operations = [["filename", src.substring(src.lastIndexOf("/") + 1)], ["we", "true"]];
  for (const [key, value] of Object.entries(modifiers)) {
    if (value === undefined) continue;
    operations.push([WESERV_KEYS[key] ?? key, key === "format" ? (WESERV_FORMATS[value] ?? value) : value]);
  }
  operations.push(["url", withBase(src, options.baseURL)]);
  const query =
    version === 1
      ? operations.map(([k, v]) => `${k}=${v}`).join("&")
      : new URLSearchParams(operations.map(([k, v]) => [k, String(v)])).toString();
  return withBase(`?${query.replace("=true", "")}`, options.weservURL);
}

// Astro (packages/astro): components/Image.astro's defaults for a layout (fit cover, position
// center), assets/internal.ts's getImage (an imported image's missing side from its aspect
// ratio; layout.ts's widths for the layout from the breakpoints, DEFAULT_RESOLUTIONS for an
// external service; lazy and async), then the service: validateOptions, getSrcSet, a URL per
// transform, the attributes. `imageConfig` is the config's `image`.
export const ASTRO_BREAKPOINTS = [640, 750, 828, 960, 1080, 1280, 1668, 1920, 2048, 2560, 3200, 3840, 4480, 5120, 6016];
function astroWidths(width, layout, breakpoints, originalWidth) {
  if (layout === "full-width") return breakpoints.filter((w) => !originalWidth || w <= originalWidth);
  if (!width) return [];
  const max = originalWidth ? Math.min(width * 2, originalWidth) : width * 2;
  if (layout === "fixed") return originalWidth && width > originalWidth ? [originalWidth] : [width, max];
  if (layout === "constrained") return [width, width * 2, ...breakpoints].filter((w) => w <= max).sort((a, b) => a - b);
  return [];
}
export async function astroGetImage(service, props, imageConfig) {
  const options = { ...props };
  const layout = options.layout ?? imageConfig.layout ?? "none";
  if (layout !== "none") {
    options.fit ??= "cover";
    options.position ??= "center";
  }
  const original = typeof options.src === "object" ? options.src : undefined;
  if (original && options.width && !options.height) {
    options.height = Math.round(options.width / (original.width / original.height));
  }
  options.loading ??= "lazy";
  options.decoding ??= "async";
  if (layout !== "none") {
    const breakpoints = imageConfig.breakpoints?.length ? imageConfig.breakpoints : ASTRO_BREAKPOINTS;
    options.widths ||= astroWidths(options.width, layout, breakpoints, original?.width);
    delete options.densities;
  }
  const validated = service.validateOptions ? await service.validateOptions(options, imageConfig) : options;
  const srcSet = service.getSrcSet ? await service.getSrcSet(validated, imageConfig) : [];
  return {
    src: await service.getURL(validated, imageConfig),
    srcSet: await Promise.all(
      srcSet.map(async (s) => ({ ...s, url: await service.getURL(s.transform, imageConfig) })),
    ),
    attributes: service.getHTMLAttributes ? await service.getHTMLAttributes(validated, imageConfig) : {},
  };
}
