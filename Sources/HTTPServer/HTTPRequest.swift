/// A request head as received. The body, if any, is never read: see ``hasBody``.
public struct HTTPRequest: Sendable {
    /// The method as sent (libmicrohttpd accepts any token, e.g. "BREW").
    public let method: String
    /// The raw request target (path and `?query`, not decoded).
    public let target: String
    /// The path, percent-decoded by libmicrohttpd, without the query.
    public let path: String
    /// Query arguments in order, duplicates kept, percent-decoded (`+` becomes a space); the value
    /// is nil for an argument without `=`. Parsed from `target` when asked for, not per request:
    /// the hot path (a memoized target) never needs it.
    public var query: [(name: String, value: String?)] { explicitQuery ?? QueryString.parse(target) }
    private let explicitQuery: [(name: String, value: String?)]?
    /// Header fields in order, duplicates kept.
    public let headers: [(name: String, value: String)]
    /// "HTTP/1.1" or "HTTP/1.0".
    public let version: String
    /// The request announces a body (Content-Length > 0 or any Transfer-Encoding). The handler is then
    /// called before the body is read and should answer at once (e.g. 413); the body is discarded.
    public let hasBody: Bool

    public init(
        method: String = "GET",
        target: String,
        path: String? = nil,
        query: [(name: String, value: String?)]? = nil,
        headers: [(name: String, value: String)] = [],
        version: String = "HTTP/1.1",
        hasBody: Bool = false
    ) {
        self.method = method
        self.target = target
        self.path = path ?? String(target.prefix { $0 != "?" })
        self.explicitQuery = query
        self.headers = headers
        self.version = version
        self.hasBody = hasBody
    }

    /// The value of the first header field called `name` (ASCII case-insensitive), if any.
    public func header(_ name: String) -> String? {
        for field in headers where Self.equalsIgnoringASCIICase(field.name, name) {
            return field.value
        }
        return nil
    }

    static func equalsIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if x == y { continue }
                // Equal letters differ only in bit 0x20.
                let lower = x | 0x20
                guard lower == (y | 0x20), lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
            default: return false
            }
        }
    }
}
