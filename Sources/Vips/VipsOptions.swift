/// The policy knobs of the libvips pipeline, in one value the service builds and passes to every
/// call. The Vips module decides nothing by itself: which loaders run, how strict decoding is and
/// how each encoder is tuned all come from here.
public struct VipsOptions: Sendable, Equatable {
    /// Loader nicknames (`"jpegload_buffer"`, ...) that may open a source; anything else is refused
    /// from the header sniff, before the image is opened. libvips' untrusted loaders (SVG, PDF,
    /// ImageMagick, ...) are blocked process-wide as well (`Vips.initialize`). Default: none.
    public var allowedLoaders: Set<String>
    /// How strict decoding is (libvips `fail_on`). Default `.error`: a truncated or corrupt source
    /// fails instead of coming back with grey rows.
    public var failOn: FailOn
    /// Default: optimised Huffman tables, baseline (not progressive).
    public var jpeg: JPEG
    /// Default: zlib level 6.
    public var png: PNG
    /// Default: effort 2.
    public var avif: AVIF

    public init(
        allowedLoaders: Set<String> = [], failOn: FailOn = .error, jpeg: JPEG = JPEG(), png: PNG = PNG(),
        avif: AVIF = AVIF()
    ) {
        self.allowedLoaders = allowedLoaders
        self.failOn = failOn
        self.jpeg = jpeg
        self.png = png
        self.avif = avif
    }

    /// libvips' `fail_on` levels.
    public enum FailOn: String, Sendable, Equatable {
        case none, truncated, error, warning
    }

    public struct JPEG: Sendable, Equatable {
        /// A second pass for optimal Huffman tables: a few per cent smaller for a little CPU.
        public var optimizeCoding: Bool
        /// Progressive output. Baseline decodes faster in browsers for thumbnail sizes.
        public var interlace: Bool

        public init(optimizeCoding: Bool = true, interlace: Bool = false) {
            self.optimizeCoding = optimizeCoding
            self.interlace = interlace
        }
    }

    public struct PNG: Sendable, Equatable {
        /// zlib level 0...9.
        public var compression: Int

        public init(compression: Int = 6) { self.compression = compression }
    }

    public struct AVIF: Sendable, Equatable {
        /// Encoder effort 0...9 (aom speed = 9 - effort). Measured on a 300 px thumbnail: effort 2
        /// costs about what WebP does; 4 (the libvips default) is about 5 times slower.
        public var effort: Int

        public init(effort: Int = 2) { self.effort = effort }
    }

    /// The loader option string: in 8.14 `thumbnail_buffer`'s own `fail_on` never reaches the
    /// loader; an option string does.
    var loadOptionString: String { "[fail_on=\(failOn.rawValue)]" }
}
