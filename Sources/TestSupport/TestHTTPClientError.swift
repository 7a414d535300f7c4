public enum TestHTTPClientError: Error, CustomStringConvertible {
    case invalidHost(String)
    case connectFailed(errno: Int32)
    case timedOut
    case malformedResponse(String)

    public var description: String {
        switch self {
        case .invalidHost(let host): "invalid host \(host)"
        case .connectFailed(let errno): "connect failed: errno \(errno)"
        case .timedOut: "timed out"
        case .malformedResponse(let why): "malformed response: \(why)"
        }
    }
}
