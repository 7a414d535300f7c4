import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

@Suite struct LifecycleTests {
    @Test func shutdownFinishesInFlightRequestsThenStopsListening() async throws {
        let gate = TestGate()
        let origin = try TestOrigin(routes: ["/slow.jpg": .gated(gate, .ok(Fixtures.jpeg(width: 300, height: 200)))])
        var configuration = ServiceConfiguration()
        configuration.server.port = 0
        configuration.fetch.allowLoopback = true
        configuration.logging.requests = false
        // Long enough for this task to get its turns on the cooperative pool and open the gate,
        // however busy other tests keep the pool: shutdown ends when the request does, not later.
        configuration.server.shutdownGrace = .seconds(300)
        configuration.fetch.timeout = .seconds(300)
        let app = try ThumbnailApp(configuration: configuration)
        try app.start()
        let port = app.port
        let target = "/thumb?url=\(Harness.encode(origin.url("/slow.jpg")))&w=100"
        async let inFlight = TestHTTPClient.request(port: port, target: target)
        #expect(await eventually { origin.totalRequests == 1 })
        let stopped = Thread.detachedShutdown(app)
        // Stopping has begun: now let the in-flight request finish inside the grace period.
        #expect(await eventually { app.isStopping })
        gate.open()
        let response = try await inFlight
        #expect(response.status == 200)
        #expect(try response.image().width == 100)
        await stopped.value
        await #expect(throws: (any Error).self) {
            try await TestHTTPClient.request(port: port, target: "/healthz", timeout: .seconds(3))
        }
        origin.stop()
    }

    @Test func requestsStillWaitingAfterTheGraceGet503() async throws {
        let origin = try TestOrigin(routes: ["/hang": .hang])
        var configuration = ServiceConfiguration()
        configuration.server.port = 0
        configuration.fetch.allowLoopback = true
        configuration.logging.requests = false
        configuration.server.shutdownGrace = .milliseconds(500)
        // The fetch must still hang when the grace ends, however long this task waits for its turns
        // on the cooperative pool before it starts the shutdown.
        configuration.fetch.timeout = .seconds(300)
        let app = try ThumbnailApp(configuration: configuration)
        try app.start()
        async let waiting = TestHTTPClient.request(
            port: app.port, target: "/thumb?url=\(Harness.encode(origin.url("/hang")))&w=10")
        #expect(await eventually { origin.totalRequests == 1 })
        await Thread.detachedShutdown(app).value
        let response = try await waiting
        try expectProblem(response, 503)
        origin.stop()
    }
}

extension Thread {
    /// Runs the (blocking) graceful shutdown on its own thread, off the cooperative pool.
    static func detachedShutdown(_ app: ThumbnailApp) -> Task<Void, Never> {
        let done = AsyncStream<Void>.makeStream()
        let thread = Thread {
            app.shutdown()
            done.continuation.finish()
        }
        thread.start()
        return Task { for await _ in done.stream {} }
    }
}
