internal import CMicroHTTPD

#if canImport(Glibc)
    internal import Glibc
#endif

/// A request head read in place, where libmicrohttpd holds it: what a ``QuickAnswer`` hook looks
/// at to answer a request from a ready-made response without the ``HTTPRequest`` (its strings
/// and header array) that the handler gets. Only valid during the call it is passed to: it reads
/// the connection's memory, which libmicrohttpd reuses for the next request. Not `Sendable`, so
/// it cannot be handed to another thread.
public struct RequestHead {
    private let connection: OpaquePointer
    private let methodBytes: UnsafePointer<CChar>
    private let pathBytes: UnsafePointer<CChar>
    private let versionBytes: UnsafePointer<CChar>
    /// The raw request target (path and `?query`, not decoded), as in ``HTTPRequest/target``.
    public let target: String

    init(
        connection: OpaquePointer, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>, target: String
    ) {
        self.connection = connection
        self.methodBytes = method
        self.pathBytes = path
        self.versionBytes = version
        self.target = target
    }

    /// Whether the method is exactly `name` (methods are case-sensitive).
    public func hasMethod(_ name: StaticString) -> Bool { Self.equals(methodBytes, name) }

    /// Whether the percent-decoded path (``HTTPRequest/path``) is exactly `path`.
    public func hasPath(_ path: StaticString) -> Bool { Self.equals(pathBytes, path) }

    /// Whether the request line says `HTTP/1.1` (rather than `HTTP/1.0`).
    public var isHTTP11: Bool { Self.equals(versionBytes, "HTTP/1.1") }

    /// The value of the first header field called `name` (ASCII case-insensitive), if any, like
    /// ``HTTPRequest/header(_:)``.
    public func header(_ name: StaticString) -> String? {
        var value: UnsafePointer<CChar>?
        var count = 0
        let found = name.withUTF8Buffer { name in
            name.withMemoryRebound(to: CChar.self) { name in
                MHD_lookup_connection_value_n(connection, .HEADER_KIND, name.baseAddress, name.count, &value, &count)
            }
        }
        guard found == .YES, let value else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: value, count: count), as: UTF8.self)
    }

    /// `body` with the bytes of the first header field called `name`, read in place (nil when
    /// there is none): no string is made, for a hit that only scans a value.
    public func withHeader<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        var value: UnsafePointer<CChar>?
        var count = 0
        let found = name.withUTF8Buffer { name in
            name.withMemoryRebound(to: CChar.self) { name in
                MHD_lookup_connection_value_n(connection, .HEADER_KIND, name.baseAddress, name.count, &value, &count)
            }
        }
        guard found == .YES, let value else { return body(nil) }
        return value.withMemoryRebound(to: UInt8.self, capacity: count) {
            body(UnsafeBufferPointer(start: $0, count: count))
        }
    }

    /// Whether a header field called `name` (ASCII case-insensitive) is present.
    public func hasHeader(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            name.withMemoryRebound(to: CChar.self) { name in
                MHD_lookup_connection_value_n(connection, .HEADER_KIND, name.baseAddress, name.count, nil, nil) == .YES
            }
        }
    }

    /// Whether the C string `bytes` is exactly `expected` (compared by length, so `expected`'s
    /// own terminator is not relied on).
    private static func equals(_ bytes: UnsafePointer<CChar>, _ expected: StaticString) -> Bool {
        expected.withUTF8Buffer { expected in
            strncmp(bytes, UnsafeRawPointer(expected.baseAddress!).assumingMemoryBound(to: CChar.self), expected.count)
                == 0 && bytes[expected.count] == 0
        }
    }
}

/// Answers, on the polling thread and before the handler, the requests that a ready-made
/// response answers (cached thumbnails): that response, or nil to hand the request to the handler
/// as usual. It must not block; the server queues what it returns as is.
public typealias QuickAnswer = @Sendable (RequestHead) -> HTTPPreparedResponse?
