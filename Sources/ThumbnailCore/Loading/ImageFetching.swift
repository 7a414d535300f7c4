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

    /// As `fetch(_:revalidating:completion:)`, telling `progress` (from any thread, quickly) how
    /// many body bytes the fetch holds or has been promised so far (the declared Content-Length,
    /// then the bytes received): the work budget counts a fetch in progress by it.
    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, progress: @escaping @Sendable (Int) -> Void,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void)
}

extension ImageFetching {
    /// A fetcher that cannot tell its progress: counted when its bytes arrive.
    public func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, progress: @escaping @Sendable (Int) -> Void,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        fetch(url, revalidating: validators, completion: completion)
    }
}

/// A fetch's answer.
public enum FetchedSource: Sendable {
    /// The source's bytes (new, or the same again from an origin that ignores conditions).
    case modified(ImageBytes, OriginDirectives)
    /// A conditional fetch's "not modified": the stored bytes are still the source.
    case notModified(OriginDirectives)
}
