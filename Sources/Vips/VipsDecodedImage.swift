internal import CVips
internal import CVipsShims

/// A decoded image in memory: first page, EXIF orientation applied, sRGB (or greyscale), 8 bits
/// per band, alpha kept, no metadata. Made once from a source by `Vips.decode`, then any number of
/// thumbnails are made from it (`Vips.thumbnail(of:…)`) without decoding the source again.
/// Immutable after creation; each use wraps the pixels in a fresh image header, so threads can
/// use one concurrently.
public final class VipsDecodedImage: @unchecked Sendable {
    let handle: VipsImageHandle
    public let width: Int
    public let height: Int
    public let bands: Int
    public let hasAlpha: Bool
    let interpretation: VipsInterpretation

    init(handle: VipsImageHandle) {
        self.handle = handle
        self.width = handle.width
        self.height = handle.height
        self.bands = handle.bands
        self.hasAlpha = handle.hasAlpha
        self.interpretation = handle.bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W
    }

    /// The pixels, interleaved, `width × height × bands` bytes.
    public var byteCount: Int { width * height * bands }

    /// Where the pixels are (valid while this object lives).
    public var pixels: UnsafeRawPointer? { vips_image_get_data(handle.pointer).map { UnsafeRawPointer($0) } }

    /// A new image header over the same pixels, for one pipeline.
    func makeImage() -> VipsImageHandle? {
        guard let data = vips_image_get_data(handle.pointer) else { return nil }
        guard
            let image = vips_image_new_from_memory(
                data, byteCount, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        else { return nil }
        image.pointee.Type = interpretation
        return VipsImageHandle(taking: image)
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
