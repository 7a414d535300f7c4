import ThumbnailCore

/// Every setting of thumbd, grouped by concern. Each default is written once, here, as the
/// field's initial value; `--help` and the settings table of docs/configuration.md print it from
/// an instance (a test checks that table against `--help`). Each field is also a command-line
/// flag and an environment variable (`THUMBD_NAME`), listed in `ServiceConfiguration.settings`; the
/// flag wins.
public struct ServiceConfiguration: Sendable, Equatable {
    public var server = Server()
    public var fetch = Fetch()
    public var processing = Processing()
    public var cache = Cache()
    public var freshness = Freshness()
    public var access = Access()
    public var logging = Logging()

    public init() {}

    /// Who may ask for what: signed URLs and allowed sizes.
    public struct Access: Sendable, Equatable {
        /// HMAC-SHA256 keys (each ≥ 32 bytes); when any is set, every `/thumb` and `/prefetch`
        /// request must carry a valid `sig` under one of them. Secret: never printed.
        public var signingKeys: [[UInt8]] = []
        /// When non-empty, the only `w` values accepted (as requested, before `dpr`).
        public var allowedWidths: [Int] = []
        /// When non-empty, the only `h` values accepted.
        public var allowedHeights: [Int] = []
        /// When non-empty, the only `q` values a request may name.
        public var allowedQualities: [Int] = []
        /// A `w` outside `allowedWidths` is rounded up to an allowed one instead of refused (on
        /// every route but `/_next/image`, which answers as Next.js' optimizer does).
        public var snapWidths = false
        /// Bearer token of the admin endpoints (`DELETE /cache`, `GET /cache/stats`); nil: they do
        /// not exist (404). Secret: never printed.
        public var adminToken: String? = nil
    }

    /// The HTTP side: where it listens and how long clients may take.
    public struct Server: Sendable, Equatable {
        /// Put it behind nginx or a CDN; use 0.0.0.0 or :: to expose it.
        public var host = "127.0.0.1"
        /// 0 picks a free port.
        public var port = 8080
        /// Polling threads, one libmicrohttpd daemon each.
        public var threads = System.coreCount
        /// Simultaneous client connections; more are refused.
        public var maxConnections = 1024
        /// A client must send a complete request head within this (a trickling client is cut off).
        public var headTimeout: Duration = .seconds(10)
        /// An idle keep-alive connection is closed after this.
        public var idleTimeout: Duration = .seconds(30)
        /// On SIGTERM/SIGINT, first this long of draining: `/readyz` answers 503 and every response
        /// carries `Connection: close`, but everything is served as before, so a balancer that
        /// probes `/readyz` stops sending here while nothing is refused yet. Before the grace
        /// period, not part of it: SIGTERM to exit takes at most drain + grace (+ 1 s). A second
        /// signal ends the drain at once; 0 skips it.
        public var drainDelay: Duration = .seconds(5)
        /// Then the graceful stop: no new connections, in-flight requests get this long to finish.
        public var shutdownGrace: Duration = .seconds(10)
        /// The `Retry-After` of a 503 (whole seconds).
        public var retryAfter: Duration = .seconds(1)
        /// A separate listener for `GET /metrics`, which is then not on the main port (so it can
        /// stay off the public side); nil: `/metrics` is served on the main port.
        public var metricsListen: ListenAddress? = nil
    }

    /// Getting sources: which ones, how big, how long.
    public struct Fetch: Sendable, Equatable {
        /// Largest source accepted, counted while streaming (compressed or chunked bodies included).
        public var maxSourceBytes = 32 << 20
        /// Fetch from loopback addresses (127/8, ::1): local development and tests only.
        public var allowLoopback = false
        /// Fetch from private (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT (100.64/10) addresses.
        public var allowPrivate = false
        /// When non-empty, the only source hosts allowed ("images.example.org", "*.example.org").
        public var allowedHosts: [String] = []
        /// Where the framework routes fetch a source written as a path (`/a.jpg`): this URL with
        /// the path appended; nil: such sources are refused (400).
        public var sourceBaseURL: SourceURL? = nil
        /// Per source connection.
        public var connectTimeout: Duration = .seconds(5)
        /// For a whole source fetch, redirects included.
        public var timeout: Duration = .seconds(20)
        /// An origin's failure for a source (404/410, 5xx, connection failure, deadline miss) is
        /// answered again from memory for this long, without a fetch; zero turns it off.
        public var errorTTL: Duration = .seconds(10)
        /// At most this many fetches to one origin (scheme, host, port) at a time; more wait, up to
        /// the fetch timeout, holding no worker and no place in the queue.
        public var maxFetchesPerHost = 8
        /// After this many connection-level failures in a row (refused, reset, connect timeout,
        /// deadline miss), an origin's requests are answered 502/504 at once for `breakerCoolDown`,
        /// then one trial goes through; 0 turns the breaker off.
        public var breakerFailures = 5
        /// How long an open breaker answers at once before it lets one trial request through.
        public var breakerCoolDown: Duration = .seconds(30)
    }

