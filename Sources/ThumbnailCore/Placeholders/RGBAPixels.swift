/// A small image's pixels as 8-bit sRGB with straight (not premultiplied) alpha, row by row: what
/// `/info`'s placeholders (`BlurHash`, `ThumbHash`, `DominantColour`) are computed from.
public struct RGBAPixels: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width × height × 4` samples: red, green, blue, alpha.
    public let samples: [UInt8]

    /// nil unless `width` and `height` are at least 1 and `samples` holds exactly their pixels.
    public init?(width: Int, height: Int, samples: [UInt8]) {
        guard width >= 1, height >= 1, samples.count == width * height * 4 else { return nil }
        self.width = width
        self.height = height
        self.samples = samples
    }

    /// Widens `bands` interleaved samples a pixel — 1 (grey), 2 (grey, alpha), 3 (RGB) or 4
    /// (RGBA) — to RGBA; nil for any other band count or a sample count that does not match.
    public init?(width: Int, height: Int, bands: Int, interleaved: UnsafeRawBufferPointer) {
        let pixels = width * height
        guard width >= 1, height >= 1, (1...4).contains(bands), interleaved.count == pixels * bands else {
            return nil
        }
        var samples = [UInt8](repeating: 255, count: pixels * 4)
        for pixel in 0..<pixels {
            let from = pixel * bands
            let to = pixel * 4
            if bands <= 2 {
                let grey = interleaved[from]
                samples[to] = grey
                samples[to + 1] = grey
                samples[to + 2] = grey
                if bands == 2 { samples[to + 3] = interleaved[from + 1] }
            } else {
                for band in 0..<bands { samples[to + band] = interleaved[from + band] }
            }
        }
        self.init(width: width, height: height, samples: samples)
    }

    /// Whether some pixel is less than opaque.
    public var hasTransparency: Bool {
        stride(from: 3, to: samples.count, by: 4).contains { samples[$0] < 255 }
    }
}
