/// The format a request asks for, after `format=auto` has been settled against `Accept`.
/// `.source` ("like the source") and `.negotiated` are part of the cache key as they are: each is
/// deterministic per source.
public enum RequestedFormat: Sendable, Hashable {
    case source
    case exactly(OutputFormat)
    /// `format=auto` for a client that takes AVIF and/or WebP (one that takes neither is
    /// `.source`). Which one depends on the source, known only once it is read (`resolve`): a
    /// still gets AVIF when taken, else WebP; an animation WebP when taken (libvips 8.14 cannot
    /// write an animated AVIF), else its own family. So the key holds what the client takes,
    /// not a format decided before the source was seen.
    case negotiated(avif: Bool, webp: Bool)

    public var canonical: String {
        switch self {
        case .source: "source"
        case .exactly(let format): format.rawValue
        case .negotiated(let avif, let webp): "auto" + (avif ? "+avif" : "") + (webp ? "+webp" : "")
        }
    }

    /// The format `source` is made in. An animated source gets a format that keeps it animated
    /// where the request leaves the choice (`source`, `negotiated`); `OutputFormat.canAnimate`
    /// says whether the result is animated.
    public func resolve(for source: SourceInfo) -> OutputFormat {
        switch self {
        case .source: OutputFormat.keepingFamily(of: source)
        case .exactly(let format): format
        case .negotiated(let avif, let webp):
            if source.isAnimated {
                webp ? .webp : OutputFormat.keepingFamily(of: source)
            } else {
                avif ? .avif : webp ? .webp : OutputFormat.keepingFamily(of: source)
            }
        }
    }
}
