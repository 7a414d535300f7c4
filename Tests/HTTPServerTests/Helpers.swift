import HTTPServer
import Primitives
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPServerConfiguration {
    /// A loopback server on `port` (0: an ephemeral one), with the tests' own connection limit and
    /// timeouts (the service's defaults are its configuration's, not this module's).
    static func loopback(port: Int = 0, threads: Int = 2, host: String = "127.0.0.1") -> Self {
        Self(
            host: host, port: port, threads: threads, connectionLimit: 1024, idleTimeout: .seconds(30),
            headTimeout: .seconds(10))
    }
}

/// Starts a server on an ephemeral loopback port.
func startServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, quickAnswer: QuickAnswer? = nil,
    handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration.loopback()
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, quickAnswer: quickAnswer, handler: handler)
    try server.start()
    return server
}

/// Runs a blocking call on its own thread, off the cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        do {
            try DetachedThread.start(name: "test-blocking", stackSize: 1 << 20) {
                continuation.resume(returning: body())
            }
        } catch {
            fatalError("cannot start a thread: \(error)")
        }
    }
}

/// Answers from a thread of its own (so after the handler may have returned).
func answerFromAnotherThread(_ responder: HTTPResponder, _ response: HTTPResponse) {
    do {
        try DetachedThread.start(name: "test-answer", stackSize: 256 << 10) { responder.respond(response) }
    } catch {
        fatalError("cannot start a thread: \(error)")
    }
}

/// Answers from a thread of its own as soon as `server` has begun shutting down (it looks every
/// millisecond), without waiting for a turn on the cooperative pool.
func answerOnceShutdownBegins(_ server: HTTPServer, _ responder: HTTPResponder, _ response: HTTPResponse) {
    do {
        try DetachedThread.start(name: "test-answer", stackSize: 256 << 10) {
            while server.isRunning { usleep(1000) }
            responder.respond(response)
        }
    } catch {
        fatalError("cannot start a thread: \(error)")
    }
}

/// Polls a condition on server state that has no notification of its own (10 ms apart) and
/// records a failure if it never holds. The bound only keeps a broken server from hanging the run.
func waitUntil(
    _ what: Comment, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
    let held = await eventually(within: .seconds(20)) { condition() }
    #expect(held, what, sourceLocation: sourceLocation)
}

/// The requests a handler saw and the responders it kept, for tests to wait on and answer later.
final class Stash: Sendable {
    private struct State {
        var requests: [HTTPRequest] = []
        var responders: [HTTPResponder] = []
    }

    private let state = Monitor(State())

    func add(_ request: HTTPRequest, _ responder: HTTPResponder? = nil) {
        state.withLock { state in
            state.requests.append(request)
            if let responder { state.responders.append(responder) }
        }
    }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// Drops the kept responders. A test that keeps them calls this at its end: a responder holds
    /// its server's core, whose handler holds this stash, and that cycle would leak the server
    /// (LeakSanitizer reports it).
    func forgetResponders() { state.withLock { $0.responders = [] } }
    var last: HTTPRequest? { requests.last }

    /// Waits until `count` responders have been kept, and returns them; fewer only if that never
    /// happens (the bound only keeps a broken server from hanging the run). The bound is 3 000
    /// turns of this task, 10 ms apart, not 30 s from the call: the request is usually sent by a
    /// task the test started just before (an `async let`), which needs a cooperative-pool thread
    /// first, and under a sanitizer other tests can keep every one of them busy for longer than
    /// that. While they do, this task gets no turn either, so its bound waits too.
    func responders(count: Int) async -> [HTTPResponder] {
        for _ in 0..<3000 where state.withLock({ $0.responders.count }) < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { $0.responders }
    }
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
