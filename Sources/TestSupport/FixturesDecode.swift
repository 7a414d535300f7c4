internal import CVips
internal import CVipsShims

/// A decoded first page with its metadata, for assertions. Pixels are kept as 8-bit samples.
public struct DecodedImage: Sendable {
    /// Loader nickname, e.g. "jpegload_buffer".
    public let loader: String
    public let width: Int
    public let height: Int
    public let bands: Int
    /// libvips' interpretation nickname, e.g. "srgb", "cmyk", "b-w".
    public let interpretation: String
    public let hasICCProfile: Bool
    public let hasEXIF: Bool
    /// The EXIF orientation tag, if present.
    public let orientation: Int?
    /// Pages (frames) in the file.
    public let pageCount: Int
    /// Interleaved samples, `bands` per pixel, row by row.
    public let samples: [UInt8]

    /// Average of each band over a 5×5 box around (x, y), clipped to the image, in 0...255.
    public func pixel(_ x: Int, _ y: Int) -> [Double] {
        var sums = [Double](repeating: 0, count: bands)
        var count = 0
        for row in max(0, y - 2)...min(height - 1, y + 2) {
            for column in max(0, x - 2)...min(width - 1, x + 2) {
                let offset = (row * width + column) * bands
                for band in 0..<bands { sums[band] += Double(samples[offset + band]) }
                count += 1
            }
        }
        return sums.map { $0 / Double(count) }
    }
}

/// Why `Fixtures.decode` failed.
public struct FixtureDecodeError: Error, CustomStringConvertible {
    public let description: String
}

extension Fixtures {
    /// Decodes the first page of any image libvips can read (untrusted loaders included unless
    /// blocked by the process).
    public static func decode(_ bytes: [UInt8]) throws -> DecodedImage {
        _ = started
        let opened = bytes.withUnsafeBytes { cvips_image_new_from_buffer($0.baseAddress, $0.count, "") }
        guard let opened else { throw FixtureDecodeError(description: FixtureImage.errorText()) }
        let image = FixtureImage(taking: opened)
        let pointer = image.pointer

        func has(_ field: String) -> Bool { vips_image_get_typeof(pointer, field) != 0 }
        var loaderName: UnsafePointer<CChar>? = nil
        let loader =
            has("vips-loader") && vips_image_get_string(pointer, "vips-loader", &loaderName) == 0
            ? String(cString: loaderName!) : ""
        var orientation: Int? = nil
        if has("orientation") {
            var value: Int32 = 0
            if vips_image_get_int(pointer, "orientation", &value) == 0 { orientation = Int(value) }
        }
        let interpretation = String(
            cString: vips_enum_nick(
                vips_interpretation_get_type(), Int32(vips_image_get_interpretation(pointer).rawValue)))

        var eightBit = image
        if pointer.pointee.BandFmt != VIPS_FORMAT_UCHAR {
            eightBit = image.apply { cvips_cast(image.pointer, $0, VIPS_FORMAT_UCHAR) }
        }
        var length = 0
        guard let memory = vips_image_write_to_memory(eightBit.pointer, &length) else {
            throw FixtureDecodeError(description: FixtureImage.errorText())
        }
        defer { g_free(memory) }
        return DecodedImage(
            loader: loader, width: Int(pointer.pointee.Xsize), height: Int(pointer.pointee.Ysize),
            bands: Int(pointer.pointee.Bands), interpretation: interpretation, hasICCProfile: has("icc-profile-data"),
            hasEXIF: has("exif-data"), orientation: orientation, pageCount: Int(vips_image_get_n_pages(pointer)),
            samples: Array(UnsafeRawBufferPointer(start: memory, count: length)))
    }

    /// Mean absolute difference per sample (0...255) of two images of the same size and bands.
    public static func meanAbsoluteDifference(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.bands == b.bands, "images differ in shape")
        guard !a.samples.isEmpty else { return 0 }
        var total = 0
        for index in a.samples.indices { total += abs(Int(a.samples[index]) - Int(b.samples[index])) }
        return Double(total) / Double(a.samples.count)
    }
}
