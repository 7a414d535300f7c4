/// A decoded, pre-shrunk copy of a source: oriented, sRGB, 8-bit pixels in memory. Kept in the
/// cache (under `CacheKey.decoded`) so that a new size of a recently used source is cut from it
/// instead of decoding the photo again — a 20 MP JPEG costs ~80 ms to decode, a cut from a
/// 1024-px copy a few.
public struct DecodedSource: Sendable {
    /// The pixels (`byteCount` of them), owned by whatever decoded them.
    public let pixels: ImageBytes
    /// Size of this copy.
    public let width: Int
    public let height: Int
    /// The source it came from: displayed size, format, alpha.
    public let source: SourceInfo

    public init(pixels: ImageBytes, width: Int, height: Int, source: SourceInfo) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.source = source
    }

    /// Whether this copy holds the source at full resolution (small sources).
    public var isFullResolution: Bool { width >= source.width && height >= source.height }

    /// Whether `spec` may be cut from this copy: only sizes well below its own — the output may
    /// use at most half of its resolution on each axis (so the result matches one made from the
    /// original) — unless the copy is the full-resolution source. Never upscales from it.
    public func canServe(_ spec: TransformSpec) -> Bool {
        if isFullResolution { return true }
        let needed = OutputGeometry.scale(for: spec, sourceWidth: source.width, sourceHeight: source.height)
        let haveX = Double(width) / Double(source.width)
        let haveY = Double(height) / Double(source.height)
        // 1% slack: the copy's own size was rounded to whole pixels.
        return needed.x <= haveX * 0.505 && needed.y <= haveY * 0.505
    }
}
