internal import CVips
internal import CVipsShims

/// The steps on the output-sized image in memory: the opacity check, flatten, strip, encode.
extension VipsPipeline {
    /// Whether every pixel's alpha is at its maximum (a GIF or TIFF that carries an alpha band it
    /// does not use). One pass over an image already in memory.
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
        return minimum >= 255  // the image is 8-bit by now
    }

    /// JPEG has no alpha: flatten onto white.
    static func flatten(_ image: VipsImageHandle, for format: VipsOutputFormat) throws(VipsError)
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
    static func strip(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard let copy = VipsImageHandle.make({ cvips_copy(image.pointer, $0) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        copy.removeAllMetadata()
        return copy
    }

    static func encode(
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
