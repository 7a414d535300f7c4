import HTTPServer
import TestSupport
import Testing

/// A request that is not acceptable HTTP/1.x, and what the server answers to it.
struct Refusal: Sendable, CustomTestStringConvertible {
    /// What the server answers when the same bytes come as a later request on a kept-alive
    /// connection, where libmicrohttpd reads them before the server can look (see `RequestHeadCheck`).
    enum Later: Sendable, Equatable {
        /// The same problem+json answer, from the access handler.
        case problem
        /// libmicrohttpd's own HTML page with this status, without a Content-Type.
        case libmicrohttpdPage(Int)
        /// The same, but with its head sent twice (a libmicrohttpd 0.9.75 bug in the refusals it makes
        /// after reading the header fields): the second head reads as the start of the body.
        case libmicrohttpdPageWithItsHeadTwice(Int)
        /// Closed without an answer: at once by libmicrohttpd, or (a line starting with NUL, which
        /// libmicrohttpd skips as empty) at the head deadline.
        case closedWithoutAnswer
        /// libmicrohttpd hands the handler a request cut short at a NUL byte.
        case reachesTheHandler
    }

    let name: String
    let bytes: [UInt8]
    let status: Int
    let later: Later

    init(_ name: String, _ bytes: [UInt8], _ status: Int, later: Later) {
        self.name = name
        self.bytes = bytes
        self.status = status
        self.later = later
    }

    init(_ name: String, _ text: String, _ status: Int, later: Later) {
        self.init(name, Array(text.utf8), status, later: later)
    }

    var testDescription: String { name }

