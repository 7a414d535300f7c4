internal import Primitives
import Synchronization

/// Dedicated threads for blocking C work (libvips), with a bounded admission count and deadlines
/// that hold whatever the threads are doing.
///
/// Admission is a try-acquire (`reserve`): it fails at once when `workers + queueCapacity` jobs
/// are already admitted, so a full service answers 503 cheaply instead of queueing without bound.
/// A job is admitted before its source is fetched — that is when the client is told — and runs
/// on a worker once its input is ready. Interactive jobs are always taken before background
/// (prefetch) ones, and background jobs may only use half the queue, so prefetching can never
/// lock out interactive work. Never Swift's cooperative pool: a 100 ms decode there would stall
/// every task in the process.
///
/// Two deadlines, both kept by the pool's own watchdog thread (`WorkerPool+Watchdog.swift`), not
/// by the workers, so they hold even when every worker is stuck:
/// - `queueTimeout`: a job still queued (for a worker, or for working memory) that long is taken
///   out and answered with its `late` result.
/// - `jobTimeout`: a job running that long is answered with its `late` result at once; its work
///   gets the deadline too, so libvips can stop itself (its kill flag). A call that cannot be
///   stopped keeps its thread, which is abandoned and replaced so capacity comes back.
///
/// The pool also keeps the working-memory budget (`--work-bytes`): a `WorkBudget` in its state,
/// under the same lock as the queues, since a job starts only when it is next and fits
/// (`WorkerPool+Charge.swift` for charges from outside a job).
public final class WorkerPool: Sendable {
    public enum Priority: Sendable { case interactive, background }

    /// Why a job was answered without its work's result.
    public enum Late: Sendable, Equatable {
        /// It waited in the queue past `queueTimeout` and never ran.
        case queueTimeout
        /// It ran past `jobTimeout`; its thread was abandoned (and replaced) if the work went on.
        case jobTimeout
    }

    /// A reserved place in the pool. Run one job with it, or drop it (`release`) if there is
    /// nothing to run; either way the place is freed exactly once.
    public final class Ticket: Sendable {
        fileprivate let pool: WorkerPool
        public let priority: Priority
        private let used = Atomic<Bool>(false)

        fileprivate init(pool: WorkerPool, priority: Priority) {
            self.pool = pool
            self.priority = priority
        }

        /// Runs `work` on a worker thread with its deadline, frees the place, then calls `deliver`
        /// with the result on the same thread: whoever is told "done" can already use the freed
        /// place. With `cost`, the work budget is charged: `cost` runs first on a worker (a header
        /// read: cheap) and gives the job's memory estimate in bytes; `work` then runs once that
        /// fits, holding it until it returns. When a deadline passes first, `deliver` gets
        /// `late(reason)` instead — exactly once either way.
        public func run<T: Sendable>(
            costing cost: (@Sendable (JobDeadline) -> Int)? = nil, _ work: @escaping @Sendable (JobDeadline) -> T,
            orElse late: @escaping @Sendable (Late) -> T, then deliver: @escaping @Sendable (T) -> Void
        ) {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.enqueue(cost, work, late, deliver, priority: priority)
        }

        /// As `run(costing:_:orElse:then:)` for work with no result: `deliver` runs when it is done
        /// or was given up.
        public func run(
            costing cost: (@Sendable () -> Int)? = nil, _ work: @escaping @Sendable () -> Void,
            then deliver: @escaping @Sendable () -> Void = {}
        ) {
            var sized: (@Sendable (JobDeadline) -> Int)? = nil
            if let cost { sized = { _ in cost() } }
            run(costing: sized, { _ in work() }, orElse: { _ in }, then: { deliver() })
        }

        /// Frees the place without running anything.
        public func release() {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.finishOne()
        }

        deinit { release() }
    }

    public struct Statistics: Sendable, Equatable {
        /// The threads the pool keeps (`workers`).
        public var workers = 0
        /// Jobs admitted now (running, waiting for their input, queued).
        public var admitted = 0
        /// Jobs admitted since start (a counter).
        public var admittedTotal = 0
        public var running = 0
        public var queuedInteractive = 0
        public var queuedBackground = 0
        public var rejected = 0
        /// Jobs answered `queueTimeout` (a counter).
        public var expiredInQueue = 0
        /// Jobs answered `jobTimeout` (a counter).
        public var timedOut = 0
        /// Threads whose job passed its deadline and which have not come back from it (a gauge).
        public var stuck = 0
        /// Threads started in place of stuck ones (a counter).
        public var replaced = 0
        /// Threads able to take a job now: not stuck (a gauge). Below `workers` once stuck threads
        /// reach `workers` (then none are replaced any more).
        public var usable = 0
        /// The working-memory budget (`--work-bytes`) and what is charged against it now.
        public var workBudget = Int.max
        public var workInUse = 0
        /// Sized jobs running, each holding its estimate.
        public var runningCharged = 0
        /// Fetches waiting for room in the work budget before they start (`whenRoom`).
        public var waitingForRoom = 0
    }

