internal import CCurl
internal import CCurlShims

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The idle HTTP/1.x connections libcurl keeps for reuse, and the check that one is clean when a
/// transfer picks it. Touched only on the I/O thread (and by `curl_multi_cleanup` once its loop
/// has ended), through the pointer every easy handle gets as CLOSESOCKETDATA and PREREQDATA.
///
/// Why: an origin that sends more than its Content-Length leaves the excess on the connection.
/// libcurl 7.88 (bookworm) reads a body only up to its length, so it sees excess only when it
/// arrives in the same read as the head (then it logs "Excess found in a read" and closes); for
/// any larger body, or excess arriving later, it reports nothing, keeps the connection, and its
/// liveness check before reuse takes waiting bytes for a live peer — the next transfer reads the
/// excess as its answer (a 502, or another answer entirely). Newer libcurl refuses to reuse a
/// connection with input waiting; this does the same: an HTTP/1.x connection must be silent
/// between answers, so a picked one with any byte (or end of stream) waiting is shut down before
/// the request goes out. Sending on it then fails, and libcurl retries the request on a fresh
/// connection, as it does for any kept connection that died meanwhile.
///
/// Not seen: excess bytes that arrive after the check, and, on HTTPS, excess inside the TLS
/// record that ended the body (OpenSSL holds it, nothing waits on the socket).
final class CurlKeptConnections {
    /// A TCP connection's addresses, as libcurl reports them; unique among open connections.
    struct Endpoints: Equatable {
        var localIP: String
        var localPort: Int
        var remoteIP: String
        var remotePort: Int
    }

    /// Sockets of connections left idle by a transfer, until one is picked again or closed.
    private var idle: [curl_socket_t: Endpoints] = [:]

    /// The value for CLOSESOCKETDATA and PREREQDATA: this object, kept alive by the engine until
    /// after `curl_multi_cleanup` (the last to close sockets).
    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Call when a transfer has completed, before its handle leaves the multi handle (the kept
    /// connection is found through it only until then).
    func transferEnded(_ easy: UnsafeMutableRawPointer) {
        // CURLINFO_ACTIVESOCKET is the connection's socket only if libcurl kept it.
        var socket = CURL_SOCKET_BAD
        guard ccurl_easy_getinfo_socket(easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket != CURL_SOCKET_BAD
        else { return }
        // HTTP/2 multiplexes: frames for other streams, pings and settings may wait at any time.
        var version = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        guard version == Int(CURL_HTTP_VERSION_1_0) || version == Int(CURL_HTTP_VERSION_1_1) else { return }
        var localPort = 0
        var remotePort = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_LOCAL_PORT, &localPort)
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_PRIMARY_PORT, &remotePort)
        idle[socket] = Endpoints(
            localIP: Self.string(easy, CURLINFO_LOCAL_IP), localPort: localPort,
            remoteIP: Self.string(easy, CURLINFO_PRIMARY_IP), remotePort: remotePort)
    }

    /// The pre-request callback: the transfer is about to send on the connection with `endpoints`.
    func picked(_ endpoints: Endpoints) {
        guard let (socket, _) = idle.first(where: { $0.value == endpoints }) else { return }  // a new one
        idle[socket] = nil  // in use; listed again when its transfer ends, if kept
        var byte: UInt8 = 0
        let waiting = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if waiting < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }  // silent: clean
        // Only shut down, never closed: the descriptor stays libcurl's until it closes it with
        // the callback below.
        _ = shutdown(socket, Int32(SHUT_RDWR))
    }

    /// The close-socket callback: every socket the open-socket callback made ends here.
    func close(_ socket: curl_socket_t) -> Int32 {
        idle[socket] = nil
        #if canImport(Glibc)
            return Glibc.close(socket)
        #else
            return Darwin.close(socket)
        #endif
    }

    private static func string(_ easy: UnsafeMutableRawPointer, _ info: CURLINFO) -> String {
        var value: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return "" }
        return String(cString: value)
    }
}
