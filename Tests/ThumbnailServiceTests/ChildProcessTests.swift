import Foundation
import TestSupport
import Testing

/// `ChildProcess`, which every test that starts a program uses instead of Foundation's
/// `Process` (whose `run()` crashed CI): input, both outputs, exit codes and signals, and no
/// descriptor of the test process leaking into the child.
@Suite struct ChildProcessTests {
    @Test func inputGoesInAndBothOutputsComeBackWithTheExitCode() async throws {
        let input = Array((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let outcome = try await ChildProcess.run("/bin/sh", ["-c", "cat; echo oops >&2; exit 3"], input: input)
        #expect(outcome.output == input)
        #expect(outcome.errorsText == "oops\n")
        #expect(outcome.termination == .exited(3))
        let merged = try await ChildProcess.run("/bin/sh", ["-c", "echo a; echo b >&2"], mergeErrors: true)
        #expect(merged.outputText == "a\nb\n" && merged.errors.isEmpty)
        let environment = try await ChildProcess.run("/bin/sh", ["-c", "echo $ONLY:$HOME"], environment: ["ONLY": "x"])
        #expect(environment.outputText == "x:\n")
    }

    /// A descriptor opened without close-on-exec is closed in the child; 0–2 are what was asked.
    @Test func theChildGetsNoOtherDescriptor() async throws {
        let stray = open("/dev/null", O_RDONLY)
        try #require(stray > 2)
        defer { close(stray) }
        let outcome = try await ChildProcess.run(
            "/bin/sh", ["-c", "[ -e /proc/$$/fd/\(stray) ] && echo open || echo closed"])
        #expect(outcome.outputText == "closed\n")
    }

    /// A signal ends the child whatever the test process blocks or ignores; `isRunning` and `wait`
    /// agree whichever reaps it.
    @Test func aSignalledChildIsReportedSo() async throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        #expect(child.isRunning)
        child.signal(SIGTERM)
        let ended = await eventually(within: .seconds(30)) { !child.isRunning }
        #expect(ended)
        #expect(child.wait() == .signalled(SIGTERM))
        #expect(child.wait().status == 128 + SIGTERM)
    }

    /// What crashed `Process.run`: many programs started at once while the test process holds
    /// many descriptors (CI's had about 1,400).
    @Test func manyAtOnceWithManyDescriptorsOpen() async throws {
        let held = (0..<600).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { held.filter { $0 >= 0 }.forEach { close($0) } }
        try #require(held.allSatisfy { $0 >= 0 })
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<16 {
                group.addTask { (index, try await ChildProcess.run("/bin/echo", ["\(index)"]).outputText) }
            }
            for try await (index, output) in group { #expect(output == "\(index)\n") }
        }
    }
}
