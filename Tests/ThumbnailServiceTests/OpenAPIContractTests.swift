import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// Checks the running server against `openapi.yaml`: every documented path, method and status is
/// produced by a real request, nothing undocumented comes back, and every documented query
/// parameter's bounds and enum values are enforced exactly as written.
@Suite struct OpenAPIContractTests {
    static let document = OpenAPIDocument.load()

    @Test func everyDocumentedStatusIsProducedAndNothingElse() async throws {
        let photo = Fixtures.jpeg(width: 300, height: 200)
        let h = try Harness(routes: [
            "/p.jpg": .ok(photo), "/boom": .status(500), "/text": .ok(Array("nope".utf8)),
            "/bomb.png": .ok(Fixtures.pngBomb()), "/big": .ok([UInt8](repeating: 1, count: 300_000)),
        ]) { $0.fetch.maxSourceBytes = 100_000 }
        let busy = try Harness(routes: ["/hang": .hang]) {
            $0.processing.workers = 1
            $0.processing.queueCapacity = 0
            $0.fetch.timeout = .seconds(2)
        }
        var seen: Set<String> = []
        func record(_ path: String, _ method: String, _ response: TestHTTPResponse) {
            seen.insert("\(path) \(method) \(response.status)")
            if response.status >= 400 {
                #expect(
                    response.header("content-type") == "application/problem+json",
                    "\(path) \(method) \(response.status)")
            }
        }
        let ok = h.thumb("/p.jpg")
        let etag = try #require(try await h.get(ok).header("etag"))
        for method in ["GET", "HEAD"] {
            record("/thumb", method, try await h.get(ok, method: method))
            record("/thumb", method, try await h.get(ok, [("If-None-Match", etag)], method: method))
            record("/thumb", method, try await h.get("/thumb?w=0", method: method))
            record(
                "/thumb", method,
                try await h.get(h.thumb("/uncached.jpg"), [("Cache-Control", "only-if-cached")], method: method))
        }
        let metadata = "/thumb?url=\(Harness.encode("http://169.254.169.254/x"))&w=10"
        for target in [
            metadata, h.thumb("/missing"), h.thumb("/big"), h.thumb("/text"), h.thumb("/bomb.png"), h.thumb("/boom"),
        ] {
            record("/thumb", "GET", try await h.get(target))
            record("/thumb", "HEAD", try await h.get(target, method: "HEAD"))
        }
        // /info: the same answers as /thumb, from the same sources.
        let info = InfoTests.target(h, "/p.jpg")
        let document = try await h.get(info)
        let infoTag = try #require(document.header("etag"))
        try Self.expectDocumentedInfo(document)
        for method in ["GET", "HEAD"] {
            record("/info", method, try await h.get(info, method: method))
            record("/info", method, try await h.get(info, [("If-None-Match", infoTag)], method: method))
            record("/info", method, try await h.get(InfoTests.target(h, "/p.jpg", "w=10"), method: method))
            record(
                "/info", method,
                try await h.get(
                    InfoTests.target(h, "/uncached.jpg"), [("Cache-Control", "only-if-cached")], method: method))
            for path in ["/missing", "/big", "/text", "/bomb.png", "/boom"] {
                record("/info", method, try await h.get(InfoTests.target(h, path), method: method))
            }
            record(
                "/info", method,
                try await h.get("/info?url=\(Harness.encode("http://169.254.169.254/x"))", method: method))
        }
        record(
            "/prefetch", "POST",
            try await h.get("/prefetch?url=\(Harness.encode(h.origin.url("/p.jpg")))", method: "POST"))
        record("/prefetch", "POST", try await h.get("/prefetch?url=", method: "POST"))
        record(
            "/prefetch", "POST",
            try await TestHTTPClient.request("POST", port: h.port, target: "/prefetch?url=x", body: [1]))
        record("/metrics", "GET", try await h.get("/metrics"))
        let separate = try Harness(routes: [:]) { $0.server.metricsListen = ListenAddress(host: "127.0.0.1", port: 0) }
        record("/metrics", "GET", try await separate.get("/metrics"))
        record("/livez", "GET", try await h.get("/livez"))
        record("/healthz", "GET", try await h.get("/healthz"))
        record("/readyz", "GET", try await h.get("/readyz"))
        for path in ["/livez", "/healthz", "/readyz", "/metrics"] {
            let noHost = try await TestHTTPClient.exchange(
                port: h.port, pieces: [Array("GET \(path) HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)])
            record(path, "GET", try noHost.response())
        }

        // What the HTTP layer refuses, alike on every operation: a body (the service, 413), a long
        // target (414), a large head (431), another HTTP version (505).
        let longTarget = String(repeating: "a", count: 17 << 10)  // over 16 KiB
        let largeHead = String(repeating: "b", count: 21 << 10)  // over 20 KiB
        for operation in Self.document.operations {
            let (path, method) = (operation.path, operation.method)
            record(path, method, try await TestHTTPClient.request(method, port: h.port, target: path, body: [1]))
            record(
                path, method, try await TestHTTPClient.request(method, port: h.port, target: "\(path)?p=\(longTarget)"))
            record(
                path, method,
                try await TestHTTPClient.request(method, port: h.port, target: path, headers: [("X-Pad", largeHead)]))
            record(
                path, method, try await TestHTTPClient.request(method, port: h.port, target: path, version: "HTTP/2.0"))
        }

        // The admin routes: absent without a token, then behind it.
        record("/cache", "DELETE", try await h.get("/cache?url=x", method: "DELETE"))
        record("/cache/stats", "GET", try await h.get("/cache/stats"))
        let admin = try Harness(routes: [:]) { $0.access.adminToken = AdminTests.token }
        let photoURL = Harness.encode(admin.origin.url("/p.jpg"))
        record("/cache", "DELETE", try await admin.get("/cache?url=\(photoURL)", AdminTests.auth, method: "DELETE"))
        record("/cache", "DELETE", try await admin.get("/cache?url=%2Fx", AdminTests.auth, method: "DELETE"))
        record("/cache", "DELETE", try await admin.get("/cache?url=\(photoURL)", method: "DELETE"))
        record("/cache/stats", "GET", try await admin.get("/cache/stats", AdminTests.auth))
        record("/cache/stats", "GET", try await admin.get("/cache/stats"))

        // Signed URLs on: an unsigned request is refused before anything else.
        let signed = try Harness(routes: ["/p.jpg": .ok(photo)]) { $0.access.signingKeys = [SigningTests.keyA] }
        for method in ["GET", "HEAD"] {
            record("/thumb", method, try await signed.get(signed.thumb("/p.jpg"), method: method))
        }
        record(
            "/prefetch", "POST",
            try await signed.get("/prefetch?url=\(Harness.encode(signed.origin.url("/p.jpg")))", method: "POST"))

        // Starting, then draining: /readyz is 503 (a problem) while the rest is served.
        let starting = try Harness(routes: [:], start: false)
        record("/readyz", "GET", try await starting.get("/readyz"))
        starting.app.announceReady()
        starting.app.beginDrain(reason: "test")
        record("/readyz", "GET", try await starting.get("/readyz"))
        record("/livez", "GET", try await starting.get("/livez"))

        // The busy instance: one worker, no queue, one request holding it.
        async let holding = busy.get(busy.thumb("/hang"))
        #expect(await eventually { busy.app.pipeline.metrics.workers.admitted == 1 })
        record("/thumb", "GET", try await busy.get(busy.thumb("/other")))
        record("/thumb", "HEAD", try await busy.get(busy.thumb("/other2"), method: "HEAD"))
        record("/info", "GET", try await busy.get(InfoTests.target(busy, "/other")))
        record("/info", "HEAD", try await busy.get(InfoTests.target(busy, "/other2"), method: "HEAD"))
        record(
            "/prefetch", "POST",
            try await busy.get("/prefetch?url=\(Harness.encode(busy.origin.url("/x")))", method: "POST"))
        for (index, (path, target)) in FrameworkContractTests.routes.enumerated() {
            for method in ["GET", "HEAD"] {
                record(
                    path, method,
                    try await busy.get(target(busy.origin.url("/busy-\(index)-\(method)")), method: method))
            }
        }
        record("/thumb", "GET", try await holding)  // 504 at the fetch deadline

        // The framework routes: every status /thumb's sources bring about, through each of them.
        for (path, target) in FrameworkContractTests.routes {
            let ok = target(h.origin.url("/p.jpg"))
            let etag = try #require(try await h.get(ok).header("etag"), "\(path)")
            for method in ["GET", "HEAD"] {
                record(path, method, try await h.get(ok, method: method))
                record(path, method, try await h.get(ok, [("If-None-Match", etag)], method: method))
                record(path, method, try await h.get(target("ftp://example.org/x"), method: method))
                record(
                    path, method,
                    try await h.get(
                        target(h.origin.url("/uncached.jpg")), [("Cache-Control", "only-if-cached")], method: method))
                for source in ["http://169.254.169.254/x", "/missing", "/big", "/text", "/bomb.png", "/boom"] {
                    let url = source.hasPrefix("/") ? h.origin.url(source) : source
                    record(path, method, try await h.get(target(url), method: method))
                }
                record(path, method, try await signed.get(target(signed.origin.url("/p.jpg")), method: method))
            }
        }

        // Any path: one that is not listed, and every listed path asked with a method it does not
        // take (405, with `Allow`); HEAD on a GET operation is that GET without a body.
        let unlisted = try await h.get("/no-such-route")
        record("*", "ANY", unlisted)
        for operation in Self.document.operations {
            let (path, method) = (operation.path, operation.method)
            // The admin routes exist only with a token, and answer only with it.
            let (port, headers) = path.hasPrefix("/cache") ? (admin.port, AdminTests.auth) : (h.port, [])
            let wrong = try await TestHTTPClient.request("PUT", port: port, target: path, headers: headers)
            record("*", "ANY", wrong)
            #expect(wrong.status == 405, "PUT \(path)")
            #expect(
                wrong.header("Allow")?.contains(method) == true, "PUT \(path): Allow \(wrong.header("Allow") ?? "-")")
            if method == "GET" {
                let get = try await TestHTTPClient.request("GET", port: port, target: path, headers: headers)
                let head = try await TestHTTPClient.request("HEAD", port: port, target: path, headers: headers)
                #expect(head.status == get.status, "HEAD \(path)")
                #expect(head.body.isEmpty, "HEAD \(path)")
            }
        }

        // 500 cannot be brought about with real parts (libvips refusing to encode what it decoded);
        // `everyErrorOfTheCoreIsDocumented` checks it is documented where it can occur.
        let unproducible = Set(
            (["/thumb", "/info"] + FrameworkContractTests.routes.map(\.path)).flatMap {
                ["\($0) GET 500", "\($0) HEAD 500"]
            })
        let documented = Set(
            Self.document.operations.flatMap { op in op.statuses.map { "\(op.path) \(op.method) \($0)" } }
                + Self.document.anyPathStatuses.map { "* ANY \($0)" })
        #expect(!documented.isEmpty)
        #expect(documented.isSuperset(of: unproducible))
        #expect(
            documented.subtracting(seen).subtracting(unproducible).isEmpty,
            "documented but never produced: \(documented.subtracting(seen).sorted())")
        #expect(
            seen.subtracting(documented).isEmpty,
            "produced but not documented: \(seen.subtracting(documented).sorted())")
    }

    /// Every error the pipeline can end a thumbnail or an info document with has its status
    /// documented on `/thumb` and `/info`, the ones no real request can bring about (500) included.
    @Test func everyErrorOfTheCoreIsDocumented() {
        for path in ["/thumb", "/info"] {
            for method in ["GET", "HEAD"] {
                let operation = Self.document.operations.first { $0.path == path && $0.method == method }
                let statuses = Set(operation?.statuses ?? [])
                for code in ThumbnailError.Code.allCases {
                    let status = ProblemResponse.row(for: code).status
                    #expect(statuses.contains(status), "\(method) \(path): \(code) answers \(status), not documented")
                }
            }
        }
    }

    /// A real /info answer has exactly the documented fields, all required, each of its type.
    static func expectDocumentedInfo(_ response: TestHTTPResponse) throws {
        let schema = try #require(document.schema("Info"))
        let body = try InfoTests.json(response)
        let properties = document.properties(of: schema)
        #expect(Set(properties.map(\.name)) == Set(body.keys))
        #expect(Set(schema["required"]?.strings ?? []) == Set(body.keys))
        #expect(schema["additionalProperties"]?.string == "false")
        for (name, property) in properties {
            switch property["type"]?.string {
            case "integer": #expect(body[name] is Int, "\(name)")
            case "boolean": #expect(body[name] is Bool, "\(name)")
            default:
                let value = try #require(body[name] as? String, "\(name)")
                if let pattern = property["pattern"]?.string {
                    #expect(value.range(of: pattern, options: .regularExpression) != nil, "\(name): \(value)")
                }
                if let words = property["enum"]?.strings { #expect(words.contains(value), "\(name)") }
            }
        }
    }

    /// `GET /cache/stats` with a disk tier: its `disk` object has exactly the documented fields,
    /// all required, each of its type.
    @Test func theDiskStatsAreAsDocumented() async throws {
        let h = try DiskTierTests.harness()
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        let response = try await h.get("/cache/stats", [("Authorization", "Bearer \(DiskTierTests.adminToken)")])
        let disk = try #require(try InfoTests.json(response)["disk"] as? [String: Any], "\(response.text)")
        let schema = try #require(Self.document.schema("DiskCacheStats"))
        let properties = Self.document.properties(of: schema)
        #expect(Set(properties.map(\.name)) == Set(disk.keys))
        #expect(Set(schema["required"]?.strings ?? []) == Set(disk.keys))
        #expect(schema["additionalProperties"]?.string == "false")
        for (name, property) in properties {
            let type = property["type"]?.string
            #expect(type == "boolean" ? disk[name] is Bool : type == "integer" && disk[name] is Int, "\(name)")
        }
    }

    /// /info takes the source alone: one query object whose only property is `url`.
    @Test func theInfoQueryIsTheSourceAlone() throws {
        let document = Self.document
        for method in ["GET", "HEAD"] {
            let operation = try #require(document.operation("/info", method))
            let query = operation.parameters.filter { $0["in"]?.string == "query" }
            #expect(query.count == 1)
            let schema = document.resolve(try #require(query.first?["schema"]))
            #expect(schema["additionalProperties"]?.string == "false")
            #expect(document.properties(of: schema).map(\.name) == ["url"])
            #expect(schema["required"]?.strings == ["url"])
        }
    }

    /// openapi.yaml documents exactly the parameters of `RequestParameter.all`, with their bounds,
    /// values and requirement: as one query object on /thumb (GET, HEAD) and /prefetch, with no
    /// other properties; the signed-URL ones in `SignedParameters`, as this instance has none.
    @Test func theDocumentedParametersAreTheDefinedOnes() throws {
        let document = Self.document
        let unsigned = RequestParameter.all.filter { !$0.onlyWhenSigned }
        for (path, method) in [("/thumb", "GET"), ("/thumb", "HEAD"), ("/prefetch", "POST")] {
            let operation = try #require(document.operation(path, method))
            let query = operation.parameters.filter { $0["in"]?.string == "query" }
            #expect(query.count == 1, "\(method) \(path)")
            let parameter = try #require(query.first)
            #expect(parameter["style"]?.string == "form" && parameter["explode"]?.string == "true")
            #expect(parameter["required"]?.string == "true")
            let schema = document.resolve(try #require(parameter["schema"]))
            #expect(schema["additionalProperties"]?.string == "false", "\(method) \(path)")
            let properties = document.properties(of: schema)
            #expect(properties.map(\.name) == unsigned.map(\.name), "\(method) \(path)")
            for (parameter, property) in zip(unsigned, properties) {
                Self.expectDocumented(parameter, property.schema, document)
            }
            let required = path == "/thumb" ? unsigned.filter(\.requiredForThumb).map(\.name) : ["url"]
            #expect(schema["required"]?.strings == required, "\(method) \(path)")
            if path == "/prefetch" {
                // w once any output parameter is given.
                let outputs = unsigned.map(\.name).filter { $0 != "url" && $0 != "w" }
                #expect(schema["dependentRequired"]?.keys == outputs)
                #expect(outputs.allSatisfy { schema["dependentRequired"]?[$0]?.strings == ["w"] })
            }
            let rules = schema["allOf"]?.items.map { document.resolve($0) } ?? []
            #expect(rules.contains { $0 == document.schema("FitRules") }, "\(method) \(path)")
        }
        let signed = document.properties(of: try #require(document.schema("SignedParameters")))
        #expect(signed.map(\.name) == RequestParameter.all.filter(\.onlyWhenSigned).map(\.name))
        for (parameter, property) in zip(RequestParameter.all.filter(\.onlyWhenSigned), signed) {
            Self.expectDocumented(parameter, property.schema, document)
        }
    }

    /// One parameter's schema says what its definition says.
    static func expectDocumented(
        _ parameter: RequestParameter, _ schema: YAMLNode, _ document: OpenAPIDocument,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let name = parameter.name
        switch parameter.kind {
        case .url:
            #expect(schema == document.schema("SourceURL"), sourceLocation: sourceLocation)
            #expect(schema["maxLength"]?.number == Double(SourceURL.maxLength), sourceLocation: sourceLocation)
        case .signature:
            #expect(schema["pattern"]?.string == "^[A-Za-z0-9_-]{43}$", sourceLocation: sourceLocation)
        case .integer(let range):
            #expect(schema["type"]?.string == "integer", "\(name)", sourceLocation: sourceLocation)
            #expect(
                schema["minimum"]?.number == Double(range.lowerBound)
                    && schema["maximum"]?.number == Double(range.upperBound), "\(name)", sourceLocation: sourceLocation)
        case .decimal(let range, let digits):
            #expect(schema["type"]?.string == "number", "\(name)", sourceLocation: sourceLocation)
            #expect(
                schema["minimum"]?.number == range.lowerBound && schema["maximum"]?.number == range.upperBound,
                "\(name)", sourceLocation: sourceLocation)
            #expect(schema["multipleOf"]?.number == pow(10, -Double(digits)), "\(name)", sourceLocation: sourceLocation)
        case .choice(let words):
            #expect(schema["enum"]?.strings == words, "\(name)", sourceLocation: sourceLocation)
        }
    }

    /// What `FitRules` says goes with what (crop only with fit=cover; h with fit=cover and
    /// fill), and `dependentRequired` on /prefetch, is what the server accepts: every combination
    /// of fit, crop and h is answered 400 exactly when the rules refuse it.
    @Test func theDocumentedRulesBetweenParametersAreTheServers() async throws {
        let document = Self.document
        let rules = try #require(document.schema("FitRules"))
        let cropNeeds = try #require(rules["dependentSchemas"]?["crop"])
        let fitForCrop = try #require(cropNeeds["properties"]?["fit"]?["const"]?.string)
        #expect(cropNeeds["required"]?.strings == ["fit"])
        let fitsNeedingHeight = try #require(rules["if"]?["properties"]?["fit"]?["enum"]?.strings)
        #expect(rules["if"]?["required"]?.strings == ["fit"])
        #expect(rules["then"]?["required"]?.strings == ["h"])
        func allowed(fit: String?, crop: Bool, height: Bool) -> Bool {
            if crop && fit != fitForCrop { return false }
            if let fit, fitsNeedingHeight.contains(fit), !height { return false }
            return true
        }

        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))])
        let base = "url=\(Harness.encode(h.origin.url("/p.jpg")))&w=50"
        var refused = 0
        for fit in [nil] + Fit.allCases.map(\.rawValue) {
            for crop in [false, true] {
                for height in [false, true] {
                    let query =
                        base + (fit.map { "&fit=\($0)" } ?? "") + (crop ? "&crop=centre" : "") + (height ? "&h=40" : "")
                    let status = try await h.get("/thumb?\(query)").status
                    let expected = allowed(fit: fit, crop: crop, height: height)
                    #expect(status == (expected ? 200 : 400), "\(query)")
                    if !expected { refused += 1 }
                }
            }
        }
        #expect(refused > 0)

