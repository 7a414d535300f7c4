/// The work of a miss, on a worker thread: the header checks before any decode, then one of
/// three ways to the thumbnail. Used by the pipeline's jobs and by `thumbd-bench`, so both run the
/// very same work.
///
/// - First size of a source: straight from the original bytes to the output (libvips
///   shrink-on-load streamed into the resize, the floor a miss can cost). No reusable copy: most
///   sources are only ever asked for in one size, and making the copy would cost every miss more.
/// - A later size, when the original is cached (someone asked before): decode a reusable copy
///   (`decodedSide` px) once, cut this size from it, keep the copy.
/// - With a copy that can serve the size: cut from it, no decode.
public struct ThumbnailRenderer<Imaging: ImageProcessing>: Sendable {
    /// Longest side of the decoded copy kept for later sizes: large enough to serve thumbnails up
    /// to half of it at full quality, small enough (~3 MB) to keep many.
    public static var decodedSide: Int { 1024 }

    public let imaging: Imaging
    /// The most pixels of a first page, and of all an animation's frames together (over it, the
    /// animation is made a still of its first frame).
    public let maxSourcePixels: Int
    /// An animation with more frames is made a still of its first frame.
    public let maxFrames: Int
    /// An animation whose decode-memory estimate is over this (the work budget) is made a still of
    /// its first frame: it could never be charged.
    public let maxAnimationMemory: Int
    /// Where decode and encode times go (the pipeline's metrics); nil: not timed.
    public let timings: RenderTimings?

    public init(
        imaging: Imaging, maxSourcePixels: Int, maxFrames: Int = 256, maxAnimationMemory: Int = .max,
        timings: RenderTimings? = nil
    ) {
        self.imaging = imaging
        self.maxSourcePixels = maxSourcePixels
        self.maxFrames = maxFrames
        self.maxAnimationMemory = maxAnimationMemory
        self.timings = timings
    }

    /// How a thumbnail of `info` at `spec` is made: the format, and whether every frame is kept.
    /// An animation stays animated in a format that can animate (GIF, WebP) unless it is over a
    /// limit; then it is the still its first frame makes, in the format a still source would
    /// get, and the plan says which limit.
    public func plan(_ info: SourceInfo, _ spec: TransformSpec) -> RenderPlan {
        let format = spec.format.resolve(for: info)
        guard info.isAnimated, format.canAnimate else {
            return RenderPlan(format: format, animated: false, firstFrameOnly: nil, decoded: info.firstFrame)
        }
        let reason: FirstFrameReason?
        if info.pageCount > maxFrames {
            reason = .maxFrames
        } else if info.animationPixels > maxSourcePixels {
            reason = .maxPixels
        } else if animationEstimate(info, spec) > maxAnimationMemory {
            reason = .workBytes
        } else {
            reason = nil
        }
        guard let reason else { return RenderPlan(format: format, animated: true, firstFrameOnly: nil, decoded: info) }
        let still = info.firstFrame
        return RenderPlan(
            format: spec.format.resolve(for: still), animated: false, firstFrameOnly: reason, decoded: still)
    }

    /// The decode memory of `info` (an animation) kept animated at `spec`.
    private func animationEstimate(_ info: SourceInfo, _ spec: TransformSpec) -> Int {
        let size = outputSize(info, spec)
        var uncropped: (width: Int, height: Int)?
        if case .cover = OutputGeometry.resize(for: spec, sourceWidth: info.width, sourceHeight: info.height) {
            // Resized to cover the box, then cropped: the scale of the side that binds.
            let scale = max(Double(size.width) / Double(info.width), Double(size.height) / Double(info.height))
            uncropped = (
                Int((Double(info.width) * scale).rounded(.up)), Int((Double(info.height) * scale).rounded(.up))
            )
        }
        return DecodeMemory.estimate(info, width: size.width, height: size.height, uncropped: uncropped)
    }

    /// One output frame's size for `spec` (oriented, clamped: never upscaled).
    private func outputSize(_ info: SourceInfo, _ spec: TransformSpec) -> (width: Int, height: Int) {
        switch OutputGeometry.resize(for: spec, sourceWidth: info.width, sourceHeight: info.height) {
        case .exact(let width, let height), .cover(let width, let height, _): (width, height)
        }
    }

    /// Header check (format, pixel cap).
    public func inspect(_ original: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        let info = try imaging.inspect(original)
        guard info.pixels <= maxSourcePixels else {
            throw ThumbnailError(
                .tooManyPixels, "\(info.width)x\(info.height) is over the \(maxSourcePixels)-pixel limit")
        }
        return info
    }

    /// The decode memory a first size of `info` at `spec` needs (`DecodeMemory`), from the header:
    /// every frame's when it stays animated.
    public func estimate(_ info: SourceInfo, spec: TransformSpec) -> Int {
        let plan = plan(info, spec)
        if plan.animated { return animationEstimate(info, spec) }
        let size = outputSize(info, spec)
        return DecodeMemory.estimate(plan.decoded, width: size.width, height: size.height)
    }

