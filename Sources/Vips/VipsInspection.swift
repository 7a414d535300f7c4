internal import CVips
internal import CVipsShims

/// What an encoded image decodes to, for tests' assertions (TestSupport's `Fixtures.decode`): the
/// loader, the metadata a thumbnail must or must not carry, and the first page's pixels in 8 bits
/// (or every page's, stacked, for an animation's frames).
/// `package`, not `public`: the service only reads headers (`Vips.header`) and never needs this.
package struct VipsInspection: Sendable {
    /// Loader nickname, e.g. "jpegload_buffer".
    package let loader: String
    package let width: Int
    /// The decoded height: one page's, or all pages' with `allPages`.
    package let height: Int
    /// One page's height (`height` / pages decoded).
    package let pageHeight: Int
    package let bands: Int
    /// libvips' interpretation nickname, e.g. "srgb", "cmyk", "b-w".
    package let interpretation: String
    package let hasICCProfile: Bool
    package let hasEXIF: Bool
    /// The EXIF orientation tag, if present.
    package let orientation: Int?
    /// Pages (frames) in the file.
    package let pageCount: Int
    /// Each frame's delay in milliseconds (an animated GIF or WebP), else empty.
    package let delays: [Int]
    /// The animation's play count, 0 for forever (libvips' "loop"), if the file has one.
    package let loop: Int?
    /// Interleaved samples, `bands` per pixel, row by row, cast to 8 bits if stored wider.
    package let samples: [UInt8]

    /// Decodes the first page, or with `allPages` every page (`n=-1`, a strip of frames), with
    /// whichever loader libvips picks. No loader allow-list, unlike the pipeline: tests decode what
    /// the service made. Untrusted loaders stay blocked (`Vips.initialize`, called here).
    package init(decoding bytes: [UInt8], allPages: Bool = false) throws(VipsError) {
        Vips.initialize()
        // Random access, unlike the pipeline: this reads the whole image at once.
        func open(_ options: String) throws(VipsError) -> VipsImageHandle {
            let opened = bytes.withUnsafeBytes { cvips_image_new_from_buffer($0.baseAddress, $0.count, options) }
            guard let opened else { throw .decodeFailed(VipsError.takeErrorText()) }
            return VipsImageHandle(taking: opened)
        }
        var image = try open("")
        // Only loaders of several pages take `n` (JPEG's and PNG's refuse it).
        if allPages, image.pageCount > 1 { image = try open("[n=-1]") }
        let pointer = image.pointer

        func has(_ field: String) -> Bool { vips_image_get_typeof(pointer, field) != 0 }
        var loaderName: UnsafePointer<CChar>? = nil
        if has("vips-loader"), vips_image_get_string(pointer, "vips-loader", &loaderName) == 0, let loaderName {
            loader = String(cString: loaderName)
        } else {
            loader = ""
        }
        var orientationValue: Int32 = 0
        orientation =
            has("orientation") && vips_image_get_int(pointer, "orientation", &orientationValue) == 0
            ? Int(orientationValue) : nil
        interpretation = String(
            cString: vips_enum_nick(
                vips_interpretation_get_type(), Int32(vips_image_get_interpretation(pointer).rawValue)))
        width = image.width
        height = image.height
        bands = image.bands
        hasICCProfile = has("icc-profile-data")
        hasEXIF = has("exif-data")
        pageCount = image.pageCount
        pageHeight = image.pageHeight
        delays = image.intArray("delay") ?? []
        loop = image.int("loop")

        var eightBit = image
        if pointer.pointee.BandFmt != VIPS_FORMAT_UCHAR {
            guard let cast = VipsImageHandle.make({ cvips_cast(pointer, $0, VIPS_FORMAT_UCHAR) }) else {
                throw .decodeFailed(VipsError.takeErrorText())
            }
            eightBit = cast
        }
        var length = 0
        guard let memory = vips_image_write_to_memory(eightBit.pointer, &length) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        defer { g_free(memory) }
        samples = Array(UnsafeRawBufferPointer(start: memory, count: length))
    }
}
