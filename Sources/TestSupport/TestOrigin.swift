import Foundation
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

/// A real HTTP/1.1 origin on 127.0.0.1 (or ::1), in process, for tests. Raw POSIX sockets and
/// its own threads (an accept thread and one thread per connection), so blocking I/O never
/// touches Swift's cooperative pool. Every response closes its connection, except `.keepAlive`.
///
/// ```swift
/// let origin = try TestOrigin(routes: ["/photo.jpg": .ok(jpegBytes)])
/// defer { origin.stop() }
/// fetch(origin.url("/photo.jpg"))
/// ```
public final class TestOrigin: @unchecked Sendable {
    public struct Request: Sendable {
        public let method: String
        /// The request target as sent, query included.
        public let target: String
        /// `target` without its query.
        public let path: String
        public let headers: [(String, String)]

        /// The first header named `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    public indirect enum Reply: Sendable {
        /// 200 with a Content-Length.
        case ok([UInt8], contentType: String = "image/jpeg")
        /// Any status; Content-Length is added unless `headers` has one (or Transfer-Encoding).
        case status(Int, body: [UInt8] = [], headers: [(String, String)] = [])
        /// A redirect with a `Location` header (sent as given: relative stays relative).
        case redirect(to: String, status: Int = 302)
        /// An honest Content-Length, then the body `chunkSize` bytes at a time, `interval` apart.
        case trickle([UInt8], chunkSize: Int = 1, interval: Duration = .milliseconds(500))
        /// Transfer-Encoding: chunked, one HTTP chunk per element (empty elements are skipped).
        case chunked([[UInt8]], contentType: String = "image/jpeg")
        /// `Content-Encoding: gzip` of the bytes (really compressed, by /bin/gzip), with the
        /// compressed Content-Length.
        case gzip([UInt8])
        /// Content-Length says `Int`, the whole body is sent anyway, then the connection closes.
        case declaredLength(Int, body: [UInt8])
        /// Exactly these bytes, then close.
        case raw([UInt8])
        /// HTTP/1.1 keep-alive: 200 with `Content-Length: declared` and no `Connection: close`, then
        /// all of `body`, and the connection waits for its next request. A body longer than
        /// `declared` is an origin that over-sends: the rest is excess a client must never read as
        /// its next answer. With `excessAfter`, the excess waits for that gate (opened by the test
        /// once the client has its whole answer); `excessDelivered` opens once the client's TCP has
        /// acknowledged every byte sent, so the excess is in the client's socket by then (or once
        /// the origin gave up: stopped, or the client went away).
        case keepAlive(
            declared: Int, body: [UInt8], excessAfter: TestGate? = nil, excessDelivered: TestGate? = nil)
        /// Waits, then answers with the inner reply.
        case delayed(Duration, Reply)
        /// Holds the answer until the test opens the gate (or the origin stops), then the inner reply.
        case gated(TestGate, Reply)
        /// Reads the request and never answers (until `stop()`).
        case hang
        /// An origin that supports caching: 200 with the body and whichever of `ETag`,
        /// `Last-Modified` and `Cache-Control` are given — or, when the request's `If-None-Match`
        /// names the ETag (or, without one, its `If-Modified-Since` is the Last-Modified), 304
        /// with those headers and no body, as RFC 9110 §13.1 has it.
        case cacheable(
            [UInt8], etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil,
            contentType: String = "image/jpeg")
    }

    public struct SocketError: Error, CustomStringConvertible {
        public let operation: String
        public let code: Int32
        public var description: String { "TestOrigin: \(operation) failed: \(String(cString: strerror(code)))" }
    }

    /// The ephemeral port the origin listens on.
    public let port: Int
    /// The address it listens on ("127.0.0.1" or "::1").
    public let host: String
    private let core: TestOriginCore

    /// Listens on `host` (an IPv4 or IPv6 literal) at an ephemeral port. `handler` runs on the
    /// connection's thread, once per request, after the request head has been read.
    public init(host: String = "127.0.0.1", handler: @escaping @Sendable (Request) -> Reply) throws {
        core = try TestOriginCore(host: host, handler: handler)
        port = core.port
        self.host = host
        core.startAccepting()
    }

    /// Answers by path (query ignored); unknown paths get 404.
    public convenience init(host: String = "127.0.0.1", routes: [String: Reply]) throws {
        try self.init(host: host) { request in routes[request.path] ?? .status(404, body: Array("not found".utf8)) }
    }

    deinit {
        core.stop()
    }

    /// "http://127.0.0.1:PORT/photo.jpg" ("http://[::1]:PORT/..." for IPv6).
    public func url(_ pathAndQuery: String) -> String {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return "http://\(authority)\(pathAndQuery.hasPrefix("/") ? "" : "/")\(pathAndQuery)"
    }

    /// Requests seen for `path` (query ignored).
    public func requestCount(path: String) -> Int { core.requests.filter { $0.path == path }.count }

    public var totalRequests: Int { core.requests.count }

    /// Connections accepted so far: with `.keepAlive`, fewer than requests when a client reuses one.
    public var acceptedConnections: Int { core.acceptedConnections }

    /// Every request seen so far, in arrival order.
    public var requests: [Request] { core.requests }

    /// The conditional requests (with `If-None-Match` or `If-Modified-Since`) seen for `path`.
    public func conditionalRequests(path: String) -> [Request] {
        requests.filter {
            $0.path == path && ($0.header("If-None-Match") != nil || $0.header("If-Modified-Since") != nil)
        }
    }

    /// Closes the listener and every connection (interrupting delays, trickles and hangs) and
    /// waits for all the origin's threads. Idempotent; also run by `deinit`. Must not be called
    /// from a handler.
    public func stop() { core.stop() }

    /// Whether this machine can listen on ::1 (for `.enabled(if:)` on IPv6 tests).
    public static let isIPv6LoopbackAvailable: Bool = {
        guard let address = SocketAddress(host: "::1", port: 0), let probe = try? FileDescriptor.tcpSocket(for: address)
        else { return false }
        return (try? probe.bind(to: address)) != nil
    }()
}
