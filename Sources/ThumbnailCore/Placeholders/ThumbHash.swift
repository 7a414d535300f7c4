internal import Glibc

/// ThumbHash, Evan Wallace's placeholder (github.com/evanw/thumbhash; its JavaScript is the
/// reference this follows): a cosine transform of the image in a luminance / yellow–blue /
/// red–green space plus alpha, about 25 bytes. Unlike BlurHash it keeps alpha and the aspect ratio,
/// and its average colour reads straight out of the first bytes. Any ThumbHash decoder draws it.
///
/// Bytes 0–2: luminance, P and Q averages, luminance scale, whether there is alpha; 3–4: the
/// luminance term count on the short side, the P and Q scales, landscape or not; with alpha, one
/// byte of alpha average and scale; then four bits per AC term (luminance, P, Q, alpha).
public enum ThumbHash {
    /// The largest side to encode: a larger input costs more and gains nothing (the reference code
    /// refuses it; this encodes it all the same).
    public static let maxSide = 100

    public static func encode(_ pixels: RGBAPixels) -> [UInt8] {
        let (width, height) = (pixels.width, pixels.height)
        let count = width * height
        let samples = pixels.samples

        // The average colour, weighted by opacity; transparent areas are painted in it.
        var average = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
        for pixel in 0..<count {
            let alpha = Double(samples[pixel * 4 + 3]) / 255
            average.r += alpha / 255 * Double(samples[pixel * 4])
            average.g += alpha / 255 * Double(samples[pixel * 4 + 1])
            average.b += alpha / 255 * Double(samples[pixel * 4 + 2])
            average.a += alpha
        }
        if average.a > 0 {
            average.r /= average.a
            average.g /= average.a
            average.b /= average.a
        }
        let hasAlpha = average.a < Double(count)
        // Fewer luminance terms when alpha takes room.
        let luminanceLimit = Double(hasAlpha ? 5 : 7)
        let longest = Double(max(width, height))
        let lx = max(1, round(luminanceLimit * Double(width) / longest))
        let ly = max(1, round(luminanceLimit * Double(height) / longest))

        var l = [Double](repeating: 0, count: count)
        var p = l
        var q = l
        var a = l
        for pixel in 0..<count {
            let alpha = Double(samples[pixel * 4 + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(samples[pixel * 4])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(samples[pixel * 4 + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(samples[pixel * 4 + 2])
            l[pixel] = (r + g + b) / 3
            p[pixel] = (r + g) / 2 - b
            q[pixel] = r - g
            a[pixel] = alpha
        }

        let luminance = terms(l, width, height, max(3, lx), max(3, ly))
        let yellowBlue = terms(p, width, height, 3, 3)
        let redGreen = terms(q, width, height, 3, 3)
        let opacity = hasAlpha ? terms(a, width, height, 5, 5) : nil

        let isLandscape = width > height
        var header24 = round(63 * luminance.dc)
        header24 |= round(31.5 + 31.5 * yellowBlue.dc) << 6
        header24 |= round(31.5 + 31.5 * redGreen.dc) << 12
        header24 |= round(31 * luminance.scale) << 18
        if hasAlpha { header24 |= 1 << 23 }
        var header16 = isLandscape ? ly : lx
        header16 |= round(63 * yellowBlue.scale) << 3
        header16 |= round(63 * redGreen.scale) << 9
        if isLandscape { header16 |= 1 << 15 }
        var hash = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255), UInt8(header16 & 255),
            UInt8(header16 >> 8 & 255),
        ]
        if let opacity { hash.append(UInt8(round(15 * opacity.dc) | round(15 * opacity.scale) << 4)) }

        let factors = [luminance.ac, yellowBlue.ac, redGreen.ac] + (opacity.map { [$0.ac] } ?? [])
        let start = hash.count
        var index = 0
        for factor in factors.joined() {
            if start + index / 2 == hash.count { hash.append(0) }
            hash[start + index / 2] |= UInt8(round(15 * factor) << ((index & 1) * 4))
            index += 1
        }
        return hash
    }

    /// The cosine transform of one channel: its constant (DC) term, the others (AC, in the
    /// reference's order: a triangle of `nx` × `ny`, row by row) scaled into 0...1, and that scale.
    private static func terms(_ channel: [Double], _ width: Int, _ height: Int, _ nx: Int, _ ny: Int) -> (
        dc: Double, ac: [Double], scale: Double
    ) {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        for cy in 0..<ny {
            let rowBasis = (0..<height).map { cos(Double.pi / Double(height) * Double(cy) * (Double($0) + 0.5)) }
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                let columnBasis = (0..<width).map { cos(Double.pi / Double(width) * Double(cx) * (Double($0) + 0.5)) }
                var sum = 0.0
                for y in 0..<height {
                    for x in 0..<width { sum += channel[x + y * width] * columnBasis[x] * rowBasis[y] }
                }
                sum /= Double(width * height)
                if cx > 0 || cy > 0 {
                    ac.append(sum)
                    scale = max(scale, abs(sum))
                } else {
                    dc = sum
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    /// JavaScript's `Math.round` (halves up), which the reference uses throughout.
    private static func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }
}
