/// A decoded, pre-shrunk copy of a source: oriented, sRGB, 8-bit pixels in memory, made by an
/// `ImageDecoding`. Kept in the cache (under `CacheKey.decoded`) so that new sizes of a recently
/// used source are cut from it instead of decoding the photo again — a 20 MP JPEG costs ~80 ms to
/// decode, a cut from a 1024-px copy a few. `handle` is the decoder's own image, opaque to Core and
/// handed back to the same library's `ImageEncoding`: typed, so nothing is cast.
public struct DecodedSource<Handle: Sendable>: Sendable {
    public let handle: Handle
    /// Size of this copy.
    public let width: Int
    public let height: Int
    /// Memory the pixels take.
    public let byteCount: Int
    /// The source it came from: displayed size, format, alpha.
    public let source: SourceInfo

    public init(handle: Handle, width: Int, height: Int, byteCount: Int, source: SourceInfo) {
        self.handle = handle
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.source = source
    }

    /// Whether this copy holds the source at full resolution (small sources).
    public var isFullResolution: Bool { width >= source.width && height >= source.height }

    /// Whether `spec` may be cut from this copy: only sizes well below its own — the output may
    /// use at most half of its resolution on each axis (what libvips' own thumbnail leaves for its
    /// final resize after shrink-on-load, so the result matches one made from the original) —
    /// unless the copy is the full-resolution source. Never upscales from it.
    public func canServe(_ spec: TransformSpec) -> Bool {
        Self.canServe(spec, copyWidth: width, copyHeight: height, source: source)
    }

    /// `canServe` for a copy of this size (to decide before making one).
    public static func canServe(_ spec: TransformSpec, copyWidth: Int, copyHeight: Int, source: SourceInfo) -> Bool {
        if copyWidth >= source.width && copyHeight >= source.height { return true }
        let needed = OutputGeometry.scale(for: spec, sourceWidth: source.width, sourceHeight: source.height)
        let haveX = Double(copyWidth) / Double(source.width)
        let haveY = Double(copyHeight) / Double(source.height)
        // 1% slack: the copy's own size was rounded to whole pixels.
        return needed.x <= haveX * 0.505 && needed.y <= haveY * 0.505
    }
}
