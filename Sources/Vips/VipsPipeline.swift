internal import CVips
internal import CVipsShims

/// The one production pipeline, written once as its steps in order:
///
///     header check → decode with shrink-on-load → orient → resize/crop   (`shrink`)
///     → sRGB → 8-bit → (in memory) → flatten → strip → encode
///
/// The first four are one libvips `thumbnail` call on purpose: it picks the shrink-on-load factor
/// (JPEG decodes at 1/2, 1/4, 1/8 for about the cost of entropy decoding; WebP scales), and
/// streams the decode through the resize, rotating and converting colour only on the small result.
/// That is exactly what the plain-libvips floor in `bench/` does, so a miss costs what libvips
/// needs. The same call on a decoded copy (`vips_thumbnail_image`) makes a new size from memory.
/// Every later step runs on the output-sized image.
enum VipsPipeline {
    /// Libvips' largest coordinate (`VIPS_MAX_COORD`): the box height for "fit the width only".
    static let unboundedSide = 10_000_000

    static func thumbnail(
        _ input: VipsInput, cut: VipsCut, encoding: VipsEncoding, options: VipsOptions
    ) throws(VipsError) -> VipsThumbnail {
        try validate(cut, encoding)
        let shrunk = try shrink(input, to: cut, options: options)
        let srgb = try toSRGB(shrunk)
        let eightBit = try toEightBit(srgb)
        // Decode now, into the small result: a decode failure must surface here, not inside an
        // encoder (8.14's webpsave leaks when its input fails), and the opacity check reads pixels.
        let ready = try materialize(eightBit, decodeError: input.isEncoded)
        var format = encoding.format
        if let opaque = encoding.opaqueFormat, !ready.hasAlpha || isOpaque(ready) { format = opaque }
        let flat = try flatten(ready, for: format)
        let stripped = try strip(flat)
        let buffer = try encode(stripped, format: format, quality: encoding.quality, options: options)
        return VipsThumbnail(buffer: buffer, width: stripped.width, height: stripped.height, format: format)
    }

    static func decode(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, options: VipsOptions
    ) throws(VipsError) -> VipsDecodedImage {
        guard width >= 1, height >= 1 else { throw .invalidArgument("box \(width)x\(height)") }
        _ = try checkLoader(bytes, options: options)
        let box = (min(width, unboundedSide), min(height, unboundedSide))
        guard
            let shrunk = VipsImageHandle.make({
                cvips_thumbnail_buffer(
                    bytes.baseAddress, bytes.count, $0, Int32(box.0), Int32(box.1), VIPS_SIZE_DOWN,
                    VIPS_INTERESTING_NONE, options.loadOptionString)
            })
        else { throw .decodeFailed(VipsError.takeErrorText()) }
        let eightBit = try toEightBit(toSRGB(shrunk))
        // The one copy into memory; a second only when an unused alpha band is dropped (rare: GIFs,
        // opaque PNGs with alpha), worth it because the copy is kept and cut from many times.
        let memory = try materialize(eightBit, decodeError: true)
        guard memory.hasAlpha, isOpaque(memory) else { return VipsDecodedImage(handle: memory) }
        guard let colour = VipsImageHandle.make({ cvips_extract_band(memory.pointer, $0, 0, Int32(memory.bands - 1)) })
        else {
            vips_error_clear()
            return VipsDecodedImage(handle: memory)
        }
        return VipsDecodedImage(handle: try materialize(colour, decodeError: true))
    }

    // MARK: - Steps

    private static func validate(_ cut: VipsCut, _ encoding: VipsEncoding) throws(VipsError) {
        guard (1...unboundedSide).contains(cut.width), (1...unboundedSide).contains(cut.height) else {
            throw .invalidArgument("size \(cut.width)x\(cut.height)")
        }
        guard (1...100).contains(encoding.quality) else {
            throw .invalidArgument("quality \(encoding.quality) is not in 1...100")
        }
    }

    /// Header check: names the loader from the first bytes (`VipsLoaderSignature`, never libvips'
    /// search over every loader) and refuses one the options do not allow or libvips blocks. Then
    /// that loader's own sniffer must agree, so that the search `vips_thumbnail_buffer` still runs
    /// (8.14 takes no loader hint) stops at it. What that search runs first, read in the 8.14 source
    /// (`vips_foreign_find_load_buffer`: each `*load_buffer` class's `is_a_buffer`, by priority
    /// then registration) and listed at run time for bookworm's build: png, webp (priority 200),
    /// gif, jpeg, tiff (50), jp2k, pdf, jxl, heif (0), svg (-5), rad (-50), magick (-100). Before a
    /// recognised format's loader, only fixed-length signature compares run (png 8 bytes, webp 12,
    /// gif 4, jpeg 2, jp2k 12, pdf 4, jxl 12), and for HEIF also tiff's, which hands the bytes to
    /// libtiff's TIFFClientOpen; a HEIF starts with a box size under 2048, so "\0\0", and libtiff
    /// stops at the 8-byte header's bad magic. Nothing inflates or loops; the signatures are
    /// disjoint, so none of these says yes first; svg (whose gzip sniffer is the hang) and magick
    /// come after every allowed loader and never run.
    static func checkLoader(_ bytes: UnsafeRawBufferPointer, options: VipsOptions) throws(VipsError) -> String {
        guard let loader = VipsLoaderSignature.loader(of: bytes) else { throw .unknownFormat }
        guard options.allowedLoaders.contains(loader), !isBlocked(loader) else { throw .blockedLoader(loader) }
        guard vips_foreign_is_a_buffer(loader, bytes.baseAddress, bytes.count) != 0 else {
            vips_error_clear()
            throw .unknownFormat
        }
        return loader
    }

