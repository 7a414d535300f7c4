internal import Primitives

/// A raw HTTP/1.1 client for tests, on blocking POSIX sockets. Every call runs its blocking I/O on
/// dedicated threads (never on Swift's cooperative pool) and resumes the caller when done.
///
/// The default `timeout`s only keep a broken server from hanging the run, so they are long: an
/// answer often waits for what the test does next (open a gate), and under a sanitizer the test can
/// wait minutes for its next turn on a cooperative pool other tests keep busy, while this clock
/// runs on a thread of its own (a TSan run timed out LifecycleTests' in-flight request at 30 s).
public enum TestHTTPClient {
    /// One request with `Connection: close` and a `Host` header; reads to the end of the stream and
    /// decodes a Content-Length or chunked body (see ``TestHTTPResponse/body`` for HEAD, 204, 304).
    /// `version` is sent as is in the request line.
    public static func request(
        _ method: String = "GET", host: String = "127.0.0.1", port: Int, target: String,
        headers: [(String, String)] = [], body: [UInt8]? = nil, version: String = "HTTP/1.1",
        timeout: Duration = .seconds(300)
    ) async throws -> TestHTTPResponse {
        try await onThread {
            try blockingRequest(
                method, host: host, port: port, target: target, headers: headers, body: body, version: version,
                timeout: timeout)
        }
    }

    /// Sends raw bytes, in pieces with `pause` between them, and returns whatever comes back until
    /// the peer closes or `timeout` passes. Stops sending early if the peer closes meanwhile.
    public static func exchange(
        host: String = "127.0.0.1", port: Int, pieces: [[UInt8]], pause: Duration = .zero,
        timeout: Duration = .seconds(300)
    ) async throws -> TestRawReply {
        try await onThread {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let socket = try TestSocket(host: host, port: port)
            var received: [UInt8] = []
            var sent = 0
            for piece in pieces {
                if sent > 0 && pause > .zero {
                    let pauseEnd = min(deadline, ContinuousClock.now.advanced(by: pause))
                    if !socket.receive(into: &received, until: pauseEnd) {
                        return TestRawReply(bytes: received, peerClosed: true, piecesSent: sent)
                    }
                }
                guard socket.send(piece) else { break }
                sent += 1
            }
            let open = socket.receive(into: &received, until: deadline)
            return TestRawReply(bytes: received, peerClosed: !open, piecesSent: sent)
        }
    }

    /// ``exchange(host:port:pieces:pause:timeout:)``, just the bytes.
    public static func raw(
        host: String = "127.0.0.1", port: Int, pieces: [[UInt8]], pause: Duration = .zero,
        timeout: Duration = .seconds(300)
    ) async throws -> [UInt8] {
        try await exchange(host: host, port: port, pieces: pieces, pause: pause, timeout: timeout).bytes
    }

    /// Requests sent one after another on one connection, each only once the response to the one
    /// before has arrived in full (keep-alive, not pipelined); a request starting with "HEAD " gets
    /// a response without a body. Returns the responses, and whether the server closed the
    /// connection: after the last response it waits for that (send `Connection: close` last), or,
    /// with `awaitClose` false, returns at once with `peerClosed` false unless the server had
    /// already closed. Stops early, with fewer responses than requests, if the server closes before
    /// answering one.
    public static func sequence(
        host: String = "127.0.0.1", port: Int, requests: [[UInt8]], awaitClose: Bool = true,
        timeout: Duration = .seconds(300)
    ) async throws -> (responses: [TestHTTPResponse], peerClosed: Bool) {
        try await onThread {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let socket = try TestSocket(host: host, port: port)
            var received: [UInt8] = []
            var consumed = 0
            var responses: [TestHTTPResponse] = []
            for request in requests {
                guard socket.send(request) else { break }
                let isHead = request.starts(with: "HEAD ".utf8)
                var parsed: (TestHTTPResponse, Int)?
                let open = socket.receive(into: &received, until: deadline) { bytes in
                    parsed = try? TestHTTPResponse.parse(bytes, from: consumed, isHead: isHead, atEndOfStream: false)
                    return parsed != nil
                }
                // Closed without (another) answer.
                if !open && received.count == consumed { return (responses, true) }
                if parsed == nil {
                    parsed = try TestHTTPResponse.parse(received, from: consumed, isHead: isHead, atEndOfStream: !open)
                }
                guard let (response, end) = parsed else { throw TestHTTPClientError.timedOut }
                responses.append(response)
                consumed = end
                guard open else { return (responses, true) }
            }
            guard awaitClose else { return (responses, false) }
            // Bytes beyond the last response end the wait too, and so read as "not closed".
            let open = socket.receive(into: &received, until: deadline) { $0.count > consumed }
            return (responses, !open)
        }
    }

    /// `n` identical requests released at the same instant from `n` threads; results in order.
    public static func concurrent(
        _ n: Int, _ method: String = "GET", host: String = "127.0.0.1", port: Int, target: String,
        headers: [(String, String)] = [], timeout: Duration = .seconds(300)
    ) async -> [Result<TestHTTPResponse, Error>] {
        await withCheckedContinuation { continuation in
            let collector = ResultCollector<Result<TestHTTPResponse, Error>>(count: n, continuation: continuation)
            let barrier = ThreadBarrier(count: n)
            for index in 0..<n {
                do {
                    try DetachedThread.start(name: "test-http-\(index)", stackSize: 256 << 10) {
                        barrier.wait()
                        let result = Result {
                            try blockingRequest(
                                method, host: host, port: port, target: target, headers: headers, body: nil,
                                version: "HTTP/1.1", timeout: timeout)
                        }
                        collector.set(index, result)
                    }
                } catch {
                    fatalError("TestHTTPClient: cannot start a thread: \(error)")
                }
            }
        }
    }

    // MARK: Implementation

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try DetachedThread.start(name: "test-http", stackSize: 1 << 20) {
                    continuation.resume(with: Result { try body() })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    static func blockingRequest(
        _ method: String, host: String, port: Int, target: String, headers: [(String, String)], body: [UInt8]?,
        version: String, timeout: Duration
    ) throws -> TestHTTPResponse {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let socket = try TestSocket(host: host, port: port)
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(target) \(version)\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        // A server may answer and close before reading the whole body: read the answer regardless.
        if socket.send(Array(head.utf8)), let body, !body.isEmpty { _ = socket.send(body) }
        var received: [UInt8] = []
        guard socket.receive(into: &received, until: deadline) else {
            return try TestHTTPResponse(parsing: received, isHead: method == "HEAD")
        }
        throw TestHTTPClientError.timedOut
    }
}
