import DiskCache
import Foundation
import HTTPServer
internal import Primitives
import Synchronization
import ThumbnailCore

/// The pipeline as the service runs it: libvips images, the HTTP layer's hit responses prepared
/// with each stored variant.
public typealias Pipeline = ThumbnailPipeline<VipsImaging, HitResponses>

/// The assembled service: configuration in, a running HTTP server out. `main` and the tests
/// build it the same way.
public final class ThumbnailApp: Sendable {
    public static let version = "0.1.0"

    public let configuration: ServiceConfiguration
    public let pipeline: Pipeline
    let log: RequestLog
    private let server: HTTPServer
    /// `/metrics` on its own listener (`--metrics-listen`); nil: on the main port.
    private let metricsServer: HTTPServer?
    let fetcher: CurlImageFetcher
    private let stopping = Atomic<Bool>(false)
    let readiness: Readiness

    /// Builds everything; nothing listens until `start()`.
    /// `now` (Unix seconds) is the wall clock signed URLs' `exp` and origins' `Expires` are read
    /// against; `clock` the monotonic one freshness and remembered failures run by. Tests set both,
    /// and `logSink` to read the log (nil: standard error). Throws when the disk tier's folder
    /// (`--disk-cache-dir`) cannot be used (`DiskStoreError`, whose text names it and why).
    /// `diskOptions`: the disk store's bounds and, for tests, the faults it injects.
    public init(
        configuration: ServiceConfiguration, fetcher custom: (any ImageFetching)? = nil,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, logSink: LogSink? = nil,
        diskOptions: DiskStoreOptions = DiskStoreOptions()
    ) throws {
        self.configuration = configuration
        let log = RequestLog(
            enabled: configuration.logging.requests, format: configuration.logging.format, sink: logSink)
        let policy = SourcePolicy(
            allowLoopback: configuration.fetch.allowLoopback, allowPrivate: configuration.fetch.allowPrivate,
            allowedHosts: configuration.fetch.allowedHosts)
        let fetcher = CurlImageFetcher(
            policy: policy,
            limits: .init(
                connectTimeout: configuration.fetch.connectTimeout, totalTimeout: configuration.fetch.timeout,
                maxBytes: configuration.fetch.maxSourceBytes, breakerFailures: configuration.fetch.breakerFailures,
                breakerCoolDown: configuration.fetch.breakerCoolDown), now: now, clock: clock,
            log: { log.event($0) })
        let freshness = configuration.freshness
        let disk = try Self.openDiskTier(configuration, options: diskOptions, log: log)
        let pipeline = Pipeline(
            cache: ImageCache<Pipeline.Entry>(budget: configuration.cache.bytes),
            workers: WorkerPool(
                workers: configuration.processing.workers, queueCapacity: configuration.processing.queueCapacity,
                workBudget: configuration.processing.workBytes, queueTimeout: configuration.processing.queueTimeout,
                jobTimeout: configuration.processing.jobTimeout),
            fetcher: custom ?? fetcher, imaging: VipsImaging(),
            limits: .init(
                maxSourcePixels: configuration.processing.maxSourcePixels, errorTTL: configuration.fetch.errorTTL,
                freshness: FreshnessPolicy(
                    minimum: freshness.minSourceTTL, maximum: freshness.maxSourceTTL,
                    fallback: freshness.defaultSourceTTL, staleWhileRevalidate: freshness.staleWhileRevalidate,
                    staleIfError: freshness.staleIfError),
                maxPromisedLifetime: configuration.cache.maxAge,
                maxFetchesPerOrigin: configuration.fetch.maxFetchesPerHost, fetchTimeout: configuration.fetch.timeout,
                // A fetch may grow to --max-source-bytes: that is what it reserves until it knows.
                fetchReservation: configuration.fetch.maxSourceBytes, maxFrames: configuration.processing.maxFrames),
            disk: disk, now: clock
        ) { image, fingerprint, lifetime in
            // The pipeline promises no more than the original's remaining freshness (capped by --cache-max-age).
            HitResponses(image, fingerprint: fingerprint, cacheControl: "public, max-age=\(lifetime.wholeSeconds)")
        }
        let readiness = Readiness()
        let metrics = MetricsPage(
            pipeline: pipeline, requests: RequestMetrics(), configuration: configuration)
        let routes = Routes(
            pipeline: pipeline, configuration: configuration, log: log, readiness: readiness, metrics: metrics,
            now: now)
        let serverConfiguration = HTTPServerConfiguration(
            host: configuration.server.host, port: configuration.server.port, threads: configuration.server.threads,
            connectionLimit: configuration.server.maxConnections, idleTimeout: configuration.server.idleTimeout,
            headTimeout: configuration.server.headTimeout)
        self.server = HTTPServer(
            configuration: serverConfiguration, quickAnswer: { routes.hitResponse(for: $0) },
            handler: { request, responder in routes.handle(request, responder) })
        if let address = configuration.server.metricsListen {
            // One polling thread is plenty for a scrape or two a second.
            var metricsConfiguration = serverConfiguration
            metricsConfiguration.host = address.host
            metricsConfiguration.port = address.port
            metricsConfiguration.threads = 1
            metricsConfiguration.connectionLimit = 64
            self.metricsServer = HTTPServer(configuration: metricsConfiguration) { request, responder in
                routes.handleMetricsListener(request, responder)
            }
        } else {
            self.metricsServer = nil
        }
        self.log = log
        self.readiness = readiness
        self.pipeline = pipeline
        self.fetcher = fetcher
    }

