// Next.js with thumbd as its image optimizer (docs/frontends.md): next/image keeps building its
// URLs, `${path}?url=…&w=…&q=…`, and thumbd answers them, with one cache for every instance of
// the site, kept across deploys. Give thumbd the same lists (Next.js' default sizes, these
// qualities) and the site's origin for sources written as paths (/a.jpg, /_next/static/media/…):
//   thumbd --allowed-widths next --allowed-qualities 50,75 \
//     --source-base-url https://www.example.org --allowed-source-hosts www.example.org,img.example.org
/** @type {import("next").NextConfig} */
export default {
  images: {
    path: "https://thumbd.example.org/_next/image",
    // Next.js 16 sends only these (the nearest to an <Image quality>); its default is [75].
    qualities: [50, 75],
    // The default loader still checks remote sources against these.
    remotePatterns: [{ protocol: "https", hostname: "img.example.org" }],
    // Or a loader of your own, which builds the same URLs:
    // loader: "custom", loaderFile: "./thumbd-loader.mjs",
  },
};