    /// Whether libvips blocks `loader` (`vips_block_untrusted_set`, `Vips.initialize`).
    private static func isBlocked(_ loader: String) -> Bool {
        guard let objectClass = vips_class_find("VipsForeignLoad", loader) else { return true }
        let flags = UnsafeRawPointer(objectClass).assumingMemoryBound(to: VipsOperationClass.self).pointee.flags
        return flags.rawValue & VIPS_OPERATION_BLOCKED.rawValue != 0
    }

    /// Opens lazily with `loader` only (no sniffing): reads the header, decodes nothing yet.
    static func open(_ bytes: UnsafeRawBufferPointer, loader: String) throws(VipsError) -> VipsImageHandle {
        guard let image = cvips_load_buffer(loader, bytes.baseAddress, bytes.count) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return VipsImageHandle(taking: image)
    }

    /// Header check, decode with shrink-on-load, orient and resize/crop, as one lazy libvips
    /// `thumbnail`: `force` for an exact size (each axis scaled on its own), `down` plus a crop for
    /// a cover. Clamped to the oriented input, so it never upscales.
    private static func shrink(_ input: VipsInput, to cut: VipsCut, options: VipsOptions) throws(VipsError)
        -> VipsImageHandle
    {
        let (size, crop): (VipsSize, VipsInteresting)
        switch cut {
        case .exact: (size, crop) = (VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
        case .cover(_, _, let interesting):
            (size, crop) = (
                VIPS_SIZE_DOWN, interesting == .centre ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_ATTENTION
            )
        }
        switch input {
        case .encoded(let bytes):
            let source = try open(bytes, loader: checkLoader(bytes, options: options))
            let swap = source.orientationSwapsAxes
            let box = cut.clamped(
                toWidth: swap ? source.pageHeight : source.width, height: swap ? source.width : source.pageHeight)
            let (width, height) = (box.width, box.height)
            guard
                let image = VipsImageHandle.make({
                    cvips_thumbnail_buffer(
                        bytes.baseAddress, bytes.count, $0, Int32(width), Int32(height), size, crop,
                        options.loadOptionString)
                })
            else { throw .decodeFailed(VipsError.takeErrorText()) }
            return image
        case .decoded(let decoded):
            guard let copy = decoded.makeImage() else { throw .encodeFailed(VipsError.takeErrorText()) }
            let box = cut.clamped(toWidth: copy.width, height: copy.height)
            let (width, height) = (box.width, box.height)
            guard
                let image = VipsImageHandle.make({
                    cvips_thumbnail_image(copy.pointer, $0, Int32(width), Int32(height), size, crop)
                })
            else { throw .encodeFailed(VipsError.takeErrorText()) }
            return image
        }
    }

    /// 8.14's thumbnail converts to sRGB with `vips_colourspace`, which ignores an embedded RGB
    /// profile (Display P3, Adobe RGB, ...) and leaves it attached; stripping it on save would then
    /// shift the colours. So transform such images to sRGB with the profile. CMYK needs nothing:
    /// `colourspace` already imported it with its embedded (or the built-in) CMYK profile, which
    /// stays attached but is stripped on save. Greyscale stays greyscale.
    ///
    /// The intent is one the profile supports as an input: 8.14's `icc_transform` checks the one
    /// it is given (relative by default) and, if the profile lacks it, silently imports with its
    /// built-in sRGB instead, i.e. leaves the pixels unconverted. A profile with only perceptual
    /// tables (A2B0: jpegli's XYB JPEGs, many LUT-based camera and printer profiles) came out with a
    /// strong colour cast. Relative first (what every matrix profile gets, as before), then
    /// perceptual, then saturation (absolute needs the same A2B1 table as relative).
    ///
    /// A profile lcms2 cannot parse, or that supports no intent as an input, is ignored and the
    /// pixels are taken as sRGB, as browsers do with a broken profile. A transform that fails once
    /// a usable intent is chosen throws (the service answers 422): never a silent skip.
    private static func toSRGB(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard image.bands >= 3, let profile = image.iccProfile, image.iccProfileColourSpace == "RGB " else {
            return image
        }
        let supported = cvips_icc_input_intents(profile.baseAddress, profile.count)
        let intents = [VIPS_INTENT_RELATIVE, VIPS_INTENT_PERCEPTUAL, VIPS_INTENT_SATURATION]
        guard supported > 0, let intent = intents.first(where: { supported & (1 << $0.rawValue) != 0 }) else {
            return image
        }
        guard let converted = VipsImageHandle.make({ cvips_icc_transform(image.pointer, $0, "srgb", intent) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return converted
    }

    /// sRGB or greyscale (with alpha, if any) in 8 bits per band: what every encoder takes and what
    /// a decoded copy stores. 16-bit PNGs and TIFFs come down here.
    private static func toEightBit(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        let format = image.pointer.pointee.BandFmt
        let type = image.pointer.pointee.Type
        let grey = image.bands <= 2
        let target = grey ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        if format == VIPS_FORMAT_UCHAR && (type == target || (!grey && type == VIPS_INTERPRETATION_RGB)) {
            return image
        }
        guard let converted = VipsImageHandle.make({ cvips_colourspace(image.pointer, $0, target) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        if converted.pointer.pointee.BandFmt == VIPS_FORMAT_UCHAR { return converted }
        guard let cast = VipsImageHandle.make({ cvips_cast(converted.pointer, $0, VIPS_FORMAT_UCHAR) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return cast
    }

    /// Runs the lazy pipeline into memory.
    private static func materialize(_ image: VipsImageHandle, decodeError: Bool) throws(VipsError) -> VipsImageHandle {
        guard let memory = vips_image_copy_memory(image.pointer) else {
            let text = VipsError.takeErrorText()
            throw decodeError ? .decodeFailed(text) : .encodeFailed(text)
        }
        return VipsImageHandle(taking: memory)
    }

    /// Whether every pixel's alpha is at its maximum (a GIF or TIFF that carries an alpha band it
    /// does not use). One pass over an image already in memory.
    private static func isOpaque(_ image: VipsImageHandle) -> Bool {
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
        return minimum >= 255  // the image is 8-bit by now
    }

    /// JPEG has no alpha: flatten onto white.
    private static func flatten(_ image: VipsImageHandle, for format: VipsOutputFormat) throws(VipsError)
        -> VipsImageHandle
    {
        guard format == .jpeg, image.hasAlpha else { return image }
        guard let flat = VipsImageHandle.make({ cvips_flatten(image.pointer, $0, 255) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        return flat
    }

    /// A copy of `image` with every metadata field (EXIF, XMP, ICC, orientation, page height, ...)
    /// removed. The savers are also told to strip, but 8.14's webpsave ignores `strip` and writes
    /// EXIF, XMP and ICC anyway (measured), so we remove them ourselves.
    private static func strip(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard let copy = VipsImageHandle.make({ cvips_copy(image.pointer, $0) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        copy.removeAllMetadata()
        return copy
    }

    private static func encode(
        _ image: VipsImageHandle, format: VipsOutputFormat, quality: Int, options: VipsOptions
    ) throws(VipsError) -> VipsBuffer {
        var output: UnsafeMutableRawPointer? = nil
        var length = 0
        let q = Int32(quality)
        let strip: gboolean = 1
        let status: Int32
        switch format {
        case .jpeg:
            status = cvips_jpegsave_buffer(
                image.pointer, &output, &length, q, strip, options.jpeg.optimizeCoding ? 1 : 0,
                options.jpeg.interlace ? 1 : 0)
        case .png:
            status = cvips_pngsave_buffer(image.pointer, &output, &length, Int32(options.png.compression), strip)
        case .webp: status = cvips_webpsave_buffer(image.pointer, &output, &length, q, strip)
        case .avif:
            status = cvips_avifsave_buffer(image.pointer, &output, &length, q, Int32(options.avif.effort), strip)
        }
        guard status == 0, let output, length > 0 else {
            g_free(output)
            throw .encodeFailed(VipsError.takeErrorText())
        }
        if format == .webp {
            length = WebPMetadataStripper.strip(UnsafeMutableRawBufferPointer(start: output, count: length))
        }
        // libvips grows its memory target as a GByteArray, by powers of two from 16 KiB: a 2-KiB
        // thumbnail came back in a 16-KiB block, 1.3-8.4x its length (measured, 8.14). A kept
        // thumbnail lives in the cache as long as it is asked for, which counts its length, so the
        // slack was memory no budget saw (~2x the variants' bytes). Shrinking in place splits the
        // block and frees the tail into the heap, without copying the bytes.
        let fitted = g_realloc(output, gsize(length)) ?? output
        return VipsBuffer(taking: fitted, count: length)
    }
}

extension VipsInput {
    var isEncoded: Bool {
        if case .encoded = self { return true }
        return false
    }
}
