/// `/info`'s work, on a worker thread: the header check every render has, then one small decode
/// (shrink-on-load, oriented, sRGB: `ImageDecoding.decode` into a box of `sampleSide`) from which
/// every placeholder is computed and the LQIP encoded. Nothing is kept but the answer.
extension ThumbnailRenderer {
    /// Longest side of the copy the placeholders are computed from: ThumbHash takes at most 100 ×
    /// 100, and BlurHash and the dominant colour see nothing more in a larger one.
    public static var sampleSide: Int { ThumbHash.maxSide }
    /// The LQIP's largest box side, and the most bytes its `data:` URI may take.
    public static var lqipSide: Int { 32 }
    public static var lqipLimit: Int { 1024 }
    /// The LQIP's sizes and WebP qualities, tried in this order until the URI fits `lqipLimit`.
    static var lqipSides: [Int] { [lqipSide, 24, 16, 12, 8] }
    static var lqipQualities: [Int] { [50, 30] }

    /// The decode memory of `/info`'s one decode of `info` (`DecodeMemory`), from the header.
    public func describeEstimate(_ info: SourceInfo) -> Int {
        let box = Self.fitted(width: info.width, height: info.height, inside: Self.sampleSide)
        return DecodeMemory.estimate(info, width: box.width, height: box.height)
    }

    /// Everything `/info` tells about `original`.
    public func describe(original: ImageBytes, deadline: JobDeadline = .none) throws(ThumbnailError)
        -> SourceDescription
    {
        let info = try inspect(original)
        let side = Self.sampleSide
        let copy = try imaging.decode(original, info: info, fittingWidth: side, height: side, deadline: deadline)
        let pixels = try imaging.pixels(of: copy)
        guard pixels.width <= side, pixels.height <= side else {
            throw ThumbnailError(.internal, "sample \(pixels.width)x\(pixels.height) is over \(side)x\(side)")
        }
        let dataURI = try lqip(copy, deadline: deadline)
        return SourceDescription(
            width: info.width, height: info.height, format: info.isAVIF ? "avif" : info.format.rawValue,
            hasAlpha: pixels.hasTransparency, frames: max(1, info.pageCount), orientation: info.orientation,
            bytes: original.count, dominantColor: DominantColour.hex(of: pixels), blurhash: BlurHash.encode(pixels),
            thumbhash: Base64.encode(ThumbHash.encode(pixels)), lqip: dataURI)
    }

    /// A tiny WebP of the copy as a `data:` URI: the largest size and quality in `lqipSides` ×
    /// `lqipQualities` whose URI fits in `lqipLimit` bytes (most photos fit at the first try).
    /// WebP: it keeps alpha, and every browser a framework targets shows it.
    private func lqip(_ copy: DecodedSource<Imaging.Decoded>, deadline: JobDeadline) throws(ThumbnailError)
        -> String
    {
        for side in Self.lqipSides {
            let box = Self.fitted(width: copy.width, height: copy.height, inside: side)
            for quality in Self.lqipQualities {
                let image = try imaging.encode(
                    .decoded(copy), resize: .exact(width: box.width, height: box.height),
                    output: OutputChoice(format: .webp, quality: quality), deadline: deadline)
                let uri = image.bytes.withUnsafeBytes { "data:\(image.mediaType);base64," + Base64.encode($0) }
                if uri.utf8.count <= Self.lqipLimit { return uri }
            }
        }
        throw ThumbnailError(
            .internal, "no LQIP within \(Self.lqipLimit) bytes, even at \(Self.lqipSides.last ?? 0) px")
    }

    /// `width` × `height` scaled to fit inside `side` × `side` (never up), at least 1 × 1.
    static func fitted(width: Int, height: Int, inside side: Int) -> (width: Int, height: Int) {
        let scale = min(1, Double(side) / Double(max(width, height, 1)))
        return (
            max(1, min(side, Int((Double(width) * scale).rounded()))),
            max(1, min(side, Int((Double(height) * scale).rounded())))
        )
    }
}
