internal import Vips

/// Animated GIFs and WebPs made with libvips' own savers: frames stacked top to bottom with a
/// `page-height`, `delay` and `loop`, as its loaders return them.
extension Fixtures {
    /// The containers an animation fixture can be written in.
    public enum AnimationFormat: Sendable, CaseIterable {
        case gif, webp
    }

    /// Frame colours of `animatedGIF` and `animatedWebP`, cycling: red, green, blue, yellow,
    /// magenta, cyan (far apart, so a frame is told by its colour even after GIF's palette).
    public static let animationColours: [[UInt8]] = [
        [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255], [0, 255, 255],
    ]

    /// Stacked RGBA frames: frame `i` filled with `animationColours[i % 6]`; with `transparent`,
    /// the top quarter of every frame fully transparent (and black), the rest opaque.
    public static func animationFrames(width: Int, height: Int, frames: Int, transparent: Bool) -> [UInt8] {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * frames * 4)
        let clearRow = [UInt8](repeating: 0, count: width * 4)
        for frame in 0..<frames {
            let colour = animationColours[frame % animationColours.count] + [255]
            let row = Array([[UInt8]](repeating: colour, count: width).joined())
            for y in 0..<height { pixels.append(contentsOf: transparent && y < height / 4 ? clearRow : row) }
        }
        return pixels
    }

    /// An animation of `frames` frames of `animationFrames` (opaque), made by repeating one cycle of
    /// its colours lazily in libvips: a long one costs no Swift arrays of its size. Each frame
    /// is one colour, so the file stays small (a 120-frame 400 × 400 GIF is a few KB).
    public static func longAnimation(_ format: AnimationFormat, width: Int, height: Int, frames: Int) -> [UInt8] {
        let cycle = animationColours.count
        precondition(frames % cycle == 0, "frames must be a multiple of \(cycle)")
        let one = srgbStrip(
            animationFrames(width: width, height: height, frames: cycle, transparent: false), width: width,
            height: height * cycle, bands: 4)
        let image = one.apply("replicate", options: "across=1,down=\(frames / cycle)")
        image.setInt("page-height", height)
        image.setInt("loop", 0)
        switch format {
        case .gif: return image.save("gifsave_buffer", options: "effort=1")
        case .webp: return image.save("webpsave_buffer", options: "lossless=true,effort=0,strip=true")
        }
    }

    /// An animated WebP whose file carries every metadata chunk: ICCP (`perceptualOnlyProfile`,
    /// the frames stored as `perceptualOnlyStored`, which it maps to `perceptualOnlyMeant`), EXIF
    /// (webpsave writes orientation 6 there) and XMP; `frames` frames, the top quarter of each
    /// transparent and one row more in each later frame (libwebp merges identical frames), delays
    /// of 100 ms, played 2 times.
    public static func animatedWebPWithMetadata(width: Int, height: Int, frames: Int) -> [UInt8] {
        let opaqueRow = Array([[UInt8]](repeating: perceptualOnlyStored + [255], count: width).joined())
        let clearRow = [UInt8](repeating: 0, count: width * 4)
        var pixels = [UInt8]()
        for frame in 0..<frames {
            for y in 0..<height { pixels.append(contentsOf: y < height / 4 + frame ? clearRow : opaqueRow) }
        }
        let image = srgbStrip(pixels, width: width, height: height * frames, bands: 4)
        image.setInt("page-height", height)
        image.setIntArray("delay", [Int](repeating: 100, count: frames))
        image.setInt("loop", 2)
        image.setInt("orientation", 6)
        image.setBlob("icc-profile-data", perceptualOnlyProfile())
        image.setBlob(
            "xmp-data", Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"#.utf8))
        return image.save("webpsave_buffer", options: "lossless=true,strip=false")
    }

    /// An animated GIF of `animationFrames`. `delays` in milliseconds, one per frame (GIF keeps
    /// centiseconds: use multiples of 10); nil leaves the saver's default. `loop`: plays, 0 forever.
    public static func animatedGIF(
        width: Int, height: Int, frames: Int, delays: [Int]? = nil, loop: Int = 0, transparent: Bool = false
    ) -> [UInt8] {
        animation(
            .gif, pixels: animationFrames(width: width, height: height, frames: frames, transparent: transparent),
            width: width, height: height, bands: 4, delays: delays, loop: loop)
    }

    /// An animated WebP (lossless: the colours stay exact) of `animationFrames`; as `animatedGIF`.
    public static func animatedWebP(
        width: Int, height: Int, frames: Int, delays: [Int]? = nil, loop: Int = 0, transparent: Bool = false
    ) -> [UInt8] {
        animation(
            .webp, pixels: animationFrames(width: width, height: height, frames: frames, transparent: transparent),
            width: width, height: height, bands: 4, delays: delays, loop: loop)
    }

    /// An animation of any stacked frames: `pixels` holds `bands` (3 or 4) interleaved samples per
    /// pixel, frame after frame, each `width` × `height`. A WebP merges a frame identical to the one
    /// before into it (libwebp, lossless), adding up their delays.
    public static func animation(
        _ format: AnimationFormat, pixels: [UInt8], width: Int, height: Int, bands: Int, delays: [Int]? = nil,
        loop: Int = 0
    ) -> [UInt8] {
        let frames = pixels.count / (width * height * bands)
        precondition(frames >= 1 && delays.map { $0.count == frames } != false, "\(frames) frames")
        let image = srgbStrip(pixels, width: width, height: height * frames, bands: bands)
        image.setInt("page-height", height)
        if let delays { image.setIntArray("delay", delays) }
        image.setInt("loop", loop)
        switch format {
        case .gif: return image.save("gifsave_buffer")
        case .webp: return image.save("webpsave_buffer", options: "lossless=true,strip=true")
        }
    }

    /// The pixels as an sRGB image: from memory, a 4-band image is "multiband", which 8.14's
    /// gifsave takes apart wrongly (the frames came out in vertical stripes).
    private static func srgbStrip(_ pixels: [UInt8], width: Int, height: Int, bands: Int) -> VipsFixtureImage {
        VipsFixtureImage(pixels: pixels, width: width, height: height, bands: bands)
            .apply("copy", options: "interpretation=srgb")
    }
}
