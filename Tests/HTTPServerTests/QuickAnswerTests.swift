import Primitives
import TestSupport
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// The server's quick answer: offered every accepted request without a body before the handler,
/// reading the head in place.
@Suite struct QuickAnswerTests {
    /// What the quick answer saw of each head it was offered, read through `RequestHead`.
    private struct Seen: Sendable {
        var target: String
        var isGet: Bool
        var isHead: Bool
        var isQuickPath: Bool
        var isHTTP11: Bool
        var hasHost: Bool
        var tag: String?
    }

    private final class Recorder: Sendable {
        let seen = Locked<[Seen]>([])
        let handled = Locked<[String]>([])
    }

    /// A server whose quick answer takes GET and HEAD of `/quick` (headers read through the head)
    /// and declines the rest; the handler answers 299 with the path.
    private func start(_ recorder: Recorder) throws -> (HTTPServer, HTTPPreparedResponse) {
        let prepared = HTTPPreparedResponse(
            status: 200, headers: [("Content-Type", "text/plain"), ("X-Quick", "yes")],
            body: .bytes(Array("ready-made".utf8)))
        var configuration = HTTPServerConfiguration.loopback()
        configuration.idleTimeout = .seconds(30)
        let server = HTTPServer(
            configuration: configuration,
            quickAnswer: { head in
                let seen = Seen(
                    target: head.target, isGet: head.hasMethod("GET"), isHead: head.hasMethod("HEAD"),
                    isQuickPath: head.hasPath("/quick"), isHTTP11: head.isHTTP11, hasHost: head.hasHeader("host"),
                    tag: head.header("x-tag"))
                recorder.seen.withLock { $0.append(seen) }
                return seen.isQuickPath && (seen.isGet || seen.isHead) ? prepared : nil
            },
            handler: { request, responder in
                recorder.handled.withLock { $0.append(request.target) }
                responder.respond(HTTPResponse(status: 299, body: .bytes(Array(request.path.utf8))))
            })
        try server.start()
        return (server, prepared)
    }

    @Test func answersWhatItTakesAndTheHandlerGetsTheRest() async throws {
        let recorder = Recorder()
        let (server, prepared) = try start(recorder)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let quick = try await TestHTTPClient.request(
            port: server.port, target: "/quick?a=%20b", headers: [("X-TAG", "first")])
        #expect(quick.status == 200)
        #expect(quick.header("x-quick") == "yes")
        #expect(quick.text == "ready-made")
        let other = try await TestHTTPClient.request(port: server.port, target: "/other")
        #expect(other.status == 299)
        #expect(other.text == "/other")
        let post = try await TestHTTPClient.request("POST", port: server.port, target: "/quick")
        #expect(post.status == 299)
        #expect(recorder.handled.withLock { $0 } == ["/other", "/quick"])
        let seen = recorder.seen.withLock { $0 }
        try #require(seen.count == 3)
        // The raw target, not decoded; the header found whatever its case; the method exact.
        #expect(seen[0].target == "/quick?a=%20b")
        #expect(seen[0].tag == "first")
        #expect(seen[0].isGet && !seen[0].isHead && seen[0].isQuickPath && seen[0].isHTTP11 && seen[0].hasHost)
        #expect(!seen[1].isQuickPath && seen[1].tag == nil)
        #expect(!seen[2].isGet && !seen[2].isHead && seen[2].isQuickPath)
        withExtendedLifetime(prepared) {}
    }

    @Test func seesTheVersionAndAMissingHost() async throws {
        let recorder = Recorder()
        let (server, _) = try start(recorder)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let bytes = try await TestHTTPClient.raw(
            port: server.port, pieces: [Array("HEAD /quick HTTP/1.0\r\n\r\n".utf8)])
        #expect(text(bytes).hasPrefix("HTTP/1.1 200"))
        #expect(!text(bytes).contains("ready-made"))
        let seen = try #require(recorder.seen.withLock { $0 }.first)
        #expect(seen.isHead && !seen.isHTTP11 && !seen.hasHost)
    }

    /// Keep-alive: each request on one connection is offered anew, quick and handled ones mixed.
    @Test func everyRequestOnAConnectionIsOffered() async throws {
        let recorder = Recorder()
        let (server, _) = try start(recorder)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let (responses, closed) = try await TestHTTPClient.sequence(
            port: server.port,
            requests: [
                Array("GET /quick HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /quick HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
            ])
        #expect(responses.map(\.status) == [200, 299, 200])
        #expect(closed)
        #expect(recorder.seen.withLock { $0.count } == 3)
        #expect(recorder.handled.withLock { $0 } == ["/slow"])
    }

    /// A request with a body goes to the handler at once, and while draining every request does
    /// (its answer carries `Connection: close`, which a ready-made response cannot take).
    @Test func bodiesAndTheDrainGoToTheHandler() async throws {
        let recorder = Recorder()
        let (server, _) = try start(recorder)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let withBody = try await TestHTTPClient.request(
            port: server.port, target: "/quick", body: Array("data".utf8))
        #expect(withBody.status == 299)
        server.beginDraining()
        let draining = try await TestHTTPClient.request(port: server.port, target: "/quick")
        #expect(draining.status == 299)
        #expect(draining.header("connection") == "close")
        #expect(recorder.seen.withLock { $0.isEmpty })
        #expect(recorder.handled.withLock { $0 } == ["/quick", "/quick"])
    }

    /// A quick answer counts in flight until it has been sent, like a handler's, so shutdown's
    /// grace covers it: a client that does not read holds it in flight.
    @Test func aQuickAnswerIsInFlightUntilSent() async throws {
        let body = [UInt8](repeating: 0x61, count: 16 << 20)
        let prepared = HTTPPreparedResponse(status: 200, headers: [], body: .bytes(body))
        // Long idle timeout: the answer stays unread until this task gets its next turns on the
        // cooperative pool, which under a sanitizer other tests can keep busy for longer than 30 s.
        let server = try startServer(
            { $0.idleTimeout = .seconds(600) }, quickAnswer: { _ in prepared },
            handler: { _, responder in responder.respond(HTTPResponse(status: 500)) })
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let request = Array("GET /any HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        try #require(send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
        // 16 MiB cannot fit the socket buffers while nothing is read.
        #expect(await eventually { server.inFlight == 1 }, "the unread answer is in flight")
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.inFlight == 1)
        var received = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while received < body.count {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received += count
        }
        #expect(received > body.count)
        #expect(await eventually { server.inFlight == 0 }, "the sent answer is counted out")
    }
}
