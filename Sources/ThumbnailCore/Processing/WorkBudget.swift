/// The working-memory budget (`--work-bytes`): how many bytes decodes, fetched originals waiting
/// for their job and fetches in progress may hold together.
///
/// - A sized job (`WorkerPool.Ticket.run(costing:)`) starts only when its estimated decode memory
///   fits beside everything already charged; until then it waits at the head of its queue, and a
///   background job never overtakes a waiting interactive one. So that waiting originals can
///   never starve every job, a job that does not fit still starts when no sized job is running
///   (then the budget is exceeded by at most that job).
/// - A fetch reserves bytes before it starts (`WorkerPool.whenRoom`) and starts only when they fit
///   beside what is charged, or when nothing is: fetches never start into more than the budget.
///   Waiting fetches are started in order, interactive ones first.
/// - Outside charges (a fetch in progress, an original waiting for its job) change as they learn
///   their size and end when they are given back (`WorkerPool.Charge`).
///
/// A plain value inside the worker pool's state, read and changed only under the pool's one lock:
/// whether the job at the head of a queue may start depends on the queue and the budget at once,
/// so both are decided in one lock hold. Every method assumes that lock is held; starting the
/// fetches it hands back (`takeWaitersThatFit`) is the pool's work, outside the lock.
struct WorkBudget {
    /// A fetch waiting for room before it starts.
    struct Waiter {
        let bytes: Int
        let start: @Sendable (WorkerPool.Charge) -> Void
    }

    /// The budget in bytes (`Int.max`: none).
    let limit: Int
    /// Bytes charged now: running sized jobs' estimates and outside charges.
    private(set) var inUse = 0
    /// Sized jobs running, each holding its estimate.
    private(set) var runningJobs = 0
    private var waiting: (interactive: [Waiter], background: [Waiter]) = ([], [])

    init(limit: Int) { self.limit = limit }

    /// Fetches waiting for room.
    var waitingCount: Int { waiting.interactive.count + waiting.background.count }

    /// Whether a sized job costing `cost` may start now: it fits beside what is charged — or no
    /// sized job runs, so waiting could only last as long as outside charges do (which may wait
    /// for this job).
    func mayStart(costing cost: Int) -> Bool { cost <= limit - inUse || runningJobs == 0 }

    /// A sized job starts, holding `cost` until `endJob`.
    mutating func startJob(costing cost: Int) {
        inUse += cost
        runningJobs += 1
    }

    /// A sized job that held `cost` returned, or was given up.
    mutating func endJob(costing cost: Int) {
        inUse -= cost
        runningJobs -= 1
    }

    /// An outside charge grew or shrank by `delta` bytes.
    mutating func adjust(by delta: Int) { inUse += delta }

    /// Room for a fetch reserving `bytes`: it fits beside what is charged — or nothing is charged
    /// at all, so a reservation larger than the whole budget still starts, alone.
    func fits(_ bytes: Int) -> Bool { inUse == 0 || bytes <= limit - inUse }

    /// A fetch asks for room: charged now (true) when it fits and no fetch waits before it, else
    /// queued behind the waiting fetches of its priority (false).
    mutating func chargeOrWait(_ waiter: Waiter, _ priority: WorkerPool.Priority) -> Bool {
        if fits(waiter.bytes) && waitingCount == 0 {
            inUse += waiter.bytes
            return true
        }
        switch priority {
        case .interactive: waiting.interactive.append(waiter)
        case .background: waiting.background.append(waiter)
        }
        return false
    }

    /// Takes out the waiting fetches that now fit, in order and interactive first, each charged
    /// its reservation; the caller starts them once it has let go of the lock.
    mutating func takeWaitersThatFit() -> [Waiter] {
        var ready: [Waiter] = []
        while true {
            let next: Waiter
            if let head = waiting.interactive.first {
                guard fits(head.bytes) else { break }
                next = waiting.interactive.removeFirst()
            } else if let head = waiting.background.first {
                guard fits(head.bytes) else { break }
                next = waiting.background.removeFirst()
            } else {
                break
            }
            inUse += next.bytes
            ready.append(next)
        }
        return ready
    }
}
