/// A response: status, headers in order, body. libmicrohttpd adds `Content-Length` (do not set it)
/// and `Date`; for HEAD it sends the headers only, with the body's `Content-Length`. For 304 it sends
/// no body but still a `Content-Length` of the body given: pass the representation's body (zero-copy
/// `.buffer`) so that it is right; `.empty` yields `Content-Length: 0`. For 204 it sends neither.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: HTTPBody
    /// When set, this ready-made response is sent instead (status, headers and body are its).
    public var prepared: HTTPPreparedResponse?

    public init(status: Int = 200, headers: [(String, String)] = [], body: HTTPBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
        self.prepared = nil
    }

    /// Sends `prepared` (built once, shared by every request that gets it).
    public init(prepared: HTTPPreparedResponse) {
        self.status = prepared.status
        self.headers = prepared.headers
        self.body = prepared.body
        self.prepared = prepared
    }
}
