internal import Primitives
import Synchronization

/// Dedicated threads for blocking C work (libvips), with a bounded admission count.
///
/// Admission is a try-acquire (`reserve`): it fails at once when `workers + queueCapacity` jobs
/// are already admitted, so a full service answers 503 cheaply instead of queueing without bound.
/// A job is admitted before its source is fetched — that is when the client is told — and runs
/// on a worker once its input is ready. Interactive jobs are always taken before background
/// (prefetch) ones, and background jobs may only use half the queue, so prefetching can never
/// lock out interactive work. Never Swift's cooperative pool: a 100 ms decode there would stall
/// every task in the process.
public final class WorkerPool: Sendable {
    public enum Priority: Sendable { case interactive, background }

    /// A reserved place in the pool. Run one job with it, or drop it (`release`) if there is
    /// nothing to run; either way the place is freed exactly once.
    public final class Ticket: Sendable {
        fileprivate let pool: WorkerPool
        fileprivate let priority: Priority
        private let used = Atomic<Bool>(false)

        fileprivate init(pool: WorkerPool, priority: Priority) {
            self.pool = pool
            self.priority = priority
        }

        /// Queues `job` on a worker thread; the ticket is freed when it returns.
        public func run(_ job: @escaping @Sendable () -> Void) {
            run(job, then: { _ in })
        }

        /// Runs `work` on a worker thread, frees the ticket, then calls `deliver` with the result
        /// on the same thread: whoever is told "done" can already use the freed place.
        public func run<T>(_ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void) {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.enqueue(work, deliver, priority: priority)
        }

        /// Frees the place without running anything.
        public func release() {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.finishOne()
        }

        deinit { release() }
    }

    public struct Statistics: Sendable, Equatable {
        public var admitted = 0
        public var running = 0
        public var queuedInteractive = 0
        public var queuedBackground = 0
        public var rejected = 0
    }

    /// A FIFO of jobs: an array read from a moving head, compacted once half of it is spent.
    /// A taken slot is cleared at once: a spent job's closure holds its source image (megabytes),
    /// and keeping the spent ones until compaction once pinned dozens of originals outside the
    /// cache budget.
    private struct JobQueue {
        private var jobs: [(@Sendable () -> Void)?] = []
        private var head = 0

        mutating func append(_ job: @escaping @Sendable () -> Void) { jobs.append(job) }

        mutating func popFirst() -> (@Sendable () -> Void)? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private struct State {
        var interactive = JobQueue()
        var background = JobQueue()
        var stats = Statistics()
        var stopping = false
    }

    public let workers: Int
    public let queueCapacity: Int
    /// The queues and counters; workers sleep on it until a job (or `stop()`) arrives.
    private let state = Monitor(State())

    public init(workers: Int, queueCapacity: Int, stackSize: Int = 8 << 20) {
        self.workers = max(1, workers)
        self.queueCapacity = max(0, queueCapacity)
        for index in 0..<self.workers {
            // The threads hold the pool strongly until `stop()` lets them end. At start-up: a
            // process that cannot start its workers cannot serve.
            do {
                try DetachedThread.start(name: "thumbd-worker-\(index)", stackSize: stackSize) { self.workLoop() }
            } catch {
                fatalError("thumbd: cannot start worker \(index): \(error)")
            }
        }
    }

    /// Admits one job, or returns nil at once when the pool is full.
    public func reserve(_ priority: Priority) -> Ticket? {
        let limit = workers + (priority == .interactive ? queueCapacity : queueCapacity / 2)
        let admitted = state.withLock { state -> Bool in
            guard !state.stopping, state.stats.admitted < limit else {
                state.stats.rejected += 1
                return false
            }
            state.stats.admitted += 1
            return true
        }
        return admitted ? Ticket(pool: self, priority: priority) : nil
    }

    public var statistics: Statistics { state.withLock { $0.stats } }

    /// Lets the workers finish what is queued, then end. New reservations fail.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    fileprivate func enqueue<T>(
        _ work: @escaping @Sendable () -> T, _ deliver: @escaping @Sendable (T) -> Void, priority: Priority
    ) {
        let job: @Sendable () -> Void = { [self] in
            state.withLock { $0.stats.running += 1 }
            let result = work()
            state.withLock {
                $0.stats.running -= 1
                $0.stats.admitted -= 1
            }
            deliver(result)
        }
        state.withLock { state in
            switch priority {
            case .interactive:
                state.interactive.append(job)
                state.stats.queuedInteractive += 1
            case .background:
                state.background.append(job)
                state.stats.queuedBackground += 1
            }
        }
    }

    fileprivate func finishOne() {
        state.withLock { $0.stats.admitted -= 1 }
    }

    /// Interactive jobs first, always. Nil when there is none.
    private static func nextJob(_ state: inout State) -> (@Sendable () -> Void)? {
        if let job = state.interactive.popFirst() {
            state.stats.queuedInteractive -= 1
            return job
        }
        if let job = state.background.popFirst() {
            state.stats.queuedBackground -= 1
            return job
        }
        return nil
    }

    private func workLoop() {
        while true {
            let job = state.wait(until: { $0.stopping || $0.stats.queuedInteractive + $0.stats.queuedBackground > 0 }) {
                Self.nextJob(&$0)
            }
            // Nil only when stopping with nothing left queued.
            guard let job else { return }
            job()
        }
    }
}
