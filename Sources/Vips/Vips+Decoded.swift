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
        guard let memory = vips_image_copy_memory(eightBit.pointer).map(VipsImageHandle.init(taking:)) else {
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
        let resized: VipsImageHandle?
        switch resize {
        case .exact(let width, let height):
            guard width >= 1, height >= 1 else { throw .invalidArgument("size \(width)x\(height)") }
            if width == image.width && height == image.height {
                resized = input
            } else {
                resized = VipsImageHandle.make {
                    cvips_thumbnail_image(
                        input.pointer, $0, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
                }
            }
        case .cover(let width, let height, let crop):
            guard width >= 1, height >= 1 else { throw .invalidArgument("size \(width)x\(height)") }
            let interesting = crop == .centre ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_ATTENTION
            resized = VipsImageHandle.make {
                cvips_thumbnail_image(input.pointer, $0, Int32(width), Int32(height), VIPS_SIZE_DOWN, interesting)
            }
        }
        guard let resized, let ready = vips_image_copy_memory(resized.pointer).map(VipsImageHandle.init(taking:))
        else { throw .encodeFailed(VipsError.takeErrorText()) }
        var options = VipsThumbnailOptions(width: ready.width, format: format, quality: quality)
        if let opaqueFormat, !ready.hasAlpha || isOpaque(ready) { options.format = opaqueFormat }
        let flat = try options.format == .jpeg ? flattenAlpha(ready) : ready
        let stripped = try withoutMetadata(flat)
        let buffer = try encode(stripped, options: options)
        return VipsThumbnail(buffer: buffer, width: stripped.width, height: stripped.height, format: options.format)
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
