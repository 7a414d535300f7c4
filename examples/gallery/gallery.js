// Once every image has loaded (or failed), writes what the browser did into #report as JSON:
// the candidate it chose (the w of currentSrc), the decoded size, the slot width it laid out.
// examples/gallery/test.sh reads it from the dumped DOM. `?eager` loads lazy images at once
// (for a viewport that does not show them all).
(function () {
  const images = Array.from(document.querySelectorAll("img[srcset]"));
  if (new URLSearchParams(location.search).has("eager")) images.forEach((img) => (img.loading = "eager"));
  const settled = (img) =>
    img.complete
      ? Promise.resolve()
      : new Promise((resolve) => {
          img.addEventListener("load", resolve, { once: true });
          img.addEventListener("error", resolve, { once: true });
        });
  Promise.all(images.map(settled)).then(() => {
    const rows = images.map((img) => ({
      name: img.dataset.name,
      chosen: Number(new URL(img.currentSrc || img.src, location.href).searchParams.get("w")),
      naturalWidth: img.naturalWidth,
      naturalHeight: img.naturalHeight,
      slot: img.getBoundingClientRect().width,
    }));
    const report = document.getElementById("report");
    report.textContent = JSON.stringify({ dpr: window.devicePixelRatio, viewport: window.innerWidth, images: rows });
    report.dataset.done = "true";
  });
})();