        let prefetch = try #require(document.schema("PrefetchQuery"))
        let url = "url=\(Harness.encode(h.origin.url("/p.jpg")))"
        let values = ["h": "40", "dpr": "2", "fit": "inside", "crop": "centre", "format": "png", "q": "50"]
        for (name, needs) in prefetch["dependentRequired"]?.entries ?? [] {
            let value = try #require(values[name], "no test value for \(name)")
            let extra = name == "crop" ? "&fit=cover&h=40" : ""
            let without = try await h.get("/prefetch?\(url)&\(name)=\(value)\(extra)", method: "POST")
            let with = try await h.get("/prefetch?\(url)&w=50&\(name)=\(value)\(extra)", method: "POST")
            #expect(needs.strings == ["w"])
            #expect(without.status == 400, "\(name) without w")
            #expect(with.status == 202, "\(name) with w")
        }
    }

    /// `SourceURL`'s pattern (and the host length its `not` excludes) match exactly what the
    /// server's parser takes, but for IPv6 literals ending in a dotted quad, which the parser takes
    /// and the pattern leaves out (documented):
    /// checked on schemes, hosts, ports and paths, valid and not, each pair of them varied together.
    @Test func theSourceURLPatternsAreTheParsers() throws {
        let schema = try #require(Self.document.schema("SourceURL"))
        let pattern = try NSRegularExpression(pattern: try #require(schema["pattern"]?.string))
        let tooLong = try NSRegularExpression(pattern: try #require(schema["not"]?["pattern"]?.string))
        let maxLength = try #require(schema["maxLength"]?.number)
        func matches(_ text: String) -> Bool {
            let range = NSRange(text.startIndex..., in: text)
            return Double(text.count) <= maxLength && pattern.firstMatch(in: text, range: range) != nil
                && tooLong.firstMatch(in: text, range: range) == nil
        }
        let schemes = ["http://", "https://", "HTTP://", "hTtPs://", "ftp://", "http:/", "http:", "http//", "//"]
        let hosts = [
            "a", "example.org", "127.0.0.1", "A-B_c.D", "a.", "a..b", ".a", "-", "", "a@b", "a b", "a\\b", "é",
            "a%41", String(repeating: "a", count: 253), String(repeating: "a", count: 254),
            String(repeating: "ab.", count: 84) + "a", "[::1]", "[::]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7::]",
            "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[:::]", "[12345::1]", "[fe80::1%25eth0]", "[::ffff:1.2.3.4]",
            "[1:2:3:4:5:6:1.2.3.4]", "[::1", "::1]", "[g::1]", "[::1]x",
        ]
        let ports = ["", ":", ":0", ":1", ":80", ":00080", ":000080", ":65535", ":65536", ":99999", ":8a", ":80:80"]
        let rests = ["", "/", "/p.jpg", "?q=1&r=%2F", "#frag", "/a b", "/a\\b", "/~!$&'()*+,;=:@[]", "/\u{7F}", "/é"]
        // Every pair of parts varied together, the others fixed at a valid value (~1200 URLs: the
        // full product, 36720, says nothing more and would hold a test thread for seconds).
        var texts: [String] = []
        for host in hosts {
            for port in ports { texts.append("http://" + host + port + "/p.jpg") }
            for rest in rests { texts.append("https://" + host + rest) }
            for scheme in schemes { texts.append(scheme + host + ":8080") }
        }
        for scheme in schemes {
            for rest in rests { texts.append(scheme + "example.org" + rest) }
            for port in ports { texts.append(scheme + "[::1]" + port + "?q") }
        }
        for port in ports {
            for rest in rests { texts.append("http://127.0.0.1" + port + rest) }
        }
        var agreed = (accepted: 0, refused: 0)
        var looser: [String] = []  // matched, refused by the parser
        var stricter: [String] = []  // taken by the parser, not matched, and not the documented exception
        for text in texts {
            let accepted = (try? SourceURL(parsing: text)) != nil
            switch (matches(text), accepted) {
            case (true, true): agreed.accepted += 1
            case (false, false): agreed.refused += 1
            case (true, false): looser.append(text)
            case (false, true): if !Self.isDottedQuadIPv6(text) { stricter.append(text) }
            }
        }
        #expect(looser.isEmpty, "\(looser.count) matched but refused, e.g. \(looser.prefix(3))")
        #expect(stricter.isEmpty, "\(stricter.count) taken but not matched, e.g. \(stricter.prefix(3))")
        #expect(agreed.accepted > 100 && agreed.refused > 300, "\(agreed)")
        #expect(!matches("http://a/" + String(repeating: "x", count: SourceURL.maxLength)))
    }

    /// An IPv6 literal host whose last part is a dotted quad (`[::ffff:1.2.3.4]`).
    static func isDottedQuadIPv6(_ url: String) -> Bool {
        guard let open = url.firstIndex(of: "["), let close = url[open...].firstIndex(of: "]") else { return false }
        return url[open..<close].contains(".")
    }

    /// A problem body fits exactly one of the two error schemas: a handler's (Problem, with its
    /// requestId) and the HTTP layer's (HTTPProblem, without), so `oneOf` them is never ambiguous.
    @Test func everyProblemFitsExactlyOneErrorSchema() async throws {
        let document = Self.document
        let schemas = try ["Problem", "HTTPProblem"].map { try #require(document.schema($0)) }
        func fits(_ body: [String: Any], _ schema: YAMLNode) -> Bool {
            let present = { (names: [String]) in names.allSatisfy { body[$0] != nil } }
            let required = schema["required"]?.strings ?? []
            let forbidden = schema["not"]?["required"]?.strings
            return present(required) && !(forbidden.map(present) ?? false)
        }
        let h = try Harness(routes: [:])
        let handler = try await h.get("/thumb?w=0")
        let layer = try await TestHTTPClient.request("GET", port: h.port, target: "/thumb", version: "HTTP/2.0")
        let malformed = try await TestHTTPClient.exchange(
            port: h.port, pieces: [Array("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)]
        ).response()
        for (response, expected) in [(handler, "Problem"), (layer, "HTTPProblem"), (malformed, "HTTPProblem")] {
            #expect(response.header("content-type") == "application/problem+json")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let fitting = zip(["Problem", "HTTPProblem"], schemas).filter { fits(body, $0.1) }.map(\.0)
            #expect(fitting == [expected], "\(response.status): \(response.text)")
        }
    }

    /// The server enforces every parameter's definition as written: bounds, values, repeats,
    /// requirements, unknown names.
    @Test func everyDefinedParameterIsEnforced() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))])
        let base = "url=\(Harness.encode(h.origin.url("/p.jpg")))"
        // The rest of a valid query for each parameter under test.
        let context: [String: String] = [
            "w": "", "h": "&w=50", "dpr": "&w=50", "fit": "&w=50&h=50", "crop": "&w=50&h=50&fit=cover",
            "format": "&w=50", "q": "&w=50",
        ]
        var checked = 0
        for parameter in RequestParameter.all where parameter.kind != .url && !parameter.onlyWhenSigned {
            let rest = try #require(context[parameter.name], "no test context for \(parameter.name)")
            func status(_ value: String) async throws -> Int {
                try await h.get("/thumb?\(base)\(rest)&\(parameter.name)=\(value)").status
            }
            switch parameter.kind {
            case .url, .signature: break
            case .integer(let range):
                #expect(try await status(String(range.lowerBound)) == 200, "\(parameter.name)=\(range.lowerBound)")
                #expect(try await status(String(range.upperBound)) == 200, "\(parameter.name)=\(range.upperBound)")
                #expect(try await status(String(range.lowerBound - 1)) == 400)
                #expect(try await status(String(range.upperBound + 1)) == 400)
                #expect(try await status("x") == 400)
                checked += 1
            case .decimal(let range, _):
                let low = RequestParameter.decimalText(range.lowerBound)
                let high = RequestParameter.decimalText(range.upperBound)
                #expect(try await status(low) == 200, "\(parameter.name)=\(low)")
                #expect(try await status(high) == 200, "\(parameter.name)=\(high)")
                #expect(try await status("1.5") == 200)
                #expect(try await status(String(range.lowerBound - 0.1)) == 400)
                #expect(try await status(String(range.upperBound + 0.1)) == 400)
                #expect(try await status("1.25") == 400)  // one decimal at most
                checked += 1
            case .choice(let words):
                for word in words {
                    #expect(try await status(word) == 200, "\(parameter.name)=\(word)")
                    checked += 1
                }
                #expect(try await status("bogus") == 400)
            }
            // Repeated parameters are always refused.
            let repeated = try await h.get("/thumb?\(base)\(rest)&\(parameter.name)=1&\(parameter.name)=1")
            #expect(repeated.status == 400, "repeated \(parameter.name)")
        }
        #expect(checked >= 3 + 1 + 3 + 2 + 5)  // w, h, q ranges; dpr; fit, crop, format values
        for required in RequestParameter.all where required.requiredForThumb {
            let others = RequestParameter.all.filter { $0.requiredForThumb && $0.name != required.name }
            let query = others.map { $0.name == "url" ? base : "\($0.name)=50" }.joined(separator: "&")
            #expect(try await h.get("/thumb?\(query)").status == 400, "missing \(required.name)")
        }
        #expect(try await h.get("/thumb?\(base)&w=50&unknown=1").status == 400)
        // Without signing keys the signature parameters are as unknown as any other.
        for name in RequestParameter.all.filter(\.onlyWhenSigned).map(\.name) {
            #expect(try await h.get("/thumb?\(base)&w=50&\(name)=1").status == 400, "\(name)")
        }
        // dpr multiplies the box: w=100&dpr=2 is 200 pixels wide.
        let double = try await h.get("/thumb?\(base)&w=100&dpr=2")
        #expect(try double.image().width == 200)
    }
}
