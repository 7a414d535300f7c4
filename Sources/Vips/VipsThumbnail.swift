/// An encoded thumbnail and its pixel size.
public struct VipsThumbnail: Sendable {
    /// The encoded bytes.
    public let buffer: VipsBuffer
    /// Output width in pixels.
    public let width: Int
    /// Output height in pixels.
    public let height: Int
}
