import Foundation
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

/// A real HTTP/1.1 origin on 127.0.0.1 (or ::1), in process, for tests. Raw POSIX sockets and
/// its own threads (an accept thread and one thread per connection), so blocking I/O never
/// touches Swift's cooperative pool. Every response closes its connection.
///
/// ```swift
/// let origin = try TestOrigin(routes: ["/photo.jpg": .ok(jpegBytes)])
/// defer { origin.stop() }
/// fetch(origin.url("/photo.jpg"))
/// ```
public final class TestOrigin: @unchecked Sendable {
    public struct Request: Sendable {
        public let method: String
        /// The request target as sent, query included.
        public let target: String
        /// `target` without its query.
        public let path: String
        public let headers: [(String, String)]

        /// The first header named `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    public indirect enum Reply: Sendable {
        /// 200 with a Content-Length.
        case ok([UInt8], contentType: String = "image/jpeg")
        /// Any status; Content-Length is added unless `headers` has one (or Transfer-Encoding).
        case status(Int, body: [UInt8] = [], headers: [(String, String)] = [])
        /// A redirect with a `Location` header (sent as given: relative stays relative).
        case redirect(to: String, status: Int = 302)
        /// An honest Content-Length, then the body `chunkSize` bytes at a time, `interval` apart.
        case trickle([UInt8], chunkSize: Int = 1, interval: Duration = .milliseconds(500))
        /// Transfer-Encoding: chunked, one HTTP chunk per element (empty elements are skipped).
        case chunked([[UInt8]], contentType: String = "image/jpeg")
        /// `Content-Encoding: gzip` of the bytes (really compressed, by /bin/gzip), with the
        /// compressed Content-Length.
        case gzip([UInt8])
        /// Content-Length says `Int`, the whole body is sent anyway, then the connection closes.
        case declaredLength(Int, body: [UInt8])
        /// Exactly these bytes, then close.
        case raw([UInt8])
        /// Waits, then answers with the inner reply.
        case delayed(Duration, Reply)
        /// Holds the answer until the test opens the gate (or the origin stops), then the inner reply.
        case gated(TestGate, Reply)
        /// Reads the request and never answers (until `stop()`).
        case hang
    }

    public struct SocketError: Error, CustomStringConvertible {
        public let operation: String
        public let code: Int32
        public var description: String { "TestOrigin: \(operation) failed: \(String(cString: strerror(code)))" }
    }

    /// The ephemeral port the origin listens on.
    public let port: Int
    /// The address it listens on ("127.0.0.1" or "::1").
    public let host: String
    private let core: TestOriginCore

    /// Listens on `host` (an IPv4 or IPv6 literal) at an ephemeral port. `handler` runs on the
    /// connection's thread, once per request, after the request head has been read.
    public init(host: String = "127.0.0.1", handler: @escaping @Sendable (Request) -> Reply) throws {
        core = try TestOriginCore(host: host, handler: handler)
        port = core.port
        self.host = host
        core.startAccepting()
    }

    /// Answers by path (query ignored); unknown paths get 404.
    public convenience init(host: String = "127.0.0.1", routes: [String: Reply]) throws {
        try self.init(host: host) { request in routes[request.path] ?? .status(404, body: Array("not found".utf8)) }
    }

    deinit {
        core.stop()
    }

    /// "http://127.0.0.1:PORT/photo.jpg" ("http://[::1]:PORT/..." for IPv6).
    public func url(_ pathAndQuery: String) -> String {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return "http://\(authority)\(pathAndQuery.hasPrefix("/") ? "" : "/")\(pathAndQuery)"
    }

    /// Requests seen for `path` (query ignored).
    public func requestCount(path: String) -> Int { core.requests.filter { $0.path == path }.count }

    public var totalRequests: Int { core.requests.count }

    /// Every request seen so far, in arrival order.
    public var requests: [Request] { core.requests }

    /// Closes the listener and every connection (interrupting delays, trickles and hangs) and
    /// waits for all the origin's threads. Idempotent; also run by `deinit`. Must not be called
    /// from a handler.
    public func stop() { core.stop() }

    /// Whether this machine can listen on ::1 (for `.enabled(if:)` on IPv6 tests).
    public static let isIPv6LoopbackAvailable: Bool = {
        guard let address = SocketAddress(host: "::1", port: 0), let probe = try? FileDescriptor.tcpSocket(for: address)
        else { return false }
        return (try? probe.bind(to: address)) != nil
    }()
}
<<<<<<< HEAD

// MARK: - Core

/// The listener, the threads and the request log. Separate from `TestOrigin` so the threads
/// keep only this alive and dropping the last `TestOrigin` reference still stops them.
private final class Core: @unchecked Sendable {
    let port: Int
    /// The listening socket's number; valid while `listenerOwner` holds it (until `stop()`).
    private let listener: Int32
    private let handler: @Sendable (TestOrigin.Request) -> TestOrigin.Reply
    /// Guards everything below; also signalled on stop and when a thread ends.
    private let condition = NSCondition()
    private var stopping = false
    /// Dropped (and so closed) by `stop()` once no thread can use `listener` any more.
    private var listenerOwner: FileDescriptor?
    /// Numbers of the open connections, for `stop()` to shut down; each is owned (and closed) by its
    /// connection thread, which removes it from here first.
    private var connections: Set<Int32> = []
    /// Gates connections wait on; `stop()` opens them so no thread stays blocked.
    private var gates: [TestGate] = []
    private var liveThreads = 0
    private var log: [TestOrigin.Request] = []

