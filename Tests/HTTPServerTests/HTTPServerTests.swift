import Primitives
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

private final class Owner {
    let memory: UnsafeMutableRawBufferPointer
    init(_ bytes: [UInt8]) {
        memory = .allocate(byteCount: bytes.count, alignment: 1)
        memory.copyBytes(from: bytes)
    }
    deinit { memory.deallocate() }
}

@Suite struct HTTPServerTests {
    @Test func answersSynchronously() async throws {
        let server = try startServer { _, responder in
            responder.respond(
                HTTPResponse(
                    status: 201, headers: [("X-Test", "yes"), ("Content-Type", "text/plain")],
                    body: .bytes(Array("hello".utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let response = try await TestHTTPClient.request(port: server.port, target: "/a")
        #expect(response.status == 201)
        #expect(response.header("x-test") == "yes")
        #expect(response.header("Content-Type") == "text/plain")
        #expect(response.header("Content-Length") == "5")
        #expect(response.text == "hello")
        #expect(response.trailingBytes.isEmpty)
    }

    @Test func answersLaterFromAnotherThread() async throws {
        let stash = Stash()
        defer { stash.forgetResponders() }
        let server = try startServer { request, responder in stash.add(request, responder) }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        async let response = TestHTTPClient.request(port: server.port, target: "/slow")
        let responder = try #require(await stash.responders(count: 1).first)
        // The handler returned without answering: the connection is suspended until the answer.
        #expect(await eventually { responder.isSuspended }, "the connection is suspended")
        answerFromAnotherThread(responder, HTTPResponse(status: 200, body: .bytes(Array("late".utf8))))
        let answer = try await response
        #expect(answer.status == 200)
        #expect(answer.text == "late")
        #expect(await eventually { server.inFlight == 0 }, "the request is counted out")
    }

    @Test func keepAliveServesTwoRequestsOnOneSocket() async throws {
        let server = try startServer { request, responder in
            responder.respond(HTTPResponse(status: 200, body: .bytes(Array(request.path.utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let (responses, closed) = try await TestHTTPClient.sequence(
            port: server.port,
            requests: [
                Array("GET /one HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
            ])
        #expect(responses.map(\.status) == [200, 200])
        #expect(responses.map(\.text) == ["/one", "/two"])
        #expect(responses.first?.header("Connection")?.lowercased() != "close")
        #expect(responses.last?.header("Connection")?.lowercased() == "close")
        #expect(closed)
    }

    @Test func headGetsHeadersWithTheBodyLengthButNoBody() async throws {
        let server = try startServer { _, responder in
            responder.respond(HTTPResponse(status: 200, body: .bytes(Array("0123456789".utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let reply = try await TestHTTPClient.exchange(
            port: server.port, pieces: [Array("HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)])
        let response = try reply.response(isHead: true)
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "10")
        #expect(response.body.isEmpty, "bytes after the head: \(response.text)")
        #expect(reply.peerClosed)
    }

    @Test func notModifiedCarriesNoBody() async throws {
        let server = try startServer { _, responder in
            // The representation's body: libmicrohttpd sends its length but not the bytes.
            responder.respond(
                HTTPResponse(status: 304, headers: [("ETag", "\"v1\"")], body: .bytes(Array("0123456789".utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let reply = try await TestHTTPClient.exchange(
            port: server.port,
            pieces: [Array("GET /n HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v1\"\r\nConnection: close\r\n\r\n".utf8)])
        let response = try reply.response()
        #expect(response.status == 304)
        #expect(response.header("ETag") == "\"v1\"")
        #expect(response.header("Content-Length") == "10")
        #expect(response.body.isEmpty, "bytes after the head: \(response.text)")
        #expect(reply.peerClosed)
    }

    @Test func bufferOwnerIsReleasedAfterTheResponse() async throws {
        weak var weakOwner: Owner?
        let box = Locked<Owner?>(Owner(Array("zero-copy body".utf8)))
        weakOwner = box.withLock { $0 }
        let server = try startServer { _, responder in
            let owner = box.withLock { $0 }!
            responder.respond(
                HTTPResponse(status: 200, body: .buffer(UnsafeRawBufferPointer(owner.memory), owner: owner)))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let response = try await TestHTTPClient.request(port: server.port, target: "/z")
        #expect(response.text == "zero-copy body")
        box.withLock { $0 = nil }
        #expect(await eventually { weakOwner == nil }, "libmicrohttpd released the body's owner")
    }

    @Test func parsesQueryWithDuplicatesAndPercentDecoding() async throws {
        let stash = Stash()
        let server = try startServer { request, responder in
            stash.add(request)
            responder.respond(HTTPResponse(status: 204))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let target = "/q%20x?a=1&b=x%20y&a=2&c&d=&e=%2F%3F&f=a+b"
        let response = try await TestHTTPClient.request(
            port: server.port, target: target, headers: [("X-One", "1"), ("x-one", "2")])
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        let request = try #require(stash.last)
        #expect(request.method == "GET")
        #expect(request.version == "HTTP/1.1")
        #expect(request.target == target)
        #expect(request.path == "/q x")
        #expect(request.query.map(\.name) == ["a", "b", "a", "c", "d", "e", "f"])
        #expect(request.query.map(\.value) == ["1", "x y", "2", nil, "", "/?", "a b"])
        #expect(request.header("x-ONE") == "1")
        #expect(request.headers.filter { $0.name.lowercased() == "x-one" }.map(\.value) == ["1", "2"])
        #expect(request.hasBody == false)
    }

    @Test func requestWithABodyIsHandledAtOnce() async throws {
        let stash = Stash()
        let server = try startServer { request, responder in
            stash.add(request)
            if request.hasBody {
                responder.respond(HTTPResponse(status: 413, body: .bytes(Array("too big".utf8))))
            } else {
                responder.respond(HTTPResponse(status: 200))
            }
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let small = try await TestHTTPClient.request(
            "POST", port: server.port, target: "/p", body: Array(repeating: 7, count: 1000))
        #expect(small.status == 413)
        #expect(small.text == "too big")
        #expect(stash.last?.hasBody == true)
        let large = try await TestHTTPClient.request(
            "PUT", port: server.port, target: "/p", body: Array(repeating: 7, count: 4 << 20))
        #expect(large.status == 413)
        let get = try await TestHTTPClient.request(
            "GET", port: server.port, target: "/g", body: Array(repeating: 7, count: 100))
        #expect(get.status == 413)
        let chunked = try await TestHTTPClient.exchange(
            port: server.port,
            pieces: [
                Array("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
            ])
        #expect(try chunked.response().status == 413, "\(chunked.text)")
        // Answered while the body was pending: the connection cannot be reused.
        #expect(chunked.peerClosed)
        let empty = try await TestHTTPClient.request("POST", port: server.port, target: "/e", body: [])
        #expect(empty.status == 200)
        #expect(await eventually { server.inFlight == 0 }, "every request is counted out")
    }

    @Test func trickledHeadIsClosedAfterTheHeadTimeout() async throws {
        let server = try startServer({ $0.headTimeout = .seconds(1) }) { _, responder in
            responder.respond(HTTPResponse(status: 200))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let head = Array("GET /trickle HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: aaaaaaaaaaaaaaaa\r\n\r\n".utf8)
        // One byte every 300 ms: each resets libmicrohttpd's idle timer, so only the head deadline
        // can end it, and it must end it before the head is complete.
        let reply = try await TestHTTPClient.exchange(
            port: server.port, pieces: head.map { [$0] }, pause: .milliseconds(300), timeout: .seconds(60))
        #expect(reply.bytes.isEmpty, "\(reply.text)")
        #expect(reply.peerClosed)
        #expect(reply.piecesSent < head.count)
    }

    @Test func shutdownAnswersSuspendedRequestsWithTheLateResponse() async throws {
        let stash = Stash()
        defer { stash.forgetResponders() }
        let server = try startServer { request, responder in
            stash.add(request, responder)  // never answered
        }
        async let response = TestHTTPClient.request(port: server.port, target: "/forgotten")
        let responders = await stash.responders(count: 1)
        #expect(server.inFlight == 1)
        await onThread {
            server.shutdown(
                grace: .milliseconds(300), lateResponse: HTTPResponse(status: 503, body: .bytes(Array("late".utf8))))
        }
        let late = try await response
        #expect(late.status == 503)
        #expect(late.text == "late")
        #expect(late.header("Connection")?.lowercased() == "close")
        // Later answers are ignored, and a second shutdown returns at once.
        responders.first?.respond(HTTPResponse(status: 200))
        server.shutdown(grace: .seconds(5), lateResponse: HTTPResponse(status: 503))
    }

    /// The grace is ten minutes: shutdown, timed on its own thread, returns once the request has
    /// been answered and sent, long before that.
    @Test func shutdownWaitsForAnInFlightRequestWithinGrace() async throws {
        let stash = Stash()
        defer { stash.forgetResponders() }
        let server = try startServer { request, responder in stash.add(request, responder) }
        async let response = TestHTTPClient.request(port: server.port, target: "/finishing")
        let responder = try #require(await stash.responders(count: 1).first)
        // Answered once shutdown is under way (so the answer is the handler's, not the late one)
        // by threads alone: a limit on this test's own time would also count its waits for a
        // cooperative-pool thread, which other tests can keep busy under a sanitizer.
        answerOnceShutdownBegins(server, responder, HTTPResponse(status: 200, body: .bytes(Array("done".utf8))))
        let took = await onThread {
            ContinuousClock().measure { server.shutdown(grace: .seconds(600), lateResponse: HTTPResponse(status: 503)) }
        }
        #expect(took < .seconds(300), "shutdown took \(took)")
        let answer = try await response
        #expect(answer.status == 200)
        #expect(answer.text == "done")
        #expect(answer.header("Connection")?.lowercased() == "close")
        // The listening sockets are closed: a new connection is refused.
        await #expect(throws: TestHTTPClientError.self) {
            _ = try await TestHTTPClient.request(port: server.port, target: "/")
        }
    }

    @Test func twoHundredConcurrentRequestsAreAllAnswered() async throws {
        let counter = Atomic<Int>(0)
        let server = try startServer { _, responder in
            let ok = HTTPResponse(status: 200, body: .bytes(Array("ok".utf8)))
            // Half answered in the handler, half from another thread (mostly after a suspend).
            if counter.add(1, ordering: .relaxed).newValue % 2 == 0 {
                responder.respond(ok)
            } else {
                answerFromAnotherThread(responder, ok)
            }
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let results = await TestHTTPClient.concurrent(200, port: server.port, target: "/c")
        let answered = results.filter { (try? $0.get())?.text == "ok" }.count
        #expect(
            answered == 200, "\(results.compactMap { if case .failure(let e) = $0 { "\(e)" } else { nil } }.prefix(3))")
    }

    @Test func portInUseThrows() async throws {
        let first = try startServer { _, responder in responder.respond(HTTPResponse(status: 200)) }
        defer { first.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let second = HTTPServer(
            configuration: HTTPServerConfiguration.loopback(port: first.port, threads: 1)
        ) { _, responder in responder.respond(HTTPResponse(status: 200)) }
        #expect(throws: HTTPServerError.self) { try second.start() }
        #expect(throws: HTTPServerError.invalidHost("localhost")) {
            try HTTPServer(configuration: HTTPServerConfiguration.loopback(host: "localhost")) { _, _ in }.start()
        }
    }

    @Test func headLimitsAboveWhatLibmicrohttpdCanHoldAreRefused() {
        for configure in [
            { (c: inout HTTPServerConfiguration) in c.maxHeadBytes = HTTPServerConfiguration.headBytesLimit + 1 },
            { (c: inout HTTPServerConfiguration) in c.maxFields = HTTPServerConfiguration.fieldsLimit + 1 },
            { (c: inout HTTPServerConfiguration) in c.maxTargetBytes = c.maxHeadBytes + 1 },
        ] {
            var configuration = HTTPServerConfiguration.loopback(threads: 1)
            configure(&configuration)
            #expect(throws: HTTPServerError.self) {
                try HTTPServer(configuration: configuration) { _, _ in }.start()
            }
        }
    }

    @Test func servesIPv6Loopback() async throws {
        let server = try startServer({ $0.host = "::1" }) { _, responder in
            responder.respond(HTTPResponse(status: 200, body: .bytes(Array("six".utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let response = try await TestHTTPClient.request(host: "::1", port: server.port, target: "/")
        #expect(response.text == "six")
    }

    /// What libmicrohttpd (MHD_OPTION_STRICT_FOR_CLIENT = 0) lets through to the handler, which then
    /// owns the answer (the service answers a missing Host with its own problem+json).
    @Test func requestsTheHandlerDecidesOn() async throws {
        let stash = Stash()
        let server = try startServer { request, responder in
            stash.add(request)
            responder.respond(HTTPResponse(status: 200, body: .bytes(Array(request.method.utf8))))
        }
        defer { server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503)) }
        let noHost = try await TestHTTPClient.exchange(
            port: server.port, pieces: [Array("GET / HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)])
        #expect(try noHost.response().status == 200, "\(noHost.text)")
        #expect(stash.requests.contains { $0.version == "HTTP/1.1" && $0.header("host") == nil })
        let http10 = try await TestHTTPClient.exchange(
            port: server.port, pieces: [Array("GET / HTTP/1.0\r\n\r\n".utf8)])
        #expect(try http10.response().status == 200, "\(http10.text)")
        #expect(http10.peerClosed)  // HTTP/1.0 without keep-alive
        let brew = try await TestHTTPClient.request("BREW", port: server.port, target: "/pot")
        #expect(brew.status == 200)
        #expect(brew.text == "BREW")
    }

    @Test func detachedResponderPassesTheFirstAnswerToItsSink() {
        let seen = Locked<[Int]>([])
        let responder = HTTPResponder { response in seen.withLock { $0.append(response.status) } }
        responder.respond(HTTPResponse(status: 200))
        responder.respond(HTTPResponse(status: 500))
        #expect(seen.withLock { $0 } == [200])
    }
}
