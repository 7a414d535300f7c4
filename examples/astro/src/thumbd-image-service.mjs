// An Astro external image service (astro.config.mjs names it): every URL is thumbd's /_image,
// which takes Astro's own names (its quality presets, fit and position included).
const parameters = { w: "width", h: "height", q: "quality", f: "format", fit: "fit", position: "position" };

export default {
  getURL(options, imageConfig) {
    const params = new URLSearchParams({ href: typeof options.src === "string" ? options.src : options.src.src });
    for (const [name, key] of Object.entries(parameters)) if (options[key]) params.set(name, String(options[key]));
    return `${imageConfig.service.config.thumbd}/_image?${params}`;
  },
  // The srcset: one URL per width of a responsive layout (Astro's breakpoints) or per density.
  getSrcSet(options) {
    const ratio = options.width && options.height ? options.height / options.width : 0;
    const widths = options.widths
      ? [...new Set(options.widths)]
      : (options.densities ?? []).map((d) => Math.round(options.width * parseFloat(d)));
    return widths.map((width, i) => ({
      transform: { ...options, width, height: ratio ? Math.round(width * ratio) : undefined },
      descriptor: options.widths ? `${width}w` : `${parseFloat(options.densities[i])}x`,
    }));
  },
  // The <img> attributes: all but the transform (Astro writes no attribute the service leaves out).
  getHTMLAttributes(options) {
    const { src, format, quality, densities, widths, fit, position, background, layout, priority, ...attributes } = options;
    return { ...attributes, loading: attributes.loading ?? "lazy", decoding: attributes.decoding ?? "async" };
  },
};
