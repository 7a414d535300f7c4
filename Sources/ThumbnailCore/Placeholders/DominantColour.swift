/// The colour most of an image is, as `#rrggbb`: the most populated bucket of a coarse colour
/// histogram — 8 levels per channel, 512 buckets, each pixel counted by its opacity — answered as
/// the mean colour of the pixels in that bucket (a flat red gives that red, not the bucket's
/// middle). Not the mean of the whole image: a red product on white is white, where the mean
/// would be a pink nobody sees. A tie goes to the bucket with the lowest red, then green, then
/// blue level; an image with no visible pixel is black.
public enum DominantColour {
    public static func hex(of pixels: RGBAPixels) -> String {
        let (red, green, blue) = of(pixels)
        return "#"
            + [red, green, blue].map { value in
                let digits = String(value, radix: 16)
                return value < 16 ? "0" + digits : digits
            }.joined()
    }

    public static func of(_ pixels: RGBAPixels) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let samples = pixels.samples
        var weights = [Int](repeating: 0, count: 512)
        var sums = [Int](repeating: 0, count: 512 * 3)
        for offset in stride(from: 0, to: samples.count, by: 4) {
            let alpha = Int(samples[offset + 3])
            guard alpha > 0 else { continue }
            let (r, g, b) = (Int(samples[offset]), Int(samples[offset + 1]), Int(samples[offset + 2]))
            let bucket = (r >> 5) << 6 | (g >> 5) << 3 | b >> 5
            weights[bucket] += alpha
            sums[bucket * 3] += r * alpha
            sums[bucket * 3 + 1] += g * alpha
            sums[bucket * 3 + 2] += b * alpha
        }
        var best = 0
        for bucket in 1..<512 where weights[bucket] > weights[best] { best = bucket }
        let weight = weights[best]
        guard weight > 0 else { return (0, 0, 0) }
        func mean(_ channel: Int) -> UInt8 { UInt8((sums[best * 3 + channel] + weight / 2) / weight) }
        return (mean(0), mean(1), mean(2))
    }
}
