/// An encoded thumbnail and its pixel size.
public struct VipsThumbnail: Sendable {
    /// The encoded bytes.
    public let buffer: VipsBuffer
    /// Output width in pixels.
    public let width: Int
    /// Output height in pixels: of one frame, for an animation.
    public let height: Int
    /// The format it was encoded in (`opaqueFormat` may have replaced the requested one).
    public let format: VipsOutputFormat
    /// Frames in the output: 1 for a still, more for a kept animation (`VipsEncoding.keepsAnimation`).
    /// A WebP may hold fewer than its source: libwebp merges a frame identical to the one before
    /// into it, adding up their delays.
    public let frames: Int
}
