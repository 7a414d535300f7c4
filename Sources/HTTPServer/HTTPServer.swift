internal import CMicroHTTPD
internal import CMicroHTTPDShims
internal import Primitives
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd: one daemon per polling thread (``HTTPServerConfiguration/threads``),
/// each with one epoll thread and its own listening socket on the same port (SO_REUSEPORT), so
/// the kernel spreads new connections over them. The daemons parse requests and call `handler` on
/// their threads; the handler answers through the ``HTTPResponder`` at once or later from any
/// thread. The handler must not block: hand slow work to other threads and answer from there.
///
/// What is not HTTP/1.x never reaches the handler: the server answers it itself with
/// `application/problem+json` and closes the connection (400 for bad syntax or ambiguous framing,
/// 414, 431, 505; see ``HTTPServerConfiguration`` for the limits). libmicrohttpd 0.9.75 runs with
/// `MHD_OPTION_STRICT_FOR_CLIENT = 0` (its normal parsing): in 0.9.75 strict mode only adds a
/// `Host` check whose 400 is libmicrohttpd's own HTML page (sent with doubled headers). So the
/// handler sees HTTP/1.1 requests without `Host` and answers them itself, and must refuse requests
/// with `hasBody` it does not want. Any method token reaches the handler.
public final class HTTPServer: @unchecked Sendable {
    /// libmicrohttpd's per-connection memory (request head, response head, buffers): its own
    /// default of 32 KiB, set explicitly. (16 KiB would halve the zeroing done per request, but a
    /// response queued after a resume needs room for its head next to the read buffer.)
    static let connectionMemory = 32 << 10

    private enum Lifecycle {
        case idle
        case running(daemons: [OpaquePointer], port: Int, watchdog: HeadDeadlineWatchdog?)
        case stopped(port: Int)
    }

    public let configuration: HTTPServerConfiguration
    private let core: ServerCore
    private let lifecycle = Locked<Lifecycle>(.idle)

    /// `quickAnswer`, if given, is offered every request without a body that the server accepts
    /// (not while draining), before `handler`: what it answers, the handler never sees.
    public init(
        configuration: HTTPServerConfiguration, quickAnswer: QuickAnswer? = nil,
        handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) {
        self.configuration = configuration
        self.core = ServerCore(
            keepAliveAllowance: configuration.idleTimeout - configuration.headTimeout,
            limits: HeadLimits(
                maxTargetBytes: configuration.maxTargetBytes, maxHeadBytes: configuration.maxHeadBytes,
                maxFields: configuration.maxFields),
            quickAnswer: quickAnswer, handler: handler)
    }