    /// Whether a thumbnail of `info` at `spec` keeps its animation: then it is made from the
    /// original, never from a decoded copy (which holds the first frame only).
    public func animates(_ info: SourceInfo, _ spec: TransformSpec) -> Bool { plan(info, spec).animated }

    /// The decode memory of the reusable copy of `info` (a decode into the copy's box).
    public func copyEstimate(_ info: SourceInfo) -> Int {
        let box = Self.copyBox(for: info)
        return DecodeMemory.estimate(info, width: box.width, height: box.height)
    }

    /// The memory a cut from a decoded copy needs: its private copy of the pixels, and the output.
    public func cutEstimate(_ copy: DecodedSource<Imaging.Decoded>, spec: TransformSpec) -> Int {
        // The copy streams like a PNG (no shrink-on-load), with its own bands and alpha.
        let bands = max(1, copy.byteCount / max(1, copy.width * copy.height))
        let pixels = SourceInfo(
            format: .png, width: copy.width, height: copy.height, hasAlpha: copy.source.hasAlpha && bands % 2 == 0,
            bands: bands)
        return copy.byteCount + estimate(pixels, spec: spec)
    }

    /// The first size of a source: streamed from the original, nothing kept.
    public func render(original: ImageBytes, spec: TransformSpec, deadline: JobDeadline = .none) throws(ThumbnailError)
        -> EncodedImage
    {
        let info = try inspect(original)
        return try encode(.original(original, info), info: info, spec: spec, deadline: deadline)
    }

    /// A later size of a source: decodes the reusable copy and cuts from it when the copy can
    /// serve this size; otherwise (a large output) streams from the original and returns no copy.
    public func renderKeepingCopy(original: ImageBytes, spec: TransformSpec, deadline: JobDeadline = .none)
        throws(ThumbnailError) -> (
            image: EncodedImage, copy: DecodedSource<Imaging.Decoded>?
        )
    {
        let info = try inspect(original)
        let box = Self.copyBox(for: info)
        guard !animates(info, spec),
            DecodedSource<Imaging.Decoded>.canServe(spec, copyWidth: box.width, copyHeight: box.height, source: info)
        else { return (try encode(.original(original, info), info: info, spec: spec, deadline: deadline), nil) }
        let start = ContinuousClock.now
        let copy = try imaging.decode(
            original, info: info, fittingWidth: box.width, height: box.height, deadline: deadline)
        timings?.recordDecode(info.format, since: start)
        guard copy.canServe(spec) else {
            return (try encode(.original(original, info), info: info, spec: spec, deadline: deadline), nil)
        }
        return (try render(decoded: copy, spec: spec, deadline: deadline), copy)
    }

    /// Cuts and encodes from a decoded copy.
    public func render(decoded: DecodedSource<Imaging.Decoded>, spec: TransformSpec, deadline: JobDeadline = .none)
        throws(ThumbnailError) -> EncodedImage
    {
        try encode(.decoded(decoded), info: decoded.source, spec: spec, deadline: deadline)
    }

    private func encode(
        _ input: EncodeInput<Imaging.Decoded>, info: SourceInfo, spec: TransformSpec, deadline: JobDeadline
    ) throws(ThumbnailError) -> EncodedImage {
        let resize = OutputGeometry.resize(for: spec, sourceWidth: info.width, sourceHeight: info.height)
        let plan = plan(info, spec)
        let format = plan.format
        // "Like the source" picks PNG for a GIF/HEIF/TIFF with an alpha band; if no pixel uses
        // it (every GIF loads with one), JPEG is what the rule means.
        let alphaOnly = spec.format == .source && format == .png && ![.jpeg, .png, .webp].contains(info.format)
        let output = OutputChoice(
            format: format, quality: spec.quality, opaqueFormat: alphaOnly ? .jpeg : nil, keepsAnimation: plan.animated)
        let start = ContinuousClock.now
        let encoded = Result { () throws(ThumbnailError) in
            var image = try imaging.encode(input, resize: resize, output: output, deadline: deadline)
            image.firstFrameOnly = plan.firstFrameOnly
            return image
        }
        var fromCopy = false
        if case .decoded = input { fromCopy = true }
        timings?.recordEncode((try? encoded.get())?.format ?? format, fromCopy: fromCopy, since: start)
        return try encoded.get()
    }

    /// The reusable copy: the source fitted inside `decodedSide` × `decodedSide`, never upscaled.
    public static func copyBox(for info: SourceInfo) -> (width: Int, height: Int) {
        let scale = min(1, Double(decodedSide) / Double(max(info.width, info.height, 1)))
        return (
            max(1, Int((Double(info.width) * scale).rounded(.up))),
            max(1, Int((Double(info.height) * scale).rounded(.up)))
        )
    }
}
