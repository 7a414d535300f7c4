extension WorkerPool {
    /// A queued job. `cost` is nil until sized; `size` (if any) says how many bytes it needs.
    struct Job {
        var cost: Int?
        let size: (@Sendable (JobDeadline) -> Int)?
        /// Runs the work and returns its delivery (which the worker calls once the place is freed).
        let work: @Sendable (JobDeadline) -> (@Sendable () -> Void)
        /// Delivers the `late` result instead (the watchdog calls it; at most one of the two lands).
        let expire: @Sendable (Late) -> Void
        /// Nil: no queue timeout.
        let queueDeadline: ContinuousClock.Instant?
    }

    /// A job on a thread, as the watchdog sees it.
    struct RunningJob {
        let deadline: ContinuousClock.Instant?
        let expire: @Sendable (Late) -> Void
        /// Bytes of the work budget it holds as a sized job; nil when it is not one.
        var charged: Int?
    }

    struct WorkerThread {
        var job: RunningJob?
        /// Its job passed its deadline and was answered without it; the thread has not come back.
        var stuck = false
    }

    enum AfterSizing {
        case run
        /// Put back at the head of its queue to wait for memory.
        case requeued
        /// The watchdog gave the job up while it was being sized.
        case abandoned(rejoin: Bool)
    }

    enum Ended: Equatable {
        case finished
        /// The watchdog had given the job up: the thread takes jobs again (`rejoin`) if nobody was
        /// started in its place, else it ends.
        case abandoned(rejoin: Bool)
    }

    /// Everything the workers and the watchdog share, behind the pool's one `Monitor`. Every
    /// method assumes the lock is held.
    struct State {
        var interactive = JobQueue()
        var background = JobQueue()
        /// The work budget: decided with the queues, under the same lock (see `WorkBudget`).
        var budget = WorkBudget(limit: .max)
        /// The counters; the budget's are in `budget` (see `statistics`).
        var stats = Statistics()
        var stopping = false
        var threads: [Int: WorkerThread] = [:]
        var nextThreadID = 0
        /// How many usable threads the pool keeps (`workers`).
        var wanted = 0
        /// Bumped whenever a deadline is added, so the watchdog recomputes its next wake-up.
        var version = 0

        mutating func addThread() -> Int {
            defer { nextThreadID += 1 }
            threads[nextThreadID] = WorkerThread()
            stats.usable += 1
            wanted = max(wanted, stats.usable)
            return nextThreadID
        }

        mutating func removeThread(_ id: Int) {
            guard let thread = threads.removeValue(forKey: id) else { return }
            if thread.stuck { stats.stuck -= 1 } else { stats.usable -= 1 }
        }

        var queued: Int { stats.queuedInteractive + stats.queuedBackground }

        mutating func enqueue(_ job: Job, _ priority: Priority) {
            switch priority {
            case .interactive:
                interactive.append(job)
                stats.queuedInteractive += 1
            case .background:
                background.append(job)
                stats.queuedBackground += 1
            }
        }

        /// Whether the job at the head of a queue may be taken now: unsized (sizing is a header
        /// read), or its cost fits the budget beside what is charged — or no sized job runs, so
        /// waiting could only last as long as outside charges do (which may wait for this job).
        func mayTake(_ job: Job) -> Bool {
            guard let cost = job.cost else { return true }
            return job.size == nil || budget.mayStart(costing: cost)
        }

        var hasTakeableJob: Bool {
            if let head = interactive.first { return mayTake(head) }
            if let head = background.first { return mayTake(head) }
            return false
        }

        /// Interactive jobs first, always: a background job waits while an interactive one waits
        /// for memory. Nil when there is none that may be taken.
        mutating func nextJob() -> (job: Job, priority: Priority)? {
            if let head = interactive.first {
                guard mayTake(head), let job = interactive.popFirst() else { return nil }
                stats.queuedInteractive -= 1
                return (job, .interactive)
            }
            if let head = background.first, mayTake(head), let job = background.popFirst() {
                stats.queuedBackground -= 1
                return (job, .background)
            }
            return nil
        }

        /// Thread `id` starts `job`, charging its cost now if it was sized already.
        mutating func start(_ job: Job, on id: Int, deadline: ContinuousClock.Instant?) {
            stats.running += 1
            var running = RunningJob(deadline: deadline, expire: job.expire)
            if let cost = job.cost, job.size != nil {
                budget.startJob(costing: cost)
                running.charged = cost
            }
            threads[id]?.job = running
            version &+= 1
        }

        /// A job sized on thread `id`: charged and run now if it fits, else back at the head.
        mutating func afterSizing(_ job: Job, _ priority: Priority, cost: Int, on id: Int) -> AfterSizing {
            guard threads[id]?.stuck == false else { return .abandoned(rejoin: comeBack(id)) }
            if budget.mayStart(costing: cost) {
                budget.startJob(costing: cost)
                threads[id]?.job?.charged = cost
                return .run
            }
            stats.running -= 1
            threads[id]?.job = nil
            var sized = job
            sized.cost = cost
            switch priority {
            case .interactive:
                interactive.pushFront(sized)
                stats.queuedInteractive += 1
            case .background:
                background.pushFront(sized)
                stats.queuedBackground += 1
            }
            return .requeued
        }

        /// Thread `id` is back from its job: the place and memory are freed — unless the watchdog
        /// did that already when it gave the job up.
        mutating func finish(on id: Int) -> Ended {
            guard let thread = threads[id], !thread.stuck, let job = thread.job else {
                return .abandoned(rejoin: comeBack(id))
            }
            threads[id]?.job = nil
            release(job)
            return .finished
        }

        /// Frees what a running job holds: its place in the pool and its memory.
        mutating func release(_ job: RunningJob) {
            stats.running -= 1
            stats.admitted -= 1
            if let charged = job.charged { budget.endJob(costing: charged) }
        }

        /// A stuck thread came back: it takes jobs again if the pool is short of usable threads
        /// (none was started in its place), else it ends. Whether it stays.
        mutating func comeBack(_ id: Int) -> Bool {
            guard threads[id] != nil else { return false }
            if stats.usable < wanted && !stopping {
                threads[id] = WorkerThread()
                stats.stuck -= 1
                stats.usable += 1
                return true
            }
            removeThread(id)
            return false
        }

        /// The counters, the budget's included.
        var statistics: Statistics {
            var statistics = stats
            statistics.workBudget = budget.limit
            statistics.workInUse = budget.inUse
            statistics.runningCharged = budget.runningJobs
            statistics.waitingForRoom = budget.waitingCount
            return statistics
        }
    }

    /// A FIFO of jobs: an array read from a moving head, compacted once half of it is spent.
    /// A taken slot is cleared at once: a spent job's closure holds its source image (megabytes),
    /// and keeping the spent ones until compaction once pinned dozens of originals outside the
    /// cache budget. Queue deadlines are in FIFO order (a job put back at the head is the oldest),
    /// so the expired jobs are always a prefix.
    struct JobQueue {
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

        /// Takes out the jobs whose queue deadline is at or before `now`.
        mutating func popExpired(at now: ContinuousClock.Instant) -> [Job] {
            var expired: [Job] = []
            while let job = first, let deadline = job.queueDeadline, deadline <= now, let taken = popFirst() {
                expired.append(taken)
            }
            return expired
        }
    }
}