    static let cases: [Refusal] = [
        Refusal(
            "NUL bytes, no method, HTTP/9.9",
            [0, 1] + Array("GARBAGE ".utf8) + [0xFF, 0xFE] + Array(" / HTTP/9.9\r\n\r\n".utf8),
            400, later: .closedWithoutAnswer),
        Refusal(
            "a TLS ClientHello on the plain-text port",
            [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03]
                + Array(repeating: 0x42, count: 32), 400, later: .closedWithoutAnswer),
        Refusal("no space in the line", "GARBAGE\r\n\r\n", 400, later: .closedWithoutAnswer),
        Refusal("no method", " / HTTP/1.1\r\nHost: x\r\n\r\n", 400, later: .closedWithoutAnswer),
        Refusal(
            "a version that is not HTTP/d.d", "GET / FOO/1.1\r\nHost: x\r\n\r\n", 400, later: .libmicrohttpdPage(400)),
        Refusal("no version", "GET /\r\nHost: x\r\n\r\n", 400, later: .libmicrohttpdPage(400)),
        Refusal(
            "a method with bytes a token cannot have", [0xFF, 0xFE] + Array(" / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            400, later: .problem),
        Refusal("NUL in the method", "GE\u{0}T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, later: .reachesTheHandler),
        Refusal("NUL in the target", "GET /a\u{0}b HTTP/1.1\r\nHost: x\r\n\r\n", 400, later: .reachesTheHandler),
        Refusal("a space in the target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400, later: .problem),
        Refusal("a control byte in the target", "GET /a\u{1}b HTTP/1.1\r\nHost: x\r\n\r\n", 400, later: .problem),
        Refusal(
            "a header line without a colon", "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400,
            later: .libmicrohttpdPage(400)),
        Refusal(
            "whitespace before a header's colon", "GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n", 400, later: .problem),
        Refusal(
            "NUL in a header value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", 400,
            later: .reachesTheHandler),
        Refusal(
            "two Content-Lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            400,
            later: .problem),
        Refusal(
            "Content-Length with Transfer-Encoding",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
            later: .problem),
        Refusal(
            "a Content-Length that is not a number", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ab\r\n\r\nab",
            400, later: .libmicrohttpdPageWithItsHeadTwice(400)),
        Refusal(
            "a Content-Length beyond 64 bits",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            400, later: .libmicrohttpdPageWithItsHeadTwice(413)),
        Refusal("HTTP/2 with prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, later: .libmicrohttpdPage(505)),
        Refusal("HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505, later: .libmicrohttpdPage(505)),
        Refusal("HTTP/9.9", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505, later: .libmicrohttpdPage(505)),
        Refusal(
            "a target over the limit", "GET /\(String(repeating: "a", count: 16 << 10)) HTTP/1.1\r\nHost: x\r\n\r\n",
            414, later: .problem),
        Refusal(
            "a request line beyond libmicrohttpd's memory",
            "GET /\(String(repeating: "a", count: 40_000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414,
            later: .libmicrohttpdPage(414)),
        Refusal(
            "a head over the limit",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: \(String(repeating: "b", count: 20 << 10))\r\n\r\n",
            431, later: .problem),
        Refusal(
            "a head beyond libmicrohttpd's memory",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: \(String(repeating: "b", count: 40_000))\r\n\r\n", 431,
            later: .libmicrohttpdPage(431)),
        Refusal("more fields than the limit", head(fields: 101), 431, later: .problem),
        Refusal(
            "more query arguments and fields than the limit",
            "GET /?\((0..<100).map { "a\($0)" }.joined(separator: "&")) HTTP/1.1\r\nHost: x\r\n\r\n", 431,
            later: .problem),
        Refusal(
            "more fields than libmicrohttpd's memory holds", head(fields: 600), 431, later: .libmicrohttpdPage(431)),
    ]

    /// A GET with `fields` header fields, Host included.
    static func head(fields: Int) -> String {
        var text = "GET / HTTP/1.1\r\nHost: x\r\n"
        for index in 1..<fields { text += "X-\(index): v\r\n" }
        return text + "\r\n"
    }
}

@Suite struct HTTPRefusalTests {
    /// A handler that answers 200 with the method and target it was given.
    private static func echo(_ request: HTTPRequest, _ responder: HTTPResponder) {
        responder.respond(HTTPResponse(status: 200, body: .bytes(Array("\(request.method) \(request.target)".utf8))))
    }

    /// As a connection's first request: refused with problem+json before libmicrohttpd reads it,
    /// and the connection closed.
    @Test(arguments: Refusal.cases) func firstRequestIsRefused(_ refusal: Refusal) async throws {
        let server = try startServer(handler: Self.echo)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let reply = try await TestHTTPClient.exchange(port: server.port, pieces: [refusal.bytes])
        let response = try reply.response()
        #expect(response.status == refusal.status, "\(reply.text.prefix(300))")
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(response.text.contains("\"status\":\(refusal.status)"), "\(response.text)")
        #expect(response.text.hasPrefix("{\"type\":\"urn:thumbd:problem:"), "\(response.text)")
        #expect(reply.peerClosed)
    }

    /// As a later request on a kept-alive connection, libmicrohttpd parses the bytes before the
    /// server sees them: what it lets through is refused alike from the access handler; the rest
    /// is libmicrohttpd's own answer (documented in docs/architecture.md and openapi.yaml).
    @Test(arguments: Refusal.cases) func laterRequestIsRefused(_ refusal: Refusal) async throws {
        // Short deadlines for the lines libmicrohttpd skips: a kept-alive connection's next head
        // may take the idle timeout, and nothing tells the server that bytes have come.
        let server = try startServer(
            {
                $0.headTimeout = .seconds(1)
                $0.idleTimeout = .seconds(1)
            }, handler: Self.echo)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let (responses, closed) = try await TestHTTPClient.sequence(
            port: server.port, requests: [Array("GET /first HTTP/1.1\r\nHost: x\r\n\r\n".utf8), refusal.bytes],
            awaitClose: refusal.later != .reachesTheHandler)
        #expect(responses.first?.text == "GET /first")
        switch refusal.later {
        case .problem:
            let response = try #require(responses.dropFirst().first)
            #expect(response.status == refusal.status)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(closed)
        case .libmicrohttpdPage(let status):
            let response = try #require(responses.dropFirst().first)
            #expect(response.status == status)
            #expect(response.header("Content-Type") == nil)
            #expect(response.text.hasPrefix("<html>"), "\(response.text)")
            #expect(closed)
        case .libmicrohttpdPageWithItsHeadTwice(let status):
            let response = try #require(responses.dropFirst().first)
            #expect(response.status == status)
            #expect(response.header("Content-Type") == nil)
            #expect(response.text.hasPrefix("HTTP/1.1 \(status) "), "\(response.text)")
        case .closedWithoutAnswer:
            #expect(responses.count == 1)
            #expect(closed)
        case .reachesTheHandler:
            let response = try #require(responses.dropFirst().first)
            #expect(response.status == 200)
        }
    }

    @Test func refusalOfAHeadRequestHasNoBody() async throws {
        let server = try startServer(handler: Self.echo)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let reply = try await TestHTTPClient.exchange(
            port: server.port, pieces: [Array("HEAD / HTTP/9.9\r\nHost: x\r\n\r\n".utf8)])
        let response = try reply.response(isHead: true)
        #expect(response.status == 505)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.body.isEmpty, "\(response.text)")
        #expect(reply.peerClosed)
    }

    /// A head at every limit at once (target, total size, number of fields) still reaches the
    /// handler and gets its answer, first on a connection and later on it: the limits leave
    /// libmicrohttpd room to answer.
    @Test func headAtTheLimitsIsServed() async throws {
        let limits = HTTPServerConfiguration.loopback()
        let target = "/" + String(repeating: "t", count: limits.maxTargetBytes - 1)
        var head = "GET \(target) HTTP/1.1\r\nHost: x\r\n"
        for index in 1..<(limits.maxFields - 1) { head += "X-\(index): v\r\n" }
        let fixed = head.utf8.count + "X-Pad: \r\n\r\n".utf8.count
        head += "X-Pad: \(String(repeating: "p", count: limits.maxHeadBytes - fixed))\r\n\r\n"
        #expect(head.utf8.count == limits.maxHeadBytes)
        let server = try startServer(handler: Self.echo)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let (responses, _) = try await TestHTTPClient.sequence(
            port: server.port, requests: [Array(head.utf8), Array(head.utf8)], awaitClose: false)
        #expect(responses.map(\.status) == [200, 200])
        #expect(responses.allSatisfy { $0.text == "GET \(target)" })
    }

    /// Accepted on both paths, as RFC 9112 allows: empty lines before the request line, bare LF
    /// line ends, a folded header line, HTTP/1.2 (a later 1.x is read as 1.1).
    @Test func lenientButValidHeadsAreServed() async throws {
        let server = try startServer(handler: Self.echo)
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        for head in [
            "\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n", "GET /a HTTP/1.1\nHost: x\n\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nX-Folded: one\r\n two\r\n\r\n", "GET /a HTTP/1.2\r\nHost: x\r\n\r\n",
        ] {
            let (responses, _) = try await TestHTTPClient.sequence(
                port: server.port, requests: [Array(head.utf8), Array(head.utf8)], awaitClose: false)
            #expect(responses.map(\.status) == [200, 200], "\(head)")
        }
    }
}
