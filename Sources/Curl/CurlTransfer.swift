internal import CCurl
internal import CCurlShims
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// One transfer's context and the owner of its easy handle. Lives only on the I/O thread once
/// queued: libcurl calls back into it from `curl_multi_perform`, recovering it from the
/// `CURLOPT_PRIVATE` / `WRITEDATA` / `OPENSOCKETDATA` pointer through `Unmanaged` (the
/// engine's table of active transfers keeps it alive meanwhile).
final class CurlTransfer: @unchecked Sendable {
    let request: CurlTransferRequest
    let completion: @Sendable (Result<CurlTransferResult, CurlTransferError>) -> Void
    private(set) var easy: UnsafeMutableRawPointer?
    private let body = CurlBody()
    private var reservedForDeclaredLength = false
    /// What `onBodyBytes` was last told.
    private var reportedBytes = 0
    /// Set when the write callback refused bytes over the cap: wins over the CURLcode.
    private var bodyTooLarge = false
    private var refusedAddresses = 0
    private var allowedAddresses = 0
    /// The request's extra header lines, as libcurl needs them for the whole transfer (freed in
    /// `cleanUp`, after the easy handle that points at them).
    private var headerList: UnsafeMutablePointer<curl_slist>?

    init(
        request: CurlTransferRequest,
        completion: @escaping @Sendable (Result<CurlTransferResult, CurlTransferError>) -> Void
    ) {
        self.request = request
        self.completion = completion
    }

    deinit {
        // Normally done on the I/O thread by `cleanUp()`; this is only the safety net.
        if let easy { curl_easy_cleanup(easy) }
        curl_slist_free_all(headerList)
    }

    /// Creates and configures the easy handle; its sockets are closed through `connections`, which
    /// also checks a connection picked for reuse. On failure, the error to complete with.
    func makeEasyHandle(connections: CurlKeptConnections) -> CurlTransferError? {
        guard let easy = curl_easy_init() else { return .failed(code: Int(CURLE_FAILED_INIT.rawValue)) }
        self.easy = easy
        let context = Unmanaged.passUnretained(self).toOpaque()
        var code = CURLE_OK
        func set(_ option: CURLoption, _ value: Int) {
            if code == CURLE_OK { code = ccurl_easy_setopt_long(easy, option, value) }
        }
        func set(_ option: CURLoption, _ value: String?) {
            guard code == CURLE_OK else { return }
            if let value {
                code = value.withCString { ccurl_easy_setopt_string(easy, option, $0) }
            } else {
                code = ccurl_easy_setopt_string(easy, option, nil)
            }
        }
        func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) {
            if code == CURLE_OK { code = ccurl_easy_setopt_pointer(easy, option, pointer) }
        }

