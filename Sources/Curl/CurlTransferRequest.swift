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
