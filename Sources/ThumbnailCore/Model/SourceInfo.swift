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
