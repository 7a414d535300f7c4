/// How a thumbnail is encoded.
public struct OutputChoice: Sendable, Equatable {
    public var format: OutputFormat
    public var quality: Int
    /// When set, an image with no transparent pixel is encoded in this format instead.
    public var opaqueFormat: OutputFormat?

    public init(format: OutputFormat, quality: Int, opaqueFormat: OutputFormat? = nil) {
        self.format = format
        self.quality = quality
        self.opaqueFormat = opaqueFormat
    }
}
