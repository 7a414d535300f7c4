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
