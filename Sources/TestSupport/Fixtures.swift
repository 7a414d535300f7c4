internal import Vips

/// Small test images made in memory with libvips (each in a few milliseconds), plus a decoder for
/// assertions. Still images carry a quadrant pattern (see `quadrantColours`) so that crops and
/// rotations can be checked by colour.
///
/// Built through the Vips module's `package` fixture surface (`VipsFixtureImage`,
/// `VipsInspection`), never the C modules: production keeps no fixture-only shims, and libvips
/// starts through `Vips.initialize` and its one guard, with the service's settings.
public enum Fixtures {
    /// sRGB colours of the quadrants: top-left red, top-right green, bottom-left blue,
    /// bottom-right yellow.
    public static let quadrantColours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]]

    /// The CMYK ink of `cmykJPEG` (C, M, Y, K in 0...255): strong magenta + yellow, which is a red.
    public static let cmykInk: [UInt8] = [0, 230, 220, 0]

    /// The sRGB colour that `jpegWithICC` encodes (through its embedded Display P3 profile).
    public static let iccSourceColour: [UInt8] = [200, 30, 40]

    /// Frame colours of `gif`, cycling: red, blue, green.
    public static let gifFrameColours: [[UInt8]] = [[255, 0, 0], [0, 0, 255], [0, 255, 0]]

    /// Raw interleaved 8-bit pixels of the quadrant pattern; with `alpha`, a fourth band that is
    /// opaque in the top half and fully transparent in the bottom half.
    public static func quadrants(width: Int, height: Int, alpha: Bool = false) -> [UInt8] {
        let bands = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * bands)
        for y in 0..<height {
            for x in 0..<width {
                let quadrant = (y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)
                let offset = (y * width + x) * bands
                for band in 0..<3 { pixels[offset + band] = quadrantColours[quadrant][band] }
                if alpha { pixels[offset + 3] = y < height / 2 ? 255 : 0 }
            }
        }
        return pixels
    }

    /// Quadrant-pattern JPEG. `orientation` writes that EXIF orientation tag (the pixels are
    /// stored as given, so a viewer applying the tag sees them rotated).
    /// `progressive` writes a progressive JPEG (its decoder holds every coefficient).
    public static func jpeg(
        width: Int, height: Int, quality: Int = 90, orientation: Int? = nil, progressive: Bool = false
    ) -> [UInt8] {
        let image = VipsFixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        if let orientation { image.setInt("orientation", orientation) }
        // strip=false keeps the orientation field, which jpegsave writes as the EXIF tag.
        return image.save(
            "jpegsave_buffer", options: jpegOptions(quality: quality, strip: false, interlace: progressive))
    }

    /// Quadrant-pattern PNG, optionally with alpha (see `quadrants`).
    public static func png(width: Int, height: Int, alpha: Bool = false) -> [UInt8] {
        let image = VipsFixtureImage(
            pixels: quadrants(width: width, height: height, alpha: alpha), width: width, height: height,
            bands: alpha ? 4 : 3)
        return image.save("pngsave_buffer", options: "compression=6,strip=true")
    }

    /// A PNG of exactly these pixels: `bands` (1 to 4) interleaved 8-bit samples each, row by row.
    public static func png(pixels: [UInt8], width: Int, height: Int, bands: Int) -> [UInt8] {
        VipsFixtureImage(pixels: pixels, width: width, height: height, bands: bands)
            .save("pngsave_buffer", options: "compression=6,strip=true")
    }

    /// A large PNG, `tile` × `tile` quadrant-pattern tiles repeated `across` × `down` times:
    /// libvips repeats the tile lazily (no full-size pixels in Swift), and the pattern compresses
    /// well (zlib level 1), so a 16-megapixel PNG takes well under a second to make.
    public static func tiledPNG(tile: Int, across: Int, down: Int) -> [UInt8] {
        let image = VipsFixtureImage(pixels: quadrants(width: tile, height: tile), width: tile, height: tile, bands: 3)
        return image.apply("replicate", options: "across=\(across),down=\(down)")
            .save("pngsave_buffer", options: "compression=1,strip=true")
    }

    /// Quadrant-pattern lossy WebP.
    public static func webp(width: Int, height: Int) -> [UInt8] {
        let image = VipsFixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save("webpsave_buffer", options: "Q=90,strip=true")
    }

    /// Animated GIF of `frames` uniform frames coloured by `gifFrameColours`.
    public static func gif(width: Int, height: Int, frames: Int) -> [UInt8] {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * frames * 3)
        for frame in 0..<frames {
            let colour = gifFrameColours[frame % gifFrameColours.count]
            for _ in 0..<(width * height) { pixels.append(contentsOf: colour) }
        }
        let image = VipsFixtureImage(pixels: pixels, width: width, height: height * frames, bands: 3)
        image.setInt("page-height", height)
        return image.save("gifsave_buffer")
    }

    /// Quadrant-pattern AVIF (8-bit AV1, fastest effort).
    public static func avif(width: Int, height: Int) -> [UInt8] {
        let image = VipsFixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save("heifsave_buffer", options: "compression=av1,Q=90,bitdepth=8,effort=0,strip=true")
    }

    /// Quadrant-pattern TIFF (uncompressed); `big` writes a BigTIFF.
    public static func tiff(width: Int, height: Int, big: Bool = false) -> [UInt8] {
        let image = VipsFixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save("tiffsave_buffer", options: big ? "bigtiff=true" : "")
    }

    /// A uniform 4-band CMYK JPEG of `cmykInk`, without an embedded profile (libvips then uses its
    /// built-in CMYK profile); in sRGB it is a clear red (about 238, 60, 58).
    public static func cmykJPEG(width: Int, height: Int) -> [UInt8] {
        let pixels = [UInt8]((0..<(width * height)).lazy.flatMap { _ in cmykInk })
        let raw = VipsFixtureImage(pixels: pixels, width: width, height: height, bands: 4)
        let cmyk = raw.apply("copy", options: "interpretation=cmyk")
        return cmyk.save("jpegsave_buffer", options: jpegOptions(quality: 95, strip: false))
    }

    /// A uniform RGB JPEG whose pixels are `iccSourceColour` converted to Display P3, with libvips'
    /// built-in P3 profile embedded. Read as plain sRGB (profile ignored) it is about 184, 50, 47.
    public static func jpegWithICC(width: Int, height: Int) -> [UInt8] {
        let pixels = [UInt8]((0..<(width * height)).lazy.flatMap { _ in iccSourceColour })
        let srgb = VipsFixtureImage(pixels: pixels, width: width, height: height, bands: 3)
        // icc_transform attaches the output profile; strip=false keeps it in the file.
        let p3 = srgb.apply(
            "icc_transform", options: "output_profile=p3,input_profile=srgb,embedded=false,depth=8")
        return p3.save("jpegsave_buffer", options: jpegOptions(quality: 95, strip: false))
    }

    /// A tiny SVG document (libvips' SVG loader is untrusted, hence blocked by the service).
    public static func svg() -> [UInt8] {
        Array(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48"><rect width="64" height="48" fill="red"/></svg>"#
                .utf8)
    }

    /// A decompression bomb: a valid PNG signature and IHDR (8-bit RGB, correct CRC) claiming
    /// `width` × `height`, then a tiny IDAT (one zlib-compressed zero byte) and IEND. The header
    /// reads fine; a decode would need width × height × 3 bytes and fails on the missing data.
    public static func pngBomb(width: Int = 50_000, height: Int = 50_000) -> [UInt8] {
        func bigEndian(_ value: Int) -> [UInt8] {
            [
                UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
            ]
        }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeAndData = Array(type.utf8) + data
            return bigEndian(data.count) + typeAndData + bigEndian(Int(crc32(typeAndData)))
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", idat)
            + chunk("IEND", [])
    }

    /// CRC-32 (ISO 3309, as PNG uses it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// The one JPEG encoder setting of every fixture: optimised Huffman tables, baseline, as the
    /// service encodes by default; only quality and whether metadata stays differ.
    static func jpegOptions(quality: Int, strip: Bool, interlace: Bool = false) -> String {
        "Q=\(quality),strip=\(strip),optimize_coding=true,interlace=\(interlace)"
    }
}
