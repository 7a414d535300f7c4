/// An encoded thumbnail.
public struct EncodedImage: Sendable {
    public var bytes: ImageBytes
    public var format: OutputFormat
    public var width: Int
    public var height: Int

    public init(bytes: ImageBytes, format: OutputFormat, width: Int, height: Int) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
    }
}
