internal import CCurl
internal import CCurlShims

public enum CurlTransferError: Error, Sendable, Equatable {
    /// `allowConnection` refused every address tried.
    case refusedByPolicy
    /// The body passed `maxBodyBytes`, or its declared Content-Length did.
    case bodyTooLarge
    /// The connect timeout or the total timeout ran out.
    case timedOut
    /// The host name did not resolve.
    case couldNotResolve
    /// No connection could be made (refused, unreachable).
    case couldNotConnect
    /// The connection broke: reset or closed while sending or receiving, or closed before any
    /// answer (CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING).
    case connectionLost
    /// Malformed URL, or a scheme other than http/https (checked before anything is sent).
    case invalidURL
    /// The origin's answer is not HTTP/1.x (CURLE_UNSUPPORTED_PROTOCOL during a transfer: an
    /// unknown version in the status line). The origin's fault, not the URL's.
    case notHTTP
    /// ``CurlMulti/shutdown()`` ran before the transfer finished, or the transfer was started after it.
    case cancelled
    /// Any other libcurl failure, with its CURLcode (see `man libcurl-errors`).
    case failed(code: Int)
}

extension CurlTransferError {
    /// The one place a CURLcode becomes a Swift error. Our own flags are checked first: they say
    /// why libcurl stopped (a write callback returning 0 reads as CURLE_WRITE_ERROR, a refused
    /// socket as CURLE_COULDNT_CONNECT).
    init(code: CURLcode, bodyTooLarge: Bool, refusedByPolicy: Bool) {
        if bodyTooLarge {
            self = .bodyTooLarge
            return
        }
        if refusedByPolicy {
            self = .refusedByPolicy
            return
        }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: self = .timedOut
        case CURLE_COULDNT_RESOLVE_HOST: self = .couldNotResolve
        case CURLE_COULDNT_CONNECT: self = .couldNotConnect
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING: self = .connectionLost
        case CURLE_URL_MALFORMAT: self = .invalidURL
        // The scheme is checked before the transfer starts (`makeEasyHandle`), so this is the answer.
        case CURLE_UNSUPPORTED_PROTOCOL: self = .notHTTP
        // MAXFILESIZE: a declared Content-Length above the cap.
        case CURLE_FILESIZE_EXCEEDED: self = .bodyTooLarge
        default: self = .failed(code: Int(code.rawValue))
        }
    }

    /// Whether the origin itself is unreachable or broke the connection — refused, reset, no
    /// answer, or a connect or total timeout — rather than having answered something (any HTTP
    /// status is an answer) or been refused by us. A circuit breaker counts these.
    public var isConnectionLevel: Bool {
        switch self {
        case .couldNotConnect, .connectionLost, .timedOut: true
        case .refusedByPolicy, .bodyTooLarge, .couldNotResolve, .invalidURL, .notHTTP, .cancelled, .failed: false
        }
    }
}
