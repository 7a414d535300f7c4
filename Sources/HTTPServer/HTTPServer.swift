import CMicroHTTPD
import CMicroHTTPDShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd: an internal epoll thread pool parses requests and calls
/// `handler` on its threads; the handler answers through the ``HTTPResponder`` at once or later from
/// any thread. The handler must not block: hand slow work to other threads and answer from there.
///
/// libmicrohttpd 0.9.75 runs with `MHD_OPTION_STRICT_FOR_CLIENT = 0` (its normal parsing): in
/// 0.9.75 strict mode only adds a `Host` check whose 400 is libmicrohttpd's own HTML page (sent
/// with doubled headers), while duplicate Content-Lengths, CL + TE and odd header names pass either
/// way. So the handler sees HTTP/1.1 requests without `Host` and answers them itself, and must
/// refuse requests with `hasBody` it does not want. Any method token reaches the handler.
public final class HTTPServer: @unchecked Sendable {
    private enum Lifecycle {
        case idle
        case running(daemon: OpaquePointer, port: Int, watchdog: HeadDeadlineWatchdog?)
        case stopped(port: Int)
    }

    public let configuration: HTTPServerConfiguration
    private let core: ServerCore
    private let lifecycle = Mutex<Lifecycle>(.idle)

    public init(
        configuration: HTTPServerConfiguration, handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) {
        self.configuration = configuration
        self.core = ServerCore(
            keepAliveAllowance: configuration.idleTimeout - configuration.headTimeout, handler: handler)
    }

    deinit {
        shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503))
    }

    /// Binds and starts serving. Throws ``HTTPServerError`` if the address is invalid or cannot be bound.
    public func start() throws {
        let configuration = configuration
        guard (0...65535).contains(configuration.port) else { throw HTTPServerError.invalidConfiguration("port") }
        guard configuration.threads >= 1 else { throw HTTPServerError.invalidConfiguration("threads") }
        guard configuration.connectionLimit >= 1 else { throw HTTPServerError.invalidConfiguration("connectionLimit") }
        guard configuration.perIPConnectionLimit >= 0 else {
            throw HTTPServerError.invalidConfiguration("perIPConnectionLimit")
        }
        guard configuration.idleTimeout >= .zero else { throw HTTPServerError.invalidConfiguration("idleTimeout") }
        guard configuration.headTimeout >= .zero else { throw HTTPServerError.invalidConfiguration("headTimeout") }
        guard let address = ListenAddress(host: configuration.host, port: UInt16(configuration.port)) else {
            throw HTTPServerError.invalidHost(configuration.host)
        }
        try lifecycle.withLock { lifecycle in
            guard case .idle = lifecycle else { throw HTTPServerError.alreadyStarted }
            // Internal epoll polling threads; suspend/resume (which implies the inter-thread channel,
            // also needed by MHD_quiesce_daemon); turbo (optimistic reads, no shutdown() before close:
            // faster here, and early answers to large uploads still arrive).
            var flags =
                MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
                | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue
            if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
            let idleSeconds = (configuration.idleTimeout.nanoseconds + 999_999_999) / 1_000_000_000
            errno = 0
            let daemon = address.withSockaddrPointer { sockaddr in
                cmhd_start_daemon(
                    flags, UInt16(configuration.port), sockaddr,
                    // A pool of one is no pool: pass 0 so the single polling thread does the work.
                    configuration.threads > 1 ? UInt32(clamping: configuration.threads) : 0,
                    UInt32(clamping: configuration.connectionLimit),
                    UInt32(clamping: configuration.perIPConnectionLimit),
                    UInt32(clamping: idleSeconds), 0,
                    mhdAccessHandler, mhdRequestCompleted, mhdNotifyConnection, mhdURILog,
                    Unmanaged.passUnretained(core).toOpaque())
            }
            guard let daemon else {
                throw HTTPServerError.startFailed(host: configuration.host, port: configuration.port, errno: errno)
            }
            let port = Int(cmhd_daemon_bind_port(daemon))
            var watchdog: HeadDeadlineWatchdog?
            if configuration.headTimeout > .zero {
                watchdog = HeadDeadlineWatchdog(registry: core.connections, timeout: configuration.headTimeout)
                watchdog?.start()
            }
            lifecycle = .running(daemon: daemon, port: port, watchdog: watchdog)
        }
    }

    /// The bound port (the ephemeral one when configured with 0); 0 before ``start()``.
    public var port: Int {
        lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle: 0
            case .running(_, let port, _), .stopped(let port): port
            }
        }
    }

    /// Requests handed to the handler that have not finished yet (answered and sent).
    public var inFlight: Int {
        core.inFlight.load(ordering: .relaxed)
    }

    /// Graceful stop: stop accepting connections; mark further responses `Connection: close`; wait
    /// until every in-flight request has been answered and sent, or `grace` has passed; answer every
    /// request still waiting (and any handled from then on) with `lateResponse`; wait up to a second
    /// more for those to be sent; then stop libmicrohttpd, closing all connections. Blocks the caller.
    /// Idempotent: later and concurrent calls return at once.
    public func shutdown(grace: Duration, lateResponse: HTTPResponse) {
        let running: (daemon: OpaquePointer, watchdog: HeadDeadlineWatchdog?)? = lifecycle.withLock { lifecycle in
            guard case .running(let daemon, let port, let watchdog) = lifecycle else { return nil }
            lifecycle = .stopped(port: port)
            return (daemon, watchdog)
        }
        guard let (daemon, watchdog) = running else { return }
        core.draining.store(true, ordering: .relaxed)
        // Must not be closed before MHD_stop_daemon (a polling thread may still use it).
        let listenSocket = MHD_quiesce_daemon(daemon)
        waitForInFlight(upTo: grace)
        // Stopping libmicrohttpd with a suspended connection aborts the process: answer them all.
        core.answerAllSuspended(with: lateResponse)
        waitForInFlight(upTo: .seconds(1))
        watchdog?.stop()
        MHD_stop_daemon(daemon)
        core.connections.removeAll()
        if listenSocket >= 0 { close(listenSocket) }
    }

    private func waitForInFlight(upTo limit: Duration) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while core.inFlight.load(ordering: .relaxed) > 0 && clock.now < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
            nanosleep(&pause, nil)
        }
    }
}
