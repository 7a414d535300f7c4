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
        record(
            "/prefetch", "POST",
            try await busy.get("/prefetch?url=\(Harness.encode(busy.origin.url("/x")))", method: "POST"))
        record("/thumb", "GET", try await holding)  // 504 at the fetch deadline

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
        let unproducible: Set<String> = ["/thumb GET 500", "/thumb HEAD 500"]
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

    /// Every error the pipeline can end a thumbnail with has its status documented on `/thumb`,
    /// the ones no real request can bring about (500) included.
    @Test func everyErrorOfTheCoreIsDocumented() {
        for method in ["GET", "HEAD"] {
            let operation = Self.document.operations.first { $0.path == "/thumb" && $0.method == method }
            let statuses = Set(operation?.statuses ?? [])
            for code in ThumbnailError.Code.allCases {
                let status = ProblemResponse.row(for: code).status
                #expect(statuses.contains(status), "\(method) /thumb: \(code) answers \(status), not documented")
            }
        }
    }

    /// openapi.yaml documents exactly the parameters of `RequestParameter.all`, with their bounds,
    /// values and requirement, on both routes.
    @Test func theDocumentedParametersAreTheDefinedOnes() throws {
        for (path, method) in [("/thumb", "GET"), ("/prefetch", "POST")] {
            let operation = try #require(Self.document.operations.first { $0.path == path && $0.method == method })
            let documented = operation.parameters.filter { $0.location == "query" }
            #expect(documented.map(\.name) == RequestParameter.all.map(\.name), "\(path)")
            for (parameter, doc) in zip(RequestParameter.all, documented) {
                switch parameter.kind {
                case .url, .signature: break
                case .integer(let range):
                    #expect(
                        doc.minimum == Double(range.lowerBound) && doc.maximum == Double(range.upperBound),
                        "\(doc.name)")
                case .decimal(let range, let digits):
                    #expect(doc.minimum == range.lowerBound && doc.maximum == range.upperBound, "\(doc.name)")
                    #expect(doc.multipleOf == pow(10, -Double(digits)), "\(doc.name)")
                case .choice(let words):
                    #expect(doc.enumValues == words, "\(doc.name)")
                }
                let required = path == "/thumb" ? parameter.requiredForThumb : parameter.name == "url"
                #expect(doc.required == required, "\(path) \(doc.name)")
            }
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

/// Just enough of openapi.yaml (as this repo writes it) to check the server against: operations
/// with their statuses and parameters.
struct OpenAPIDocument {
    struct Parameter {
        var name: String
        var location = ""
        var required = false
        var minimum: Double?
        var maximum: Double?
        var multipleOf: Double?
        var enumValues: [String] = []
    }

    struct Operation {
        var path: String
        var method: String
        var statuses: [Int] = []
        var parameters: [Parameter] = []
    }

    var operations: [Operation] = []
    /// `x-any-path-responses`: what any path may answer besides its operations' statuses (a path
    /// not listed, a method a path does not take).
    var anyPathStatuses: [Int] = []

    static func load() -> OpenAPIDocument {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = (try? String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)) ?? ""
        return parse(text)
    }

    static func parse(_ text: String) -> OpenAPIDocument {
        var document = OpenAPIDocument()
        var inPaths = false
        var inAnyPath = false
        var path = ""
        var section = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let indent = raw.prefix { $0 == " " }.count
            let line = raw.trimmingCharacters(in: .whitespaces)
            if indent == 0 {
                inPaths = line == "paths:"
                inAnyPath = line == "x-any-path-responses:"
            }
            if inAnyPath, indent == 4, line.hasPrefix("'"), let status = Int(line.dropFirst().prefix(3)) {
                document.anyPathStatuses.append(status)
            }
            guard inPaths, !line.hasPrefix("#") else { continue }
            switch indent {
            case 2 where line.hasSuffix(":"):
                path = String(line.dropLast())
            case 4 where line.hasSuffix(":"):
                document.operations.append(Operation(path: path, method: line.dropLast().uppercased()))
            case 6:
                section = line
            case 8 where section == "responses:" && line.hasPrefix("'"):
                if let status = Int(line.dropFirst().prefix(3)) {
                    document.operations[document.operations.count - 1].statuses.append(status)
                }
            case 8 where section == "parameters:" && line.hasPrefix("- name: "):
                document.operations[document.operations.count - 1].parameters.append(
                    Parameter(name: String(line.dropFirst("- name: ".count))))
            case 10, 12:
                guard section == "parameters:", var parameter = document.operations.last?.parameters.last else {
                    continue
                }
                let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                switch pair[0] {
                case "in": parameter.location = pair[1]
                case "required": parameter.required = pair[1] == "true"
                case "minimum": parameter.minimum = Double(pair[1])
                case "maximum": parameter.maximum = Double(pair[1])
                case "multipleOf": parameter.multipleOf = Double(pair[1])
                case "enum":
                    parameter.enumValues = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(
                        separator: ","
                    )
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                default: break
                }
                let last = document.operations.count - 1
                document.operations[last].parameters[document.operations[last].parameters.count - 1] = parameter
            default:
                break
            }
        }
        return document
    }
}
