/// An origin as per-origin limits see it: scheme, host and port (the scheme's default when the
/// URL gives none), as RFC 6454 defines an origin. So `http://127.0.0.1:8080` and
/// `http://127.0.0.1:8081` are two origins, and `http://localhost` and `http://127.0.0.1` are
/// two as well (names are not resolved: the limits protect what the URL names).
public struct OriginKey: Sendable, Hashable, CustomStringConvertible {
    public let scheme: SourceURL.Scheme
    public let host: String
    public let port: Int

    public init(scheme: SourceURL.Scheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    public var description: String {
        let host = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(host):\(port)"
    }
}

extension SourceURL {
    /// The origin this URL is fetched from.
    public var origin: OriginKey {
        OriginKey(scheme: scheme, host: host, port: port ?? (scheme == .https ? 443 : 80))
    }
}
