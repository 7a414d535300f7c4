internal import CVips

/// An image built in memory for tests: TestSupport's fixtures make their JPEGs, GIFs, CMYK and ICC
/// files with it, so that test code reaches libvips only through this module and production
/// carries no fixture-only shims. `package`, not `public`: the service never sees it.
///
/// Operations run through libvips' generic, non-variadic operation API (an operation by name, its
/// arguments from an option string such as `"Q=90,strip=false"`), which is what `vips_call` does
/// inside, so no C shim is needed for them. Failures crash: a fixture is a test's input, and a
/// broken one should stop the run loudly. Every reference taken is dropped again, because the leak
/// test counts live vips objects process-wide. Confined to the thread that made it.
package final class VipsFixtureImage {
    let handle: VipsImageHandle

    private init(handle: VipsImageHandle) {
        self.handle = handle
    }

    /// `width` × `height` pixels of `bands` interleaved 8-bit samples, copied from `pixels`.
    /// Starts libvips with `Vips.initialize()`, the one guarded start-up.
    package convenience init(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        Vips.initialize()
        precondition(pixels.count == width * height * bands, "\(pixels.count) samples for \(width)x\(height)x\(bands)")
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        guard let image else { fatalError("vips_image_new_from_memory_copy: \(VipsError.takeErrorText())") }
        self.init(handle: VipsImageHandle(taking: image))
    }

    /// Sets an integer metadata field: "orientation" (which savers that keep metadata write as the
    /// EXIF tag), "page-height" (the frame height of an animation), ...
    package func setInt(_ field: String, _ value: Int) {
        vips_image_set_int(handle.pointer, field, Int32(value))
    }

    /// Sets an integer-array metadata field: "delay" (an animation's frame delays in milliseconds).
    package func setIntArray(_ field: String, _ values: [Int]) {
        handle.setIntArray(field, values)
    }

    /// Sets a blob metadata field, e.g. "icc-profile-data" (which savers that keep metadata embed).
    package func setBlob(_ field: String, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { vips_image_set_blob_copy(handle.pointer, field, $0.baseAddress, $0.count) }
    }

    /// The `out` image of libvips operation `operation` ("copy", "icc_transform", ...) on this
    /// image, its other arguments (required ones too) from `options`, e.g. `"interpretation=cmyk"`.
    package func apply(_ operation: String, options: String = "") -> VipsFixtureImage {
        run(operation, options: options) { object in
            var value = GValue()
            g_value_init(&value, vips_image_get_type())
            defer { g_value_unset(&value) }
            g_object_get_property(object, "out", &value)
            // dup: the result keeps its own reference after the operation's outputs are unreffed.
            guard let out = g_value_dup_object(&value) else { fatalError("\(operation): no output image") }
            return VipsFixtureImage(handle: VipsImageHandle(taking: out.assumingMemoryBound(to: VipsImage.self)))
        }
    }

    /// The bytes a `*save_buffer` operation (`saver`, e.g. "jpegsave_buffer") writes for this image,
    /// its options from `options`, e.g. `"Q=90,strip=false"`.
    package func save(_ saver: String, options: String = "") -> [UInt8] {
        run(saver, options: options) { object in
            var value = GValue()
            g_value_init(&value, vips_blob_get_type())
            defer { g_value_unset(&value) }
            g_object_get_property(object, "buffer", &value)
            // A VipsBlob is a VipsArea; the value keeps it alive until the copy is made.
            guard let blob = g_value_get_boxed(&value) else { fatalError("\(saver): no output buffer") }
            let area = UnsafeMutableRawPointer(mutating: blob).assumingMemoryBound(to: VipsArea.self)
            var length = 0
            let data = vips_area_get_data(area, &length, nil, nil, nil)
            return Array(UnsafeRawBufferPointer(start: data, count: length))
        }
    }

    /// Makes operation `name`, sets "in" to this image and the rest from `options`, builds it (through
    /// the operation cache, as `vips_call` does; `Vips.initialize` keeps that cache empty), hands it
    /// to `output` to read its result, then drops the operation and its outputs.
    private func run<Result>(
        _ name: String, options: String, output: (UnsafeMutablePointer<GObject>) -> Result
    ) -> Result {
        guard var operation = vips_operation_new(name) else {
            fatalError("vips_operation_new(\(name)): \(VipsError.takeErrorText())")
        }
        defer {
            vips_object_unref_outputs(Self.cast(operation))
            g_object_unref(operation)
        }
        var input = GValue()
        g_value_init(&input, vips_image_get_type())
        g_value_set_object(&input, handle.pointer)
        g_object_set_property(Self.cast(operation), "in", &input)
        g_value_unset(&input)
        guard options.isEmpty || vips_object_set_from_string(Self.cast(operation), options) == 0 else {
            fatalError("\(name)[\(options)]: \(VipsError.takeErrorText())")
        }
        // buildp may swap in an equivalent cached operation; `operation` then names that one.
        var built: UnsafeMutablePointer<VipsOperation>? = operation
        guard vips_cache_operation_buildp(&built) == 0, let built else {
            fatalError("\(name)[\(options)]: \(VipsError.takeErrorText())")
        }
        operation = built
        return output(Self.cast(operation))
    }

    /// A VipsOperation is a VipsObject is a GObject (C struct inheritance), which Swift does not see.
    private static func cast<Base>(_ operation: UnsafeMutablePointer<VipsOperation>) -> UnsafeMutablePointer<Base> {
        UnsafeMutableRawPointer(operation).assumingMemoryBound(to: Base.self)
    }
}
