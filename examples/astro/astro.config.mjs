// Astro with thumbd as its external image service (docs/frontends.md): <Image> and <Picture>
// ask src/thumbd-image-service.mjs for every URL, and thumbd's /_image answers them. Responsive
// layouts ask for Astro's breakpoints, the widths thumbd then allows:
//   thumbd --allowed-widths astro --snap-widths \
//     --source-base-url https://www.example.org --allowed-source-hosts www.example.org
import { defineConfig } from "astro/config";

export default defineConfig({
  image: {
    service: { entrypoint: "./src/thumbd-image-service.mjs", config: { thumbd: "https://thumbd.example.org" } },
    layout: "constrained",
  },
});
