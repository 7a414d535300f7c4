internal import CMicroHTTPD
internal import Primitives

/// Answers one request, exactly once (later calls are ignored), from any thread.
///
/// Answering inside the handler sends the response at once. Otherwise the connection is suspended
/// when the handler returns and resumed by ``respond(_:)``; a suspended connection sees no timeout
/// and no disconnect until then, so every request must eventually be answered (shutdown answers the
/// forgotten ones).
public final class HTTPResponder: @unchecked Sendable {
    /// `@unchecked`: the connection pointers are only used for suspend/resume, under the lock.
    enum State: @unchecked Sendable {
        /// Created for a request whose handler has not been called yet.
        case idle
        /// The handler is running on the server thread that owns the connection.
        case handling(OpaquePointer)
        /// The handler returned without answering; the connection is suspended.
        case suspended(OpaquePointer)
        /// Answered, waiting for the server thread to queue the response.
        case answered(HTTPResponse)
        /// Queued, or the request ended: later answers are ignored.
        case done
    }

    /// What the server thread does once the handler has returned.
    enum AfterHandler {
        case queue(HTTPResponse)
        case suspended
        case nothing
    }

    private let state = Locked<State>(.idle)
    private let core: ServerCore?
    private let sink: (@Sendable (HTTPResponse) -> Void)?

    // Touched only by the server thread that owns the connection (libmicrohttpd never runs two
    // callbacks of one connection at once).
    /// The raw request target, from the URI log callback.
    let target: String?
    /// The per-connection state (head deadline), looked up on the first access-handler call.
    var connectionState: ConnectionState?
    /// The request handed to the handler: read on the access-handler call that dispatches it (the
    /// first for a request with a body, else the second, if the quick answer declined).
    var request: HTTPRequest?
    var headSeen = false
    var dispatched = false
    /// Answered by the server's quick answer: the handler never sees it.
    var answeredQuickly = false

    init(core: ServerCore, target: String?) {
        self.core = core
        self.target = target
        self.sink = nil
    }

    /// A responder not tied to a server: the first answer is passed to `sink` (for testing handlers).
    public init(sink: @escaping @Sendable (HTTPResponse) -> Void) {
        self.core = nil
        self.target = nil
        self.sink = sink
    }

    public func respond(_ response: HTTPResponse) {
        if let sink {
            let first: Bool = state.withLock { state in
                if case .done = state { return false }
                state = .done
                return true
            }
            if first { sink(response) }
            return
        }
        let resumed: Bool = state.withLock { state in
            switch state {
            case .handling:
                state = .answered(response)
                return false
            case .suspended(let connection):
                state = .answered(response)
                // Under the lock: the server thread suspends under the same lock, so this resume can
                // never come before that suspend.
                MHD_resume_connection(connection)
                return true
            case .idle, .answered, .done:
                return false
            }
        }
        if resumed {
            core?.unregisterSuspended(self)
        }
    }

    // MARK: Server-thread side

    /// The handler is about to be called for `connection`.
    func begin(_ connection: OpaquePointer) {
        state.withLock { $0 = .handling(connection) }
    }

    /// The handler returned: take its answer, or suspend the connection (under the lock, so that a
    /// concurrent ``respond(_:)`` either sees `.handling` and leaves the answer for us, or sees
    /// `.suspended` and resumes).
    func afterHandler() -> AfterHandler {
        state.withLock { state in
            switch state {
            case .answered(let response):
                state = .done
                return .queue(response)
            case .handling(let connection):
                MHD_suspend_connection(connection)
                state = .suspended(connection)
                return .suspended
            case .idle, .suspended, .done:
                return .nothing
            }
        }
    }

    /// The answer left by ``respond(_:)`` after a resume, if any.
    func takeAnswer() -> HTTPResponse? {
        state.withLock { state in
            guard case .answered(let response) = state else { return nil }
            state = .done
            return response
        }
    }

    var isSuspended: Bool {
        state.withLock { state in
            if case .suspended = state { return true }
            return false
        }
    }

    /// The request ended (libmicrohttpd's request-completed notification): ignore later answers.
    func finish() {
        state.withLock { $0 = .done }
    }
}
