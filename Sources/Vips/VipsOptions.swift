/// The policy knobs of the libvips pipeline, in one value the service builds and passes to every
/// call. The Vips module decides nothing by itself: which loaders run, how strict decoding is and
/// how each encoder is tuned all come from here, and nothing here has a default (the service's
/// choices, and why, are `VipsImaging.defaultOptions`).
public struct VipsOptions: Sendable, Equatable {
    /// Loader nicknames (`"jpegload_buffer"`, ...) that may open a source; anything else is refused
    /// from the first bytes, before the image is opened. Only loaders that `VipsLoaderSignature`
    /// recognises can ever open one (jpeg, png, webp, gif, heif, tiff); libvips' untrusted loaders
    /// (SVG, PDF, ImageMagick, ...) are blocked process-wide as well (`Vips.initialize`).
    public var allowedLoaders: Set<String>
    /// How strict decoding is (libvips `fail_on`).
    public var failOn: FailOn
    public var jpeg: JPEG
    public var png: PNG
    public var avif: AVIF

    public init(allowedLoaders: Set<String>, failOn: FailOn, jpeg: JPEG, png: PNG, avif: AVIF) {
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
        /// A second pass for optimal Huffman tables.
        public var optimizeCoding: Bool
        /// Progressive output.
        public var interlace: Bool

        public init(optimizeCoding: Bool, interlace: Bool) {
            self.optimizeCoding = optimizeCoding
            self.interlace = interlace
        }
    }

    public struct PNG: Sendable, Equatable {
        /// zlib level 0...9.
        public var compression: Int

        public init(compression: Int) { self.compression = compression }
    }

    public struct AVIF: Sendable, Equatable {
        /// Encoder effort 0...9 (aom speed = 9 - effort).
        public var effort: Int

        public init(effort: Int) { self.effort = effort }
    }

    /// The loader option string: in 8.14 `thumbnail_buffer`'s own `fail_on` never reaches the
    /// loader; an option string does.
    var loadOptionString: String { "[fail_on=\(failOn.rawValue)]" }

    /// The same with every page loaded (`n=-1`), as one strip of frames: for a kept animation.
    var allPagesLoadOptionString: String { "[fail_on=\(failOn.rawValue),n=-1]" }
}
