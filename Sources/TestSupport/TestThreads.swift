internal import Primitives

/// Work spread over threads of its own, for tests that drive the code under test from several
/// threads at once.
///
/// Not `DispatchQueue.concurrentPerform`: on Linux its iterations run on the threads of the
/// global queue that Swift's cooperative pool runs on too (one per core, two on CI), and while
/// they are busy no other test's task gets a thread, however short its own deadlines. Under a
/// sanitizer, a test hammering a cache that way held every other test of the run for a minute.
public enum TestThreads {
    /// Runs `body(0)` … `body(count - 1)`, each on a thread of its own, and returns their results
    /// in that order once every one has returned. The threads have an 8 MiB stack, as a Dispatch
    /// worker's: libvips needs more than a small one.
    public static func run<Result: Sendable>(
        _ count: Int, name: String, _ body: @escaping @Sendable (Int) -> Result
    ) async -> [Result] {
        await withCheckedContinuation { continuation in
            let results = ResultCollector<Result>(count: count, continuation: continuation)
            for index in 0..<count {
                do {
                    try DetachedThread.start(name: "\(name)-\(index)", stackSize: 8 << 20) {
                        results.set(index, body(index))
                    }
                } catch {
                    fatalError("TestThreads: cannot start a thread: \(error)")
                }
            }
        }
    }
}
