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

    /// As `fetch(_:revalidating:completion:)`, within `options`: a time limit shorter than the
    /// fetcher's own deadline (what is left after waiting for a slot of the origin), and a progress
    /// callback the work budget counts the fetch by.
    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, options: FetchOptions,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void)

    /// Origins by circuit-breaker state now, for the pipeline's metrics snapshot.
    var originHealth: OriginHealth { get }
}

/// How one fetch is to be made, beyond the fetcher's own limits.
public struct FetchOptions: Sendable {
    /// The most time the whole fetch may take (nil: the fetcher's own deadline).
    public var timeLimit: Duration?
    /// Told, from any thread and quickly, how many body bytes the fetch holds or has been promised
    /// so far (the declared Content-Length, then the bytes received).
    public var progress: (@Sendable (Int) -> Void)?

    public init(timeLimit: Duration? = nil, progress: (@Sendable (Int) -> Void)? = nil) {
        self.timeLimit = timeLimit
        self.progress = progress
    }
}

extension ImageFetching {
    /// A fetcher without circuit breakers: no origin is ever failing.
    public var originHealth: OriginHealth { OriginHealth() }

    /// A fetcher that can neither shorten its deadline nor tell its progress: its bytes count when
    /// they arrive, and its own deadline bounds it.
    public func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, options: FetchOptions,
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
