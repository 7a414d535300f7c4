/// An encoded thumbnail, or a document about a source (`/info`'s JSON), which the pipeline makes
/// on a worker, caches, answers and purges exactly as it does a thumbnail.
public struct EncodedImage: Sendable {
    public var bytes: ImageBytes
    /// The thumbnail's format; nil for a document.
    public var format: OutputFormat?
    /// What `bytes` are, as a Content-Type.
    public var mediaType: String
    /// The thumbnail's size (one frame's); for a document, its source's displayed size.
    public var width: Int
    public var height: Int
    /// Frames in the thumbnail: 1 for a still.
    public var frames: Int
    /// Set when an animated source that would have stayed animated was made a still of its first
    /// frame because it is over a limit: the answer says so (`X-Thumbd-First-Frame`).
    public var firstFrameOnly: FirstFrameReason?

    public init(
        bytes: ImageBytes, format: OutputFormat, width: Int, height: Int, frames: Int = 1,
        firstFrameOnly: FirstFrameReason? = nil
    ) {
        self.bytes = bytes
        self.format = format
        self.mediaType = format.mediaType
        self.width = width
        self.height = height
        self.frames = frames
        self.firstFrameOnly = firstFrameOnly
    }

    /// A document about a source of `width` × `height`.
    public init(document bytes: ImageBytes, mediaType: String, width: Int, height: Int) {
        self.bytes = bytes
        self.format = nil
        self.mediaType = mediaType
        self.width = width
        self.height = height
        self.frames = 1
        self.firstFrameOnly = nil
    }
}
