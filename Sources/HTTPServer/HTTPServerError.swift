/// Why an ``HTTPServer`` could not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 address literal.
    case invalidHost(String)
    /// A configuration field is out of range; the string names it.
    case invalidConfiguration(String)
    /// libmicrohttpd could not start (typically the address is in use); `errno` as left by the failed call.
    case startFailed(host: String, port: Int, errno: Int32)
    /// ``HTTPServer/start()`` was called twice, or after ``HTTPServer/shutdown(grace:lateResponse:)``.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidHost(let host): "invalid listen address \"\(host)\" (expected an IPv4 or IPv6 literal)"
        case .invalidConfiguration(let field): "invalid HTTP server configuration: \(field)"
        case .startFailed(let host, let port, let errno): "cannot listen on \(host) port \(port) (errno \(errno))"
        case .alreadyStarted: "the HTTP server was already started"
        }
    }
}
