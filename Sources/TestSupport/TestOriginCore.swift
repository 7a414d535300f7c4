import Foundation
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

/// The listener, the threads and the request log of a ``TestOrigin``. Separate from it so the
/// threads keep only this alive and dropping the last `TestOrigin` reference still stops them.
final class TestOriginCore: Sendable {
    private struct Lifecycle {
        var stopping = false
        /// Dropped (and so closed) by `stop()` once no thread can use the listener any more.
        var listener: FileDescriptor?
        /// Numbers of the open connections, for `stop()` to shut down; each is owned (and closed) by
        /// its connection thread, which removes it from here first.
        var connections: Set<Int32> = []
        var liveThreads = 0
        /// Connections accepted, for ``TestOrigin/acceptedConnections``.
        var accepted = 0
        /// Gates connections wait on; `stop()` opens them so no thread stays blocked.
        var gates: [TestGate] = []
    }

    let port: Int
    /// The listening socket's number; valid while `Lifecycle.listener` holds it (until `stop()`).
    private let listener: Int32
    private let handler: @Sendable (TestOrigin.Request) -> TestOrigin.Reply
    /// Waited on by `stop()` (for the threads to end), by hanging and pausing replies (for stop).
    private let lifecycle: Monitor<Lifecycle>
    private let log = Locked<[TestOrigin.Request]>([])

    init(host: String, handler: @escaping @Sendable (TestOrigin.Request) -> TestOrigin.Reply) throws {
        self.handler = handler
        guard let address = SocketAddress(host: host, port: 0) else {
            throw TestOrigin.SocketError(operation: "parse \(host)", code: EINVAL)
        }
        let owner: FileDescriptor
        do {
            // Any throw below leaves `owner` to close the socket, once.
            owner = try FileDescriptor.tcpSocket(for: address)
            try owner.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            try owner.bind(to: address)
            port = try owner.localAddress().port
            try owner.listen(backlog: 128)
        } catch {
            throw TestOrigin.SocketError(operation: error.operation, code: error.code)
        }
        listener = owner.rawValue
        lifecycle = Monitor(Lifecycle(listener: owner))
    }

    var requests: [TestOrigin.Request] { log.withLock { $0 } }

    var acceptedConnections: Int { lifecycle.withLock { $0.accepted } }

    func startAccepting() {
        spawn { self.acceptLoop() }
    }

