import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// `/readyz` through the app's life: starting, ready, draining (everything else still served, with
/// `Connection: close`), stopped; `/livez` answering throughout.
@Suite struct HealthTests {
    static let photo = Fixtures.jpeg(width: 300, height: 200)

    static func keepAlive(_ path: String) -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    }

    @Test func readyzIs503WhileStartingThen200() async throws {
        let h = try Harness(routes: [:], start: false)
        let starting = try await h.get("/readyz")
        try expectProblem(starting, 503)
        #expect(try starting.problem()["detail"] as? String == "The service is starting.")
        #expect(starting.header("retry-after") == nil)
        // Alive all along.
        #expect(try await h.get("/livez").status == 200)
        #expect(!h.app.isReady)

        h.app.announceReady()
        let ready = try await h.get("/readyz")
        #expect(ready.status == 200)
        #expect(ready.header("content-type") == "application/json")
        #expect(ready.header("cache-control") == "no-store")
        #expect(ready.text == "{\"status\":\"ready\"}")
        let head = try await h.get("/readyz", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        let post = try await h.get("/readyz", method: "POST")
        try expectProblem(post, 405)
        #expect(post.header("allow") == "GET, HEAD")
    }

    /// Stuck workers past what the pool replaces (JobTimeoutTests make them) take the instance out
    /// of rotation once fewer than half are usable.
    @Test func tooFewUsableWorkersIsNotReady() {
        #expect(!Readiness.tooFewWorkers(usable: 2, of: 2))
        #expect(!Readiness.tooFewWorkers(usable: 1, of: 2))
        #expect(Readiness.tooFewWorkers(usable: 0, of: 2))
        #expect(!Readiness.tooFewWorkers(usable: 4, of: 8))
        #expect(Readiness.tooFewWorkers(usable: 3, of: 8))
        #expect(Readiness.tooFewWorkers(usable: 0, of: 1))
    }

    @Test func drainingTurnsReadyzTo503AndClosesKeepAliveButServesEverythingElse() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let thumb = h.thumb("/p.jpg")
        // Before the drain: keep-alive answers stay open, no `Connection: close`.
        let before = try await TestHTTPClient.sequence(
            port: h.port, requests: [Self.keepAlive("/readyz"), Self.keepAlive(thumb)], awaitClose: false)
        #expect(before.responses.map(\.status) == [200, 200])
        #expect(before.responses.allSatisfy { $0.header("connection") == nil })
        #expect(!before.peerClosed)

        h.app.beginDrain(reason: "test")
        #expect(!h.app.isReady)
        #expect(!h.app.isStopping)
        let readyz = try await h.get("/readyz")
        try expectProblem(readyz, 503)
        #expect(try readyz.problem()["type"] as? String == "urn:thumbd:problem:not-ready")
        #expect(try await h.get("/livez").status == 200)
        // A new thumbnail (a miss, through the workers) and a cache hit (the prepared response) are
        // served as before, on new connections, each answer closing its keep-alive connection.
        for target in [h.thumb("/p.jpg", "w=50"), thumb] {
            let during = try await TestHTTPClient.sequence(port: h.port, requests: [Self.keepAlive(target)])
            #expect(during.responses.map(\.status) == [200], "\(target)")
            #expect(during.responses.first?.header("connection")?.lowercased() == "close", "\(target)")
            #expect(during.peerClosed, "\(target)")
            #expect(try during.responses.first?.image().width ?? 0 > 0)
        }
        // A second drain changes nothing; the graceful stop then ends it.
        h.app.beginDrain(reason: "again")
        await Thread.detachedShutdown(h.app).value
        #expect(h.app.isStopping && !h.app.isReady)
    }

    @Test func shutdownWithoutADrainIsNotReadyEither() async throws {
        let h = try Harness(routes: [:])
        #expect(h.app.isReady)
        await Thread.detachedShutdown(h.app).value
        #expect(!h.app.isReady)
    }
}
