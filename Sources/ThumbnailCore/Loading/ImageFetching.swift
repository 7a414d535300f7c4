/// Brings a source's bytes. The default implementation is libcurl-backed (in the service); tests
/// swap in fakes.
public protocol ImageFetching: Sendable {
    /// Starts fetching and returns at once; `completion` runs exactly once, on any thread, and
    /// must not block. Implementations apply the `SourcePolicy` to every hop and connection.
    /// With `validators` (a revalidation) the request is conditional, and the answer may be
    /// `.notModified`.
    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void)
}

/// A fetch's answer.
public enum FetchedSource: Sendable {
    /// The source's bytes (new, or the same again from an origin that ignores conditions).
    case modified(ImageBytes, OriginDirectives)
    /// A conditional fetch's "not modified": the stored bytes are still the source.
    case notModified(OriginDirectives)
}
