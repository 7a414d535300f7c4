/// What a header read tells about a source, before any pixel is decoded.
public struct SourceInfo: Sendable, Equatable {
    public var format: SourceFormat
    /// Width and height of the first page as displayed (EXIF orientation applied).
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
    /// The EXIF orientation, 1...8 (1 when there is none).
    public var orientation: Int
    /// A `.heif` whose images are AV1: an AVIF file. One decoder reads both; `/info` names it.
    public var isAVIF: Bool

    public init(
        format: SourceFormat, width: Int, height: Int, pageCount: Int = 1, hasAlpha: Bool = false, bands: Int? = nil,
        bytesPerSample: Int = 1, interlaced: Bool = false, orientation: Int = 1, isAVIF: Bool = false
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.pageCount = pageCount
        self.hasAlpha = hasAlpha
        self.bands = bands ?? (hasAlpha ? 4 : 3)
        self.bytesPerSample = bytesPerSample
        self.interlaced = interlaced
        self.orientation = orientation
        self.isAVIF = isAVIF
    }

    /// Pixels of the first page.
    public var pixels: Int { width.multipliedReportingOverflow(by: height).overflow ? .max : width * height }

    /// An animation: a GIF or WebP of more than one frame (a multi-page TIFF or HEIF is a set of
    /// pictures, not an animation: its first page is the image).
    public var isAnimated: Bool { pageCount > 1 && (format == .gif || format == .webp) }

    /// Pixels of every frame together: what an animation decodes.
    public var animationPixels: Int {
        let (total, overflow) = pixels.multipliedReportingOverflow(by: max(1, pageCount))
        return overflow ? .max : total
    }

    /// This source as its first frame alone: what a still made from it decodes.
    public var firstFrame: SourceInfo {
        var still = self
        still.pageCount = 1
        return still
    }
}
