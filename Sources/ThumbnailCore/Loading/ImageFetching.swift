/// Brings a source's bytes. The default implementation is libcurl-backed (in the service); tests
/// swap in fakes.
public protocol ImageFetching: Sendable {
    /// Starts fetching and returns at once; `completion` runs exactly once, on any thread, and
    /// must not block. Implementations apply the `SourcePolicy` to every hop and connection.
    func fetch(_ url: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void)
}

/// Turns source bytes into thumbnails. Called on worker threads only; blocking is fine here.
public protocol ImageTransforming: Sendable {
    /// Reads the header only (format, displayed size after EXIF orientation) — no pixel decode.
    /// Refuses untrusted formats.
    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo

    /// Decodes the first page to fit inside width × height (never upscaling; shrink-on-load
    /// where the format has it), EXIF orientation applied, sRGB, 8-bit, in memory.
    func decode(_ source: ImageBytes, info: SourceInfo, width: Int, height: Int) throws(ThumbnailError)
        -> DecodedSource

    /// Cuts a thumbnail from a decoded copy and encodes it with all metadata stripped. With
    /// `opaqueFormat`, an image with no transparent pixel is encoded in that format instead.
    func encode(
        _ decoded: DecodedSource, resize: Resize, format: OutputFormat, quality: Int, opaqueFormat: OutputFormat?
    ) throws(ThumbnailError) -> EncodedImage
}
