import Synchronization

/// The working-memory budget (`--work-bytes`): a job sized by `run(costing:)` starts only when its
/// estimated decode memory fits beside everything already charged (running decodes, and outside
/// charges: fetched originals waiting for their job, fetches in progress); until then it waits at
/// the head of its queue, and a background job never overtakes a waiting interactive one. So that
/// waiting originals can never starve every job, a job that does not fit still starts when no
/// sized job is running (then the budget is exceeded by at most that job).
extension WorkerPool {
    /// Bytes charged against the work budget from outside a job (a fetch in progress, an original
    /// waiting for its job); changed with `update`, given back by `end` or when dropped.
    public final class Charge: Sendable {
        private let pool: WorkerPool
        private let bytes: Mutex<Int?>
        /// True when it was granted by `whenRoom` after waiting for room (not at once).
        public let waited: Bool

        init(pool: WorkerPool, charged: Int = 0, waited: Bool = false) {
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
    /// other fetches give memory back. Interactive fetches are started before background ones;
    /// `start` runs outside the lock, on the thread that freed room.
    public func whenRoom(_ priority: Priority, reserving bytes: Int, _ start: @escaping @Sendable (Charge) -> Void) {
        let waiter = RoomWaiter(bytes: max(0, bytes), start: start)
        let now = state.withLock { state -> Bool in
            if state.fits(waiter.bytes, budget: workBudget) && state.stats.waitingForRoom == 0 {
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

    fileprivate func adjust(by delta: Int) {
        guard delta < 0 else { return state.withLock { $0.stats.workInUse += delta } }
        let ready = state.withLock { state in
            state.stats.workInUse += delta
            return state.takeRoomWaiters(budget: workBudget)
        }
        startWaiters(ready)
    }

    /// Starts fetches that were given room, outside the lock.
    func startWaiters(_ ready: [RoomWaiter]) {
        for waiter in ready { waiter.start(Charge(pool: self, charged: waiter.bytes, waited: true)) }
    }
}
