internal import Vips

/// A decoded first page with its metadata, for assertions. Pixels are kept as 8-bit samples.
public struct DecodedImage: Sendable {
    /// Loader nickname, e.g. "jpegload_buffer".
    public let loader: String
    public let width: Int
    public let height: Int
    public let bands: Int
    /// libvips' interpretation nickname, e.g. "srgb", "cmyk", "b-w".
    public let interpretation: String
    public let hasICCProfile: Bool
    public let hasEXIF: Bool
    /// The EXIF orientation tag, if present.
    public let orientation: Int?
    /// Pages (frames) in the file.
    public let pageCount: Int
    /// Interleaved samples, `bands` per pixel, row by row.
    public let samples: [UInt8]

    /// Average of each band over a 5×5 box around (x, y), clipped to the image, in 0...255.
    public func pixel(_ x: Int, _ y: Int) -> [Double] {
        var sums = [Double](repeating: 0, count: bands)
        var count = 0
        for row in max(0, y - 2)...min(height - 1, y + 2) {
            for column in max(0, x - 2)...min(width - 1, x + 2) {
                let offset = (row * width + column) * bands
                for band in 0..<bands { sums[band] += Double(samples[offset + band]) }
                count += 1
            }
        }
        return sums.map { $0 / Double(count) }
    }
}

/// Why `Fixtures.decode` failed.
public struct FixtureDecodeError: Error, CustomStringConvertible {
    public let description: String
}

extension Fixtures {
    /// Decodes the first page of any image libvips can read (libvips' untrusted loaders, such as
    /// SVG, stay blocked: `Vips.initialize` blocks them process-wide).
    public static func decode(_ bytes: [UInt8]) throws -> DecodedImage {
        let image: VipsInspection
        do { image = try VipsInspection(decoding: bytes) } catch { throw FixtureDecodeError(description: "\(error)") }
        return DecodedImage(
            loader: image.loader, width: image.width, height: image.height, bands: image.bands,
            interpretation: image.interpretation, hasICCProfile: image.hasICCProfile, hasEXIF: image.hasEXIF,
            orientation: image.orientation, pageCount: image.pageCount, samples: image.samples)
    }

    /// Mean absolute difference per sample (0...255) of two images of the same size and bands.
    public static func meanAbsoluteDifference(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.bands == b.bands, "images differ in shape")
        guard !a.samples.isEmpty else { return 0 }
        var total = 0
        for index in a.samples.indices { total += abs(Int(a.samples[index]) - Int(b.samples[index])) }
        return Double(total) / Double(a.samples.count)
    }
}
