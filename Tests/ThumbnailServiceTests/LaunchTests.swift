import Foundation
import TestSupport
import Testing

/// glibc's malloc settings for thumbd are no flags of its own but glibc's `GLIBC_TUNABLES`, set
/// wherever thumbd is launched: the container image, the systemd unit, and the scripts (through
/// scripts/glibc-tunables.sh). These tests hold the three to one value, and that value to what
/// glibc reads: glibc skips a misspelt tunable or a value out of its range without a word.
@Suite struct LaunchTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// What follows `prefix` on the one line of `path` that starts with it, up to `end`.
    func value(in path: String, after prefix: String, before end: String = "") throws -> String {
        let text = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
        let lines = text.split(separator: "\n").filter { $0.hasPrefix(prefix) }
        let line = try #require(
            lines.count == 1 ? lines.first : nil, "\(path): \(lines.count) lines start with \(prefix)")
        let rest = line.dropFirst(prefix.count)
        #expect(rest.hasSuffix(end), "\(path): \(line)")
        return String(rest.dropLast(end.count))
    }

    var scriptsValue: String {
        get throws {
            try value(
                in: "scripts/glibc-tunables.sh", after: "thumbd_glibc_tunables=\"${GLIBC_TUNABLES-", before: "}\"")
        }
    }

    @Test func everyLaunchRecipeSetsTheSameTunables() throws {
        let scripts = try scriptsValue
        #expect(scripts.contains("glibc.malloc.hugetlb=1"))
        #expect(try value(in: "deploy/Dockerfile", after: "ENV GLIBC_TUNABLES=") == scripts)
        #expect(try value(in: "deploy/thumbd.service", after: "Environment=GLIBC_TUNABLES=") == scripts)
    }

    /// The dynamic loader lists the tunables as it read them from the environment.
    @Test func glibcReadsEveryTunableAsSet() throws {
        let tunables = try scriptsValue
        // The dynamic loader, under the name Debian's libc-bin gives it on every architecture.
        let outcome = try ChildProcess.runHere(
            "/usr/bin/ld.so", ["--list-tunables"], environment: ["GLIBC_TUNABLES": tunables])
        #expect(outcome.status == 0)
        let listing = outcome.outputText
        // "glibc.malloc.arena_max: 0x2 (min: 0x1, max: 0xffffffffffffffff)"
        var listed: [String: Int] = [:]
        for line in listing.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, parts[0].hasSuffix(":") else { continue }
            let text = parts[1]
            listed[String(parts[0].dropLast())] =
                text.hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
        }
        for setting in tunables.split(separator: ":") {
            let pair = setting.split(separator: "=")
            let name = String(pair[0])
            #expect(pair.count == 2 && listed[name] == Int(pair[1]), "\(setting): glibc read \(listed[name] as Any)")
        }
    }
}
