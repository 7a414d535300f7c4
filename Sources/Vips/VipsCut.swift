/// The output's exact size, computed by the caller from the source's displayed (EXIF-oriented)
/// size, so a thumbnail has one size whichever input (original or decoded copy) made it. The
/// pipeline never upscales: a side larger than the input's is clamped to it.
public enum VipsCut: Sendable, Equatable {
    /// Scaled to exactly width × height (aspect is the caller's business: `inside` keeps it by
    /// construction, `fill` stretches).
    case exact(width: Int, height: Int)
    /// Scaled to cover width × height, then cropped to it.
    case cover(width: Int, height: Int, crop: VipsCrop)

    var width: Int {
        switch self {
        case .exact(let width, _), .cover(let width, _, _): width
        }
    }

    var height: Int {
        switch self {
        case .exact(_, let height), .cover(_, let height, _): height
        }
    }
}

/// What the pipeline starts from.
public enum VipsInput {
    /// Encoded bytes (a fetched original): decoded with shrink-on-load, streaming into the resize.
    case encoded(UnsafeRawBufferPointer)
    /// A decoded copy made earlier by `Vips.decode`: only resized and encoded.
    case decoded(VipsDecodedImage)
}

/// How the result is encoded.
public struct VipsEncoding: Sendable, Equatable {
    public var format: VipsOutputFormat
    /// Encoder quality 1...100 (ignored by PNG).
    public var quality: Int
    /// When set, an image without alpha, or whose alpha is opaque everywhere, is encoded in this
    /// format instead (a GIF always loads with an alpha band, used or not).
    public var opaqueFormat: VipsOutputFormat?

    public init(format: VipsOutputFormat, quality: Int = 80, opaqueFormat: VipsOutputFormat? = nil) {
        self.format = format
        self.quality = quality
        self.opaqueFormat = opaqueFormat
    }
}
