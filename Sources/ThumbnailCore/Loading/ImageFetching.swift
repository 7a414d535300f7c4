/// Brings a source's bytes. The default implementation is libcurl-backed (in the service); tests
/// swap in fakes.
public protocol ImageFetching: Sendable {
    /// Starts fetching and returns at once; `completion` runs exactly once, on any thread, and
    /// must not block. Implementations apply the `SourcePolicy` to every hop and connection.
    func fetch(_ url: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void)
}
