/// A completed exchange: any status (404 and 302 included) is a result, not an error.
public struct CurlTransferResult: Sendable {
    public let status: Int
    /// The Content-Type header as sent, parameters included; `nil` when absent.
    public let contentType: String?
    /// Where a 3xx points, made absolute against the request URL (CURLINFO_REDIRECT_URL). Not
    /// followed: the caller re-checks each hop itself.
    public let redirectURL: String?
    public let body: CurlBody
    /// The address actually connected to, as text ("127.0.0.1", "::1").
    public let primaryIP: String
    /// The response headers the request asked for (``CurlTransferRequest/responseHeaders``), by
    /// lower-cased name, values in the order sent; a name absent from the answer is absent here.
    public let headers: [String: [String]]

    public init(
        status: Int, contentType: String?, redirectURL: String?, body: CurlBody, primaryIP: String,
        headers: [String: [String]] = [:]
    ) {
        self.status = status
        self.contentType = contentType
        self.redirectURL = redirectURL
        self.body = body
        self.primaryIP = primaryIP
        self.headers = headers
    }

    /// The first reported value of `name` (lower-case).
    public func header(_ name: String) -> String? { headers[name]?.first }
}
