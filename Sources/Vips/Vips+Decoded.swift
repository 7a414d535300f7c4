internal import CVips
internal import CVipsShims

extension Vips {
    /// Decodes `bytes` to fit inside width × height, never upscaling, with shrink-on-load (JPEG
    /// and WebP decode at reduced size directly). The result is oriented, sRGB or greyscale,
    /// 8-bit, in memory, without metadata.
    public static func decode(of bytes: UnsafeRawBufferPointer, width: Int, height: Int) throws(VipsError)
        -> VipsDecodedImage
    {
        initialize()
        guard width >= 1, height >= 1 else { throw .invalidArgument("box \(width)x\(height)") }
        let loader = try findLoader(bytes)
        if loader.isBlocked { throw .blockedLoader(loader.nickname) }
        guard
            let lazy = VipsImageHandle.make({
                cvips_thumbnail_buffer(
                    bytes.baseAddress, bytes.count, $0, Int32(min(width, unboundedHeight)),
                    Int32(min(height, unboundedHeight)), VIPS_SIZE_DOWN, VIPS_INTERESTING_NONE, loadOptions)
            })
        else { throw .decodeFailed(VipsError.takeErrorText()) }
        // Decode now, so a decode failure surfaces here and the steps below run on memory.
        guard let decoded = vips_image_copy_memory(lazy.pointer).map(VipsImageHandle.init(taking:)) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        let srgb = convertEmbeddedRGBProfileToSRGB(decoded)
        let eightBit = try toEightBit(srgb)
        guard let eightBitMemory = vips_image_copy_memory(eightBit.pointer).map(VipsImageHandle.init(taking:)) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        let trimmed = withoutUnusedAlpha(eightBitMemory)
        guard let memory = vips_image_copy_memory(trimmed.pointer).map(VipsImageHandle.init(taking:)) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return VipsDecodedImage(handle: memory)
    }

    /// A thumbnail of a decoded image: resize (and crop), flatten for JPEG, encode without metadata.
    public static func thumbnail(
        of image: VipsDecodedImage, resize: VipsResize, format: VipsOutputFormat, quality: Int,
        opaqueFormat: VipsOutputFormat? = nil
    ) throws(VipsError) -> VipsThumbnail {
        initialize()
        guard (1...100).contains(quality) else { throw .invalidArgument("quality \(quality)") }
        guard let input = image.makeImage() else { throw .encodeFailed(VipsError.takeErrorText()) }
        let resized = try cut(input, resize)
        guard let ready = vips_image_copy_memory(resized.pointer).map(VipsImageHandle.init(taking:)) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        var options = VipsThumbnailOptions(width: ready.width, format: format, quality: quality)
        if let opaqueFormat, !ready.hasAlpha || isOpaque(ready) { options.format = opaqueFormat }
        let flat = try options.format == .jpeg ? flattenAlpha(ready) : ready
        let stripped = try withoutMetadata(flat)
        let buffer = try encode(stripped, options: options)
        return VipsThumbnail(buffer: buffer, width: stripped.width, height: stripped.height, format: options.format)
    }

    /// Resizes (and crops) with `vips_resize` (lanczos3, as `vips_thumbnail` uses), alpha
    /// premultiplied around it. Never upscales.
    static func cut(_ input: VipsImageHandle, _ resize: VipsResize) throws(VipsError) -> VipsImageHandle {
        let width = Double(input.width)
        let height = Double(input.height)
        var hscale: Double
        var vscale: Double
        var crop: (width: Int, height: Int, interesting: VipsInteresting)? = nil
        switch resize {
        case .exact(let w, let h):
            guard w >= 1, h >= 1 else { throw .invalidArgument("size \(w)x\(h)") }
            hscale = min(1, Double(w) / width)
            vscale = min(1, Double(h) / height)
        case .cover(let w, let h, let interesting):
            guard w >= 1, h >= 1 else { throw .invalidArgument("size \(w)x\(h)") }
            let scale = min(1, max(Double(w) / width, Double(h) / height))
            hscale = scale
            vscale = scale
            crop = (w, h, interesting == .centre ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_ATTENTION)
        }
        var image = input
        if hscale < 1 || vscale < 1 {
            let alpha = image.hasAlpha
            if alpha {
                guard let premultiplied = VipsImageHandle.make({ cvips_premultiply(image.pointer, $0) }) else {
                    throw .encodeFailed(VipsError.takeErrorText())
                }
                image = premultiplied
            }
            guard let scaled = VipsImageHandle.make({ cvips_resize(image.pointer, $0, hscale, vscale) }) else {
                throw .encodeFailed(VipsError.takeErrorText())
            }
            image = scaled
            if alpha {
                guard let straight = VipsImageHandle.make({ cvips_unpremultiply(image.pointer, $0) }),
                    let bytes = VipsImageHandle.make({ cvips_cast(straight.pointer, $0, VIPS_FORMAT_UCHAR) })
                else { throw .encodeFailed(VipsError.takeErrorText()) }
                image = bytes
            }
        }
        if let crop, crop.width < image.width || crop.height < image.height {
            let w = min(crop.width, image.width)
            let h = min(crop.height, image.height)
            guard
                let cropped = VipsImageHandle.make({
                    cvips_smartcrop(image.pointer, $0, Int32(w), Int32(h), crop.interesting)
                })
            else { throw .encodeFailed(VipsError.takeErrorText()) }
            image = cropped
        }
        return image
    }

    /// Drops an alpha band that no pixel uses (opaque PNG wallpapers, every GIF): a third less
    /// memory for the cached copy and no premultiplication when cutting from it.
    static func withoutUnusedAlpha(_ image: VipsImageHandle) -> VipsImageHandle {
        guard image.hasAlpha, isOpaque(image),
            let colour = VipsImageHandle.make({ cvips_extract_band(image.pointer, $0, 0, Int32(image.bands - 1)) })
        else {
            vips_error_clear()
            return image
        }
        return colour
    }

    /// sRGB or greyscale (with alpha, if any) in 8 bits per band: what every encoder takes and what
    /// a decoded copy stores. 16-bit PNGs and TIFFs come down here.
    static func toEightBit(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
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
}
