import Glibc
import Primitives
import Testing

@testable import ThumbnailCore

/// Image work yields the cores to the threads that answer clients: the workers run
/// `workerNiceness` nice levels below the main thread (and below the HTTP and curl threads, which
/// keep the main thread's value), so a cached answer does not wait behind libvips.
@Suite struct WorkerPriorityTests {
    @Test func jobsRunBelowTheMainThreadsPriority() async throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let main = Int(getpriority(which, id_t(getpid())))
        let pool = WorkerPool(workers: 2, queueCapacity: 4)
        defer { pool.stop() }
        let seen = Locked<[Int]>([])
        for _ in 0..<2 {
            let ticket = try #require(pool.reserve(.interactive))
            // id 0: the calling thread, here the worker that runs the job
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                ticket.run({ _ in Int(getpriority(which, 0)) }, orElse: { _ in -100 }) { nice in
                    seen.withLock { $0.append(nice) }
                    done.resume()
                }
            }
        }
        #expect(WorkerPool.workerNiceness > 0)
        let expected = min(19, main + WorkerPool.workerNiceness)
        #expect(seen.withLock { $0 } == [expected, expected])
    }
}
