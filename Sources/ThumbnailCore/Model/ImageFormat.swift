/// What a source was decoded as (from the libvips loader, never from Content-Type).
public enum SourceFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, gif, heif, tiff
}

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

/// The format a request asks for, after `format=auto` has been resolved against `Accept`.
/// `.source` ("like the source") is part of the cache key as is: it is deterministic per source.
public enum RequestedFormat: Sendable, Hashable {
    case source
    case exactly(OutputFormat)

    public var canonical: String {
        switch self {
        case .source: "source"
        case .exactly(let format): format.rawValue
        }
    }

    public func resolve(for source: SourceInfo) -> OutputFormat {
        switch self {
        case .source: OutputFormat.keepingFamily(of: source)
        case .exactly(let format): format
        }
    }
}

/// What a header read tells about a source, before any pixel is decoded.
public struct SourceInfo: Sendable, Equatable {
    public var format: SourceFormat
    /// Width and height of the first page, EXIF orientation not yet applied.
    public var width: Int
    public var height: Int
    public var pageCount: Int
    public var hasAlpha: Bool
    /// Bands as stored, alpha included (what the decoder produces per pixel).
    public var bands: Int
    /// Bytes per band sample as decoded: 1 for 8-bit, 2 for 16-bit, 4 for float.
    public var bytesPerSample: Int
    /// A progressive JPEG or an interlaced PNG: the decoder holds the whole image, whatever the
    /// output size (the decode-memory estimate needs to know).
    public var interlaced: Bool

    public init(
        format: SourceFormat, width: Int, height: Int, pageCount: Int = 1, hasAlpha: Bool = false, bands: Int? = nil,
        bytesPerSample: Int = 1, interlaced: Bool = false
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.pageCount = pageCount
        self.hasAlpha = hasAlpha
        self.bands = bands ?? (hasAlpha ? 4 : 3)
        self.bytesPerSample = bytesPerSample
        self.interlaced = interlaced
    }

    public var pixels: Int { width.multipliedReportingOverflow(by: height).overflow ? .max : width * height }
}

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
