import ThumbnailCore
import Vips

/// `ImageTransforming` on libvips. Only the loaders of formats we mean to take are allowed
/// (libvips' untrusted loaders are blocked globally as well, in `Vips.initialize`).
struct VipsImageTransformer: ImageTransforming {
    static let loaders: [String: SourceFormat] = [
        "jpegload_buffer": .jpeg, "pngload_buffer": .png, "webpload_buffer": .webp, "gifload_buffer": .gif,
        "heifload_buffer": .heif, "tiffload_buffer": .tiff,
    ]
    static let allowedLoaders = Set(loaders.keys)

    init() { Vips.initialize() }

    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo {
        do {
            let header = try source.withUnsafeBytes { bytes throws(VipsError) in
                try Vips.header(of: bytes, allowedLoaders: Self.allowedLoaders)
            }
            guard let format = Self.loaders[header.loader] else {
                throw ThumbnailError(.unsupportedSource, header.loader)
            }
            return SourceInfo(
                format: format, width: header.width, height: header.height, pageCount: header.pageCount,
                hasAlpha: header.hasAlpha)
        } catch let error as VipsError {
            throw Self.map(error)
        } catch let error as ThumbnailError {
            throw error
        } catch {
            throw ThumbnailError(.internal, "\(error)")
        }
    }

    func transform(_ source: ImageBytes, info: SourceInfo, spec: TransformSpec, format: OutputFormat)
        throws(ThumbnailError) -> EncodedImage
    {
        // "Like the source" gives PNG for a GIF/HEIF/TIFF with alpha, but libvips loads every GIF
        // with an alpha band: if no pixel is actually transparent, JPEG is what was asked for.
        let alphaOnlyChoice = spec.format == .source && format == .png && ![.jpeg, .png, .webp].contains(info.format)
        let options = VipsThumbnailOptions(
            width: spec.width, height: spec.height, fit: Self.fit(spec.fit),
            crop: spec.crop == .attention ? .attention : .centre,
            format: Self.format(format), quality: spec.quality, opaqueFormat: alphaOnlyChoice ? .jpeg : nil)
        do {
            let thumbnail = try source.withUnsafeBytes { bytes throws(VipsError) in
                try Vips.thumbnail(of: bytes, options: options)
            }
            let buffer = thumbnail.buffer
            return EncodedImage(
                bytes: ImageBytes(base: buffer.pointer, count: buffer.count, owner: buffer),
                format: Self.format(thumbnail.format),
                width: thumbnail.width, height: thumbnail.height)
        } catch let error as VipsError {
            throw Self.map(error)
        } catch {
            throw ThumbnailError(.internal, "\(error)")
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

    static func fit(_ fit: Fit) -> VipsFit {
        switch fit {
        case .inside: .inside
        case .cover: .cover
        case .fill: .fill
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
