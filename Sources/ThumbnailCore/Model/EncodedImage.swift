/// An encoded thumbnail, or a document about a source (`/info`'s JSON), which the pipeline makes
/// on a worker, caches, answers and purges exactly as it does a thumbnail.
public struct EncodedImage: Sendable {
    public var bytes: ImageBytes
    /// The thumbnail's format; nil for a document.
    public var format: OutputFormat?
    /// What `bytes` are, as a Content-Type.
    public var mediaType: String
    /// The thumbnail's size; for a document, its source's displayed size.
    public var width: Int
    public var height: Int

    public init(bytes: ImageBytes, format: OutputFormat, width: Int, height: Int) {
        self.bytes = bytes
        self.format = format
        self.mediaType = format.mediaType
        self.width = width
        self.height = height
    }

    /// A document about a source of `width` × `height`.
    public init(document bytes: ImageBytes, mediaType: String, width: Int, height: Int) {
        self.bytes = bytes
        self.format = nil
        self.mediaType = mediaType
        self.width = width
        self.height = height
    }
}
