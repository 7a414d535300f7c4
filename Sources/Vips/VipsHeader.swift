/// What an image's header says, read without decoding any pixels.
public struct VipsHeader: Sendable, Equatable {
    /// The libvips loader's nickname, e.g. `"jpegload_buffer"`, `"heifload_buffer"`.
    public let loader: String
    /// Stored width in pixels (before EXIF orientation is applied).
    public let width: Int
    /// Stored height in pixels of one page (before EXIF orientation is applied).
    public let height: Int
    /// Number of pages or animation frames; 1 for a still image.
    public let pageCount: Int
    /// Number of bands, alpha included.
    public let bands: Int
    /// Whether the last band is an alpha channel.
    public let hasAlpha: Bool
    /// The EXIF orientation, 1...8; 1 when the image has none.
    public let orientation: Int
    /// Bytes of one sample of one band as decoded (1 for 8-bit, 2 for 16-bit PNG/TIFF, 4 for float).
    public let bytesPerSample: Int
    /// A progressive JPEG or an interlaced (Adam7) PNG: its decoder must hold the whole image (all
    /// DCT coefficients, or every pass) before the first row comes out, whatever the output size.
    public let interlaced: Bool
    /// How a HEIF's images are coded, as libvips names it ("av1" in an AVIF file, "hevc", ...);
    /// nil for other formats.
    public let compression: String?
    /// How many times an animation plays, 0 for forever (libvips' "loop", from a GIF's NETSCAPE
    /// extension or a WebP's ANIM chunk); nil for the formats without one (JPEG, PNG, still WebP, ...).
    public let loop: Int?
    /// Each frame's display time in milliseconds, in order (an animated GIF or WebP); empty when the
    /// file has none.
    public let delays: [Int]

    public init(
        loader: String, width: Int, height: Int, pageCount: Int, bands: Int, hasAlpha: Bool, orientation: Int,
        bytesPerSample: Int = 1, interlaced: Bool = false, compression: String? = nil, loop: Int? = nil,
        delays: [Int] = []
    ) {
        self.loader = loader
        self.width = width
        self.height = height
        self.pageCount = pageCount
        self.bands = bands
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.bytesPerSample = bytesPerSample
        self.interlaced = interlaced
        self.compression = compression
        self.loop = loop
        self.delays = delays
    }

    /// Width after the EXIF orientation is applied (orientations 5...8 swap the axes).
    public var orientedWidth: Int { orientation >= 5 ? height : width }
    /// Height after the EXIF orientation is applied (orientations 5...8 swap the axes).
    public var orientedHeight: Int { orientation >= 5 ? width : height }
}
