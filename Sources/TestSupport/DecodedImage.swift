/// A decoded first page (or every page, `Fixtures.decode(_:allPages:)`) with its metadata, for
/// assertions. Pixels are kept as 8-bit samples.
public struct DecodedImage: Sendable {
    /// Loader nickname, e.g. "jpegload_buffer".
    public let loader: String
    public let width: Int
    /// The decoded height: all pages' when every page was decoded.
    public let height: Int
    /// One page's (frame's) height.
    public let pageHeight: Int
    public let bands: Int
    /// libvips' interpretation nickname, e.g. "srgb", "cmyk", "b-w".
    public let interpretation: String
    public let hasICCProfile: Bool
    public let hasEXIF: Bool
    /// The EXIF orientation tag, if present.
    public let orientation: Int?
    /// Pages (frames) in the file.
    public let pageCount: Int
    /// Each frame's delay in milliseconds (an animated GIF or WebP), else empty.
    public let delays: [Int]
    /// The animation's play count, 0 for forever, if the file has one.
    public let loop: Int?
    /// Interleaved samples, `bands` per pixel, row by row.
    public let samples: [UInt8]

    /// Pages decoded (`height` / `pageHeight`).
    public var frames: Int { height / max(1, pageHeight) }

    /// Average of each band over a 5×5 box around (x, y), clipped to the image, in 0...255.
    public func pixel(_ x: Int, _ y: Int) -> [Double] {
        box(x, y, rows: 0..<height)
    }

    /// `pixel` at (x, y) of frame `frame` (0-based), the box clipped to that frame.
    public func pixel(_ x: Int, _ y: Int, frame: Int) -> [Double] {
        box(x, frame * pageHeight + y, rows: (frame * pageHeight)..<((frame + 1) * pageHeight))
    }

    private func box(_ x: Int, _ y: Int, rows: Range<Int>) -> [Double] {
        var sums = [Double](repeating: 0, count: bands)
        var count = 0
        for row in max(rows.lowerBound, y - 2)...min(rows.upperBound - 1, y + 2) {
            for column in max(0, x - 2)...min(width - 1, x + 2) {
                let offset = (row * width + column) * bands
                for band in 0..<bands { sums[band] += Double(samples[offset + band]) }
                count += 1
            }
        }
        return sums.map { $0 / Double(count) }
    }
}
