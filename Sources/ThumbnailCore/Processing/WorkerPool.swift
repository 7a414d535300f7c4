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
///
/// The pool also keeps the working-memory budget (`--work-bytes`): a job sized by `run(costing:)`
/// starts only when its estimated decode memory fits beside everything already charged (running
/// decodes, and outside charges: fetched originals waiting for their job, fetches in progress);
/// until then it waits at the head of its queue, and a background job never overtakes a waiting
/// interactive one. So that waiting originals can never starve every job, a job that does not fit
/// still starts when no sized job is running (then the budget is exceeded by at most that job).
public final class WorkerPool: Sendable {
    public enum Priority: Sendable { case interactive, background }

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

        /// Queues `job` on a worker thread; the ticket is freed when it returns.
        public func run(_ job: @escaping @Sendable () -> Void) {
            run(job, then: { _ in })
        }

        /// Runs `work` on a worker thread, frees the ticket, then calls `deliver` with the result
        /// on the same thread: whoever is told "done" can already use the freed place.
        public func run<T>(_ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void) {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.enqueue(nil, work, deliver, priority: priority)
        }

        /// As `run(_:then:)`, charging the work budget: `cost` runs first on a worker (a header
        /// read: cheap) and gives the job's memory estimate in bytes; `work` then runs once that
        /// fits, holding it until it returns.
        public func run<T>(
            costing cost: @escaping @Sendable () -> Int, _ work: @escaping @Sendable () -> T,
            then deliver: @escaping @Sendable (T) -> Void
        ) {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.enqueue(cost, work, deliver, priority: priority)
        }

        /// Frees the place without running anything.
        public func release() {
            guard !used.exchange(true, ordering: .acquiringAndReleasing) else { return }
            pool.finishOne()
        }

