import Foundation
import TestSupport
import Testing

@testable import ThumbnailService

/// Signed URLs (HMAC-SHA256, key list, exp) and allowed sizes, against a real server.
@Suite struct SigningTests {
    static let keyA = HexKey.parse(String(repeating: "ab", count: 32))!
    static let keyB = HexKey.parse(String(repeating: "0123456789abcdef", count: 5))!
    static let photo = Fixtures.jpeg(width: 640, height: 480)

    func signedHarness() throws -> Harness {
        try Harness(routes: ["/p.jpg": .ok(Self.photo)]) { $0.access.signingKeys = [Self.keyA, Self.keyB] }
    }

    @Test func onlyValidSignaturesUnderAnyKeyAreServed() async throws {
        let h = try signedHarness()
        let target = h.thumb("/p.jpg", "w=200")
        // Missing, malformed, wrong key, altered target, not last: the same 403, before any fetch.
        let wrongKey = URLSigner.sign(target, key: HexKey.parse(String(repeating: "cd", count: 32))!)
        let signed = URLSigner.sign(target, key: Self.keyA)
        // The same 32 bytes spelt otherwise: 43 characters carry 258 bits, so the last one has 2 to
        // spare, and setting one of them changes the text but not the bytes.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastCharacter = try #require(signed.last)
        let last = try #require(alphabet.firstIndex(of: lastCharacter))
        let respelt = String(signed.dropLast()) + String(alphabet[last ^ 1])
        for forged in [
            target, target + "&sig=short", wrongKey, signed.replacingOccurrences(of: "w=200", with: "w=201"),
            signed + "&q=80", target + "&sig=" + String(repeating: "A", count: 43), respelt,
        ] {
            let response = try await h.get(forged)
            try expectProblem(response, 403)
            #expect(try response.problem()["title"] as? String == "Invalid signature", "\(forged)")
        }
        #expect(h.origin.totalRequests == 0)
        // Either key of the list: rotation without downtime. The key is not part of the cache key.
        let first = try await h.get(signed)
        #expect(first.status == 200)
        #expect(first.header("x-cache") == "miss")
        let second = try await h.get(URLSigner.sign(target, key: Self.keyB))
        #expect(second.status == 200)
        #expect(second.header("x-cache") == "hit")
        #expect(second.body == first.body)
        // Remembered targets are still answered (the fast path) and still need their signature.
        #expect(try await h.get(signed).header("x-cache") == "hit")
        try expectProblem(try await h.get(target), 403)
        // Prefetch too.
        try expectProblem(
            try await h.get("/prefetch?url=\(Harness.encode(h.origin.url("/p.jpg")))", method: "POST"), 403)
        let prefetch = URLSigner.sign("/prefetch?url=\(Harness.encode(h.origin.url("/p.jpg")))", key: Self.keyB)
        #expect(try await h.get(prefetch, method: "POST").status == 202)
    }

    @Test func expiryIsCoveredByTheSignatureAndHonouredOnRememberedTargets() async throws {
        let h = try signedHarness()
        let now = Int(Date().timeIntervalSince1970)
        let past = URLSigner.sign(h.thumb("/p.jpg", "w=100&exp=\(now - 10)"), key: Self.keyA)
        let expired = try await h.get(past)
        try expectProblem(expired, 403)
        #expect(try expired.problem()["title"] as? String == "URL expired")
        // exp is signed: moving it forward breaks the signature.
        let moved = past.replacingOccurrences(of: "exp=\(now - 10)", with: "exp=\(now + 3600)")
        #expect(try await h.get(moved).problem()["title"] as? String == "Invalid signature")
        // Valid until exp, then refused even though the target is remembered and the thumbnail cached.
        let soon = now + 60
        let target = URLSigner.sign(h.thumb("/p.jpg", "w=120&exp=\(soon)"), key: Self.keyA)
        h.clock.set(Double(soon))
        #expect(try await h.get(target).status == 200)
        #expect(try await h.get(target).header("x-cache") == "hit")
        h.clock.set(Double(soon) + 1)
        let late = try await h.get(target)
        try expectProblem(late, 403)
        #expect(try late.problem()["title"] as? String == "URL expired")
        // Neither sig nor exp is in the cache key: a later exp finds the same thumbnail.
        let renewed = URLSigner.sign(h.thumb("/p.jpg", "w=120&exp=\(soon + 3600)"), key: Self.keyB)
        #expect(try await h.get(renewed).header("x-cache") == "hit")
    }

    @Test func allowedSizesApplyToTheRequestedSizeBeforeDPR() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) {
            $0.access.allowedWidths = [100, 200]
            $0.access.allowedHeights = [50]
        }
        #expect(try await h.get(h.thumb("/p.jpg", "w=100")).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg", "w=100&dpr=2")).status == 200)
        let refused = try await h.get(h.thumb("/p.jpg", "w=150"))
        try expectProblem(refused, 400)
        let params = try #require(try refused.problem()["invalid-params"] as? [[String: String]])
        #expect(params == [["name": "w", "reason": "must be one of 100, 200"]])
        try expectProblem(try await h.get(h.thumb("/p.jpg", "w=200&h=60")), 400)
        #expect(try await h.get(h.thumb("/p.jpg", "w=200&h=50&fit=cover")).status == 200)
    }

    @Test func theSignSubcommandSignsAsTheServerChecks() async throws {
        let h = try signedHarness()
        let target = h.thumb("/p.jpg", "w=90")
        let hex = Self.keyB.map { String(format: "%02x", $0) }.joined()
        guard
            case .success(.sign(let signed)) = ServiceConfiguration.load(
                arguments: ["sign", "--key", hex, target], environment: [:])
        else {
            Issue.record("sign failed")
            return
        }
        #expect(signed.hasPrefix(target + "&sig="))
        #expect(try await h.get(signed).status == 200)
        guard
            case .failure(let error) = ServiceConfiguration.load(
                arguments: ["sign", "--key", "abcd"], environment: [:])
        else {
            Issue.record("a short key and no target must fail")
            return
        }
        #expect(error.problems.count == 2)
    }

    /// The README's Python and JavaScript snippets, run as they are written, sign URLs the server
    /// accepts.
    @Test(arguments: ["python", "javascript"])
    func readmeSnippetsSignAsTheServerChecks(language: String) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let fence = "```\(language) sign\n"
        let start = try #require(readme.range(of: fence), "no ```\(language) sign block in the README")
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        let snippet = String(readme[start.upperBound..<end.lowerBound])
        // python3 and nodejs are installed by scripts/test.sh (scripts/setup.sh python3 nodejs).
        let (program, driver, file) =
            language == "python"
            ? ("python3", "\nimport sys\nprint(sign(sys.argv[1], sys.argv[2]))\n", "sign.py")
            : ("node", "\nconsole.log(sign(process.argv[2], process.argv[3]));\n", "sign.js")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("thumbd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(file)
        try (snippet + driver).write(to: path, atomically: true, encoding: .utf8)

        let h = try signedHarness()
        let target = h.thumb("/p.jpg", "w=80&exp=\(Int(Date().timeIntervalSince1970) + 600)")
        let hex = Self.keyA.map { String(format: "%02x", $0) }.joined()
        let outcome = try await ChildProcess.run("/usr/bin/env", [program, path.path, hex, target])
        #expect(outcome.status == 0, "\(outcome.errorsText)")
        let signed = outcome.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signed == URLSigner.sign(target, key: Self.keyA))
        #expect(try await h.get(signed).status == 200)
    }
}
