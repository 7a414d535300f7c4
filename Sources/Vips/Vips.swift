internal import CVips
internal import CVipsShims

/// libvips behind a small, safe surface: a header probe and a one-call thumbnailer. No policy
/// lives here: the caller says which loaders are allowed and how big the output may be.
public enum Vips {
    /// Idempotent and thread-safe. Starts libvips for a server: one vips thread per call (the
    /// service runs its own worker pool), no operation cache, untrusted loaders (SVG, PDF, magick,
    /// ...) blocked.
    public static func initialize() {
        _ = started
    }

    private static let started: Bool = {
        guard cvips_init_once("thumbd") == 0 else {
            fatalError("vips_init failed: \(VipsError.takeErrorText())")
        }
        vips_concurrency_set(1)
        vips_cache_set_max(0)
        vips_cache_set_max_mem(0)
        vips_cache_set_max_files(0)
        vips_block_untrusted_set(1)
        return true
    }()

    /// The libvips version, e.g. "8.14.1".
    public static var version: String {
        initialize()
        return "\(vips_version(0)).\(vips_version(1)).\(vips_version(2))"
    }

    /// Passed to every loader: fail on decode errors (truncation included) instead of handing
    /// back a grey-filled image. In 8.14 `thumbnail_buffer`'s own `fail_on` never reaches the
    /// loader; an option string does.
    static let loadOptions = "[fail_on=error]"

    /// The box height for "width only" with `.inside`: libvips' largest coordinate
    /// (`VIPS_MAX_COORD`); its default height would be the width.
    static let unboundedHeight = 10_000_000

    /// Reads only the header: no pixels are decoded. The loader is identified and checked against
    /// `allowedLoaders` (nicknames such as `"jpegload_buffer"`) before the image is opened.
    public static func header(
        of bytes: UnsafeRawBufferPointer, allowedLoaders: Set<String>
    ) throws(VipsError) -> VipsHeader {
        initialize()
        let loader = try findLoader(bytes)
        guard allowedLoaders.contains(loader.nickname), !loader.isBlocked else {
            throw .blockedLoader(loader.nickname)
        }
        let image = try open(bytes)
        return VipsHeader(
            loader: loader.nickname, width: image.width, height: image.pageHeight, pageCount: image.pageCount,
            bands: image.bands, hasAlpha: image.hasAlpha, orientation: image.orientation)
    }

    /// Decodes the first page with shrink-on-load, applies the EXIF orientation, converts to sRGB
    /// (honouring an embedded ICC profile; greyscale stays greyscale), resizes without ever
    /// upscaling, and encodes with all metadata stripped. Safe to call concurrently.
    public static func thumbnail(
        of bytes: UnsafeRawBufferPointer, options: VipsThumbnailOptions
    ) throws(VipsError) -> VipsThumbnail {
        initialize()
        try validate(options)
        let loader = try findLoader(bytes)
        if loader.isBlocked { throw .blockedLoader(loader.nickname) }

        let box = try targetBox(of: bytes, options: options)
        guard
            let lazy = VipsImageHandle.make({
                cvips_thumbnail_buffer(
                    bytes.baseAddress, bytes.count, $0, Int32(box.width), Int32(box.height), box.size, box.crop,
                    loadOptions)
            })
        else { throw .decodeFailed(VipsError.takeErrorText()) }

        // Decode now: a decode failure must surface here, not inside an encoder (8.14's webpsave
        // leaks when its input fails), and the later steps then work on a small memory image.
        guard let decoded = vips_image_copy_memory(lazy.pointer).map(VipsImageHandle.init(taking:)) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        let srgb = convertEmbeddedRGBProfileToSRGB(decoded)
        var encoding = options
        if let opaqueFormat = options.opaqueFormat, !srgb.hasAlpha || isOpaque(srgb) {
            encoding.format = opaqueFormat
        }
        let flat = try encoding.format == .jpeg ? flattenAlpha(srgb) : srgb
        let ready = try withoutMetadata(flat)
        let buffer = try encode(ready, options: encoding)
        return VipsThumbnail(buffer: buffer, width: ready.width, height: ready.height, format: encoding.format)
    }

