/// An encoded thumbnail and its pixel size.
public struct VipsThumbnail: Sendable {
    /// The encoded bytes.
    public let buffer: VipsBuffer
    /// Output width in pixels.
    public let width: Int
    /// Output height in pixels.
    public let height: Int
    /// The format it was encoded in (`opaqueFormat` may have replaced the requested one).
    public let format: VipsOutputFormat
}
