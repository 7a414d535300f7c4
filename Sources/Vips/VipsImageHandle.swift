internal import CVips

/// Owns one `VipsImage` reference and drops it in `deinit`, so every path through a pipeline
/// unrefs every image it made. Confined to the call that made it (not `Sendable`).
final class VipsImageHandle {
    let pointer: UnsafeMutablePointer<VipsImage>

    /// Takes over a reference the caller owns.
    init(taking pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(pointer)
    }

    /// Runs a libvips operation that writes a new image to its `out` argument; `nil` when it fails
    /// (the error text stays in the vips error buffer for the caller to take).
    static func make(_ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32)
        -> VipsImageHandle?
    {
        var out: UnsafeMutablePointer<VipsImage>? = nil
        let status = operation(&out)
        guard status == 0, let out else {
            if let out { g_object_unref(out) }
            return nil
        }
        return VipsImageHandle(taking: out)
    }

    var width: Int { Int(pointer.pointee.Xsize) }
    var height: Int { Int(pointer.pointee.Ysize) }
    var bands: Int { Int(pointer.pointee.Bands) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// Height of one page; the full height for a single-page image.
    var pageHeight: Int { Int(vips_image_get_page_height(pointer)) }
    var pageCount: Int { Int(vips_image_get_n_pages(pointer)) }
    /// EXIF orientation 1...8, 1 when absent or invalid.
    var orientation: Int { Int(vips_image_get_orientation(pointer)) }
    /// Bytes per band sample of the image as it is (`vips_format_sizeof` of its band format).
    var bytesPerSample: Int { Int(vips_format_sizeof(pointer.pointee.BandFmt)) }
    /// Whether the loader reported a progressive JPEG or an interlaced PNG (libvips' "interlaced" field).
    var interlaced: Bool {
        var value: Int32 = 0
        return vips_image_get_typeof(pointer, "interlaced") != 0
            && vips_image_get_int(pointer, "interlaced", &value) == 0
            && value != 0
    }
    /// A string metadata field ("heif-compression", ...), if the image has it.
    func string(_ field: String) -> String? {
        var value: UnsafePointer<CChar>? = nil
        guard vips_image_get_typeof(pointer, field) != 0, vips_image_get_string(pointer, field, &value) == 0,
            let value
        else { return nil }
        return String(cString: value)
    }

    /// An integer metadata field ("loop", ...), if the image has it.
    func int(_ field: String) -> Int? {
        var value: Int32 = 0
        guard vips_image_get_typeof(pointer, field) != 0, vips_image_get_int(pointer, field, &value) == 0 else {
            return nil
        }
        return Int(value)
    }

    /// An integer-array metadata field ("delay", ...), if the image has it.
    func intArray(_ field: String) -> [Int]? {
        var values: UnsafeMutablePointer<Int32>? = nil
        var count: Int32 = 0
        guard vips_image_get_typeof(pointer, field) != 0,
            vips_image_get_array_int(pointer, field, &values, &count) == 0
        else { return nil }
        guard let values, count > 0 else { return [] }
        return UnsafeBufferPointer(start: values, count: Int(count)).map(Int.init)
    }

    /// Sets an integer metadata field. Only on an image this call made and nobody else uses yet.
    func setInt(_ field: String, _ value: Int) {
        vips_image_set_int(pointer, field, Int32(clamping: value))
    }

    /// Sets an integer-array metadata field. Only on an image this call made and nobody else uses yet.
    func setIntArray(_ field: String, _ values: [Int]) {
        var copy = values.map { Int32(clamping: $0) }
        vips_image_set_array_int(pointer, field, &copy, Int32(copy.count))
    }

    /// Whether the orientation swaps width and height.
    var orientationSwapsAxes: Bool { vips_image_get_orientation_swap(pointer) != 0 }

    /// Removes every metadata field. Only for an image this call made and nobody else uses yet
    /// (libvips shares metadata between operations otherwise).
    func removeAllMetadata() {
        guard let fields = vips_image_get_fields(pointer) else { return }
        defer { g_strfreev(fields) }
        var index = 0
        while let name = fields[index] {
            // Built-in header fields (width, bands, ...) are not metadata: remove ignores them.
            _ = vips_image_remove(pointer, name)
            index += 1
        }
    }

    /// The embedded ICC profile's bytes, if any; valid while this image lives.
    var iccProfile: UnsafeRawBufferPointer? {
        var data: UnsafeRawPointer? = nil
        var length = 0
        guard vips_image_get_typeof(pointer, "icc-profile-data") != 0,
            vips_image_get_blob(pointer, "icc-profile-data", &data, &length) == 0, let data
        else { return nil }
        return UnsafeRawBufferPointer(start: data, count: length)
    }

    /// The colour space signature of the embedded ICC profile ("RGB ", "CMYK", "GRAY", ...), if any.
    var iccProfileColourSpace: String? {
        guard let profile = iccProfile, profile.count >= 20 else { return nil }
        return String(decoding: profile[16..<20], as: UTF8.self)
    }
}
