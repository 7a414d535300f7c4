import Foundation
internal import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// A response read by ``TestHTTPClient``.
public struct TestHTTPResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header called `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

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

/// A raw HTTP/1.1 client for tests, on blocking POSIX sockets. Every call runs its blocking I/O on
/// dedicated threads (never on Swift's cooperative pool) and resumes the caller when done.
public enum TestHTTPClient {
    /// One request with `Connection: close` and a `Host` header; reads to EOF and decodes a
    /// Content-Length or chunked body (no body for HEAD, 1xx, 204 and 304).
    public static func request(
        _ method: String = "GET", host: String = "127.0.0.1", port: Int, target: String,
        headers: [(String, String)] = [], body: [UInt8]? = nil, timeout: Duration = .seconds(30)
    ) async throws -> TestHTTPResponse {
        try await onThread {
            try blockingRequest(
                method, host: host, port: port, target: target, headers: headers, body: body, timeout: timeout)
        }
    }

    /// Sends raw bytes, in pieces with `pause` between them, and returns whatever comes back until
    /// the peer closes or `timeout` passes. Stops sending early if the peer closes meanwhile.
    public static func raw(
        host: String = "127.0.0.1", port: Int, pieces: [[UInt8]], pause: Duration = .zero,
        timeout: Duration = .seconds(30)
    ) async throws -> [UInt8] {
        try await onThread {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let socket = try TestSocket(host: host, port: port)
            var received: [UInt8] = []
            for (index, piece) in pieces.enumerated() {
                if index > 0 && pause > .zero {
                    let pauseEnd = min(deadline, ContinuousClock.now.advanced(by: pause))
                    if !socket.receive(into: &received, until: pauseEnd) { return received }
                }
                if !socket.send(piece) { break }
            }
            _ = socket.receive(into: &received, until: deadline)
            return received
        }
    }

    /// `n` identical requests released at the same instant from `n` threads; results in order.
    public static func concurrent(
        _ n: Int, _ method: String = "GET", host: String = "127.0.0.1", port: Int, target: String,
        headers: [(String, String)] = [], timeout: Duration = .seconds(60)
    ) async -> [Result<TestHTTPResponse, Error>] {
        await withCheckedContinuation { continuation in
            let collector = Collector(count: n, continuation: continuation)
            let barrier = Barrier(count: n)
            for index in 0..<n {
                let thread = Thread {
                    barrier.wait()
                    let result = Result {
                        try blockingRequest(
                            method, host: host, port: port, target: target, headers: headers, body: nil,
                            timeout: timeout)
                    }
                    collector.set(index, result)
                }
                thread.stackSize = 256 * 1024
                thread.start()
            }
        }
    }

    // MARK: Implementation

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func blockingRequest(
        _ method: String, host: String, port: Int, target: String, headers: [(String, String)], body: [UInt8]?,
        timeout: Duration
    ) throws -> TestHTTPResponse {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let socket = try TestSocket(host: host, port: port)
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        // A server may answer and close before reading the whole body: read the answer regardless.
        if socket.send(Array(head.utf8)), let body, !body.isEmpty { _ = socket.send(body) }
        var received: [UInt8] = []
        guard socket.receive(into: &received, until: deadline) else {
            return try parseResponse(received, isHead: method == "HEAD")
        }
        throw TestHTTPClientError.timedOut
    }

    /// Parses one response (skipping interim 1xx ones) from everything the server sent.
    static func parseResponse(_ bytes: [UInt8], isHead: Bool) throws -> TestHTTPResponse {
        var start = 0
        while true {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: start) else {
                throw TestHTTPClientError.malformedResponse("no complete head in \(bytes.count) bytes")
            }
            let lines = String(decoding: bytes[start..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ", maxSplits: 2)
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
                throw TestHTTPClientError.malformedResponse("status line \(lines[0])")
            }
            var headers: [(String, String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers.append((String(line[..<colon]), value))
            }
            let bodyStart = headEnd + 4
            if (100..<200).contains(status) {
                start = bodyStart
                continue
            }
            let response = TestHTTPResponse(status: status, headers: headers, body: [])
            if isHead || status == 204 || status == 304 { return response }
            let rest = Array(bytes[bodyStart...])
            if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                return TestHTTPResponse(status: status, headers: headers, body: try decodeChunked(rest))
            }
            if let lengthText = response.header("Content-Length") {
                guard let length = Int(lengthText), length <= rest.count else {
                    throw TestHTTPClientError.malformedResponse("Content-Length \(lengthText), got \(rest.count)")
                }
                return TestHTTPResponse(status: status, headers: headers, body: Array(rest.prefix(length)))
            }
            return TestHTTPResponse(status: status, headers: headers, body: rest)
        }
    }

    static func decodeChunked(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: position) else {
                throw TestHTTPClientError.malformedResponse("truncated chunk size")
            }
            let sizeText = String(decoding: bytes[position..<lineEnd], as: UTF8.self)
                .split(separator: ";")[0].trimmingCharacters(in: .whitespaces)
            guard let size = Int(sizeText, radix: 16) else {
                throw TestHTTPClientError.malformedResponse("chunk size \(sizeText)")
            }
            position = lineEnd + 2
            if size == 0 { return body }
            guard position + size <= bytes.count else { throw TestHTTPClientError.malformedResponse("truncated chunk") }
            body += bytes[position..<position + size]
            position += size + 2
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count)
        where haystack[index] == needle[0] && Array(haystack[index..<index + needle.count]) == needle {
            return index
        }
        return nil
    }
}

/// A blocking TCP socket; its ``FileDescriptor`` is the only thing that closes it.
private final class TestSocket {
    private let descriptor: FileDescriptor
    private var fd: Int32 { descriptor.rawValue }

    init(host: String, port: Int) throws {
        var storage = sockaddr_storage()
        var length: socklen_t
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeBytes(of: &v4) { source in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
            }
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeBytes(of: &v6) { source in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
            }
        } else {
            throw TestHTTPClientError.invalidHost(host)
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.socket(family: Int32(storage.ss_family), type: Int32(SOCK_STREAM.rawValue))
        } catch {
            throw TestHTTPClientError.connectFailed(errno: error.code)
        }
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor.rawValue, $0, length) }
        }
        // On failure the local owner closes the socket when it goes out of scope, once; self was never
        // fully initialised, so no deinit runs.
        guard result == 0 else { throw TestHTTPClientError.connectFailed(errno: errno) }
        self.descriptor = descriptor
    }

    /// Sends everything; false if the peer is gone.
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Appends what arrives until `deadline`. Returns false when the peer closed (EOF or reset),
    /// true when the deadline passed first.
    func receive(into received: inout [UInt8], until deadline: ContinuousClock.Instant) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return true }
            let milliseconds = Int32(
                clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
                    + 1)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            received += buffer[0..<count]
        }
    }
}

/// Releases all `count` waiting threads at once.
private final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var arrived = 0

    init(count: Int) { self.count = count }

    func wait() {
        condition.lock()
        arrived += 1
        if arrived >= count {
            condition.broadcast()
        } else {
            while arrived < count { condition.wait() }
        }
        condition.unlock()
    }
}

/// Gathers results in order and resumes the caller once all are in.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<TestHTTPResponse, Error>?]
    private var remaining: Int
    private let continuation: CheckedContinuation<[Result<TestHTTPResponse, Error>], Never>

    init(count: Int, continuation: CheckedContinuation<[Result<TestHTTPResponse, Error>], Never>) {
        self.results = Array(repeating: nil, count: count)
        self.remaining = count
        self.continuation = continuation
        if count == 0 { continuation.resume(returning: []) }
    }

    func set(_ index: Int, _ result: Result<TestHTTPResponse, Error>) {
        lock.lock()
        results[index] = result
        remaining -= 1
        let done = remaining == 0
        lock.unlock()
        if done { continuation.resume(returning: results.map { $0! }) }
    }
}
