import ThumbnailCore
import Vips

/// `ImageTransforming` on libvips. Only the loaders of formats we mean to take are allowed
/// (libvips' untrusted loaders are blocked globally as well, in `Vips.initialize`).
public struct VipsImageTransformer: ImageTransforming {
    static let loaders: [String: SourceFormat] = [
        "jpegload_buffer": .jpeg, "pngload_buffer": .png, "webpload_buffer": .webp, "gifload_buffer": .gif,
        "heifload_buffer": .heif, "tiffload_buffer": .tiff,
    ]
    static let allowedLoaders = Set(loaders.keys)

    public init() { Vips.initialize() }

    public func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        let header: VipsHeader
        do {
            header = try Vips.header(of: source.buffer, allowedLoaders: Self.allowedLoaders)
        } catch {
            throw Self.map(error)
        }
        guard let format = Self.loaders[header.loader] else { throw ThumbnailError(.unsupportedSource, header.loader) }
        withExtendedLifetime(source) {}
        return SourceInfo(
            format: format, width: header.orientedWidth, height: header.orientedHeight, pageCount: header.pageCount,
            hasAlpha: header.hasAlpha)
    }

    public func decode(_ source: ImageBytes, info: SourceInfo, width: Int, height: Int) throws(ThumbnailError)
        -> DecodedSource
    {
        let image: VipsDecodedImage
        do {
            image = try Vips.decode(of: source.buffer, width: width, height: height)
        } catch {
            throw Self.map(error)
        }
        withExtendedLifetime(source) {}
        return DecodedSource(
            pixels: ImageBytes(base: image.pixels, count: image.byteCount, owner: image), width: image.width,
            height: image.height, source: info)
    }

    public func encode(
        _ decoded: DecodedSource, resize: Resize, format: OutputFormat, quality: Int, opaqueFormat: OutputFormat?
    ) throws(ThumbnailError) -> EncodedImage {
        guard let image = decoded.pixels.owner as? VipsDecodedImage else {
            throw ThumbnailError(.internal, "decoded copy was not made by libvips")
        }
        let cut: VipsResize
        switch resize {
        case .exact(let width, let height): cut = .exact(width: width, height: height)
        case .cover(let width, let height, let crop):
            cut = .cover(width: width, height: height, crop: crop == .attention ? .attention : .centre)
        }
        do {
            let thumbnail = try Vips.thumbnail(
                of: image, resize: cut, format: Self.format(format), quality: quality,
                opaqueFormat: opaqueFormat.map(Self.format))
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
        }
    }

    static func format(_ format: VipsOutputFormat) -> OutputFormat {
        switch format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        }
    }

    static func format(_ format: OutputFormat) -> VipsOutputFormat {
        switch format {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        }
    }
}