    public let workers: Int
    public let queueCapacity: Int
    /// The working-memory budget in bytes (`Int.max`: none).
    public let workBudget: Int
    /// How long a job may wait in the queue; nil: for ever.
    public let queueTimeout: Duration?
    /// How long a job may run; nil: for ever.
    public let jobTimeout: Duration?
    let stackSize: Int
    /// The queues, the threads and the counters; workers and the watchdog sleep on it.
    let state = Monitor(State())

    /// Starts `workers` threads and the watchdog. At start-up a process that cannot start its
    /// threads cannot serve: that is fatal.
    public init(
        workers: Int, queueCapacity: Int, workBudget: Int = .max, queueTimeout: Duration? = nil,
        jobTimeout: Duration? = nil, stackSize: Int = 8 << 20
    ) {
        self.workers = max(1, workers)
        self.queueCapacity = max(0, queueCapacity)
        self.workBudget = max(1, workBudget)
        self.queueTimeout = queueTimeout
        self.jobTimeout = jobTimeout
        self.stackSize = stackSize
        let ids = state.withLock { state in
            state.budget = WorkBudget(limit: self.workBudget)
            state.stats.workers = self.workers
            return (0..<self.workers).map { _ in state.addThread() }
        }
        for id in ids {
            do { try startThread(id) } catch { fatalError("thumbd: cannot start worker \(id): \(error)") }
        }
        do {
            try DetachedThread.start(name: "thumbd-watchdog", stackSize: 256 << 10) { self.watchLoop() }
        } catch {
            fatalError("thumbd: cannot start the worker watchdog: \(error)")
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
            state.stats.admittedTotal += 1
            return true
        }
        return admitted ? Ticket(pool: self, priority: priority) : nil
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Lets the workers finish what is queued, then end. New reservations fail.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    private func enqueue<T: Sendable>(
        _ size: (@Sendable (JobDeadline) -> Int)?, _ work: @escaping @Sendable (JobDeadline) -> T,
        _ late: @escaping @Sendable (Late) -> T, _ deliver: @escaping @Sendable (T) -> Void, priority: Priority
    ) {
        let once = Once()
        let job = Job(
            cost: size == nil ? 0 : nil, size: size,
            work: { deadline in
                let result = work(deadline)
                return { if once.claim() { deliver(result) } }
            },
            expire: { reason in if once.claim() { deliver(late(reason)) } },
            queueDeadline: queueTimeout.map { ContinuousClock.now + $0 })
        state.withLock { state in
            state.enqueue(job, priority)
            state.version &+= 1
        }
    }

    fileprivate func finishOne() {
        state.withLock { $0.stats.admitted -= 1 }
    }

    /// Starts the thread `id` (already registered in the state).
    func startThread(_ id: Int) throws(SystemError) {
        // Below the HTTP threads' priority (`workerNiceness`), so a hit never waits behind a decode.
        try DetachedThread.start(name: "thumbd-worker-\(id)", stackSize: stackSize, niceness: Self.workerNiceness) {
            self.workLoop(id)
        }
    }

    /// One worker: takes a job (sizing it first if it is charged and unsized), runs it under its
    /// deadline, and hands its result over — unless the watchdog gave the job up meanwhile, which
    /// has then answered it and freed its place and memory already.
    private func workLoop(_ id: Int) {
        while true {
            let taken = state.wait(until: { $0.hasTakeableJob || ($0.stopping && $0.queued == 0) }) {
                state -> (Job, Priority, JobDeadline)? in
                guard let (job, priority) = state.nextJob() else { return nil }
                let deadline = JobDeadline(jobTimeout.map { .now + $0 })
                state.start(job, on: id, deadline: deadline.instant)
                return (job, priority, deadline)
            }
            guard let (job, priority, deadline) = taken else { return state.withLock { $0.removeThread(id) } }
            var cost = job.cost ?? 0
            if job.cost == nil {
                // Unsized: size it here, off the lock, then run it now if it fits, or put it back at
                // the head of its queue to wait for memory.
                cost = max(0, job.size?(deadline) ?? 0)
                let next = state.withLock { $0.afterSizing(job, priority, cost: cost, on: id) }
                switch next {
                case .run: break
                case .requeued: continue
                case .abandoned(let rejoin):
                    if rejoin { continue } else { return }
                }
            }
            let delivery = job.work(deadline)
            let (ended, ready) = state.withLock { state in
                let ended = state.finish(on: id)
                return (ended, ended == .finished ? state.budget.takeWaitersThatFit() : [])
            }
            startWaiters(ready)
            switch ended {
            case .finished: delivery()
            case .abandoned(let rejoin): if !rejoin { return }
            }
        }
    }
}

/// Exactly once, across threads: the first `claim()` wins.
final class Once: Sendable {
    private let claimed = Atomic<Bool>(false)
    func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
}
