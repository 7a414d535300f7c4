internal import Vips

extension Fixtures {
    /// A photo-like JPEG with detail at many scales (smooth gradients, fine and coarse waves,
    /// sharp edges), so that resampling differences show: what a comparison of two resize paths
    /// needs (the quadrant pattern would match trivially).
    public static func detailedJPEG(width: Int, height: Int, quality: Int = 92) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let fx = Double(x) / Double(width)
                let fy = Double(y) / Double(height)
                let offset = (y * width + x) * 3
                let waves = 40 * (sin(fx * 31) * cos(fy * 23)) + 25 * sin(Double(x + 2 * y) / 9)
                let edge: Double = (x / 97 + y / 61) % 2 == 0 ? 30 : -30
                let r = 128 + 90 * (fx - 0.5) + waves + edge
                let g = 110 + 80 * (fy - 0.5) - waves / 2 + edge
                let b = 140 + 60 * sin(fx * 7 + fy * 5) + edge / 2
                pixels[offset] = UInt8(clamping: Int(r.rounded()))
                pixels[offset + 1] = UInt8(clamping: Int(g.rounded()))
                pixels[offset + 2] = UInt8(clamping: Int(b.rounded()))
            }
        }
        let image = VipsFixtureImage(pixels: pixels, width: width, height: height, bands: 3)
        return image.save("jpegsave_buffer", options: jpegOptions(quality: quality, strip: true))
    }
}

#if canImport(Glibc)
    internal import Glibc
#endif
