import ThumbnailCore
import Vips

/// Core's image jobs (inspect, decode a reusable copy and read its pixels, encode a thumbnail) on libvips, and
/// the one place where Core's formats meet libvips' names. Only the loaders of formats we mean to
/// take are allowed (libvips' untrusted loaders are blocked globally as well, in `Vips.initialize`).
public struct VipsImaging: ImageInspecting, ImageDecoding, ImageEncoding {
    public typealias Decoded = VipsDecodedImage

    /// Source formats by libvips loader.
    static let loaders: [String: SourceFormat] = [
        "jpegload_buffer": .jpeg, "pngload_buffer": .png, "webpload_buffer": .webp, "gifload_buffer": .gif,
        "heifload_buffer": .heif, "tiffload_buffer": .tiff,
    ]

    /// The pipeline's policy knobs (`defaultOptions` unless a test or bench says otherwise).
    public let options: VipsOptions

    public init(options: VipsOptions = VipsImaging.defaultOptions) {
        Vips.initialize()
        self.options = options
    }

    /// The service's libvips policy, every knob written here and nowhere else:
    /// - the loaders above only;
    /// - `fail_on=error`: a truncated or corrupt source fails (422) instead of coming back with
    ///   grey rows;
    /// - JPEG baseline with optimised Huffman tables: a few per cent smaller for a little CPU, and
    ///   baseline decodes faster in browsers at thumbnail sizes;
    /// - PNG at zlib level 6 (libvips' default, the usual size/CPU middle);
    /// - AVIF at effort 2: on a 300-px thumbnail it costs about what WebP does; 4 (libvips'
    ///   default) is about 5 times slower.
    public static let defaultOptions = VipsOptions(
        allowedLoaders: Set(loaders.keys), failOn: .error, jpeg: .init(optimizeCoding: true, interlace: false),
        png: .init(compression: 6), avif: .init(effort: 2))

    public func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        let header: VipsHeader
        do {
            header = try source.withUnsafeBytes { bytes throws(VipsError) in
                try Vips.header(of: bytes, options: options)
            }
        } catch {
            throw Self.map(error)
        }
        guard let format = Self.loaders[header.loader] else { throw ThumbnailError(.unsupportedSource, header.loader) }
        return SourceInfo(
            format: format, width: header.orientedWidth, height: header.orientedHeight, pageCount: header.pageCount,
            hasAlpha: header.hasAlpha, bands: header.bands, bytesPerSample: header.bytesPerSample,
            interlaced: header.interlaced, orientation: header.orientation, isAVIF: header.compression == "av1")
    }

    public func decode(
        _ source: ImageBytes, info: SourceInfo, fittingWidth width: Int, height: Int, deadline: JobDeadline
    ) throws(ThumbnailError) -> DecodedSource<VipsDecodedImage> {
        let image: VipsDecodedImage
        do {
            image = try source.withUnsafeBytes { bytes throws(VipsError) in
                try Vips.decode(
                    of: bytes, fittingWidth: width, height: height, options: options, timeLimit: deadline.remaining)
            }
        } catch {
            throw Self.map(error)
        }
        return DecodedSource(
            handle: image, width: image.width, height: image.height, byteCount: image.byteCount, source: info)
    }

    public func pixels(of copy: DecodedSource<VipsDecodedImage>) throws(ThumbnailError) -> RGBAPixels {
        let image = copy.handle
        let samples: [UInt8]
        do { samples = try image.pixels() } catch { throw Self.map(error) }
        let pixels = samples.withUnsafeBytes {
            RGBAPixels(width: image.width, height: image.height, bands: image.bands, interleaved: $0)
        }
        guard let pixels else {
            throw ThumbnailError(
                .internal, "\(samples.count) samples for \(image.width)x\(image.height)x\(image.bands)")
        }
        return pixels
    }

    public func encode(
        _ input: EncodeInput<VipsDecodedImage>, resize: Resize, output: OutputChoice, deadline: JobDeadline
    ) throws(ThumbnailError) -> EncodedImage {
        let cut: VipsCut
        switch resize {
        case .exact(let width, let height): cut = .exact(width: width, height: height)
        case .cover(let width, let height, let crop):
            cut = .cover(width: width, height: height, crop: crop == .attention ? .attention : .centre)
        }
        let encoding = VipsEncoding(
            format: Self.vipsFormat(output.format), quality: output.quality,
            opaqueFormat: output.opaqueFormat.map(Self.vipsFormat))
        do {
            let thumbnail: VipsThumbnail
            switch input {
            case .original(let bytes, _):
                thumbnail = try bytes.withUnsafeBytes { buffer throws(VipsError) in
                    try Vips.thumbnail(
                        of: .encoded(buffer), cut: cut, encoding: encoding, options: options,
                        timeLimit: deadline.remaining)
                }
            case .decoded(let copy):
                thumbnail = try Vips.thumbnail(
                    of: .decoded(copy.handle), cut: cut, encoding: encoding, options: options,
                    timeLimit: deadline.remaining)
            }
            let buffer = thumbnail.buffer
            return EncodedImage(
                bytes: ImageBytes(base: buffer.pointer, count: buffer.count, owner: buffer),
                format: Self.format(thumbnail.format), width: thumbnail.width, height: thumbnail.height)
        } catch {
            throw Self.map(error)
        }
    }

    static func map(_ error: VipsError) -> ThumbnailError {
        switch error {
        case .unknownFormat: ThumbnailError(.unsupportedSource, "unknown format")
        case .blockedLoader(let loader): ThumbnailError(.unsupportedSource, "blocked loader \(loader)")
        case .decodeFailed(let text): ThumbnailError(.undecodableSource, text)
        case .encodeFailed(let text): ThumbnailError(.internal, "encode: \(text)")
        case .invalidArgument(let text): ThumbnailError(.internal, "vips argument: \(text)")
        case .timedOut: ThumbnailError(.processingTimeout, "libvips stopped at the job's deadline")
        }
    }

    static func format(_ format: VipsOutputFormat) -> OutputFormat {
        switch format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .gif: preconditionFailure("GIF is never asked for (vipsFormat)")
        }
    }

    static func vipsFormat(_ format: OutputFormat) -> VipsOutputFormat {
        switch format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        }
    }
}