    deinit {
        shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503))
    }

    /// Binds and starts serving. Throws ``HTTPServerError`` if the configuration is out of range
    /// (``HTTPServerConfiguration`` checks itself) or the address cannot be bound.
    public func start() throws {
        let address = try configuration.validated()
        try lifecycle.withLock { lifecycle in
            guard case .idle = lifecycle else { throw HTTPServerError.alreadyStarted }
            // SO_REUSEPORT would also let this bind beside another process's listener on the port:
            // make sure the port is free first, so a second server fails as it should.
            if configuration.port != 0 && !address.isFreeToListen() {
                throw HTTPServerError.startFailed(host: configuration.host, port: configuration.port, errno: EADDRINUSE)
            }
            let (daemons, port) = try startDaemons(on: address)
            let watchdog = try startWatchdog(orStop: daemons)
            lifecycle = .running(daemons: daemons, port: port, watchdog: watchdog)
        }
    }

    /// One libmicrohttpd daemon per polling thread, each with its own listening socket on the
    /// same port (SO_REUSEPORT): the kernel spreads new connections over them. One daemon with a
    /// thread pool shares one listening socket among all its threads, and every connection wakes
    /// them all (measured: a quarter of accept4 calls came back EAGAIN, and ab without keep-alive
    /// ran ~20 % slower). Each: its own epoll thread; suspend/resume (which implies the
    /// inter-thread channel, also needed by MHD_quiesce_daemon); turbo (optimistic reads, no
    /// shutdown() before close). Returns them and the bound port; none are left running when it
    /// throws.
    private func startDaemons(on address: SocketAddress) throws(HTTPServerError) -> ([OpaquePointer], Int) {
        var flags =
            MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue
        if address.family == .ipv6 { flags |= MHD_USE_IPv6.rawValue }
        let idleSeconds = configuration.idleTimeout.roundedUp(to: .seconds(1))
        let count = configuration.threads
        var daemons: [OpaquePointer] = []
        var port = configuration.port
        for _ in 0..<count {
            errno = 0
            let daemon = address.with(port: port)!.withSockaddrPointer { sockaddr, _ in
                cmhd_start_daemon(
                    flags, UInt16(port), sockaddr, 1, Self.connectionMemory, 0,
                    UInt32(clamping: (configuration.connectionLimit + count - 1) / count),
                    UInt32(clamping: configuration.perIPConnectionLimit),
                    UInt32(clamping: idleSeconds), 0,
                    mhdAccessHandler, mhdRequestCompleted, mhdNotifyConnection, mhdURILog,
                    Unmanaged.passUnretained(core).toOpaque())
            }
            guard let daemon else {
                let failure = errno
                for started in daemons { MHD_stop_daemon(started) }
                throw .startFailed(host: configuration.host, port: configuration.port, errno: failure)
            }
            if daemons.isEmpty { port = Int(cmhd_daemon_bind_port(daemon)) }
            daemons.append(daemon)
            Self.deferAccept(daemon)
        }
        return (daemons, port)
    }

    /// The head-deadline watchdog, when `headTimeout` is on; when its thread cannot start, stops
    /// `daemons` and throws.
    private func startWatchdog(orStop daemons: [OpaquePointer]) throws(HTTPServerError) -> HeadDeadlineWatchdog? {
        guard configuration.headTimeout > .zero else { return nil }
        let watchdog = HeadDeadlineWatchdog(registry: core.connections, timeout: configuration.headTimeout)
        do throws(SystemError) {
            try watchdog.start()
        } catch {
            for daemon in daemons { MHD_stop_daemon(daemon) }
            throw .startFailed(host: configuration.host, port: configuration.port, errno: error.code)
        }
        return watchdog
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

    /// Started and not shutting down: false from the moment ``shutdown(grace:lateResponse:)`` begins
    /// (when it also stops accepting connections and starts answering with `Connection: close`).
    public var isRunning: Bool {
        lifecycle.withLock { lifecycle in
            if case .running = lifecycle { return true }
            return false
        }
    }

    /// Requests handed to the handler, or answered by the quick answer, that have not finished
    /// yet (answered and sent).
    public var inFlight: Int {
        core.inFlight.load(ordering: .relaxed)
    }

    /// The drain before a stop: from now on every response carries `Connection: close`, so
    /// keep-alive clients open a new connection for their next request (and so go wherever their
    /// balancer now sends them), while the server still accepts and answers as before.
    /// ``shutdown(grace:lateResponse:)`` follows, and keeps it so.
    public func beginDraining() {
        lifecycle.withLock { lifecycle in
            guard case .running = lifecycle else { return }
            core.draining.store(true, ordering: .relaxed)
        }
    }

    /// Graceful stop: stop accepting connections; mark further responses `Connection: close`; wait
    /// until every in-flight request has been answered and sent, or `grace` has passed; answer every
    /// request still waiting (and any handled from then on) with `lateResponse`; wait up to a second
    /// more for those to be sent; then stop libmicrohttpd, closing all connections. Blocks the caller.
    /// Idempotent: later and concurrent calls return at once.
    public func shutdown(grace: Duration, lateResponse: HTTPResponse) {
        let running: (daemons: [OpaquePointer], watchdog: HeadDeadlineWatchdog?)? = lifecycle.withLock { lifecycle in
            guard case .running(let daemons, let port, let watchdog) = lifecycle else { return nil }
            lifecycle = .stopped(port: port)
            // Under the lock: whoever sees `isRunning` false also gets `Connection: close` answers.
            core.draining.store(true, ordering: .relaxed)
            return (daemons, watchdog)
        }
        guard let (daemons, watchdog) = running else { return }
        // libmicrohttpd hands each listening socket back to us here; ours from now on, closed when
        // `handedBack` goes, and not before MHD_stop_daemon (a polling thread may still use them).
        let handedBack = daemons.map { MHD_quiesce_daemon($0) }.filter { $0 >= 0 }.map(FileDescriptor.init(adopting:))
        waitForInFlight(upTo: grace)
        // Stopping libmicrohttpd with a suspended connection aborts the process: answer them all.
        core.answerAllSuspended(with: lateResponse)
        waitForInFlight(upTo: .seconds(1))
        watchdog?.stop()
        for daemon in daemons { MHD_stop_daemon(daemon) }
        core.connections.removeAll()
        withExtendedLifetime(handedBack) {}
    }

    private func waitForInFlight(upTo limit: Duration) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while core.inFlight.load(ordering: .relaxed) > 0 && clock.now < deadline {
            var pause = Duration.milliseconds(5).timespec
            nanosleep(&pause, nil)
        }
    }

    /// TCP_DEFER_ACCEPT on the daemon's listening socket: the kernel completes `accept` only once
    /// the client's first bytes have arrived (or after about a second of silence), so when
    /// libmicrohttpd announces a new connection its first request is normally already there for
    /// `ServerCore.screenFirstBytes` to look at. Also one wake-up less per connection. The socket
    /// stays libmicrohttpd's; a failure only means fewer connections get screened.
    private static func deferAccept(_ daemon: OpaquePointer) {
        let listener = cmhd_daemon_listen_fd(daemon)
        guard listener >= 0 else { return }
        var seconds: Int32 = 1
        _ = setsockopt(
            listener, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, socklen_t(MemoryLayout<Int32>.size))
    }
}
