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
    /// EXIF, XMP and ICC anyway (measured), so we remove them ourselves. An `animation` is then set
    /// again: the frame height (`page-height`, which makes gifsave and webpsave write frames), the
    /// delays (`delay`, which both read; webpsave's fallback, the old `gif-delay`, is not needed)
    /// and `loop`.
    static func strip(_ image: VipsImageHandle, keeping animation: Animation? = nil) throws(VipsError)
        -> VipsImageHandle
    {
        guard let copy = VipsImageHandle.make({ cvips_copy(image.pointer, $0) }) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        copy.removeAllMetadata()
        if let animation {
            copy.setInt("page-height", animation.frameHeight)
            if let delays = animation.delays { copy.setIntArray("delay", delays) }
            copy.setInt("loop", animation.loop)
        }
        return copy
    }

    /// gifsave's settings, measured with 8.14.1's `vips gifsave` on 320-px-wide thumbnails of three
    /// animations: a 100-frame terminal recording, a 30-frame photographic pan, a 40-frame flat
    /// cartoon. Bytes; CPU (with the CLI's start); mean absolute error per sample against the
    /// thumbnail. libvips' defaults gave 89 KB, 1.12 MB, 126 KB.
    ///
    /// - interpalette_maxerror 8 (default 3): a frame reuses the previous palette unless it is off
    ///   by more than 8 levels, so unchanged pixels keep their index and can be left transparent
    ///   (below): the recording 89 → 21 KB (error 0.02 → 0.03), the others 3-4 % smaller.
    /// - interframe_maxerror 4 (default 0): a pixel within 4 levels (RGB distance) of what the
    ///   previous frame shows is left transparent, i.e. kept. The pan 1.12 → 0.72 MB (error 0.55 →
    ///   1.2: bounded per pixel against the current frame, so it cannot build up), the cartoon
    ///   126 → 105 KB. 8 took the pan to 0.44 MB at error 1.9.
    /// - effort 4 (default 7): the same bytes (within 0.1 %) for up to a third less CPU on the pan;
    ///   10 cost 30 % more for nothing; 1 made the recording and the cartoon blotchy (error 0.6-0.7).
    /// - dither 1 (default): 0 saved about a quarter of the CPU and no bytes, but banded skies.
    /// - bitdepth 8 (default): 7 saved 17-50 % with visibly fewer colours (errors up 2-4×).
    ///
    /// Together: the recording 89 → 17 KB, the pan 1.12 → 0.70 MB, the cartoon 126 → 101 KB, at
    /// 66-92 % of the defaults' CPU.
    private enum GIFSettings {
        static let effort: Int32 = 4
        static let dither = 1.0
        static let bitdepth: Int32 = 8
        static let interframeMaxError = 4.0
        static let interpaletteMaxError = 8.0
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
        case .gif:
            status = cvips_gifsave_buffer(
                image.pointer, &output, &length, GIFSettings.effort, GIFSettings.dither, GIFSettings.bitdepth,
                GIFSettings.interframeMaxError, GIFSettings.interpaletteMaxError)
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