        // Decided here, not from curl's CURLE_UNSUPPORTED_PROTOCOL, which also means an answer that
        // is not HTTP (see `CurlTransferError.notHTTP`).
        let scheme = request.url.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else { return .invalidURL }
        set(CURLOPT_URL, request.url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // The caller follows redirects hop by hop so it can check every URL and address.
        set(CURLOPT_FOLLOWLOCATION, 0)
        // Signals are process-wide; timeouts must not use SIGALRM from a library thread.
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_NETRC, Int(CURL_NETRC_IGNORED.rawValue))
        // libcurl reads http_proxy / HTTPS_PROXY / ALL_PROXY from the environment by default:
        // a proxy would be the only address the open-socket check ever sees.
        set(CURLOPT_PROXY, "")
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout))
        set(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.totalTimeout))
        if code == CURLE_OK {
            // Rejects a declared Content-Length over the cap before the body is read; the
            // write callback enforces the cap on what actually arrives.
            code = ccurl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(request.maxBodyBytes, 0)))
        }
        set(CURLOPT_USERAGENT, request.userAgent)
        // "" = every encoding this libcurl decodes; nil = none, and no decoding.
        set(CURLOPT_ACCEPT_ENCODING, request.acceptEncoding ? "" : nil)
        if code == CURLE_OK, !request.headers.isEmpty {
            for line in request.headers {
                guard line.contains(":"), !line.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                    return .invalidURL
                }
                guard let appended = curl_slist_append(headerList, line) else {
                    return .failed(code: Int(CURLE_OUT_OF_MEMORY.rawValue))
                }
                headerList = appended
            }
            if let headerList { set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headerList)) }
        }
        set(CURLOPT_PRIVATE, pointer: context)
        set(CURLOPT_WRITEDATA, pointer: context)
        set(CURLOPT_OPENSOCKETDATA, pointer: context)
        set(CURLOPT_CLOSESOCKETDATA, pointer: connections.context)
        set(CURLOPT_PREREQDATA, pointer: connections.context)
        if code == CURLE_OK { code = Self.setCallbacks(easy) }
        guard code == CURLE_OK else { return .failed(code: Int(code.rawValue)) }
        return nil
    }

    /// The four callbacks: body bytes and the open-socket check come back to this transfer
    /// (`WRITEDATA`, `OPENSOCKETDATA`), closing a socket and checking a reused connection go to
    /// the engine's `CurlKeptConnections` (`CLOSESOCKETDATA`, `PREREQDATA`).
    private static func setCallbacks(_ easy: UnsafeMutableRawPointer) -> CURLcode {
        var code = ccurl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receive(data, size * count)
        }
        if code == CURLE_OK {
            code = ccurl_easy_setopt_opensocket_callback(easy) { context, purpose, address in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().openSocket(purpose, address)
            }
        }
        if code == CURLE_OK {
            // A connection lives in the multi handle, not in this transfer: it is closed through
            // the callback of the handle that opened it, perhaps long after, so the callback's
            // context is the engine's `CurlKeptConnections`, never this transfer.
            code = ccurl_easy_setopt_closesocket_callback(easy) { connections, socket in
                Unmanaged<CurlKeptConnections>.fromOpaque(connections!).takeUnretainedValue().close(socket)
            }
        }
        if code == CURLE_OK {
            code = ccurl_easy_setopt_prereq_callback(easy) { connections, remoteIP, localIP, remotePort, localPort in
                let endpoints = CurlKeptConnections.Endpoints(
                    localIP: localIP.map { String(cString: $0) } ?? "", localPort: Int(localPort),
                    remoteIP: remoteIP.map { String(cString: $0) } ?? "", remotePort: Int(remotePort))
                Unmanaged<CurlKeptConnections>.fromOpaque(connections!).takeUnretainedValue().picked(endpoints)
                return Int32(CURL_PREREQFUNC_OK)
            }
        }
        return code
    }

    /// Reads the outcome off the easy handle; call before `cleanUp()`.
    func outcome(_ code: CURLcode) -> Result<CurlTransferResult, CurlTransferError> {
        guard code == CURLE_OK, let easy else {
            let refused = refusedAddresses > 0 && allowedAddresses == 0
            return .failure(CurlTransferError(code: code, bodyTooLarge: bodyTooLarge, refusedByPolicy: refused))
        }
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        body.shrinkToFit()
        return .success(
            CurlTransferResult(
                status: status,
                contentType: Self.string(easy, CURLINFO_CONTENT_TYPE),
                redirectURL: Self.string(easy, CURLINFO_REDIRECT_URL),
                body: body,
                primaryIP: Self.string(easy, CURLINFO_PRIMARY_IP) ?? "",
                headers: responseHeaders(easy)))
    }

    func cleanUp() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        curl_slist_free_all(headerList)
        headerList = nil
    }

    /// The asked-for response headers of the last response (one transfer is one request: the
    /// caller follows redirects itself), bounded in length and count.
    private func responseHeaders(_ easy: UnsafeMutableRawPointer) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for name in request.responseHeaders {
            let key = name.lowercased()
            var values: [String] = []
            var index = 0
            var amount = 1
            while index < min(amount, request.maxResponseHeaderCount) {
                var header: UnsafeMutablePointer<curl_header>?
                guard curl_easy_header(easy, key, index, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
                    let header, let value = header.pointee.value
                else { break }
                amount = header.pointee.amount
                index += 1
                guard strnlen(value, request.maxResponseHeaderBytes + 1) <= request.maxResponseHeaderBytes else {
                    continue
                }
                values.append(String(cString: value))
            }
            if !values.isEmpty { found[key] = values }
        }
        return found
    }

    // MARK: Callbacks (I/O thread)

    private func receive(_ data: UnsafeMutablePointer<CChar>?, _ length: Int) -> Int {
        if !reservedForDeclaredLength, let easy {
            // One allocation for the common case of an honest, unencoded Content-Length.
            reservedForDeclaredLength = true
            var declared: curl_off_t = -1
            if ccurl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared) == CURLE_OK,
                declared > 0
            {
                body.reserve(Int(declared), limit: request.maxBodyBytes)
                report(min(Int(declared), request.maxBodyBytes))
            } else {
                // No length announced: the body may grow to the cap, so that is what it holds
                // (the work budget must never be charged less than a fetch can take).
                report(request.maxBodyBytes)
            }
        }
        if body.append(data, length, limit: request.maxBodyBytes) {
            if body.count >= reportedBytes + (256 << 10) { report(body.count) }
            return length
        }
        if length > request.maxBodyBytes - body.count { bodyTooLarge = true }
        return 0  // != length: libcurl aborts the transfer
    }

    private func report(_ bytes: Int) {
        guard let onBodyBytes = request.onBodyBytes else { return }
        reportedBytes = bytes
        onBodyBytes(bytes)
    }

    private func openSocket(_ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t {
        guard purpose == CURLSOCKTYPE_IPCXN, let address, let peer = Self.socketAddress(address) else {
            refusedAddresses += 1
            return CURL_SOCKET_BAD
        }
        guard request.allowConnection(peer) else {
            refusedAddresses += 1
            return CURL_SOCKET_BAD
        }
        allowedAddresses += 1
        let info = address.pointee
        #if canImport(Glibc)
            let type = info.socktype | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = info.socktype
        #endif
        // Handed to libcurl, which owns it from here and closes it through `CurlKeptConnections.close`:
        // we never wrap it in a FileDescriptor.
        return socket(info.family, type, info.protocol)
    }

    // MARK: Helpers

    private static func socketAddress(_ address: UnsafeMutablePointer<curl_sockaddr>) -> CurlSocketAddress? {
        // `addr` is declared as a plain `struct sockaddr`, but libcurl stores the whole
        // sockaddr_in6 there (`addrlen` says how much).
        let raw = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \.addr)!
        guard let peer = SocketAddress(raw, length: Int(address.pointee.addrlen)) else { return nil }
        return CurlSocketAddress(family: peer.family == .ipv4 ? .ipv4 : .ipv6, bytes: peer.bytes, port: peer.port)
    }

    private static func string(_ easy: UnsafeMutableRawPointer, _ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// libcurl reads 0 as "no timeout", so anything positive rounds up to at least 1 ms (and a
    /// zero or negative timeout, which should mean "already expired", becomes 1 ms too).
    static func milliseconds(_ duration: Duration) -> Int {
        Int(clamping: max(1, duration.roundedUp(to: .milliseconds(1))))
    }
}
