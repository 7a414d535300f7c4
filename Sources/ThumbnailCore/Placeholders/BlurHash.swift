internal import Glibc

/// BlurHash, Wolt's placeholder (its specification: `Algorithm.md` in github.com/woltapp/blurhash):
/// the first `x × y` terms of a cosine transform of the image in linear RGB, written in 20 to 30
/// characters of base 83. Character 1 gives the number of terms, 2 the largest AC term, 3–6 the
/// average colour (the DC term, as sRGB), then two per AC term, its three channels quantised to
/// 19 levels each on a square-root scale. Any BlurHash decoder draws it.
///
/// The algorithm has no alpha: transparent areas are first painted in the average colour of the
/// visible ones (what ThumbHash does too), so they blend in instead of turning black.
public enum BlurHash {
    /// `componentsX` × `componentsY` terms, each 1...9; `/info` uses 4 × 3.
    public static func encode(_ pixels: RGBAPixels, componentsX: Int = 4, componentsY: Int = 3) -> String {
        precondition((1...9).contains(componentsX) && (1...9).contains(componentsY))
        let (width, height) = (pixels.width, pixels.height)
        let linear = linearPlanes(pixels)

        // terms[(y * componentsX + x)]: the term's red, green and blue.
        var terms: [(Double, Double, Double)] = []
        for cy in 0..<componentsY {
            let rowBasis = (0..<height).map { cos(Double.pi * Double(cy) * Double($0) / Double(height)) }
            for cx in 0..<componentsX {
                let columnBasis = (0..<width).map { cos(Double.pi * Double(cx) * Double($0) / Double(width)) }
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    for x in 0..<width {
                        let basis = columnBasis[x] * rowBasis[y]
                        let at = y * width + x
                        r += basis * linear.r[at]
                        g += basis * linear.g[at]
                        b += basis * linear.b[at]
                    }
                }
                let scale = (cx == 0 && cy == 0 ? 1.0 : 2.0) / Double(width * height)
                terms.append((r * scale, g * scale, b * scale))
            }
        }

        var hash = base83(componentsX - 1 + (componentsY - 1) * 9, digits: 1)
        let ac = terms.dropFirst()
        var maximum = 1.0
        if ac.isEmpty {
            hash += base83(0, digits: 1)
        } else {
            let largest = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (largest * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, digits: 1)
        }
        let dc = terms[0]
        hash += base83((toSRGB(dc.0) << 16) + (toSRGB(dc.1) << 8) + toSRGB(dc.2), digits: 4)
        for term in ac {
            func level(_ value: Double) -> Int {
                let signed = value / maximum
                let root = (signed < 0 ? -1 : 1) * abs(signed).squareRoot()
                return Int(max(0, min(18, (root * 9 + 9.5).rounded(.down))))
            }
            hash += base83(level(term.0) * 19 * 19 + level(term.1) * 19 + level(term.2), digits: 2)
        }
        return hash
    }

    /// Red, green and blue in linear light, transparency painted over with the visible average.
    private static func linearPlanes(_ pixels: RGBAPixels) -> (r: [Double], g: [Double], b: [Double]) {
        let samples = pixels.samples
        let count = pixels.width * pixels.height
        var sums = (0.0, 0.0, 0.0, 0.0)
        for pixel in 0..<count {
            let alpha = Double(samples[pixel * 4 + 3])
            sums.0 += alpha * Double(samples[pixel * 4])
            sums.1 += alpha * Double(samples[pixel * 4 + 1])
            sums.2 += alpha * Double(samples[pixel * 4 + 2])
            sums.3 += alpha
        }
        let average = sums.3 > 0 ? [sums.0 / sums.3, sums.1 / sums.3, sums.2 / sums.3] : [0, 0, 0]
        var planes = [[Double]](repeating: [Double](repeating: 0, count: count), count: 3)
        for pixel in 0..<count {
            let alpha = Int(samples[pixel * 4 + 3])
            for channel in 0..<3 {
                let value = Int(samples[pixel * 4 + channel])
                // Painted in 8 bits, as a browser shows it, so that opaque pixels stay exact.
                let painted =
                    alpha == 255
                    ? value : Int(((average[channel] * Double(255 - alpha) + Double(value * alpha)) / 255).rounded())
                planes[channel][pixel] = linearTable[painted]
            }
        }
        return (planes[0], planes[1], planes[2])
    }

    /// sRGB byte → linear light, 0...1 (the sRGB transfer function).
    private static let linearTable: [Double] = (0...255).map { byte in
        let value = Double(byte) / 255
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Linear light → sRGB byte, rounded as the reference encoders round.
    private static func toSRGB(_ linear: Double) -> Int {
        let value = max(0, min(1, linear))
        let encoded = value <= 0.0031308 ? value * 12.92 : 1.055 * pow(value, 1 / 2.4) - 0.055
        return Int(encoded * 255 + 0.5)
    }

    private static let digits = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    /// `value` in `digits` base-83 digits, most significant first.
    private static func base83(_ value: Int, digits count: Int) -> String {
        var out = [UInt8](repeating: 0, count: count)
        var rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            out[index] = digits[rest % 83]
            rest /= 83
        }
        return String(decoding: out, as: UTF8.self)
    }
}