    init(host: String, handler: @escaping @Sendable (TestOrigin.Request) -> TestOrigin.Reply) throws {
        self.handler = handler
        let isIPv6 = host.contains(":")
        let owner: FileDescriptor
        do {
            owner = try FileDescriptor.socket(family: isIPv6 ? AF_INET6 : AF_INET, type: Int32(SOCK_STREAM.rawValue))
        } catch {
            throw TestOrigin.SocketError(operation: "socket", code: error.code)
        }
        // Any throw below leaves `owner` to close the socket, once.
        let fd = owner.rawValue
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw TestOrigin.SocketError(operation: "inet_pton(\(host))", code: EINVAL)
            }
            try Self.bindAddress(fd, &address)
            port = Int(UInt16(bigEndian: try Self.boundAddress(fd, as: sockaddr_in6.self).sin6_port))
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw TestOrigin.SocketError(operation: "inet_pton(\(host))", code: EINVAL)
            }
            try Self.bindAddress(fd, &address)
            port = Int(UInt16(bigEndian: try Self.boundAddress(fd, as: sockaddr_in.self).sin_port))
        }
        guard listen(fd, 128) == 0 else { throw TestOrigin.SocketError(operation: "listen", code: errno) }
        listener = fd
        listenerOwner = owner
    }

    var requests: [TestOrigin.Request] {
        condition.lock()
        defer { condition.unlock() }
        return log
    }

    func startAccepting() {
        condition.lock()
        liveThreads += 1
        condition.unlock()
        spawn { self.acceptLoop() }
    }

    func stop() {
        condition.lock()
        if !stopping {
            stopping = true
            // shutdown() wakes a thread blocked in accept()/recv() on Linux; close() would not.
            _ = shutdown(listener, Int32(SHUT_RDWR))
            for fd in connections { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            for gate in gates { gate.open() }
            condition.broadcast()
        }
        while liveThreads > 0 { condition.wait() }
        listenerOwner = nil  // closes the listener, now that no thread can use it
        condition.unlock()
    }

    // MARK: Threads

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            body()
            self.condition.lock()
            self.liveThreads -= 1
            self.condition.broadcast()
            self.condition.unlock()
        }
        thread.start()
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            let acceptError = errno
            let connection = fd >= 0 ? FileDescriptor(adopting: fd) : nil
            condition.lock()
            if stopping {
                condition.unlock()
                return  // `connection` closes as it goes out of scope
            }
            guard let connection else {
                condition.unlock()
                if acceptError != EINTR && acceptError != ECONNABORTED { usleep(10_000) }  // EMFILE & co: back off
                continue
            }
            connections.insert(connection.rawValue)
            liveThreads += 1
            condition.unlock()
            spawn {
                self.serve(connection.rawValue)
                self.condition.lock()
                self.connections.remove(connection.rawValue)
                self.condition.unlock()
                // Closes only now, after leaving the set, so stop() never shuts down a reused number.
                withExtendedLifetime(connection) {}
            }
        }
    }

    private func serve(_ fd: Int32) {
        guard let (request, bodyBytesPresent, bodyLength) = readHead(fd) else { return }
        condition.lock()
        log.append(request)
        condition.unlock()
        // Drain a small request body so closing does not reset the connection under the reply.
        var remaining = min(bodyLength, 1 << 20) - bodyBytesPresent
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while remaining > 0 {
            let n = recv(fd, &scratch, min(remaining, scratch.count), 0)
            if n <= 0 { break }
            remaining -= n
        }
        respond(fd, handler(request))
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

    private func respond(_ fd: Int32, _ reply: TestOrigin.Reply) {
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
        case .delayed(let delay, let inner):
            if pause(delay) { respond(fd, inner) }
        case .gated(let gate, let inner):
            condition.lock()
            let stopped = stopping
            if !stopped { gates.append(gate) }
            condition.unlock()
            if stopped { return }
            gate.wait()  // stop() opens every gate a connection waits on
            condition.lock()
            let answer = !stopping
            condition.unlock()
            if answer { respond(fd, inner) }
        case .hang:
            condition.lock()
            while !stopping { condition.wait() }
            condition.unlock()
        }
    }

    // MARK: Helpers

    private func head(_ status: Int, _ headers: [(String, String)]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
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

    /// Sleeps for `duration` unless `stop()` comes first; `false` if it did.
    private func pause(_ duration: Duration) -> Bool {
        let (seconds, attoseconds) = duration.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while !stopping && condition.wait(until: deadline) {}
        return !stopping
    }

    private static func bindAddress<Address>(_ fd: Int32, _ address: inout Address) throws {
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard rc == 0 else { throw TestOrigin.SocketError(operation: "bind", code: errno) }
    }

    private static func boundAddress<Address>(_ fd: Int32, as: Address.Type) throws -> Address {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { throw TestOrigin.SocketError(operation: "getsockname", code: errno) }
        return withUnsafeBytes(of: storage) { $0.loadUnaligned(as: Address.self) }
    }

    /// Really compressed gzip, so a test can send a body whose decoded size is far above its
    /// compressed size.
    static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("testorigin-\(UUID().uuidString)")
        do {
            try Data(bytes).write(to: input)
            defer { try? FileManager.default.removeItem(at: input) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/gzip")
            process.arguments = ["-c", "-n", input.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let compressed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                fatalError("TestOrigin: /bin/gzip exited \(process.terminationStatus)")
            }
            return Array(compressed)
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
=======
>>>>>>> http-hygiene
