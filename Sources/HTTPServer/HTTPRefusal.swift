#if canImport(Glibc)
    internal import Glibc
#endif

/// A request the server itself refuses before any handler sees it, because it is not acceptable
/// HTTP/1.x. Each is answered with RFC 9457 `application/problem+json` and `Connection: close`:
/// after a framing or syntax error nothing else on the connection can be trusted.
///
/// The bodies carry no `requestId`: these are refused before a request exists (often before it
/// is even known to be one), and they never reach the service's request log.
enum HTTPRefusal: Sendable, Equatable {
    /// 400: the request line or a header line is not HTTP/1.x syntax (NUL or other control bytes,
    /// no method, a method or target with bytes a token or a URI cannot have, a malformed
    /// version, a header line without a colon).
    case malformed
    /// 400: the body's framing is ambiguous (Content-Length with Transfer-Encoding, several
    /// Content-Lengths, one that is not a number): the request-smuggling doors.
    case ambiguousFraming
    /// 414: the request target is longer than ``HTTPServerConfiguration/maxTargetBytes``.
    case targetTooLong
    /// 431: the head is larger than ``HTTPServerConfiguration/maxHeadBytes``, or has more fields
    /// than ``HTTPServerConfiguration/maxFields``.
    case headTooLarge
    /// 505: an HTTP version other than 1.x (HTTP/0.9, HTTP/2.0 prior knowledge, HTTP/9.9).
    case versionNotSupported

    var status: Int {
        switch self {
        case .malformed, .ambiguousFraming: 400
        case .targetTooLong: 414
        case .headTooLarge: 431
        case .versionNotSupported: 505
        }
    }

    private var reason: String {
        switch self {
        case .malformed, .ambiguousFraming: "Bad Request"
        case .targetTooLong: "URI Too Long"
        case .headTooLarge: "Request Header Fields Too Large"
        case .versionNotSupported: "HTTP Version Not Supported"
        }
    }

    private var slug: String {
        switch self {
        case .malformed: "malformed-request"
        case .ambiguousFraming: "ambiguous-framing"
        case .targetTooLong: "target-too-long"
        case .headTooLarge: "head-too-large"
        case .versionNotSupported: "version-not-supported"
        }
    }

    private var title: String {
        switch self {
        case .malformed: "Malformed request"
        case .ambiguousFraming: "Ambiguous message framing"
        case .targetTooLong: "Request target too long"
        case .headTooLarge: "Request head too large"
        case .versionNotSupported: "HTTP version not supported"
        }
    }

    private var detail: String {
        switch self {
        case .malformed: "The request is not valid HTTP/1.1."
        case .ambiguousFraming:
            "The request's body length is ambiguous (Content-Length with Transfer-Encoding, or several Content-Lengths)."
        case .targetTooLong: "The request target is longer than this server accepts."
        case .headTooLarge: "The request head is larger, or has more fields, than this server accepts."
        case .versionNotSupported: "This server speaks HTTP/1.0 and HTTP/1.1 only."
        }
    }

    /// The problem document (no field needs JSON escaping: all are fixed ASCII without quotes).
    var body: [UInt8] {
        Array(
            "{\"type\":\"urn:thumbd:problem:\(slug)\",\"title\":\"\(title)\",\"status\":\(status),\"detail\":\"\(detail)\"}"
                .utf8)
    }

    static let contentType = "application/problem+json"

    /// The answer as libmicrohttpd sends it, from the access handler.
    var response: HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", Self.contentType), ("Connection", "close")],
            body: .bytes(body))
    }

    /// The whole answer as bytes on the wire, for a connection refused before libmicrohttpd has read
    /// anything from it (see `ServerCore.screenFirstBytes`). `headOnly` for a HEAD request:
    /// the same head, no body.
    func wireBytes(headOnly: Bool) -> [UInt8] {
        let body = body
        let head =
            "HTTP/1.1 \(status) \(reason)\r\nDate: \(Self.httpDate())\r\nContent-Type: \(Self.contentType)\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }

    /// Now as an IMF-fixdate ("Tue, 01 Dec 2026 09:42:04 GMT"), as RFC 9110 wants in `Date`.
    /// Formatted by hand: `strftime`'s `%a` and `%b` follow the process locale.
    private static func httpDate() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