    /// The image work: threads, admission, source limits, the allocator.
    public struct Processing: Sendable, Equatable {
        /// Threads that decode and encode (libvips).
        public var workers = System.coreCount
        /// Misses admitted beyond the ones running; past `workers + queueCapacity` a new miss gets 503.
        public var queueCapacity = 64
        /// An admitted miss that waited this long in the queue (for a worker or for working
        /// memory) is answered 503 with Retry-After instead of being run late.
        public var queueTimeout: Duration = .seconds(20)
        /// A job (header read, decode, resize, encode) running this long is answered 503 at once:
        /// libvips is told to stop, and a call that cannot be stopped is abandoned on its thread,
        /// which is replaced. Generous: a 75-MP PNG decodes in a few seconds here; the deadline is
        /// for sources that make a decoder spin, not for slow ones.
        public var jobTimeout: Duration = .seconds(30)
        /// The working-memory budget: everything outside the cache — fetched originals waiting for
        /// or in processing, fetches in progress, and the decode memory of running jobs (estimated
        /// from the header). A quarter of the cgroup's or machine's memory limit, 64 MiB to 4 GiB.
        public var workBytes = MemoryLimit.defaultWorkBytes()
        /// Width × height of the first page, checked before decoding; an animation's frames
        /// together over it are made a still of the first frame.
        public var maxSourcePixels = 75_000_000
        /// An animated GIF or WebP with more frames is answered with its first frame as a still
        /// (`X-Thumbd-First-Frame: max-frames`). 256: what weserv truncates at, silently; a
        /// 10-s clip at 25 fps.
        public var maxFrames = 256
        /// How often freed heap memory is handed back to the system (`malloc_trim`, `MallocTrim`);
        /// zero never. Anything long-lived that lands at the top of a heap (a cached thumbnail, a
        /// cache entry) keeps glibc from shrinking it, so the working buffers of every decode since
        /// start stay resident as free holes below it; trimming once a second returns those pages,
        /// and the next decode faults back in only what it uses (see docs/architecture.md, malloc).
        /// glibc's other malloc settings are its own environment variables (`GLIBC_TUNABLES`).
        public var mallocTrimInterval: Duration = .seconds(1)
    }

    /// What is kept, and what clients are told to keep.
    public struct Cache: Sendable, Equatable {
        /// The one memory budget for originals, decoded copies and thumbnails: a quarter of the
        /// cgroup's or the machine's memory limit (the lower), between 64 MiB and 4 GiB.
        public var bytes = MemoryLimit.defaultCacheBytes()
        /// `Cache-Control: public, max-age=` of thumbnails (whole seconds).
        public var maxAge: Duration = .seconds(86_400)
        /// A folder for the disk tier, which keeps originals, thumbnails and info documents across
        /// restarts; empty: no disk tier. Made if missing; one thumbd per folder (a lock).
        public var diskDirectory = ""
        /// The most the disk tier's folder holds (files rounded up to the filesystem's block);
        /// least recently used entries go first.
        public var diskBytes = 1 << 30
    }

    /// How long cached originals (and everything made from them) stay fresh, and how long a stale
    /// one may still be served. An origin's `Cache-Control: s-maxage` / `max-age` (or `Expires`)
    /// gives the lifetime, clamped to `minSourceTTL...maxSourceTTL`.
    public struct Freshness: Sendable, Equatable {
        /// Shortest lifetime, whatever the origin said: a hot source is revalidated at most this often.
        public var minSourceTTL: Duration = .seconds(60)
        /// Longest lifetime, however long the origin allowed: a replaced image shows within this.
        public var maxSourceTTL: Duration = .seconds(7 * 86_400)
        /// Lifetime when the origin says nothing.
        public var defaultSourceTTL: Duration = .seconds(3600)
        /// A stale entry is answered at once while it is revalidated, for this long past its expiry.
        public var staleWhileRevalidate: Duration = .seconds(60)
        /// When revalidation fails (connection error, 5xx, deadline), the stale entry is answered
        /// instead of the error for this long past its expiry.
        public var staleIfError: Duration = .seconds(86_400)
    }

    public struct Logging: Sendable, Equatable {
        /// One line per request on standard error.
        public var requests = true
        /// Request lines and service events as logfmt (`key=value`) or one JSON object per line.
        public var format = LogFormat.logfmt
    }
}
