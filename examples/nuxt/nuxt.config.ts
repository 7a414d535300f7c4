// Nuxt Image's weserv provider with thumbd as its server (docs/frontends.md): it asks for
// /?filename=a.jpg&we&w=…&h=…&output=…&q=…&fit=…&url=<baseURL + src>, which thumbd answers.
// Nuxt's widths are its screens times its densities, arbitrary numbers, so thumbd rounds them
// up to the widths it allows:
//   thumbd --allowed-widths next --snap-widths --allowed-qualities 80 \
//     --source-base-url https://www.example.org --allowed-source-hosts www.example.org
export default defineNuxtConfig({
  modules: ["@nuxt/image"],
  image: {
    provider: "weserv",
    // baseURL is the site, where sources written as paths (/images/a.jpg) live.
    weserv: { baseURL: "https://www.example.org", weservURL: "https://thumbd.example.org" },
    quality: 80,
  },
});
