import Curl
import ThumbnailCore

/// `ImageFetching` on libcurl: one I/O thread for every transfer (CurlMulti), redirects followed
/// here hop by hop so each target is re-checked, the resolved address of every connection
/// checked at connect time, the byte cap enforced while streaming, one deadline for all hops.
/// A revalidation sends the stored validators on every hop and takes a 304 as "not modified";
/// every answer's caching headers become its `OriginDirectives`.
final class CurlImageFetcher: ImageFetching {
    struct Limits: Sendable {
        var connectTimeout: Duration
        var totalTimeout: Duration
        var maxBytes: Int
        var maxRedirects = 5
        /// Connection failures in a row that open an origin's circuit breaker (0: off).
        var breakerFailures: Int
        var breakerCoolDown: Duration
    }

    private let multi: CurlMulti
    private let policy: SourcePolicy
    private let limits: Limits
    let breaker: OriginBreaker
    /// Unix seconds, for an `Expires` that comes without a `Date`.
    private let wallClock: @Sendable () -> Double
    static let userAgent = "thumbd/\(ThumbnailApp.version)"

    /// `now` is the wall clock (Unix seconds) for `Expires`; `clock` the monotonic one the circuit
    /// breakers' cool-downs run by; `log` hears a breaker open or close.
    init(
        policy: SourcePolicy, limits: Limits, maxConnections: Int = 64, now: @escaping @Sendable () -> Double,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        log: @escaping @Sendable (LogEvent) -> Void = { _ in }
    ) {
        self.multi = CurlMulti(maxConnections: maxConnections)
        self.policy = policy
        self.limits = limits
        self.wallClock = now
        self.breaker = OriginBreaker(
            threshold: limits.breakerFailures, coolDown: limits.breakerCoolDown, now: clock, log: log)
    }

    func shutdown() { multi.shutdown() }

    var originHealth: OriginHealth { breaker.counts }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        fetch(url, revalidating: validators, options: FetchOptions(), completion: completion)
    }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, options: FetchOptions,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        let allowed = min(limits.totalTimeout, max(.zero, options.timeLimit ?? limits.totalTimeout))
        let deadline = ContinuousClock.now + allowed
        let progress = options.progress ?? { _ in }
        var conditions: [String] = []
        if let etag = validators?.etag { conditions.append("If-None-Match: \(etag)") }
        if let date = validators?.lastModified { conditions.append("If-Modified-Since: \(date)") }
        hop(
            url, redirectsLeft: limits.maxRedirects, deadline: deadline, conditions: conditions, progress: progress,
            completion: completion)
    }

    private func hop(
        _ url: SourceURL, redirectsLeft: Int, deadline: ContinuousClock.Instant, conditions: [String],
        progress: @escaping @Sendable (Int) -> Void,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        do {
            try policy.check(url)
        } catch {
            return completion(.failure(error))
        }
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            return completion(.failure(ThumbnailError(.originTimeout, "deadline before \(url)")))
        }
        let origin = url.origin
        if case .refuse(let error) = breaker.check(origin) { return completion(.failure(error)) }
        let policy = self.policy
        var request = CurlTransferRequest(
            url: url.description, connectTimeout: min(limits.connectTimeout, remaining), totalTimeout: remaining,
            maxBodyBytes: limits.maxBytes, userAgent: Self.userAgent,
            allowConnection: { address in
                guard let ip = IPAddress(bytes: address.bytes) else { return false }
                return policy.allows(ip)
            })
        request.headers = conditions
        request.onBodyBytes = progress
        request.responseHeaders = OriginCacheHeaders.names
        multi.start(request) { [self] result in
            switch result {
            case .failure(let error):
                breaker.record(
                    origin, error.isConnectionLevel ? .connectionFailure(timedOut: error == .timedOut) : .inconclusive)
                completion(.failure(Self.map(error, url)))
            case .success(let response):
                breaker.record(origin, .answered)
                switch response.status {
                case 200, 203:
                    let body = response.body
                    guard body.count > 0, let pointer = body.pointer else {
                        return completion(.failure(ThumbnailError(.unsupportedSource, "empty body from \(url)")))
                    }
                    let directives = OriginCacheHeaders.directives(response.headers, now: wallClock())
                    completion(
                        .success(.modified(ImageBytes(base: pointer, count: body.count, owner: body), directives)))
                case 304 where !conditions.isEmpty:
                    completion(
                        .success(.notModified(OriginCacheHeaders.directives(response.headers, now: wallClock()))))
                case 301, 302, 303, 307, 308:
                    guard let location = response.redirectURL else {
                        return completion(
                            .failure(ThumbnailError(.originFailed, "redirect without Location from \(url)")))
                    }
                    guard redirectsLeft > 0 else {
                        return completion(
                            .failure(ThumbnailError(.originFailed, "more than \(limits.maxRedirects) redirects")))
                    }
                    guard let next = try? SourceURL(parsing: location) else {
                        return completion(
                            .failure(ThumbnailError(.sourceNotAllowed, "redirect to \(location.prefix(200))")))
                    }
                    hop(
                        next, redirectsLeft: redirectsLeft - 1, deadline: deadline, conditions: conditions,
                        progress: progress, completion: completion)
                case 404, 410:
                    completion(
                        .failure(ThumbnailError(.sourceNotFound, "origin answered \(response.status) for \(url)")))
                default:
                    completion(.failure(ThumbnailError(.originFailed, "origin answered \(response.status) for \(url)")))
                }
            }
        }
    }

    static func map(_ error: CurlTransferError, _ url: SourceURL) -> ThumbnailError {
        switch error {
        case .refusedByPolicy: ThumbnailError(.sourceNotAllowed, "address refused for \(url)")
        case .bodyTooLarge: ThumbnailError(.sourceTooLarge, "over the byte cap: \(url)")
        case .timedOut: ThumbnailError(.originTimeout, "timed out: \(url)")
        case .couldNotResolve: ThumbnailError(.originFailed, "could not resolve \(url.host)")
        case .couldNotConnect: ThumbnailError(.originFailed, "could not connect to \(url)")
        case .connectionLost: ThumbnailError(.originFailed, "connection lost: \(url)")
        case .notHTTP: ThumbnailError(.originFailed, "the answer is not HTTP/1.x: \(url)")
        case .invalidURL: ThumbnailError(.sourceNotAllowed, "curl refused the URL \(url)")
        case .failed(let code): ThumbnailError(.originFailed, "curl error \(code) for \(url)")
        case .cancelled: ThumbnailError(.shuttingDown, "fetch cancelled: \(url)")
        }
    }
}
