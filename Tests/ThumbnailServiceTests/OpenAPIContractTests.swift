import Foundation
import TestSupport
import Testing

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
        ]) { $0.maxSourceBytes = 100_000 }
        let busy = try Harness(routes: ["/hang": .hang]) {
            $0.workers = 1
            $0.queueCapacity = 0
            $0.fetchTimeout = 2
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
        }
        record(
            "/prefetch", "POST",
            try await h.get("/prefetch?url=\(Harness.encode(h.origin.url("/p.jpg")))", method: "POST"))
        record("/prefetch", "POST", try await h.get("/prefetch?url=", method: "POST"))
        record(
            "/prefetch", "POST",
            try await TestHTTPClient.request("POST", port: h.port, target: "/prefetch?url=x", body: [1]))
        record("/healthz", "GET", try await h.get("/healthz"))
        let noHost = try await TestHTTPClient.exchange(
            port: h.port, pieces: [Array("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)])
        record("/healthz", "GET", try noHost.response())

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

        // The busy instance: one worker, no queue, one request holding it.
        async let holding = busy.get(busy.thumb("/hang"))
        #expect(await Harness.eventually { busy.app.pipeline.workers.statistics.admitted == 1 })
        record("/thumb", "GET", try await busy.get(busy.thumb("/other")))
        record(
            "/prefetch", "POST",
            try await busy.get("/prefetch?url=\(Harness.encode(busy.origin.url("/x")))", method: "POST"))
        record("/thumb", "GET", try await holding)  // 504 at the fetch deadline

        let documented = Set(
            Self.document.operations.flatMap { op in op.statuses.map { "\(op.path) \(op.method) \($0)" } })
        #expect(!documented.isEmpty)
        #expect(
            documented.subtracting(seen).isEmpty,
            "documented but never produced: \(documented.subtracting(seen).sorted())")
        #expect(
            seen.subtracting(documented).isEmpty,
            "produced but not documented: \(seen.subtracting(documented).sorted())")
    }

    @Test func everyDocumentedParameterIsEnforcedAsWritten() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))])
        let thumb = try #require(Self.document.operations.first { $0.path == "/thumb" && $0.method == "GET" })
        let base = "url=\(Harness.encode(h.origin.url("/p.jpg")))"
        // The rest of a valid query for each parameter under test.
        let context: [String: String] = [
            "w": "", "h": "&w=50", "fit": "&w=50&h=50", "crop": "&w=50&h=50&fit=cover", "format": "&w=50", "q": "&w=50",
        ]
        var checked = 0
        for parameter in thumb.parameters where parameter.location == "query" && parameter.name != "url" {
            let rest = try #require(context[parameter.name], "no test context for \(parameter.name)")
            func status(_ value: String) async throws -> Int {
                try await h.get("/thumb?\(base)\(rest)&\(parameter.name)=\(value)").status
            }
            if let minimum = parameter.minimum, let maximum = parameter.maximum {
                #expect(try await status(String(minimum)) == 200, "\(parameter.name)=\(minimum)")
                #expect(try await status(String(maximum)) == 200, "\(parameter.name)=\(maximum)")
                #expect(try await status(String(minimum - 1)) == 400, "\(parameter.name)=\(minimum - 1)")
                #expect(try await status(String(maximum + 1)) == 400, "\(parameter.name)=\(maximum + 1)")
                #expect(try await status("x") == 400)
                checked += 1
            }
            for value in parameter.enumValues {
                #expect(try await status(value) == 200, "\(parameter.name)=\(value)")
                checked += 1
            }
            if !parameter.enumValues.isEmpty { #expect(try await status("bogus") == 400) }
            // Repeated parameters are always refused.
            let repeated = try await h.get("/thumb?\(base)\(rest)&\(parameter.name)=1&\(parameter.name)=1")
            #expect(repeated.status == 400, "repeated \(parameter.name)")
        }
        #expect(checked >= 3 + 3 + 2 + 5)  // w, h, q ranges; fit, crop, format values
        for required in thumb.parameters where required.required && required.location == "query" {
            let others = thumb.parameters.filter { $0.required && $0.location == "query" && $0.name != required.name }
            let query = others.map { $0.name == "url" ? base : "\($0.name)=50" }.joined(separator: "&")
            #expect(try await h.get("/thumb?\(query)").status == 400, "missing \(required.name)")
        }
        #expect(try await h.get("/thumb?\(base)&w=50&unknown=1").status == 400)
    }
}

/// Just enough of openapi.yaml (as this repo writes it) to check the server against: operations
/// with their statuses and parameters.
struct OpenAPIDocument {
    struct Parameter {
        var name: String
        var location = ""
        var required = false
        var minimum: Int?
        var maximum: Int?
        var enumValues: [String] = []
    }

    struct Operation {
        var path: String
        var method: String
        var statuses: [Int] = []
        var parameters: [Parameter] = []
    }

    var operations: [Operation] = []

    static func load() -> OpenAPIDocument {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = (try? String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)) ?? ""
        return parse(text)
    }

    static func parse(_ text: String) -> OpenAPIDocument {
        var document = OpenAPIDocument()
        var inPaths = false
        var path = ""
        var section = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let indent = raw.prefix { $0 == " " }.count
            let line = raw.trimmingCharacters(in: .whitespaces)
            if indent == 0 { inPaths = line == "paths:" }
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
                case "minimum": parameter.minimum = Int(pair[1])
                case "maximum": parameter.maximum = Int(pair[1])
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
