import Curl
import Dispatch
import ThumbnailCore

/// `ImageFetching` on libcurl: one I/O thread for every transfer (CurlMulti), redirects followed
/// here hop by hop so each target is re-checked, the resolved address of every connection
/// checked at connect time, the byte cap enforced while streaming, one deadline for all hops.
final class CurlImageFetcher: ImageFetching {
    struct Limits: Sendable {
        var connectTimeout: Duration
        var totalTimeout: Duration
        var maxBytes: Int
        var maxRedirects = 5
    }

    private let multi: CurlMulti
    private let policy: SourcePolicy
    private let limits: Limits
    static let userAgent = "thumbd/\(ThumbnailApp.version)"

    init(policy: SourcePolicy, limits: Limits, maxConnections: Int = 64) {
        self.multi = CurlMulti(maxConnections: maxConnections)
        self.policy = policy
        self.limits = limits
    }

    func shutdown() { multi.shutdown() }

    func fetch(_ url: SourceURL, completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(limits.totalTimeout / .nanoseconds(1))
        hop(url, redirectsLeft: limits.maxRedirects, deadline: deadline, completion: completion)
    }

    private func hop(
        _ url: SourceURL, redirectsLeft: Int, deadline: UInt64,
        completion: @escaping @Sendable (Result<ImageBytes, ThumbnailError>) -> Void
    ) {
        do {
            try policy.check(url)
        } catch {
            return completion(.failure(error))
        }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < deadline else {
            return completion(.failure(ThumbnailError(.originTimeout, "deadline before \(url)")))
        }
        let remaining = Duration.nanoseconds(Int64(deadline - now))
        let policy = self.policy
        let request = CurlTransferRequest(
            url: url.description, connectTimeout: min(limits.connectTimeout, remaining), totalTimeout: remaining,
            maxBodyBytes: limits.maxBytes, userAgent: Self.userAgent,
            allowConnection: { address in
                guard let ip = IPAddress(bytes: address.bytes) else { return false }
                return policy.allows(ip)
            })
        multi.start(request) { [self] result in
            switch result {
            case .failure(let error):
                completion(.failure(Self.map(error, url)))
            case .success(let response):
                switch response.status {
                case 200, 203:
                    let body = response.body
                    guard body.count > 0, let pointer = body.pointer else {
                        return completion(.failure(ThumbnailError(.unsupportedSource, "empty body from \(url)")))
                    }
                    completion(.success(ImageBytes(base: pointer, count: body.count, owner: body)))
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
                    hop(next, redirectsLeft: redirectsLeft - 1, deadline: deadline, completion: completion)
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
        case .invalidURL: ThumbnailError(.sourceNotAllowed, "curl refused the URL \(url)")
        case .failed(let code): ThumbnailError(.originFailed, "curl error \(code) for \(url)")
        case .cancelled: ThumbnailError(.shuttingDown, "fetch cancelled: \(url)")
        }
    }
}
