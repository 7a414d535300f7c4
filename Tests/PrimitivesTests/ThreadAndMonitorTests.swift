import Primitives
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ThreadAndMonitorTests {
    @Test func detachedThreadRunsNamed() async throws {
        let seen = Monitor<String?>(nil)
        try DetachedThread.start(name: "primitives-test-thread", stackSize: 64 << 10) {
            seen.withLock { $0 = currentThreadName() }
        }
        let name = await blocking { seen.wait(until: { $0 != nil }) { $0 } }
        // Linux keeps 15 bytes of a thread's name.
        #expect(name == "primitives-test")
    }

    @Test func monitorWaitsForTheCondition() async throws {
        let gate = Monitor(0)
        let arrived = Monitor(0)
        for _ in 0..<3 {
            try DetachedThread.start(name: "waiter", stackSize: 64 << 10) {
                gate.wait(until: { $0 > 0 })
                arrived.withLock { $0 += 1 }
            }
        }
        #expect(arrived.withLock { $0 } == 0)
        gate.withLock { $0 = 1 }
        let count = await blocking { arrived.wait(until: { $0 == 3 }) { $0 } }
        #expect(count == 3)
    }

    @Test func timedWaitGivesUp() {
        let never = Monitor(false)
        #expect(never.wait(until: { $0 }, timeout: .milliseconds(20)) == false)
        #expect(never.wait(until: { !$0 }, timeout: .zero) == true)
        #expect(never.wait(until: { $0 }, timeout: .milliseconds(1)) { _ in 1 } == nil)
    }
}

/// Runs a blocking wait on a thread of its own, off the cooperative pool.
private func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        try! DetachedThread.start(name: "blocking", stackSize: 64 << 10) { continuation.resume(returning: body()) }
    }
}

private func currentThreadName() -> String {
    let fd = open("/proc/thread-self/comm", O_RDONLY)
    guard fd >= 0 else { return "" }
    let file = FileDescriptor(adopting: fd)
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = read(file.rawValue, &buffer, buffer.count)
    return String(decoding: buffer[..<max(count, 0)], as: UTF8.self).trimmingSuffix("\n")
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
