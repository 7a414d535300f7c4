/// The decode → cut → encode steps of a miss, with the header checks before any decode. Used
/// by the pipeline's worker jobs and by the in-process benchmark, so both run the very same work.
public struct ThumbnailRenderer: Sendable {
    /// Longest side of the decoded copy kept for later sizes (when the request needs less): large
    /// enough to serve thumbnails up to half of it, small enough (~3 MB) to keep many.
    public static let decodedSide = 1024

    public let transformer: any ImageTransforming
    public let maxSourcePixels: Int

    public init(transformer: any ImageTransforming, maxSourcePixels: Int) {
        self.transformer = transformer
        self.maxSourcePixels = maxSourcePixels
    }

    /// Header check (format, pixel cap), then decode at the size this request needs, then cut.
    /// Returns the thumbnail and the decoded copy (worth caching when `reusable`).
    public func render(original: ImageBytes, spec: TransformSpec) throws(ThumbnailError) -> (
        image: EncodedImage, decoded: DecodedSource
    ) {
        let info = try transformer.inspect(original)
        guard info.pixels <= maxSourcePixels else {
            throw ThumbnailError(
                .tooManyPixels, "\(info.width)x\(info.height) is over the \(maxSourcePixels)-pixel limit")
        }
        let box = Self.decodeBox(for: spec, source: info)
        let decoded = try transformer.decode(original, info: info, width: box.width, height: box.height)
        return (try render(decoded: decoded, spec: spec), decoded)
    }

    /// Cuts and encodes from a decoded copy.
    public func render(decoded: DecodedSource, spec: TransformSpec) throws(ThumbnailError) -> EncodedImage {
        let info = decoded.source
        let resize = OutputGeometry.resize(for: spec, sourceWidth: info.width, sourceHeight: info.height)
        let format = spec.format.resolve(for: info)
        // "Like the source" picks PNG for a GIF/HEIF/TIFF with an alpha band; if no pixel uses
        // it (every GIF loads with one), JPEG is what the rule means.
        let alphaOnly = spec.format == .source && format == .png && ![.jpeg, .png, .webp].contains(info.format)
        return try transformer.encode(
            decoded, resize: resize, format: format, quality: spec.quality, opaqueFormat: alphaOnly ? .jpeg : nil)
    }

    /// How large to decode. Twice the output (so the copy can serve it and its neighbours at full
    /// quality), grown to the reusable size (`decodedSide`) when that is larger — for JPEG only
    /// as far as shrink-on-load already gives it for free. A request whose double is beyond the
    /// reusable size is decoded for itself alone, at the output size.
    public static func decodeBox(for spec: TransformSpec, source: SourceInfo) -> (width: Int, height: Int) {
        let sw = source.width
        let sh = source.height
        let scale = OutputGeometry.scale(for: spec, sourceWidth: sw, sourceHeight: sh)
        let wantW = min(sw, Int((Double(sw) * scale.x * 2).rounded(.up)))
        let wantH = min(sh, Int((Double(sh) * scale.y * 2).rounded(.up)))
        let capScale = min(1, Double(decodedSide) / Double(max(sw, sh)))
        let capW = max(1, Int((Double(sw) * capScale).rounded(.up)))
        let capH = max(1, Int((Double(sh) * capScale).rounded(.up)))
        guard wantW <= capW && wantH <= capH else {
            // Big output: decode to it directly (no 2× copy of a large image in memory).
            let outW = min(sw, Int((Double(sw) * scale.x).rounded(.up)))
            let outH = min(sh, Int((Double(sh) * scale.y).rounded(.up)))
            return (max(1, outW), max(1, outH))
        }
        guard source.format == .jpeg else { return (capW, capH) }
        // JPEG decodes at 1/1, 1/2, 1/4 or 1/8 for about the cost of the entropy decoding alone:
        // take the smallest of those that still covers the want, then at most the cap.
        for factor in [8, 4, 2, 1] {
            let naturalW = (sw + factor - 1) / factor
            let naturalH = (sh + factor - 1) / factor
            if naturalW >= wantW && naturalH >= wantH { return (min(naturalW, capW), min(naturalH, capH)) }
        }
        return (capW, capH)
    }
}
