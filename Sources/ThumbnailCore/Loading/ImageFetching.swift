/// Brings a source's bytes. The default implementation is libcurl-backed (in the service); tests
/// swap in fakes.
public protocol ImageFetching: Sendable {
    /// Starts fetching and returns at once; `completion` runs exactly once, on any thread, and
    /// must not block. Implementations apply the `SourcePolicy` to every hop and connection.
    func fetch(_ url: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void)
}

/// Turns source bytes into a thumbnail. Called on worker threads only; blocking is fine here.
public protocol ImageTransforming: Sendable {
    /// Reads the header only (format, dimensions) — no pixel decode. Refuses untrusted formats.
    func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo

    /// Decodes, resizes and encodes, never larger than the source, EXIF orientation applied,
    /// sRGB, metadata stripped.
    func transform(_ source: ImageBytes, info: SourceInfo, spec: TransformSpec, format: OutputFormat)
        throws(ThumbnailError) -> EncodedImage
}
