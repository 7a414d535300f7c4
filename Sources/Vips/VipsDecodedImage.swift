internal import CVips
internal import CVipsShims

/// A decoded image in memory: first page, EXIF orientation applied, sRGB (or greyscale), 8 bits
/// per band, alpha kept, no metadata. Made once from a source by `Vips.decode`, then any number of
/// thumbnails are made from it (`Vips.thumbnail(of:…)`) without decoding the source again.
/// Immutable after creation, so threads can cut from one concurrently.
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

    /// Where the pixels are (valid while this object lives).
    public var pixels: UnsafeRawPointer? { vips_image_get_data(handle.pointer).map { UnsafeRawPointer($0) } }

    /// A private in-memory copy of the image for one cut (a memcpy-speed pass, ~2 ms for a
    /// 1024-px copy). Not a `vips_image_new_from_memory` header over the shared pixels: libvips
    /// shrinks such "foreign" buffers about 4× slower (measured: 1024 → 200 px in 35 ms instead of
    /// 9 ms). Not the shared image itself either: cutting from one cached image on several worker
    /// threads at once crashed under load (heap corruption in the bench's new-size mode).
    func makeImage() -> VipsImageHandle? {
        guard let view = VipsImageHandle.make({ cvips_copy(handle.pointer, $0) }),
            let copy = vips_image_copy_memory(view.pointer)
        else { return nil }
        return VipsImageHandle(taking: copy)
    }
}

/// How a thumbnail is cut from a decoded image. The caller computes the exact size from the
/// source's dimensions, so every decoded copy of one source gives the same output size.
public enum VipsResize: Sendable, Equatable {
    /// Scaled to exactly width × height (aspect is the caller's business).
    case exact(width: Int, height: Int)
    /// Scaled to cover width × height, then cropped to it (never larger than the image).
    case cover(width: Int, height: Int, crop: VipsCrop)
}
