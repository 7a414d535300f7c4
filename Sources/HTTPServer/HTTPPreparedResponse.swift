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
}
