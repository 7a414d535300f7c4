internal import CMicroHTTPD

/// A response built once and sent any number of times, concurrently: the libmicrohttpd response
/// object (headers formatted, body referenced without a copy) is made in `init` and queued as is
/// for every request that gets it. For answers that repeat byte for byte — cached thumbnails — it
/// saves building the response and its headers on every request. No per-request headers.
public final class HTTPPreparedResponse: @unchecked Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: HTTPBody
    /// libmicrohttpd reference-counts responses and locks them while queueing, so one object may
    /// be queued on several connections and threads at once. Destroyed in `deinit`.
    let pointer: OpaquePointer?

    public init(status: Int, headers: [(String, String)], body: HTTPBody) {
        self.status = status
        self.headers = headers
        self.body = body
        pointer = makeMHDResponse(body)
        if let pointer {
            for (name, value) in headers {
                _ = name.withCString { name in value.withCString { MHD_add_response_header(pointer, name, $0) } }
            }
        }
    }

    deinit {
        if let pointer { MHD_destroy_response(pointer) }
    }

    /// Memory it holds, the body aside (which it only references): the libmicrohttpd response
    /// with its mutex, this object and its header array (384 B), and per header libmicrohttpd's
    /// list node with its copies of name and value plus the array element (160 B). Estimated from
    /// those structures by count, not by length, so that it is the same for every preparation of
    /// one answer; checked against RSS: see `HitResponses.residentBytes`.
    public var residentBytes: Int { 384 + 160 * headers.count }
}
