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

    /// `niceness` is counted from the main thread, capped at 19, and 0 keeps the starter's value:
    /// a thread started from a lowered one with the same niceness does not sink further.
    @Test func detachedThreadRunsBelowTheMainThreadWhenAsked() async throws {
        let main = niceValue(ofThread: Int32(getpid()))
        let seen = Monitor<[Int32]?>(nil)
        try DetachedThread.start(name: "lowered", stackSize: 64 << 10, niceness: 3) {
            let lowered = niceValue(ofThread: 0)
            let again = Monitor<[Int32]?>(nil)
            try! DetachedThread.start(name: "lowered-again", stackSize: 64 << 10, niceness: 3) {
                let inherited = Monitor<Int32?>(nil)
                try! DetachedThread.start(name: "inherits", stackSize: 64 << 10) {
                    inherited.withLock { $0 = niceValue(ofThread: 0) }
                }
                let kept = inherited.wait(until: { $0 != nil }) { $0! }
                again.withLock { $0 = [niceValue(ofThread: 0), kept] }
            }
            let inner = again.wait(until: { $0 != nil }) { $0! }
            seen.withLock { $0 = [lowered] + inner }
        }
        let values = await blocking { seen.wait(until: { $0 != nil }) { $0! } }
        let expected = min(19, main + 3)
        #expect(values == [expected, expected, expected])
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

/// A thread's nice value; `0`: the calling thread (on Linux the nice value is per thread).
private func niceValue(ofThread thread: Int32) -> Int32 {
    getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread))
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
