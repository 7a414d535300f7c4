import Foundation
import Testing

@testable import ThumbnailService

@Suite struct ConfigurationTests {
    func load(_ arguments: [String], _ environment: [String: String] = [:]) -> Result<
        ServiceConfiguration.Command, ConfigurationError
    > {
        ServiceConfiguration.load(arguments: arguments, environment: environment)
    }

    @Test func defaultsMatchTheContract() throws {
        guard case .success(.run(let config)) = load([]) else { Issue.record("no config"); return }
        #expect(config.server.host == "127.0.0.1")
        #expect(config.server.port == 8080)
        #expect(config.fetch.maxSourceBytes == 32 << 20)
        #expect(config.processing.maxSourcePixels == 75_000_000)
        #expect(config.fetch.connectTimeout == .seconds(5))
        #expect(config.fetch.timeout == .seconds(20))
        #expect(!config.fetch.allowLoopback && !config.fetch.allowPrivate)
        #expect(config.cache.bytes >= 64 << 20 && config.cache.bytes <= 4 << 30)
    }

    @Test func flagsWinOverTheEnvironment() throws {
        let result = load(
            [
                "--port", "9000", "--cache-bytes=256M", "--allow-loopback-sources", "--allowed-source-hosts",
                "a.example,*.b.example",
            ],
            ["THUMBD_PORT": "7000", "THUMBD_WORKERS": "3", "THUMBD_ALLOW_PRIVATE_SOURCES": "true"])
        guard case .success(.run(let config)) = result else { Issue.record("\(result)"); return }
        #expect(config.server.port == 9000)
        #expect(config.processing.workers == 3)
        #expect(config.cache.bytes == 256 << 20)
        #expect(config.fetch.allowLoopback)
        #expect(config.fetch.allowPrivate)
        #expect(config.fetch.allowedHosts == ["a.example", "*.b.example"])
    }

    @Test func everyProblemIsReportedAtOnce() {
        let result = load(
            ["--port", "70000", "--workers=0", "--bogus", "--host", "example.org"], ["THUMBD_CACHE_BYTES": "lots"])
        guard case .failure(let error) = result else { Issue.record("expected failure"); return }
        #expect(error.problems.count == 5)
        #expect(error.description.contains("--bogus"))
        #expect(error.description.contains("THUMBD_CACHE_BYTES"))
    }

    @Test func helpListsEverySettingWithItsDefault() {
        guard case .success(.help(let text)) = load(["--help"]) else { Issue.record("no help"); return }
        for setting in ServiceConfiguration.settings {
            #expect(text.contains(setting.flag))
            #expect(text.contains(setting.environmentName))
        }
        #expect(text.contains("default: 127.0.0.1"))
        #expect(text.contains("default: 32M"))
    }

    /// The settings table of docs/configuration.md says what `--help` says: the same flags, in the
    /// same order, with the same defaults (a machine-derived default in the same words).
    @Test func docsSettingsTableMatchesHelp() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        let header = try #require(lines.firstIndex(of: "| flag | default | meaning |"), "no settings table")
        var rows: [(flag: String, defaultText: String)] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            rows.append((cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[2]))
        }
        let defaults = ServiceConfiguration()
        #expect(rows.map(\.flag) == ServiceConfiguration.settings.map(\.flag))
        for (setting, row) in zip(ServiceConfiguration.settings, rows) {
            let value = setting.defaultText(defaults)
            let expected = setting.derivedDefault ?? (value.isEmpty ? "empty" : "`\(value)`")
            #expect(row.defaultText == expected, "\(setting.flag)")
        }
    }

    @Test func durationsAreReadAsSecondsAndWholeSecondsWhereTheyMustBe() throws {
        guard case .success(.run(let config)) = load(["--head-timeout", "0.25", "--retry-after", "3"]) else {
            Issue.record("no config")
            return
        }
        #expect(config.server.headTimeout == .milliseconds(250))
        #expect(config.server.retryAfter == .seconds(3))
        guard case .failure(let error) = load(["--retry-after", "1.5", "--cache-max-age", "-1"]) else {
            Issue.record("expected failure")
            return
        }
        #expect(error.problems.count == 2)
    }
}
