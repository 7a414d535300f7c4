// What next/image does with placeholder="blur": the placeholder is the <img>'s background until
// the image has loaded, then it goes. And the report examples/frontends/test.sh reads from the
// dumped DOM: each image while the test's origin holds a fetch for every one of them (origin.py;
// this script releases them, /_gate/release), then once every image settled. With `?hold`
// nothing is released: the page stays on its placeholders (for the screenshot).
(function () {
  const images = Array.from(document.querySelectorAll("img[data-name]"));
  const removePlaceholder = (img) => {
    img.style.backgroundImage = "none";
    img.style.backgroundColor = "transparent";
  };
  images.forEach((img) =>
    img.complete && img.naturalWidth > 0
      ? removePlaceholder(img)
      : img.addEventListener("load", () => removePlaceholder(img), { once: true }),
  );
  const state = (img) => {
    const style = getComputedStyle(img);
    const box = img.getBoundingClientRect();
    return {
      name: img.dataset.name,
      naturalWidth: img.naturalWidth,
      naturalHeight: img.naturalHeight,
      currentSrc: img.currentSrc,
      backgroundImage: style.backgroundImage,
      backgroundColor: style.backgroundColor,
      box: [box.left, box.top, box.width, box.height],
    };
  };
  if (new URLSearchParams(location.search).has("hold")) return;
  const settled = (img) =>
    img.complete
      ? Promise.resolve()
      : new Promise((resolve) => {
          img.addEventListener("load", resolve, { once: true });
          img.addEventListener("error", resolve, { once: true });
        });
  // Once the origin holds a fetch for every image (all of them asked for, none can arrive), look.
  let gate, early;
  fetch(`/_gate/status?held=${images.length}`)
    .then((response) => response.json())
    .then((status) => {
      gate = status;
      early = images.map(state);
      return fetch("/_gate/release");
    })
    .then(() => Promise.all(images.map(settled)))
    .then(() => {
      const report = document.getElementById("report");
      report.textContent = JSON.stringify({
        viewport: window.innerWidth,
        dpr: window.devicePixelRatio,
        gate,
        early,
        final: images.map(state),
      });
      report.dataset.done = "true";
    });
})();
