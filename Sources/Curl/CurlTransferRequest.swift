/// One HTTP(S) GET. Every limit is the caller's: this module holds no policy of its own.
public struct CurlTransferRequest: Sendable {
    /// An absolute `http` or `https` URL; any other scheme fails with ``CurlTransferError/invalidURL``.
    public var url: String
    /// Bound on name resolution plus TCP/TLS connect (CURLOPT_CONNECTTIMEOUT_MS).
    public var connectTimeout: Duration
    /// Bound on the whole transfer (CURLOPT_TIMEOUT_MS): an origin trickling bytes is cut here.
    public var totalTimeout: Duration
    /// Largest body accepted, counted on decoded bytes as they arrive, whatever Content-Length
    /// says; a declared Content-Length above it aborts before the body is read.
    public var maxBodyBytes: Int
    public var userAgent: String
    /// Sends `Accept-Encoding` for every encoding libcurl can decode (gzip, deflate, br) and
    /// decodes the body. Default: `true`.
    public var acceptEncoding: Bool = true
    /// Extra request header lines (`If-None-Match: "abc"`). A line with a CR, LF or NUL, or without
    /// a colon, fails the transfer with ``CurlTransferError/invalidURL`` before anything is sent:
    /// header injection is refused here whatever the caller checked.
    public var headers: [String] = []
    /// Response headers to report (names, case-insensitive), each in ``CurlTransferResult/headers``
    /// under its lower-cased name, every occurrence in order.
    public var responseHeaders: [String] = []
    /// Longest value reported per header occurrence, and most occurrences per name: an origin's
    /// headers are hostile, so what is kept of them is bounded. Longer values are dropped whole.
    public var maxResponseHeaderBytes = 1024
    public var maxResponseHeaderCount = 8
    /// Told, on the I/O thread, how many body bytes this transfer may come to hold, once the body
    /// starts: the declared Content-Length (capped by `maxBodyBytes`), or `maxBodyBytes` when none
    /// is declared (then the bytes received whenever they pass what was reported by 256 KiB — only
    /// for a caller whose cap is above what it reported). For a caller that budgets memory: it is
    /// never told less than the transfer can take. Must be fast and must not block.
    public var onBodyBytes: (@Sendable (Int) -> Void)? = nil
    /// Called on the I/O thread after DNS and before connect, for every new connection (a pooled
    /// connection was checked when it was opened). Returning `false` refuses the socket.
    /// Must be fast and must not block.
    public var allowConnection: @Sendable (CurlSocketAddress) -> Bool

    public init(
        url: String,
        connectTimeout: Duration,
        totalTimeout: Duration,
        maxBodyBytes: Int,
        userAgent: String,
        allowConnection: @escaping @Sendable (CurlSocketAddress) -> Bool
    ) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxBodyBytes = maxBodyBytes
        self.userAgent = userAgent
        self.allowConnection = allowConnection
    }
}
