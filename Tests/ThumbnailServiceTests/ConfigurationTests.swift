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
        #expect(config.host == "127.0.0.1")
        #expect(config.port == 8080)
        #expect(config.maxSourceBytes == 32 << 20)
        #expect(config.maxSourcePixels == 75_000_000)
        #expect(config.connectTimeout == 5)
        #expect(config.fetchTimeout == 20)
        #expect(!config.allowLoopbackSources && !config.allowPrivateSources)
        #expect(config.cacheBytes >= 64 << 20 && config.cacheBytes <= 4 << 30)
    }

    @Test func flagsWinOverTheEnvironment() throws {
        let result = load(
            [
                "--port", "9000", "--cache-bytes=256M", "--allow-loopback-sources", "--allowed-source-hosts",
                "a.example,*.b.example",
            ],
            ["THUMBD_PORT": "7000", "THUMBD_WORKERS": "3", "THUMBD_ALLOW_PRIVATE_SOURCES": "true"])
        guard case .success(.run(let config)) = result else { Issue.record("\(result)"); return }
        #expect(config.port == 9000)
        #expect(config.workers == 3)
        #expect(config.cacheBytes == 256 << 20)
        #expect(config.allowLoopbackSources)
        #expect(config.allowPrivateSources)
        #expect(config.allowedSourceHosts == ["a.example", "*.b.example"])
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
}
