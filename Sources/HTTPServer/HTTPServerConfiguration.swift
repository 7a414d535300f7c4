internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// How an ``HTTPServer`` listens and what it tolerates from clients. Where it listens, its threads,
/// connections and timeouts have no default here: they are the service's settings, and its
/// configuration is where their defaults are written. The head limits are this layer's own.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 address literal to bind ("127.0.0.1", "0.0.0.0", "::1", "::").
    /// An IPv6 address binds an IPv6-only socket ("::" does not also accept IPv4).
    public var host: String
    /// TCP port; 0 binds an ephemeral port (read it back from ``HTTPServer/port``).
    public var port: Int
    /// Number of polling threads: one libmicrohttpd daemon each, each with its own listening socket
    /// on the port (SO_REUSEPORT).
    public var threads: Int
    /// Maximum number of open connections (MHD_OPTION_CONNECTION_LIMIT).
    /// When reached, libmicrohttpd leaves new clients waiting at TCP level rather than refusing them.
    public var connectionLimit: Int
    /// Maximum number of open connections per client IP address, 0 for no limit. Default 0
    /// (keep it 0 behind a reverse proxy: every client then has the proxy's address).
    public var perIPConnectionLimit: Int
    /// A connection with no traffic for this long is closed (MHD_OPTION_CONNECTION_TIMEOUT, whole
    /// seconds, rounded up); `.zero` disables it. Every received byte resets this timer.
    public var idleTimeout: Duration
    /// Deadline for a complete request head, counted from the moment the connection starts waiting
    /// for one (its opening, or the end of the previous request on a keep-alive connection). This is
    /// also what bounds an idle keep-alive connection. Checked once a second; `.zero` disables it.
    /// (A client that sends nothing at all reaches the server only after about a second more: the
    /// kernel holds it back until its first bytes, see TCP_DEFER_ACCEPT.)
    public var headTimeout: Duration
    /// Longest request target accepted, in bytes as sent; a longer one gets 414. Default 16 KiB:
    /// room for a source URL of 4096 bytes percent-encoded throughout, plus the other parameters.
    /// At most ``maxHeadBytes``.
    public var maxTargetBytes: Int
    /// Largest request head accepted (request line, header fields, final blank line), in bytes; a
    /// larger one gets 431. Default 20 KiB, which is also the most allowed: libmicrohttpd keeps the
    /// head in its 32 KiB of per-connection memory and must still find room there for the answer
    /// (above ~32 KiB it answers 431 itself, with an HTML page, and just under that it closes the
    /// connection without an answer).
    public var maxHeadBytes: Int
    /// Most header fields plus query arguments in one request; more get 431. Default 100, also the
    /// most allowed: libmicrohttpd stores each one in the same per-connection memory (~64 bytes).
    public var maxFields: Int

    /// The upper bounds of ``maxHeadBytes`` and ``maxFields`` (see there).
    public static let headBytesLimit = 20 << 10
    public static let fieldsLimit = 100

    public init(
        host: String,
        port: Int,
        threads: Int,
        connectionLimit: Int,
        idleTimeout: Duration,
        headTimeout: Duration,
        perIPConnectionLimit: Int = 0,
        maxTargetBytes: Int = 16 << 10,
        maxHeadBytes: Int = HTTPServerConfiguration.headBytesLimit,
        maxFields: Int = HTTPServerConfiguration.fieldsLimit
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        self.maxTargetBytes = maxTargetBytes
        self.maxHeadBytes = maxHeadBytes
        self.maxFields = maxFields
    }

    /// Checks every field against its range and parses `host`: the address to listen on. Throws
    /// ``HTTPServerError/invalidConfiguration(_:)`` naming the first field out of range, or
    /// ``HTTPServerError/invalidHost(_:)``.
    func validated() throws(HTTPServerError) -> SocketAddress {
        let checks: [(field: String, valid: Bool)] = [
            ("port", (0...65535).contains(port)),
            ("threads", threads >= 1),
            ("connectionLimit", connectionLimit >= 1),
            ("perIPConnectionLimit", perIPConnectionLimit >= 0),
            ("idleTimeout", idleTimeout >= .zero),
            ("headTimeout", headTimeout >= .zero),
            ("maxHeadBytes", (1...Self.headBytesLimit).contains(maxHeadBytes)),
            ("maxTargetBytes", maxHeadBytes >= 1 && (1...maxHeadBytes).contains(maxTargetBytes)),
            ("maxFields", (1...Self.fieldsLimit).contains(maxFields)),
        ]
        if let invalid = checks.first(where: { !$0.valid }) { throw .invalidConfiguration(invalid.field) }
        guard let address = SocketAddress(host: host, port: port) else { throw .invalidHost(host) }
        return address
    }
}
