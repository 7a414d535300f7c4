import Foundation
internal import Primitives
import ThumbnailCore

extension ServiceConfiguration {
    /// Every setting, in `--help` order. Flags: `--name VALUE` or `--name=VALUE`; booleans also
    /// bare `--name`. Environment: `THUMBD_NAME=VALUE`. A flag wins over the environment.
    static let settings: [Setting] = [
        .init(
            name: "host", kind: .value("ADDR"), help: "Address to listen on (IPv4 or IPv6 literal)",
            defaultText: { $0.server.host }
        ) {
            config, text in
            guard IPLiteral.isValid(text) else { return "must be an IPv4 or IPv6 address literal" }
            config.server.host = text
            return nil
        },
        .int("port", \.server.port, 0...65535, "TCP port (0: any free port)"),
        .init(
            name: "metrics-listen", kind: .value("ADDR:PORT"),
            help:
                "Serve GET /metrics on this separate listener (127.0.0.1:9464, [::1]:9464), and not on the main port; empty: on the main port",
            defaultText: { $0.server.metricsListen?.description ?? "" }
        ) { config, text in
            if text.isEmpty {
                config.server.metricsListen = nil
                return nil
            }
            guard let address = ListenAddress(parsing: text) else {
                return "must be ADDR:PORT with an IPv4 literal or a bracketed IPv6 literal ([::1]:9464)"
            }
            config.server.metricsListen = address
            return nil
        },
        .bytes(
            "cache-bytes", \.cache.bytes, 0...(1 << 40),
            "Memory budget for cached originals, decoded copies and thumbnails",
            derivedDefault: "¼ of the cgroup or machine memory limit (the lower), between 64M and 4G"),
        .init(
            name: "disk-cache-dir", kind: .value("DIR"),
            help:
                "Folder of the disk tier: originals, thumbnails and info documents kept across restarts (made if missing, one thumbd per folder); empty: no disk tier",
            defaultText: { $0.cache.diskDirectory }
        ) { config, text in
            config.cache.diskDirectory = text
            return nil
        },
        .bytes(
            "disk-cache-bytes", \.cache.diskBytes, (1 << 20)...(1 << 50),
            "Most the disk tier's folder holds (least recently used entries go first)"),
        .bytes(
            "work-bytes", \.processing.workBytes, (1 << 20)...(1 << 40),
            "Memory budget for work in progress: fetched originals and decodes (estimated from the header)",
            derivedDefault: "¼ of the cgroup or machine memory limit (the lower), between 64M and 4G"),
        .int("workers", \.processing.workers, 1...256, "Image worker threads (libvips)", derivedDefault: "cores"),
        .int(
            "queue-capacity", \.processing.queueCapacity, 0...100_000,
            "Misses admitted beyond the running ones; more get 503"),
        .seconds(
            "queue-timeout", \.processing.queueTimeout, 0.1...3600,
            "An admitted miss still queued after this long gets 503 + Retry-After instead of running late, seconds"),
        .seconds(
            "job-timeout", \.processing.jobTimeout, 0.1...3600,
            "A job running this long is stopped (or abandoned and its worker replaced) and answered 503, seconds"),
        .bytes(
            "max-source-bytes", \.fetch.maxSourceBytes, 1...(1 << 32),
            "Largest source accepted, counted while streaming"),
        .int(
            "max-source-pixels", \.processing.maxSourcePixels, 1...1_000_000_000,
            "Largest source in pixels (first page), checked before decoding; an animation over it counting every frame gets its first frame"
        ),
        .int(
            "max-frames", \.processing.maxFrames, 1...10_000,
            "An animated GIF or WebP with more frames is answered with its first frame as a still (X-Thumbd-First-Frame)"
        ),
        .bool(
            "allow-loopback-sources", \.fetch.allowLoopback, "Allow sources on loopback addresses (development, tests)"),
        .bool("allow-private-sources", \.fetch.allowPrivate, "Allow sources on private and CGNAT addresses"),
        .init(
            name: "allowed-source-hosts", kind: .value("LIST"),
            help: "Comma-separated source host allowlist (\"a.example\", \"*.b.example\"); empty: any public host",
            defaultText: { $0.fetch.allowedHosts.joined(separator: ",") }
        ) { config, text in
            let hosts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty }
            let valid = hosts.allSatisfy { host in
                let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
                return !name.isEmpty
                    && name.allSatisfy {
                        $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == ":" || $0 == "_")
                    }
            }
            guard valid else { return "must be a comma-separated list of host names" }
            config.fetch.allowedHosts = hosts
            return nil
        },
        .init(
            name: "source-base-url", kind: .value("URL"),
            help:
                "Where a source written as a path (/a.jpg) on /_next/image, /, /_ipx and /_image is fetched from: this URL followed by the path; empty: such sources are refused",
            defaultText: { $0.fetch.sourceBaseURL?.description ?? "" }
        ) { config, text in
            if text.isEmpty {
                config.fetch.sourceBaseURL = nil
                return nil
            }
            guard let url = try? SourceURL(parsing: text), !url.pathAndQuery.contains("?"), !text.contains("#"),
                text.utf8.count <= Frontends.maxBaseLength
            else {
                return
                    "must be an absolute http or https URL of at most \(Frontends.maxBaseLength) bytes without query or fragment (https://www.example.org)"
            }
            config.fetch.sourceBaseURL = url
            return nil
        },
        .seconds("connect-timeout", \.fetch.connectTimeout, 0.1...600, "Source connect timeout, seconds"),
        .seconds(
            "fetch-timeout", \.fetch.timeout, 0.1...3600,
            "Deadline for a whole source fetch (redirects included), seconds"),
        .seconds(
            "error-ttl", \.fetch.errorTTL, 0...3600,
            "How long an origin's failure for a source is answered again without a fetch, seconds (0: off)"),
        .int(
            "max-fetches-per-host", \.fetch.maxFetchesPerHost, 1...10_000,
            "Most fetches to one origin (scheme, host, port) at a time; more wait without holding a worker"),
        .int(
            "breaker-failures", \.fetch.breakerFailures, 0...10_000,
            "Connection failures in a row that make an origin's requests fail at once for the cool-down (0: off)"),
        .seconds(
            "breaker-cooldown", \.fetch.breakerCoolDown, 0.1...3600,
            "How long an open circuit breaker answers at once before one trial request, seconds"),
        .seconds(
            "cache-max-age", \.cache.maxAge, 0...31_536_000, "Cache-Control max-age of thumbnails, seconds",
            wholeSeconds: true),
        .seconds(
            "min-source-ttl", \.freshness.minSourceTTL, 0...31_536_000,
            "Shortest time a cached original stays fresh, whatever its origin said, seconds"),
        .seconds(
            "max-source-ttl", \.freshness.maxSourceTTL, 0...31_536_000,
            "Longest time a cached original stays fresh, whatever its origin said, seconds"),
        .seconds(
            "default-source-ttl", \.freshness.defaultSourceTTL, 0...31_536_000,
            "How long a cached original stays fresh when its origin says nothing, seconds"),
        .seconds(
            "stale-while-revalidate", \.freshness.staleWhileRevalidate, 0...31_536_000,
            "How long past expiry a stale thumbnail is answered at once while it is revalidated, seconds"),
        .seconds(
            "stale-if-error", \.freshness.staleIfError, 0...31_536_000,
            "How long past expiry a stale thumbnail is answered when revalidation fails, seconds"),
        .int("server-threads", \.server.threads, 1...256, "HTTP polling threads", derivedDefault: "cores"),
        .int("max-connections", \.server.maxConnections, 1...1_000_000, "Most simultaneous client connections"),
        .seconds(
            "head-timeout", \.server.headTimeout, 0.1...3600, "Deadline for a client's complete request head, seconds"),
        .seconds(
            "idle-timeout", \.server.idleTimeout, 1...3600, "Idle keep-alive connections are closed after this, seconds"
        ),
        .seconds(
            "drain-delay", \.server.drainDelay, 0...3600,
            "On SIGTERM/SIGINT, serve on this long with /readyz answering 503 before stopping, seconds (a second signal skips it)"
        ),
        .seconds(
            "shutdown-grace", \.server.shutdownGrace, 0...3600,
            "Time in-flight requests get to finish on SIGTERM/SIGINT, after the drain delay, seconds"),
        .seconds(
            "retry-after", \.server.retryAfter, 0...3600, "Retry-After of a 503 when the queue is full, seconds",
            wholeSeconds: true),
        .init(
            name: "signing-keys", kind: .value("HEX,..."),
            help:
                "Keys for signed URLs (hex, each at least 32 bytes); set: every /thumb and /prefetch needs a valid sig",
            defaultText: { $0.access.signingKeys.isEmpty ? "" : "(\($0.access.signingKeys.count) keys)" }
        ) { config, text in
            let keys = text.split(separator: ",").map { HexKey.parse($0.trimmingCharacters(in: .whitespaces)) }
            guard keys.allSatisfy({ ($0?.count ?? 0) >= URLSigner.minimumKeyBytes }) else {
                return "must be a comma-separated list of hex keys of at least \(URLSigner.minimumKeyBytes) bytes each"
            }
            config.access.signingKeys = keys.compactMap { $0 }
            return nil
        },
        .init(
            name: "admin-token", kind: .value("TOKEN"),
            help: "Bearer token of DELETE /cache and GET /cache/stats (at least 16 characters); unset: they answer 404",
            defaultText: { $0.access.adminToken == nil ? "" : "(set)" }
        ) { config, text in
            guard text.utf8.count >= 16, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return "must be at least 16 printable characters without spaces"
            }
            config.access.adminToken = text
            return nil
        },
        .init(
            name: "allowed-widths", kind: .value("LIST"),
            help:
                "Comma-separated widths w may take (before dpr): numbers, next (Next.js' default sizes), astro (Astro's breakpoints); empty: any (/_next/image: Next.js' defaults)",
            defaultText: { $0.access.allowedWidths.map(String.init).joined(separator: ",") }
        ) { config, text in
            var widths: Set<Int> = []
            for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
            where !item.isEmpty {
                if let sizes = FrameworkWidths.keywords[item] {
                    widths.formUnion(sizes)
                } else if let width = Int(item), (1...TransformSpec.maxSide).contains(width) {
                    widths.insert(width)
                } else {
                    return
                        "must be a comma-separated list of widths from 1 to \(TransformSpec.maxSide) and the keywords next, astro"
                }
            }
            config.access.allowedWidths = widths.sorted()
            return nil
        },
        .list(
            "allowed-heights", \.access.allowedHeights, 1...TransformSpec.maxSide,
            "Comma-separated heights h may take (before dpr); empty: any"),
        .bool(
            "snap-widths", \.access.snapWidths,
            "Round a w outside --allowed-widths up to the next allowed width (the largest when above all) on /thumb, /prefetch, /, /_ipx and /_image instead of answering 400"
        ),
        .list(
            "allowed-qualities", \.access.allowedQualities, 1...100,
            "Comma-separated qualities q may take (a request without q gets 80, or the listed one nearest to it); empty: any"
        ),
        .bool("log-requests", \.logging.requests, "One log line per request on standard error"),
        .init(
            name: "log-format", kind: .value("logfmt|json"),
            help: "Request lines and service events as logfmt key=value pairs or one JSON object per line",
            defaultText: { $0.logging.format.rawValue }
        ) { config, text in
            guard let format = LogFormat(rawValue: text.lowercased()) else { return "must be logfmt or json" }
            config.logging.format = format
            return nil
        },
        .seconds(
            "malloc-trim-interval", \.processing.mallocTrimInterval, 0...3600,
            "How often free heap memory is given back to the system (malloc_trim), seconds (0: never); glibc's other malloc settings are its GLIBC_TUNABLES"
        ),
    ]

    /// What the command line asked for.
    public enum Command: Sendable, Equatable {
        case run(ServiceConfiguration)
        case help(String)
        case version
        /// `thumbd sign --key HEX TARGET`: the signed target, to print.
        case sign(String)
    }

    /// Reads the environment, then the flags. Every problem is reported at once.
    public static func load(arguments: [String], environment: [String: String]) -> Result<Command, ConfigurationError> {
        if arguments.first == "sign" { return sign(Array(arguments.dropFirst())) }
        var config = ServiceConfiguration()
        var problems: [String] = []
        let byName = Dictionary(uniqueKeysWithValues: settings.map { ($0.name, $0) })

        for setting in settings {
            guard let text = environment[setting.environmentName] else { continue }
            if let problem = setting.apply(&config, text) {
                problems.append("\(setting.environmentName)=\(text): \(problem)")
            }
        }

        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .success(.help(helpText())) }
            if argument == "--version" { return .success(.version) }
            guard argument.hasPrefix("--") else {
                problems.append("\(argument): unexpected argument")
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String? = nil
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let setting = byName[name] else {
                problems.append("--\(name): unknown setting (see --help)")
                continue
            }
            if value == nil {
                if case .bool = setting.kind {
                    // A bare boolean flag means true unless a true/false word follows.
                    if index < arguments.count,
                        ["true", "false", "1", "0", "yes", "no", "on", "off"].contains(arguments[index].lowercased())
                    {
                        value = arguments[index]
                        index += 1
                    } else {
                        value = "true"
                    }
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    problems.append("--\(name): needs a value")
                    continue
                }
            }
            if let problem = setting.apply(&config, value!) { problems.append("--\(name) \(value!): \(problem)") }
        }
        if problems.isEmpty { problems = config.crossCheckProblems() }
        return problems.isEmpty ? .success(.run(config)) : .failure(ConfigurationError(problems: problems))
    }

    /// What is wrong between settings that are each valid alone.
    func crossCheckProblems() -> [String] {
        var problems: [String] = []
        if access.snapWidths && access.allowedWidths.isEmpty {
            problems.append("--snap-widths: needs --allowed-widths (the widths to round to)")
        }
        if let base = fetch.sourceBaseURL {
            // A base every source under it would be refused for is a mistake to report now.
            let policy = SourcePolicy(
                allowLoopback: fetch.allowLoopback, allowPrivate: fetch.allowPrivate, allowedHosts: fetch.allowedHosts)
            do { try policy.check(base) } catch {
                problems.append(
                    "--source-base-url \(base): not a source this instance may fetch (--allowed-source-hosts, --allow-loopback-sources, --allow-private-sources)"
                )
            }
        }
        return problems
    }

    /// `thumbd sign --key HEX 'PATH?QUERY'`.
    static func sign(_ arguments: [String]) -> Result<Command, ConfigurationError> {
        var key: [UInt8]?
        var target: String?
        var problems: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--key" || argument.hasPrefix("--key=") {
                let text =
                    argument == "--key"
                    ? (index < arguments.count ? arguments[index] : "") : String(argument.dropFirst(6))
                if argument == "--key" { index += 1 }
                key = HexKey.parse(text)
                if (key?.count ?? 0) < URLSigner.minimumKeyBytes {
                    problems.append("--key: must be hex of at least \(URLSigner.minimumKeyBytes) bytes")
                }
            } else if target == nil, argument.hasPrefix("/") {
                target = argument
            } else {
                problems.append(
                    "\(argument): unexpected argument (usage: thumbd sign --key HEX '/thumb?url=...&w=300')")
            }
        }
        if key == nil { problems.append("--key HEX is required") }
        if target == nil { problems.append("the target to sign ('/thumb?url=...&w=300') is required") }
        guard problems.isEmpty, let key, let target else { return .failure(ConfigurationError(problems: problems)) }
        return .success(.sign(URLSigner.sign(target, key: key)))
    }

    /// `thumbd --help`: every setting, its environment variable and its default.
    public static func helpText() -> String {
        let defaults = ServiceConfiguration()
        var lines = [
            "thumbd — image thumbnail and resize HTTP service",
            "",
            "Usage: thumbd [--setting VALUE]...",
            "       thumbd sign --key HEX '/thumb?url=...&w=300[&exp=UNIX]'   print the signed target",
            "",
            "  GET  /thumb?url=URL&w=N[&PARAMETER=VALUE]...   the thumbnail",
            "  POST /prefetch?url=URL[&w=N...]               load into the cache in the background (202)",
            "  GET  /info?url=URL                            size, format and placeholders as JSON (docs/placeholders.md)",
            "  GET  /livez                                   liveness (alias /healthz)",
            "  GET  /readyz                                  readiness: 200, or 503 while starting and draining",
            "  GET  /_next/image?url=URL|/PATH&w=N&q=N         Next.js' image optimizer (docs/frontends.md)",
            "  GET  /?url=URL&w=N...                          weserv-style query (Nuxt's weserv provider)",
            "  GET  /_ipx/MODIFIERS/PATH                      IPX-style path (Nuxt Image)",
            "  GET  /_image?href=URL|/PATH&w=N...             Astro's image endpoint",
            "",
            "Request parameters (/thumb and /prefetch):",
        ]
        for parameter in RequestParameter.all {
            let values: String
            switch parameter.kind {
            case .url: values = "URL"
            case .integer(let range): values = "\(range.lowerBound)-\(range.upperBound)"
            case .decimal(let range, let digits):
                values =
                    "\(RequestParameter.decimalText(range.lowerBound))-\(RequestParameter.decimalText(range.upperBound)), \(digits) decimal"
            case .choice(let words): values = words.joined(separator: "|")
            case .signature: values = "SIGNATURE"
            }
            let required = parameter.requiredForThumb ? ", required" : ""
            let fallback = parameter.defaultValue.map { ", default \($0)" } ?? ""
            lines.append("  \(parameter.name)=\(values)\(required)\(fallback)")
            lines.append("      \(parameter.summary)")
        }
        lines += ["", "Settings (flag, environment variable, default). A flag wins over the environment."]
        for setting in settings {
            let argument: String
            switch setting.kind {
            case .bool: argument = setting.flag + "[=BOOL]"
            case .value(let placeholder): argument = "\(setting.flag) \(placeholder)"
            }
            lines.append("  \(argument)")
            lines.append("      \(setting.help)")
            let value = setting.defaultText(defaults).isEmpty ? "(empty)" : setting.defaultText(defaults)
            let derived = setting.derivedDefault.map { " (\($0))" } ?? ""
            lines.append("      env \(setting.environmentName), default: \(value)\(derived)")
        }
        lines += ["  --help", "      This text", "  --version", "      Print the version"]
        return lines.joined(separator: "\n")
    }
}