    // MARK: - Steps

    struct Loader {
        var nickname: String
        /// libvips refuses to run it (`vips_block_untrusted_set`, `vips_operation_block_set`).
        var isBlocked: Bool
    }

    /// Sniffs the bytes (no decode). 8.14 still finds blocked loaders, and names the class
    /// ("VipsForeignLoadJpegBuffer"), so we map it to the nickname and read the blocked flag.
    static func findLoader(_ bytes: UnsafeRawBufferPointer) throws(VipsError) -> Loader {
        guard let base = bytes.baseAddress, bytes.count > 0,
            let typeName = vips_foreign_find_load_buffer(base, bytes.count)
        else {
            vips_error_clear()
            throw .unknownFormat
        }
        let type = g_type_from_name(typeName)
        let nickname = vips_nickname_find(type).map { String(cString: $0) } ?? String(cString: typeName)
        guard let operationClass = g_type_class_ref(type) else { return Loader(nickname: nickname, isBlocked: false) }
        defer { g_type_class_unref(operationClass) }
        let flags = operationClass.assumingMemoryBound(to: VipsOperationClass.self).pointee.flags
        return Loader(nickname: nickname, isBlocked: flags.rawValue & VIPS_OPERATION_BLOCKED.rawValue != 0)
    }

    /// Opens lazily: reads the header, decodes nothing yet.
    private static func open(_ bytes: UnsafeRawBufferPointer) throws(VipsError) -> VipsImageHandle {
        guard let image = cvips_image_new_from_buffer(bytes.baseAddress, bytes.count, "[access=sequential]") else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return VipsImageHandle(taking: image)
    }

    private static func validate(_ options: VipsThumbnailOptions) throws(VipsError) {
        guard (1...unboundedHeight).contains(options.width) else {
            throw .invalidArgument("width \(options.width) is not in 1...\(unboundedHeight)")
        }
        if let height = options.height, !(1...unboundedHeight).contains(height) {
            throw .invalidArgument("height \(height) is not in 1...\(unboundedHeight)")
        }
        guard (1...100).contains(options.quality) else {
            throw .invalidArgument("quality \(options.quality) is not in 1...100")
        }
    }

    private struct Box {
        var width: Int
        var height: Int
        var size: VipsSize
        var crop: VipsInteresting
    }

    /// The arguments for `vips_thumbnail_buffer`. Always a size mode that never upscales: `down`,
    /// or for `.fill` `force` with a box already clamped to the oriented source.
    private static func targetBox(
        of bytes: UnsafeRawBufferPointer, options: VipsThumbnailOptions
    ) throws(VipsError) -> Box {
        switch options.fit {
        case .inside:
            return Box(
                width: options.width, height: options.height ?? unboundedHeight, size: VIPS_SIZE_DOWN,
                crop: VIPS_INTERESTING_NONE)
        case .cover:
            let crop = options.crop == .centre ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_ATTENTION
            return Box(width: options.width, height: options.height ?? options.width, size: VIPS_SIZE_DOWN, crop: crop)
        case .fill:
            // `force` scales each axis on its own and would upscale: clamp to the oriented source.
            let source = try open(bytes)
            let swap = source.orientationSwapsAxes
            let sourceWidth = swap ? source.pageHeight : source.width
            let sourceHeight = swap ? source.width : source.pageHeight
            return Box(
                width: min(options.width, sourceWidth), height: min(options.height ?? options.width, sourceHeight),
                size: VIPS_SIZE_FORCE, crop: VIPS_INTERESTING_NONE)
        }
    }

