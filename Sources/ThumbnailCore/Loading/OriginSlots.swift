internal import Primitives
import Synchronization

/// At most `limit` fetches to one origin at a time (`--max-fetches-per-host`); more wait, first
/// come first served, until a fetch to that origin ends or their deadline passes.
///
/// Why the deadline needs no timer: every fetch gets the time left until its own deadline
/// (arrival + the fetch timeout), so a fetch holding a slot ends by then; waiters are served in
/// arrival order, so each one's deadline is no earlier than those of the fetches ahead of it, and
/// a slot frees in time for it to be answered — with the slot, or, at its deadline, with a timeout.
/// Expired waiters are swept whenever a slot of their origin is taken or given back.
///
/// Bounded: an origin has an entry only while fetches to it run or wait, so the table never holds
/// more origins than there are fetches and waiters (each of them a request that was admitted).
final class OriginSlots: Sendable {
    /// A taken slot; `release` gives it back exactly once (or its deinit does).
    final class Slot: Sendable {
        let origin: OriginKey
        /// Until when its fetch may run: the deadline of the request that waited for it.
        let deadline: ContinuousClock.Instant
        private let slots: OriginSlots
        private let released = Atomic<Bool>(false)

        fileprivate init(_ slots: OriginSlots, _ origin: OriginKey, deadline: ContinuousClock.Instant) {
            self.slots = slots
            self.origin = origin
            self.deadline = deadline
        }

        func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            slots.giveBack(origin)
        }

        deinit { release() }
    }

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        let grant: @Sendable (Slot?) -> Void
    }

    private struct Origin {
        var running = 0
        var waiters: [Waiter] = []
    }

    let limit: Int
    private let wait: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let table = Locked<[OriginKey: Origin]>([:])

    /// `wait`: how long a request may wait for a slot and fetch, together (the fetch timeout).
    init(limit: Int, wait: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.limit = max(1, limit)
        self.wait = wait
        self.now = now
    }

    /// A slot now, or nil when `origin` is at its limit (or others already wait for it).
    func tryAcquire(_ origin: OriginKey) -> Slot? {
        let deadline = now().advanced(by: wait)
        let taken = table.withLock { table -> Bool in
            var entry = table[origin] ?? Origin()
            guard entry.running < limit, entry.waiters.isEmpty else { return false }
            entry.running += 1
            table[origin] = entry
            return true
        }
        return taken ? Slot(self, origin, deadline: deadline) : nil
    }

    /// Calls `grant` once with a slot — now, or when one frees — or with nil when the deadline
    /// passes first. `grant` runs on whichever thread frees the slot, outside the lock.
    func acquire(_ origin: OriginKey, _ grant: @escaping @Sendable (Slot?) -> Void) {
        if let slot = tryAcquire(origin) { return grant(slot) }
        let now = now()
        let deadline = now.advanced(by: wait)
        let (granted, expired) = table.withLock { table -> (Bool, [Waiter]) in
            var entry = table[origin] ?? Origin()
            let expired = Self.sweep(&entry, at: now)
            // Taken back in the meantime: the waiters ahead went first (or expired).
            if entry.running < limit && entry.waiters.isEmpty {
                entry.running += 1
                table[origin] = entry
                return (true, expired)
            }
            entry.waiters.append(Waiter(deadline: deadline, grant: grant))
            table[origin] = entry
            return (false, expired)
        }
        for waiter in expired { waiter.grant(nil) }
        if granted { grant(Slot(self, origin, deadline: deadline)) }
    }

    /// Fetches running and waiting per origin, for tests and metrics.
    func load(of origin: OriginKey) -> (running: Int, waiting: Int) {
        table.withLock { table in (table[origin]?.running ?? 0, table[origin]?.waiters.count ?? 0) }
    }

    /// Origins with an entry (running or waiting fetches).
    var originCount: Int { table.withLock { $0.count } }

    /// Fetches holding a slot and requests waiting for one, over all origins, and the origins.
    var totals: (running: Int, waiting: Int, origins: Int) {
        table.withLock { table in
            table.values.reduce((0, 0, table.count)) { ($0.0 + $1.running, $0.1 + $1.waiters.count, $0.2) }
        }
    }

    private func giveBack(_ origin: OriginKey) {
        let now = now()
        let (next, expired) = table.withLock { table -> (Waiter?, [Waiter]) in
            guard var entry = table[origin] else { return (nil, []) }
            entry.running -= 1
            let expired = Self.sweep(&entry, at: now)
            var next: Waiter? = nil
            if entry.running < limit, !entry.waiters.isEmpty {
                next = entry.waiters.removeFirst()
                entry.running += 1
            }
            table[origin] = entry.running == 0 && entry.waiters.isEmpty ? nil : entry
            return (next, expired)
        }
        for waiter in expired { waiter.grant(nil) }
        if let next { next.grant(Slot(self, origin, deadline: next.deadline)) }
    }

    /// Removes the waiters whose deadline has passed (in order: deadlines grow along the queue).
    private static func sweep(_ entry: inout Origin, at now: ContinuousClock.Instant) -> [Waiter] {
        let expired = entry.waiters.prefix { $0.deadline <= now }
        entry.waiters.removeFirst(expired.count)
        return Array(expired)
    }
}
