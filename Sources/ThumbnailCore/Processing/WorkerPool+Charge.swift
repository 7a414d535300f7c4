internal import Primitives

/// The pool's side of the work budget (`WorkBudget`, kept in the pool's state): charges made from
/// outside a job, and fetches that wait for room before they start.
extension WorkerPool {
    /// Bytes charged against the work budget from outside a job (a fetch in progress, an original
    /// waiting for its job); changed with `update`, given back by `end` or when dropped.
    public final class Charge: Sendable {
        private let pool: WorkerPool
        private let bytes: Locked<Int?>
        /// True when it was granted by `whenRoom` after waiting for room (not at once).
        public let waited: Bool

        init(pool: WorkerPool, charged: Int = 0, waited: Bool = false) {
            self.pool = pool
            self.bytes = Locked(charged)
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
        let waiter = WorkBudget.Waiter(bytes: max(0, bytes), start: start)
        let now = state.withLock { $0.budget.chargeOrWait(waiter, priority) }
        if now { start(Charge(pool: self, charged: waiter.bytes)) }
    }

    fileprivate func adjust(by delta: Int) {
        guard delta < 0 else { return state.withLock { $0.budget.adjust(by: delta) } }
        let ready = state.withLock { state in
            state.budget.adjust(by: delta)
            return state.budget.takeWaitersThatFit()
        }
        startWaiters(ready)
    }

    /// Starts fetches that were given room, outside the lock.
    func startWaiters(_ ready: [WorkBudget.Waiter]) {
        for waiter in ready { waiter.start(Charge(pool: self, charged: waiter.bytes, waited: true)) }
    }
}