    /// Binds and starts serving; `/readyz` answers 200 from the end of this call (the listening
    /// socket opens only once everything is built, so "starting" is the short moment in between).
    public func start() throws {
        try listen()
        announceReady()
    }

    /// The first half of `start()`: bind and serve, `/readyz` still 503 (tests look in between).
    func listen() throws {
        try server.start()
        if let metricsServer {
            do {
                try metricsServer.start()
            } catch {
                server.shutdown(grace: .zero, lateResponse: HTTPResponse(status: 503))
                throw error
            }
        }
    }

    /// The second half: log the settings, turn `/readyz` to 200, log the `start` event.
    func announceReady() {
        log.event(configuration.settingsEvent)
        // Ready before the `start` line: whoever reads the port from it finds /readyz ready.
        readiness.becomeReady()
        let host = configuration.server.host
        log.event(
            LogEvent(
                "start", "thumbd \(Self.version) listening on \(host):\(server.port)",
                [("version", .text(Self.version)), ("host", .text(host)), ("port", .int(server.port))]))
        if let metricsServer, let address = configuration.server.metricsListen {
            log.event(
                LogEvent(
                    "metrics", "metrics on \(ListenAddress(host: address.host, port: metricsServer.port))/metrics",
                    [("host", .text(address.host)), ("port", .int(metricsServer.port))]))
        }
    }

    /// True from the moment `shutdown()` begins.
    public var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// True while `/readyz` answers 200: started, and no stop begun (no drain, no shutdown).
    public var isReady: Bool { readiness.current == .ready }

    /// The bound port (useful with port 0).
    public var port: Int { server.port }

    /// The drain before a stop: `/readyz` answers 503 from now on and every response carries
    /// `Connection: close`, but everything else is served as before, new connections included.
    /// A balancer probing `/readyz` takes this instance out of rotation and keep-alive clients
    /// reconnect elsewhere, while nothing is refused yet. `shutdown()` follows. Idempotent.
    public func beginDrain(reason: String = "asked") {
        guard readiness.beginDraining() else { return }
        server.beginDraining()
        let delay = configuration.server.drainDelay
        log.event(
            LogEvent(
                "drain",
                "\(reason): draining for \(delay.secondsText)s: /readyz answers 503, everything else is served "
                    + "as before (Connection: close)", [("reason", .text(reason)), ("delay", .number(delay.seconds))]))
    }

    /// The metrics listener's bound port; nil without `--metrics-listen`.
    public var metricsPort: Int? { metricsServer?.port }

    /// Graceful stop: no new connections, in-flight requests get `shutdownGrace` to finish,
    /// anything still waiting then gets a 503; then the workers and the fetcher stop.
    public func shutdown() {
        // Not ready from here on, drained or not (connections still open may ask).
        _ = readiness.beginDraining()
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        let grace = configuration.server.shutdownGrace
        log.event(
            LogEvent(
                "stopping", "stopping: finishing in-flight requests (grace \(grace.secondsText)s)",
                [("grace", .number(grace.seconds))]))
        var late = ProblemResponse.make(
            ThumbnailError(.shuttingDown), requestID: "shutdown",
            retryAfter: configuration.server.retryAfter.wholeSeconds)
        late.headers.append(("X-Request-Id", "shutdown"))
        server.shutdown(grace: grace, lateResponse: late)
        // Scrapes go on while the main port drains, so the drain itself can be watched.
        metricsServer?.shutdown(grace: .zero, lateResponse: late)
        pipeline.stop()
        fetcher.shutdown()
        log.event(LogEvent("stopped", "stopped"))
        log.flush()
    }

    /// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it starts after.
    /// `main` calls it first, before anything starts a thread: a signal that is blocked everywhere
    /// stays pending until `runUntilSignalled` takes it with `sigwait`. (With dispatch signal
    /// sources, threads started earlier — workers, the fetcher — had it unblocked, so a SIGTERM
    /// could land on one of them and be dropped by `SIG_IGN`: a lost stop, seen as a hung test.)
    public static func blockTerminationSignals() {
        var set = terminationSignals
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    private static var terminationSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        return set
    }

    /// Runs until SIGTERM or SIGINT, then stops in two phases: the drain (`beginDrain`) for
    /// `--drain-delay`, cut short by a second signal, then the graceful `shutdown()`. Returns the
    /// exit status. Call `blockTerminationSignals()` before building the app.
    public func runUntilSignalled() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let first = Self.waitForSignal(upTo: nil) ?? SIGTERM
        beginDrain(reason: Self.name(of: first))
        let delay = configuration.server.drainDelay
        if delay > .zero {
            if let second = Self.waitForSignal(upTo: delay) {
                log.event(
                    LogEvent(
                        "drain-end", "\(Self.name(of: second)) again: drain cut short",
                        [("cut-short", .bool(true))]))
            } else {
                log.event(LogEvent("drain-end", "drain delay over", [("cut-short", .bool(false))]))
            }
        }
        shutdown()
        return 0
    }

    /// The next SIGTERM or SIGINT (both blocked, so they wait pending for this), or nil when
    /// `limit` passes first; nil `limit`: no limit.
    private static func waitForSignal(upTo limit: Duration?) -> Int32? {
        var set = terminationSignals
        guard let limit else {
            var number: Int32 = 0
            while sigwait(&set, &number) != 0 {}
            return number
        }
        let deadline = ContinuousClock.now.advanced(by: limit)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var timeout = left.timespec
            let number = sigtimedwait(&set, nil, &timeout)
            if number > 0 { return number }
            // EINTR: another signal (not ours) interrupted the wait; EAGAIN: the time is up.
            if errno != EINTR { return nil }
        }
    }

    private static func name(of signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }
}
