import Primitives
import Testing

@Suite struct LockedTests {
    /// Four threads each add 20,000 times, read-modify-write under the lock: any lost update (an
    /// increment made outside mutual exclusion) shows as a total below 80,000. Under
    /// ThreadSanitizer (scripts/sanitize.sh) the same test shows the lock is one TSan can see.
    @Test func incrementsFromManyThreadsAreNeverLost() async throws {
        let counter = Locked(0)
        let finished = Monitor(0)
        for _ in 0..<4 {
            try DetachedThread.start(name: "locked-test", stackSize: 64 << 10) {
                for _ in 0..<20_000 {
                    counter.withLock { value in
                        let read = value
                        value = read + 1
                    }
                }
                finished.withLock { $0 += 1 }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            try! DetachedThread.start(name: "locked-wait", stackSize: 64 << 10) {
                finished.wait(until: { $0 == 4 })
                continuation.resume()
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    private struct Token: ~Copyable { var uses = 0 }
    private struct Refused: Error {}

    /// A non-copyable state is changed in place, and a typed error leaves the lock usable.
    @Test func holdsNonCopyableStateAndPassesTypedErrors() {
        let token = Locked(Token())
        token.withLock { $0.uses += 1 }
        #expect(throws: Refused.self) {
            try token.withLock { (_: inout Token) throws(Refused) in throw Refused() }
        }
        #expect(token.withLock { $0.uses } == 1)
    }
}