        deinit { release() }
    }

    public struct Statistics: Sendable, Equatable {
        /// Jobs admitted now (running, waiting for their input, queued).
        public var admitted = 0
        /// Jobs admitted since start (a counter).
        public var admittedTotal = 0
        public var running = 0
        public var queuedInteractive = 0
        public var queuedBackground = 0
        public var rejected = 0
        /// The working-memory budget (`--work-bytes`) and what is charged against it now.
        public var workBudget = Int.max
        public var workInUse = 0
        /// Sized jobs running, each holding its estimate.
        public var runningCharged = 0
        /// Fetches waiting for room in the work budget before they start (`whenRoom`).
        public var waitingForRoom = 0
    }

    /// Bytes charged against the work budget from outside a job (a fetch in progress, an original
    /// waiting for its job); changed with `update`, given back by `end` or when dropped.
    public final class Charge: Sendable {
        private let pool: WorkerPool
        private let bytes: Mutex<Int?>
        /// True when it was granted by `whenRoom` after waiting for room (not at once).
        public let waited: Bool

        fileprivate init(pool: WorkerPool, charged: Int = 0, waited: Bool = false) {
            self.pool = pool
            self.bytes = Mutex(charged)
            self.waited = waited
        }

        /// Charges `total` bytes from now on instead of what was charged before.
        public func update(_ total: Int) {
            let delta = bytes.withLock { bytes -> Int in
                guard let old = bytes else { return 0 }
                bytes = max(0, total)
                return max(0, total) - old
            }
            if delta != 0 { pool.adjust(by: delta) }
        }

        /// Gives the bytes back; later updates are ignored.
        public func end() {
            let old = bytes.withLock { bytes -> Int in
                defer { bytes = nil }
                return bytes ?? 0
            }
            if old != 0 { pool.adjust(by: -old) }
        }

        deinit { end() }
    }

    /// A FIFO of jobs: an array read from a moving head, compacted once half of it is spent.
    /// A taken slot is cleared at once: a spent job's closure holds its source image (megabytes),
    /// and keeping the spent ones until compaction once pinned dozens of originals outside the
    /// cache budget.
    private struct JobQueue {
        private var jobs: [Job?] = []
        private var head = 0

        mutating func append(_ job: Job) { jobs.append(job) }

        /// Puts a job that was taken back in front (a sized job that must wait for memory).
        mutating func pushFront(_ job: Job) {
            if head > 0 {
                head -= 1
                jobs[head] = job
            } else {
                jobs.insert(job, at: 0)
            }
        }

        var first: Job? { head < jobs.count ? jobs[head] : nil }

        mutating func popFirst() -> Job? {
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

    private struct RoomWaiter {
        let bytes: Int
        let start: @Sendable (Charge) -> Void
    }

    /// A queued job. `cost` is nil until sized; `size` (if any) says how many bytes it needs.
    private struct Job {
        var cost: Int?
        let size: (@Sendable () -> Int)?
        let body: @Sendable (_ charged: Int) -> Void
    }

    private struct State {
        var interactive = JobQueue()
        var background = JobQueue()
        /// Fetches waiting for room in the budget, interactive first (see `whenRoom`).
        var roomWaiters: (interactive: [RoomWaiter], background: [RoomWaiter]) = ([], [])
        var stats = Statistics()
        var stopping = false
    }

    public let workers: Int
    public let queueCapacity: Int
    /// The queues and counters; workers sleep on it until a job (or `stop()`) arrives.
    private let state = Monitor(State())

    /// The working-memory budget in bytes (`Int.max`: none).
    public let workBudget: Int

    public init(workers: Int, queueCapacity: Int, workBudget: Int = .max, stackSize: Int = 8 << 20) {
        self.workers = max(1, workers)
        self.queueCapacity = max(0, queueCapacity)
        self.workBudget = max(1, workBudget)
        for index in 0..<self.workers {
            // The threads hold the pool strongly until `stop()` lets them end. At start-up: a
            // process that cannot start its workers cannot serve.
            do {
                try DetachedThread.start(
                    name: "thumbd-worker-\(index)", stackSize: stackSize, niceness: Self.workerNiceness
                ) { self.workLoop() }
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
            state.stats.admittedTotal += 1
            return true
        }
        return admitted ? Ticket(pool: self, priority: priority) : nil
    }

    public var statistics: Statistics {
        var stats = state.withLock { $0.stats }
        stats.workBudget = workBudget
        return stats
    }

    /// A charge against the work budget, starting at `bytes`.
    public func charge(_ bytes: Int = 0) -> Charge {
        let charge = Charge(pool: self)
        charge.update(bytes)
        return charge
    }

    /// Calls `start` — now, or once the budget has room — with a charge of `bytes`: what a fetch
    /// reserves before it starts (it then updates the charge as it learns its size). Room means
    /// that `bytes` fits beside what is charged (or nothing is), so fetches never start into more
    /// than the budget: once it is full no new fetch starts until decodes, waiting originals or
    /// other fetches give memory back. Interactive fetches are
    /// started before background ones; `start` runs outside the lock, on the thread that freed room.
    public func whenRoom(_ priority: Priority, reserving bytes: Int, _ start: @escaping @Sendable (Charge) -> Void) {
        let waiter = RoomWaiter(bytes: max(0, bytes), start: start)
        let now = state.withLock { state -> Bool in
            if fits(waiter.bytes, state) && state.stats.waitingForRoom == 0 {
                state.stats.workInUse += waiter.bytes
                return true
            }
            switch priority {
            case .interactive: state.roomWaiters.interactive.append(waiter)
            case .background: state.roomWaiters.background.append(waiter)
            }
            state.stats.waitingForRoom += 1
            return false
        }
        if now { start(Charge(pool: self, charged: waiter.bytes)) }
    }

    /// Room for a fetch reserving `bytes`: it fits beside what is charged — or nothing is charged
    /// at all, so a reservation larger than the whole budget still starts, alone.
    private func fits(_ bytes: Int, _ state: State) -> Bool {
        state.stats.workInUse == 0 || bytes <= workBudget - state.stats.workInUse
    }

    fileprivate func adjust(by delta: Int) {
        guard delta < 0 else { return state.withLock { $0.stats.workInUse += delta } }
        giveBack(-delta)
    }

    /// Lowers what is charged by `bytes` (plus any job bookkeeping done in `also`), then starts the
    /// fetches that now have room.
    private func giveBack(_ bytes: Int, also: (inout State) -> Void = { _ in }) {
        let ready = state.withLock { state -> [RoomWaiter] in
            state.stats.workInUse -= bytes
            also(&state)
            var ready: [RoomWaiter] = []
            while true {
                let next: RoomWaiter
                if let head = state.roomWaiters.interactive.first {
                    guard fits(head.bytes, state) else { break }
                    next = state.roomWaiters.interactive.removeFirst()
                } else if let head = state.roomWaiters.background.first {
                    guard fits(head.bytes, state) else { break }
                    next = state.roomWaiters.background.removeFirst()
                } else {
                    break
                }
                state.stats.waitingForRoom -= 1
                state.stats.workInUse += next.bytes
                ready.append(next)
            }
            return ready
        }
        for waiter in ready { waiter.start(Charge(pool: self, charged: waiter.bytes, waited: true)) }
    }

    /// Lets the workers finish what is queued, then end. New reservations fail.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    fileprivate func enqueue<T>(
        _ size: (@Sendable () -> Int)?, _ work: @escaping @Sendable () -> T,
        _ deliver: @escaping @Sendable (T) -> Void, priority: Priority
    ) {
        let body: @Sendable (Int) -> Void = { [self] charged in
            let result = work()
            giveBack(charged) {
                $0.stats.running -= 1
                $0.stats.admitted -= 1
                if size != nil { $0.stats.runningCharged -= 1 }
            }
            deliver(result)
        }
        let job = Job(cost: size == nil ? 0 : nil, size: size, body: body)
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

    /// Whether the job at the head of a queue may be taken now: unsized (sizing is a header read),
    /// or its cost fits the budget beside what is charged — or no sized job runs, so waiting
    /// could only last as long as outside charges do (which may be waiting for this very job).
    private func mayTake(_ job: Job, _ state: State) -> Bool {
        guard let cost = job.cost else { return true }
        return job.size == nil || cost <= workBudget - state.stats.workInUse || state.stats.runningCharged == 0
    }

    /// Interactive jobs first, always: a background job waits while an interactive one waits for
    /// memory. Nil when there is none that may be taken.
    private func nextJob(_ state: inout State) -> (job: Job, priority: Priority)? {
        if let head = state.interactive.first {
            guard mayTake(head, state), let job = state.interactive.popFirst() else { return nil }
            state.stats.queuedInteractive -= 1
            return (job, .interactive)
        }
        if let head = state.background.first, mayTake(head, state), let job = state.background.popFirst() {
            state.stats.queuedBackground -= 1
            return (job, .background)
        }
        return nil
    }

    private static func queued(_ state: State) -> Int {
        state.stats.queuedInteractive + state.stats.queuedBackground
    }

    private func hasTakeableJob(_ state: State) -> Bool {
        if let head = state.interactive.first { return mayTake(head, state) }
        if let head = state.background.first { return mayTake(head, state) }
        return false
    }

    private func workLoop() {
        while true {
            let taken = state.wait(until: { self.hasTakeableJob($0) || ($0.stopping && Self.queued($0) == 0) }) {
                state -> (Job, Priority)? in
                guard let (job, priority) = nextJob(&state) else { return nil }
                state.stats.running += 1
                if let cost = job.cost, job.size != nil {
                    state.stats.workInUse += cost
                    state.stats.runningCharged += 1
                }
                return (job, priority)
            }
            // Nil only when stopping with nothing left queued (a job waiting for memory still runs).
            guard let (job, priority) = taken else { return }
            if let cost = job.cost {
                job.body(job.size == nil ? 0 : cost)
                continue
            }
            // Unsized: size it here, off the lock, then run it now if it fits, or put it back at
            // the head of its queue to wait for memory.
            let cost = max(0, job.size?() ?? 0)
            let runNow = state.withLock { state -> Bool in
                if cost <= workBudget - state.stats.workInUse || state.stats.runningCharged == 0 {
                    state.stats.workInUse += cost
                    state.stats.runningCharged += 1
                    return true
                }
                state.stats.running -= 1
                var sized = job
                sized.cost = cost
                switch priority {
                case .interactive:
                    state.interactive.pushFront(sized)
                    state.stats.queuedInteractive += 1
                case .background:
                    state.background.pushFront(sized)
                    state.stats.queuedBackground += 1
                }
                return false
            }
            if runNow { job.body(cost) }
        }
    }
}
