/// What `/info` answers about a source: its displayed size, format, alpha, frames, orientation and
/// size in bytes, and four placeholders to show while the image loads. Made on a worker from the
/// original (`ThumbnailRenderer.describe`), cached as a JSON document beside the source's variants.
public struct SourceDescription: Sendable, Equatable {
    /// As displayed: EXIF orientation applied.
    public var width: Int
    public var height: Int
    /// jpeg, png, webp, gif, avif, heif or tiff.
    public var format: String
    /// Whether some pixel is less than opaque (seen in the sampled copy, ≤ 100 px).
    public var hasAlpha: Bool
    /// 1 for a still image; the frame (page) count of an animation.
    public var frames: Int
    /// The EXIF orientation, 1...8 (1 when there is none).
    public var orientation: Int
    /// The source's size as fetched.
    public var bytes: Int
    /// `#rrggbb` (`DominantColour`).
    public var dominantColor: String
    /// 4 × 3 terms (`BlurHash`).
    public var blurhash: String
    /// Standard base64, as the reference code writes it (`ThumbHash`).
    public var thumbhash: String
    /// A `data:image/webp;base64,` URI of at most `ThumbnailRenderer.lqipLimit` bytes.
    public var lqip: String

    public init(
        width: Int, height: Int, format: String, hasAlpha: Bool, frames: Int, orientation: Int, bytes: Int,
        dominantColor: String, blurhash: String, thumbhash: String, lqip: String
    ) {
        self.width = width
        self.height = height
        self.format = format
        self.hasAlpha = hasAlpha
        self.frames = frames
        self.orientation = orientation
        self.bytes = bytes
        self.dominantColor = dominantColor
        self.blurhash = blurhash
        self.thumbhash = thumbhash
        self.lqip = lqip
    }

    /// One JSON object, members in this order, no spaces.
    public var json: String {
        let members: [(String, String)] = [
            ("width", String(width)), ("height", String(height)), ("format", JSON.string(format)),
            ("hasAlpha", String(hasAlpha)), ("frames", String(frames)), ("orientation", String(orientation)),
            ("bytes", String(bytes)), ("dominantColor", JSON.string(dominantColor)),
            ("blurhash", JSON.string(blurhash)), ("thumbhash", JSON.string(thumbhash)), ("lqip", JSON.string(lqip)),
        ]
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// The document as the pipeline caches it and the service answers it.
    public var document: EncodedImage {
        EncodedImage(
            document: ImageBytes(Array(json.utf8)), mediaType: "application/json", width: width, height: height)
    }
}
