internal import CVips
internal import CVipsShims

/// Which loader opens a source, and opening it.
extension VipsPipeline {
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
    /// come after every allowed loader and never run. The source search that a time-limited JPEG,
    /// PNG or TIFF goes through instead (`vips_thumbnail_source`, `resize`) has the same order
    /// with three more in front: vipsload and ppmload (200: a file name, 2 bytes) and openslide
    /// (100: a file name, which a memory source has not); matrix and csv come after tiff.
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
    static func isBlocked(_ loader: String) -> Bool {
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

    /// Loaders that read their bytes as they decode, so that a deadline on the reads stops them
    /// (`cvips_thumbnail_timed`). The others read everything first: WebP and GIF decode from
    /// memory (and are bounded by their format's size limits), libheif decodes a HEIF in one call.
    static let streamingLoaders: Set<String> = ["jpegload_buffer", "pngload_buffer", "tiffload_buffer"]

    /// One lazy libvips `thumbnail` of the encoded bytes: decode with shrink-on-load and resize,
    /// in the stored orientation. With a deadline and a streaming loader, through a source whose
    /// reads fail once it has passed.
    ///
    /// `allPages`: every page as one strip (`n=-1`), which 8.14's thumbnail resizes page by page to
    /// one size (it rounds the vertical scale so that each page's output height is a whole number
    /// of rows, and sets `page-height` on the result).
    static func resize(
        _ bytes: UnsafeRawBufferPointer, loader: String, width: Int, height: Int, size: VipsSize,
        options: VipsOptions, allPages: Bool = false, _ deadline: VipsDeadline?
    ) throws(VipsError) -> VipsImageHandle {
        let optionString = allPages ? options.allPagesLoadOptionString : options.loadOptionString
        let image = VipsImageHandle.make { out in
            if let deadline, streamingLoaders.contains(loader) {
                return deadline.withPointer {
                    cvips_thumbnail_timed(
                        bytes.baseAddress, bytes.count, $0, out, Int32(width), Int32(height), size, optionString)
                }
            }
            return cvips_thumbnail_buffer(
                bytes.baseAddress, bytes.count, out, Int32(width), Int32(height), size, optionString)
        }
        guard let image else { throw .decodeFailed(VipsError.takeErrorText()) }
        return image
    }
}
