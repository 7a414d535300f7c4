internal import CVips
internal import CVipsShims

/// Small test images made in memory with libvips (each in a few milliseconds), plus a decoder for
/// assertions. Still images carry a quadrant pattern (see `quadrantColours`) so that crops and
/// rotations can be checked by colour.
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
    public static func jpeg(width: Int, height: Int, quality: Int = 90, orientation: Int? = nil) -> [UInt8] {
        let image = FixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        if let orientation { vips_image_set_int(image.pointer, "orientation", Int32(orientation)) }
        return image.save { cvips_jpegsave_buffer($0, $1, $2, Int32(quality), 0, 1, 0) }
    }

    /// Quadrant-pattern PNG, optionally with alpha (see `quadrants`).
    public static func png(width: Int, height: Int, alpha: Bool = false) -> [UInt8] {
        let image = FixtureImage(
            pixels: quadrants(width: width, height: height, alpha: alpha), width: width, height: height,
            bands: alpha ? 4 : 3)
        return image.save { cvips_pngsave_buffer($0, $1, $2, 6, 1) }
    }

    /// Quadrant-pattern lossy WebP.
    public static func webp(width: Int, height: Int) -> [UInt8] {
        let image = FixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save { cvips_webpsave_buffer($0, $1, $2, 90, 1) }
    }

    /// Animated GIF of `frames` uniform frames coloured by `gifFrameColours`.
    public static func gif(width: Int, height: Int, frames: Int) -> [UInt8] {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * frames * 3)
        for frame in 0..<frames {
            let colour = gifFrameColours[frame % gifFrameColours.count]
            for _ in 0..<(width * height) { pixels.append(contentsOf: colour) }
        }
        let image = FixtureImage(pixels: pixels, width: width, height: height * frames, bands: 3)
        vips_image_set_int(image.pointer, "page-height", Int32(height))
        return image.save { cvips_gifsave_buffer($0, $1, $2) }
    }

    /// Quadrant-pattern AVIF (8-bit AV1, fastest effort).
    public static func avif(width: Int, height: Int) -> [UInt8] {
        let image = FixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save { cvips_avifsave_buffer($0, $1, $2, 90, 0, 1) }
    }

    /// Quadrant-pattern TIFF (uncompressed).
    public static func tiff(width: Int, height: Int) -> [UInt8] {
        let image = FixtureImage(
            pixels: quadrants(width: width, height: height), width: width, height: height, bands: 3)
        return image.save { cvips_tiffsave_buffer($0, $1, $2) }
    }

    /// A uniform 4-band CMYK JPEG of `cmykInk`, without an embedded profile (libvips then uses its
    /// built-in CMYK profile); in sRGB it is a clear red (about 238, 60, 58).
    public static func cmykJPEG(width: Int, height: Int) -> [UInt8] {
        let pixels = [UInt8]((0..<(width * height)).lazy.flatMap { _ in cmykInk })
        let raw = FixtureImage(pixels: pixels, width: width, height: height, bands: 4)
        let cmyk = raw.apply { cvips_copy_interpretation(raw.pointer, $0, VIPS_INTERPRETATION_CMYK) }
        return cmyk.save { cvips_jpegsave_buffer($0, $1, $2, 95, 0, 1, 0) }
    }

    /// A uniform RGB JPEG whose pixels are `iccSourceColour` converted to Display P3, with libvips'
    /// built-in P3 profile embedded. Read as plain sRGB (profile ignored) it is about 184, 50, 47.
    public static func jpegWithICC(width: Int, height: Int) -> [UInt8] {
        let pixels = [UInt8]((0..<(width * height)).lazy.flatMap { _ in iccSourceColour })
        let srgb = FixtureImage(pixels: pixels, width: width, height: height, bands: 3)
        let p3 = srgb.apply { cvips_icc_transform(srgb.pointer, $0, "p3", "srgb", 0) }
        return p3.save { cvips_jpegsave_buffer($0, $1, $2, 95, 0, 1, 0) }
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

    /// Starts libvips through the same once-guard as `Vips.initialize()` (two concurrent
    /// `vips_init` calls break start-up). The service's settings come from `Vips.initialize()`.
    static let started: Bool = {
        precondition(cvips_init_once("thumbd") == 0, "vips_init failed")
        return true
    }()
}

/// Owns one VipsImage reference for the fixture builders; crashes on libvips errors (tests only).
final class FixtureImage {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(taking pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    convenience init(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        _ = Fixtures.started
        precondition(pixels.count == width * height * bands)
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        guard let image else { fatalError("vips_image_new_from_memory_copy: \(FixtureImage.errorText())") }
        self.init(taking: image)
    }

    deinit {
        g_object_unref(pointer)
    }

    /// Runs an operation writing a new image to `out`.
    func apply(_ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) -> FixtureImage {
        var out: UnsafeMutablePointer<VipsImage>? = nil
        guard operation(&out) == 0, let out else { fatalError("vips operation: \(FixtureImage.errorText())") }
        return FixtureImage(taking: out)
    }

    /// Runs a `*save_buffer` call and copies the result out.
    func save(
        _ saver: (
            UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>
        ) -> Int32
    ) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer? = nil
        var length = 0
        guard saver(pointer, &buffer, &length) == 0, let buffer else {
            fatalError("vips save: \(FixtureImage.errorText())")
        }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    static func errorText() -> String {
        let text = String(cString: vips_error_buffer())
        vips_error_clear()
        return text
    }
}
