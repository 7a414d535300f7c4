/// An encoded output format.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// `gif` is made only for an animated GIF kept animated (`keepingFamily`): a request cannot
    /// name it (`requestable`).
    case jpeg, png, webp, avif, gif

    /// What `format=` (and the framework routes' format parameters) may name.
    public static let requestable: [OutputFormat] = [.jpeg, .png, .webp, .avif]

    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .gif: "image/gif"
        }
    }

    /// Whether libvips (8.14) writes this format animated: GIF (cgif) and WebP; not AVIF.
    public var canAnimate: Bool { self == .gif || self == .webp }

    /// The default output for a source: keep the family (JPEG→JPEG, PNG→PNG, WebP→WebP, an
    /// animated GIF→GIF); anything else becomes JPEG, or PNG when it has alpha (JPEG would lose it).
    public static func keepingFamily(of source: SourceInfo) -> OutputFormat {
        switch source.format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .gif where source.isAnimated: .gif
        case .gif, .heif, .tiff: source.hasAlpha ? .png : .jpeg
        }
    }
}
