/// Decodes a source into a reusable copy that fits inside a box (never upscaled; shrink-on-load
/// where the format has it), EXIF orientation applied, sRGB, 8-bit, in memory. Called on worker
/// threads only; blocking is fine. The default is libvips (in the service).
public protocol ImageDecoding: Sendable {
    /// The library's own decoded image, carried opaquely by `DecodedSource`.
    associatedtype Decoded: Sendable

    func decode(
        _ source: ImageBytes, info: SourceInfo, fittingWidth width: Int, height: Int, deadline: JobDeadline
    ) throws(ThumbnailError)
        -> DecodedSource<Decoded>

    /// A decoded copy's pixels as 8-bit RGBA, what `/info`'s placeholders are computed from:
    /// greyscale widened, an opaque alpha added where the copy has none.
    func pixels(of copy: DecodedSource<Decoded>) throws(ThumbnailError) -> RGBAPixels
}