    /// 8.14's thumbnail converts to sRGB with `vips_colourspace`, which ignores an embedded RGB
    /// profile (Display P3, Adobe RGB, ...) and leaves it attached; stripping it on save would then
    /// shift the colours. So transform such images to sRGB with the profile. CMYK needs nothing:
    /// `colourspace` already imported it with its embedded (or the built-in) CMYK profile, which
    /// stays attached but is stripped on save. Greyscale stays greyscale. A broken profile is
    /// ignored (the pixels are taken as sRGB) rather than failing the thumbnail.
    static func convertEmbeddedRGBProfileToSRGB(_ image: VipsImageHandle) -> VipsImageHandle {
        guard image.bands >= 3, image.iccProfileColourSpace == "RGB " else { return image }
        guard let converted = VipsImageHandle.make({ cvips_icc_transform(image.pointer, $0, "srgb", nil, 1) }) else {
            vips_error_clear()
            return image
        }
        return converted
    }

    /// Whether every pixel's alpha is at its maximum (a GIF or TIFF that carries an alpha band it
    /// does not use). One pass over the small, already decoded thumbnail.
    static func isOpaque(_ image: VipsImageHandle) -> Bool {
        guard let alpha = VipsImageHandle.make({ cvips_extract_band(image.pointer, $0, Int32(image.bands - 1), 1) })
        else {
            vips_error_clear()
            return false
        }
        var minimum = 0.0
        guard cvips_min(alpha.pointer, &minimum) == 0 else {
            vips_error_clear()
            return false
        }
        // 16-bit interpretations keep alpha in 0...65535, everything else we produce in 0...255.
        let interpretation = vips_image_guess_interpretation(image.pointer)
        let maximum =
            interpretation == VIPS_INTERPRETATION_RGB16 || interpretation == VIPS_INTERPRETATION_GREY16
            ? 65535.0 : 255.0
        return minimum >= maximum
    }

    /// JPEG has no alpha: flatten onto white.
    static func flattenAlpha(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard image.hasAlpha else { return image }
        guard let flat = VipsImageHandle.make({ cvips_flatten(image.pointer, $0, 255) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        return flat
    }

    /// A copy of `image` with every metadata field (EXIF, XMP, ICC, orientation, page height, ...)
    /// removed. The savers are also told to strip, but 8.14's webpsave ignores `strip` and writes
    /// EXIF, XMP and ICC anyway (measured), so we remove them ourselves.
    static func withoutMetadata(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard let copy = VipsImageHandle.make({ cvips_copy(image.pointer, $0) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        copy.removeAllMetadata()
        return copy
    }

    /// AVIF encoder effort 0...9 (aom speed = 9 - effort). Measured on a 300 px thumbnail: effort
    /// 2 costs about what WebP does; 4 (the libvips default) is about 5 times slower.
    static let avifEffort: Int32 = 2

    static func encode(_ image: VipsImageHandle, options: VipsThumbnailOptions) throws(VipsError) -> VipsBuffer {
        var output: UnsafeMutableRawPointer? = nil
        var length = 0
        let quality = Int32(options.quality)
        let strip: gboolean = 1
        let status: Int32
        switch options.format {
        case .jpeg: status = cvips_jpegsave_buffer(image.pointer, &output, &length, quality, strip)
        case .png: status = cvips_pngsave_buffer(image.pointer, &output, &length, 6, strip)
        case .webp: status = cvips_webpsave_buffer(image.pointer, &output, &length, quality, strip)
        case .avif: status = cvips_avifsave_buffer(image.pointer, &output, &length, quality, avifEffort, strip)
        }
        guard status == 0, let output, length > 0 else {
            g_free(output)
            throw .encodeFailed(VipsError.takeErrorText())
        }
        if options.format == .webp {
            length = WebPMetadataStripper.strip(UnsafeMutableRawBufferPointer(start: output, count: length))
        }
        return VipsBuffer(taking: output, count: length)
    }
}
