/// An encoded output format.
public enum OutputFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, avif

    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        }
    }

    /// The default output for a source: keep the family (JPEG→JPEG, PNG→PNG, WebP→WebP); anything
    /// else becomes JPEG, or PNG when it has alpha (JPEG would lose it).
    public static func keepingFamily(of source: SourceInfo) -> OutputFormat {
        switch source.format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .gif, .heif, .tiff: source.hasAlpha ? .png : .jpeg
        }
    }
}
