import Foundation
@testable import HTTPServer
import Testing
@testable import TestSupport

@Suite struct ProbeTmp {
    @Test func probe() async throws {
        var c = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        c.headTimeout = .seconds(5)
        let server = HTTPServer(configuration: c) { request, responder in
            print("HANDLER", request.method, request.target, request.path, request.hasBody, request.headers.map { "\($0.name)=\($0.value)" })
            switch request.path {
            case "/304": responder.respond(HTTPResponse(status: 304, headers: [("ETag", "\"x\"")], body: .bytes(Array("should not".utf8))))
            case "/204": responder.respond(HTTPResponse(status: 204, body: .bytes(Array("should not".utf8))))
            case "/async-body":
                Thread { Thread.sleep(forTimeInterval: 0.1); responder.respond(HTTPResponse(status: 413, body: .bytes(Array("async413".utf8)))) }.start()
            default: responder.respond(HTTPResponse(status: 200, headers: [("Content-Length", "99")], body: .bytes(Array("ok".utf8))))
            }
        }
        try server.start()
        defer { server.shutdown(grace: .seconds(1), lateResponse: HTTPResponse(status: 503)) }
        for raw in [
            "GET /304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "HEAD /304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET /204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "HEAD /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET http://host/abs?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
            "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /async-body HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
            "POST /async-body HTTP/1.1\r\nHost: x\r\nContent-Length: 500000\r\n\r\nhello",
            "POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
            "get / HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            let started = ContinuousClock.now
            let bytes = try await TestHTTPClient.raw(port: server.port, pieces: [Array(raw.utf8)], timeout: .milliseconds(300))
            try await Task.sleep(for: .milliseconds(50))
            print("LIVE", HTTPResponder.live.load(ordering: .relaxed))
            print("=== \(raw.debugDescription)\n\(String(decoding: bytes, as: UTF8.self).debugDescription) [\(ContinuousClock.now - started)]")
        }
    }
}