    func stop() {
        lifecycle.withLock { state in
            guard !state.stopping else { return }
            state.stopping = true
            // shutdown() wakes a thread blocked in accept()/recv() on Linux; close() would not.
            _ = shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.connections { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            for gate in state.gates { gate.open() }
        }
        lifecycle.wait(until: { $0.liveThreads == 0 }) { state in
            state.listener = nil  // closes the listener, now that no thread can use it
        }
    }

    // MARK: Threads

    /// Runs `body` on a thread of its own, counted in `liveThreads` until it ends.
    private func spawn(_ body: @escaping @Sendable () -> Void) {
        lifecycle.withLock { $0.liveThreads += 1 }
        do {
            try DetachedThread.start(name: "test-origin", stackSize: 1 << 20) {
                body()
                self.lifecycle.withLock { $0.liveThreads -= 1 }
            }
        } catch {
            fatalError("TestOrigin: cannot start a thread: \(error)")
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            let acceptError = errno
            let connection = fd >= 0 ? FileDescriptor(adopting: fd) : nil
            let stopping: Bool = lifecycle.withLock { state in
                if !state.stopping, let connection {
                    state.connections.insert(connection.rawValue)
                    state.accepted += 1
                }
                return state.stopping
            }
            if stopping { return }  // `connection`, never registered, closes as it goes out of scope
            guard let connection else {
                // EMFILE & co: back off (a stop ends the wait).
                if acceptError != EINTR && acceptError != ECONNABORTED { _ = pause(.milliseconds(10)) }
                continue
            }
            spawn {
                self.serve(connection.rawValue)
                self.lifecycle.withLock { _ = $0.connections.remove(connection.rawValue) }
                // Closes only now, after leaving the set, so stop() never shuts down a reused number.
                withExtendedLifetime(connection) {}
            }
        }
    }

    /// One request, or several while the replies are `.keepAlive` (one at a time: bytes a client
    /// pipelines behind a head are taken for its body, which no test client does).
    private func serve(_ fd: Int32) {
        while let (request, bodyBytesPresent, bodyLength) = readHead(fd) {
            log.withLock { $0.append(request) }
            // Drain a small request body so closing does not reset the connection under the reply.
            var remaining = min(bodyLength, 1 << 20) - bodyBytesPresent
            var scratch = [UInt8](repeating: 0, count: 16 * 1024)
            while remaining > 0 {
                let n = recv(fd, &scratch, min(remaining, scratch.count), 0)
                if n <= 0 { break }
                remaining -= n
            }
            let reply = handler(request)
            respond(fd, reply, to: request)
            guard case .keepAlive = reply, !lifecycle.withLock({ $0.stopping }) else { break }
        }
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads up to the blank line; returns the request, how many body bytes came with the head,
    /// and the declared body length.
    private func readHead(_ fd: Int32) -> (TestOrigin.Request, Int, Int)? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var headEnd: Int?
        while headEnd == nil {
            guard buffer.count < 64 * 1024 else { return nil }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            let searchFrom = max(0, buffer.count - 3)
            buffer += chunk[0..<n]
            var i = searchFrom
            while i + 4 <= buffer.count {
                if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                    headEnd = i
                    break
                }
                i += 1
            }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count >= 2 else { return nil }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
        let target = String(requestLine[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let request = TestOrigin.Request(method: String(requestLine[0]), target: target, path: path, headers: headers)
        let declared = request.header("Content-Length").flatMap { Int($0) } ?? 0
        return (request, buffer.count - (headEnd! + 4), max(declared, 0))
    }

    private func respond(_ fd: Int32, _ reply: TestOrigin.Reply, to request: TestOrigin.Request) {
        switch reply {
        case .ok(let body, let contentType):
            sendAll(fd, head(200, [("Content-Type", contentType), ("Content-Length", "\(body.count)")]) + body)
        case .status(let status, let body, let headers):
            var all = headers
            let names = Set(headers.map { $0.0.lowercased() })
            if !names.contains("content-length") && !names.contains("transfer-encoding") {
                all.append(("Content-Length", "\(body.count)"))
            }
            sendAll(fd, head(status, all) + body)
        case .redirect(let location, let status):
            sendAll(fd, head(status, [("Location", location), ("Content-Length", "0")]))
        case .trickle(let body, let chunkSize, let interval):
            guard sendAll(fd, head(200, [("Content-Type", "image/jpeg"), ("Content-Length", "\(body.count)")])) else {
                return
            }
            var offset = 0
            while offset < body.count {
                let end = min(offset + max(chunkSize, 1), body.count)
                guard sendAll(fd, Array(body[offset..<end])) else { return }
                offset = end
                if offset < body.count && !pause(interval) { return }
            }
        case .chunked(let chunks, let contentType):
            var bytes = head(200, [("Content-Type", contentType), ("Transfer-Encoding", "chunked")])
            for chunk in chunks where !chunk.isEmpty {
                bytes += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + [13, 10]
            }
            sendAll(fd, bytes + Array("0\r\n\r\n".utf8))
        case .gzip(let body):
            let compressed = Self.gzip(body)
            let headers = [
                ("Content-Type", "image/jpeg"), ("Content-Encoding", "gzip"), ("Content-Length", "\(compressed.count)"),
            ]
            sendAll(fd, head(200, headers) + compressed)
        case .declaredLength(let length, let body):
            sendAll(fd, head(200, [("Content-Type", "image/jpeg"), ("Content-Length", "\(length)")]) + body)
        case .raw(let bytes):
            sendAll(fd, bytes)
        case .keepAlive(let declared, let body, let excessAfter, let excessDelivered):
            respondKeepingAlive(fd, declared: declared, body: body, excessAfter: excessAfter, excessDelivered)
        case .delayed(let delay, let inner):
            if pause(delay) { respond(fd, inner, to: request) }
        case .gated(let gate, let inner):
            if wait(for: gate) { respond(fd, inner, to: request) }
        case .hang:
            lifecycle.wait(until: { $0.stopping })
        case .cacheable(let body, let etag, let lastModified, let cacheControl, let contentType):
            respondCacheable(
                fd, body, etag: etag, lastModified: lastModified, cacheControl: cacheControl, contentType: contentType,
                to: request)
        }
    }

    /// `.keepAlive`: a keep-alive answer declaring `declared` bytes; what `body` holds beyond them
    /// is excess on the connection, sent with it or after `excessAfter` opens.
    private func respondKeepingAlive(
        _ fd: Int32, declared: Int, body: [UInt8], excessAfter: TestGate?, _ excessDelivered: TestGate?
    ) {
        // Opened whatever happens, so a test waiting on it fails on its expectations, never hangs.
        defer { excessDelivered?.open() }
        let head = head(200, [("Content-Type", "image/jpeg"), ("Content-Length", "\(declared)")], keepAlive: true)
        if let excessAfter {
            let answered = min(max(declared, 0), body.count)
            guard sendAll(fd, head + body[..<answered]), wait(for: excessAfter),
                sendAll(fd, Array(body[answered...]))
            else { return }
        } else {
            // One send: a client may get the head, the answer and the excess in one read.
            guard sendAll(fd, head + body) else { return }
        }
        if excessDelivered != nil { _ = waitUntilAcknowledged(fd) }
    }

    /// `.cacheable`: 304 when the request's validators match, else 200, with the caching headers.
    private func respondCacheable(
        _ fd: Int32, _ body: [UInt8], etag: String?, lastModified: String?, cacheControl: String?,
        contentType: String, to request: TestOrigin.Request
    ) {
        var headers: [(String, String)] = []
        if let etag { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        let notModified: Bool
        if let sent = request.header("If-None-Match") {
            notModified =
                etag.map { etag in
                    sent.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
                } ?? false
        } else {
            notModified = lastModified != nil && request.header("If-Modified-Since") == lastModified
        }
        if notModified {
            sendAll(fd, head(304, headers))
        } else {
            sendAll(
                fd, head(200, [("Content-Type", contentType), ("Content-Length", "\(body.count)")] + headers) + body)
        }
    }

    // MARK: Helpers

    private func head(_ status: Int, _ headers: [(String, String)], keepAlive: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// Waits for `gate` unless `stop()` comes first (it opens every gate a connection waits on);
    /// `false` if it did.
    private func wait(for gate: TestGate) -> Bool {
        let stopped = lifecycle.withLock { state -> Bool in
            if !state.stopping { state.gates.append(gate) }
            return state.stopping
        }
        guard !stopped else { return false }
        gate.wait()
        return !lifecycle.withLock { $0.stopping }
    }

    /// Waits until the peer's TCP has acknowledged every byte sent on `fd` (nothing left in the
    /// send queue), so they are in its socket; `false` on stop or error. Polled: the kernel offers
    /// no wait for acknowledgements, and on loopback they come within microseconds.
    private func waitUntilAcknowledged(_ fd: Int32) -> Bool {
        while true {
            var unacknowledged: Int32 = 0
            guard ioctl(fd, UInt(TIOCOUTQ), &unacknowledged) == 0 else { return false }
            if unacknowledged == 0 { return true }
            if !pause(.milliseconds(1)) { return false }
        }
    }

    /// Sends everything; `false` once the peer has gone (no SIGPIPE: MSG_NOSIGNAL).
    @discardableResult
    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// Waits for `duration` unless `stop()` comes first; `false` if it did.
    private func pause(_ duration: Duration) -> Bool {
        !lifecycle.wait(until: { $0.stopping }, timeout: duration)
    }

    /// Really compressed gzip, so a test can send a body whose decoded size is far above its
    /// compressed size.
    static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        do {
            let outcome = try ChildProcess.runHere("/bin/gzip", ["-c", "-n"], input: bytes)
            guard outcome.status == 0 else { fatalError("TestOrigin: /bin/gzip exited \(outcome.status)") }
            return outcome.output
        } catch {
            fatalError("TestOrigin: gzip failed: \(error)")
        }
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 410: "Gone"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
