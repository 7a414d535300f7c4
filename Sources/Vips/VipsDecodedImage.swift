internal import CVips
internal import CVipsShims

/// A decoded image in memory: first page, EXIF orientation applied, sRGB (or greyscale), 8 bits
/// per band, an unused alpha band dropped. Made once from a source by `Vips.decode`, then any number
/// of thumbnails are made from it (`Vips.thumbnail(of: .decoded(…))`) without decoding the source
/// again. Immutable after creation, so threads can cut from one concurrently.
public final class VipsDecodedImage: @unchecked Sendable {
    let handle: VipsImageHandle
    public let width: Int
    public let height: Int
    public let bands: Int
    public let hasAlpha: Bool

    init(handle: VipsImageHandle) {
        self.handle = handle
        self.width = handle.width
        self.height = handle.height
        self.bands = handle.bands
        self.hasAlpha = handle.hasAlpha
    }

    /// The pixels, interleaved, `width × height × bands` bytes.
    public var byteCount: Int { width * height * bands }

    /// The pixels, `bands` interleaved 8-bit samples each, row by row (`byteCount` bytes), read from
    /// a private copy like a cut's.
    public func pixels() throws(VipsError) -> [UInt8] {
        guard let copy = makeImage() else { throw .encodeFailed(VipsError.takeErrorText()) }
        var length = 0
        guard let memory = vips_image_write_to_memory(copy.pointer, &length) else {
            throw .encodeFailed(VipsError.takeErrorText())
        }
        defer { g_free(memory) }
        return Array(UnsafeRawBufferPointer(start: memory, count: length))
    }

    /// A private in-memory copy of the image for one cut (a memcpy-speed pass, ~2 ms for a
    /// 1024-px copy). Not a `vips_image_new_from_memory` header over the shared pixels: libvips
    /// shrinks such "foreign" buffers about 4× slower (measured: 1024 → 200 px in 35 ms instead of
    /// 9 ms). Not the shared image itself either: cutting from one cached image on several worker
    /// threads at once crashed under load (heap corruption in the bench's new-size mode) — which
    /// turned out to be liborc's code allocator racing (0.4.33), now avoided by serialising its
    /// compile and free calls (CVipsShims.c); cutting from the shared image has not been measured
    /// since, so the copy stays.
    func makeImage() -> VipsImageHandle? {
        guard let view = VipsImageHandle.make({ cvips_copy(handle.pointer, $0) }),
            let copy = vips_image_copy_memory(view.pointer)
        else { return nil }
        return VipsImageHandle(taking: copy)
    }
}
