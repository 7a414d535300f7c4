#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an ``HTTPServer`` listens and what it tolerates from clients. Every field has a default.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 address literal to bind ("127.0.0.1", "0.0.0.0", "::1", "::"). Default "127.0.0.1".
    /// An IPv6 address binds an IPv6-only socket ("::" does not also accept IPv4).
    public var host: String
    /// TCP port; 0 binds an ephemeral port (read it back from ``HTTPServer/port``). Default 8080.
    public var port: Int
    /// Size of libmicrohttpd's internal epoll thread pool. Default: the number of online cores.
    public var threads: Int
    /// Maximum number of open connections (MHD_OPTION_CONNECTION_LIMIT). Default 1024.
    /// When reached, libmicrohttpd leaves new clients waiting at TCP level rather than refusing them.
    public var connectionLimit: Int
    /// Maximum number of open connections per client IP address, 0 for no limit. Default 0
    /// (keep it 0 behind a reverse proxy: every client then has the proxy's address).
    public var perIPConnectionLimit: Int
    /// A connection with no traffic for this long is closed (MHD_OPTION_CONNECTION_TIMEOUT, whole
    /// seconds, rounded up); `.zero` disables it. Default 30 s. Every received byte resets this timer.
    public var idleTimeout: Duration
    /// Deadline for a complete request head, counted from the moment the connection starts waiting
    /// for one (its opening, or the end of the previous request on a keep-alive connection). This is
    /// also what bounds an idle keep-alive connection. Checked once a second; `.zero` disables it.
    /// Default 10 s.
    public var headTimeout: Duration

    /// The number of online processor cores (at least 1): the default for ``threads``.
    public static var defaultThreads: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threads: Int = HTTPServerConfiguration.defaultThreads,
        connectionLimit: Int = 1024,
        perIPConnectionLimit: Int = 0,
        idleTimeout: Duration = .seconds(30),
        headTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
    }
}
