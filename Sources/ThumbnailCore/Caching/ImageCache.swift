internal import Primitives

/// One memory budget for originals, decoded copies and variants, evicted least-recently-used by
/// cost — and scan-resistant: a segmented LRU.
///
/// Every entry starts in *probation*. A variant asked for again moves to *protected*, which may
/// hold up to `protectedFraction` of the budget (beyond that its least recent entries fall back to
/// probation). Eviction takes probation's least recent entry first and touches protected only when
/// probation is empty. So a burst of entries used once — a crawler walking the catalogue, a page of
/// new uploads — only churns probation, and the thumbnails being served again and again stay.
/// Originals and decoded copies are never promoted (a hit moves them to probation's recent end):
/// they are large, and if they could enter protected, a burst of new sources asked for in a few
/// sizes each would push out the hot thumbnails made from them. (Caffeine's W-TinyLFU would also
/// admit by frequency; a segmented LRU keeps one lock and O(1) steps, and the bench's crawl replay
/// is what it has to hold against.)
///
/// Cost = payload bytes + a fixed per-entry overhead, and the sum never exceeds `budget`. An entry
/// costing more than `maxEntryCost` (a fixed fraction of the budget) is not stored: one huge
/// source must not flush everything else. One lock; the private helpers assume it is held.
/// (Not NSCache: it is not LRU and evicts when it likes.)
public final class ImageCache<Value: CacheCosted>: ImageCaching, Sendable {
    /// What an entry holds besides its value's payload: its node, its key (a box with the parsed
    /// source URL's strings) and its slots in the two indexes. Measured for variant keys: about
    /// 670 B each over 40,000 entries (RSS growth / count); rounded up for the payload's owner
    /// object. A host's prepared answer is charged by the value itself (`PreparedAnswer`).
    public static var perEntryOverhead: Int { 768 }
    public static var maxEntryFraction: Int { 8 }
    /// Share of the budget the protected segment may hold (Caffeine's default is 80 %).
    public static var protectedFraction: Double { 0.8 }
    /// From this many entries on, a hit on an entry among the newest quarter of its segment
    /// leaves it where it is (see `touch`); below it, every hit moves its entry.
    static var approximateRecencyFrom: Int { 64 }

    public let budget: Int
    public let maxEntryCost: Int
    public let protectedCapacity: Int

    /// An entry: the bookkeeping node (not generic, see `CacheNode`) with the value.
    private final class Node: CacheNode, @unchecked Sendable {
        // Replaced in place (same cost) when a variant's prepared answer is renewed.
        var value: Value

        init(key: CacheKey, value: Value, cost: Int) {
            self.value = value
            super.init(key: key, cost: cost)
        }
    }

    private typealias State = CacheState

    private let state: Locked<CacheState>
    /// Hits the host served from a reference it kept (`countHit`), by kind: added to `metrics`.
    private let keptHits = AtomicCounters(count: CacheKind.allCases.count)

    public init(budget: Int) {
        self.budget = max(0, budget)
        self.maxEntryCost = self.budget / Self.maxEntryFraction
        self.protectedCapacity = Int(Double(self.budget) * Self.protectedFraction)
        self.state = Locked(CacheState(metrics: CacheMetrics(budget: self.budget)))
    }

    // The recency lists link their nodes both ways with strong references, a cycle that only
    // unlinking breaks: a cache that goes away with entries in it (an app torn down, each test's)
    // would otherwise leak every entry and its image bytes (found by LeakSanitizer).
    deinit {
        state.withLock { state in
            for node in state.nodes.values {
                node.newer = nil
                node.older = nil
            }
        }
    }

    public static func cost(of value: Value) -> Int { value.payloadBytes + perEntryOverhead }

    public func value(forKey key: CacheKey) -> Value? {
        state.withLock { state in
            guard let node = state.nodes[key] else {
                state.metrics[key.kind].misses += 1
                return nil
            }
            state.metrics[key.kind].hits += 1
            touch(node, &state)
            return Self.value(of: node)
        }
    }

    public func valueCountingHit(forKey key: CacheKey) -> Value? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            state.metrics[key.kind].hits += 1
            touch(node, &state)
            return Self.value(of: node)
        }
    }

    public func countMiss(_ kind: CacheKind) {
        state.withLock { $0.metrics[kind].misses += 1 }
    }

    public func peek(_ key: CacheKey) -> Value? {
        state.withLock { state in state.nodes[key].map(Self.value(of:)) }
    }

    /// Stores `value` in probation, evicting to make room (probation's least recent first).
    /// Returns false (and stores nothing) when the entry alone is over `maxEntryCost`.
    @discardableResult
    public func insert(_ value: Value, forKey key: CacheKey) -> Bool {
        let cost = Self.cost(of: value)
        // Evicted values are released outside the lock: freeing large buffers is not free.
        var evicted: [CacheNode] = []
        let stored = state.withLock { state -> Bool in
            if let old = state.nodes.removeValue(forKey: key) {
                Self.forget(old, &state)
                evicted.append(old)
            }
            guard cost <= maxEntryCost else {
                state.metrics[key.kind].rejected += 1
                return false
            }
            while state.bytes + cost > budget, let victim = state.probation.oldest ?? state.protected.oldest {
                state.nodes.removeValue(forKey: victim.key)
                Self.forget(victim, &state)
                state.metrics[victim.key.kind].evictions += 1
                evicted.append(victim)
            }
            let node = Node(key: key, value: value, cost: cost)
            state.nodes[key] = node
            state.bySource[key.source, default: []].insert(key)
            Self.push(node, .probation, &state)
            state.bytes += cost
            state.metrics[key.kind].bytes += cost
            state.metrics[key.kind].entries += 1
            return true
        }
        withExtendedLifetime(evicted) {}
        return stored
    }

    public func removeValue(forKey key: CacheKey) {
        let removed = state.withLock { state -> CacheNode? in
            guard let node = state.nodes.removeValue(forKey: key) else { return nil }
            Self.forget(node, &state)
            return node
        }
        withExtendedLifetime(removed) {}
    }

    @discardableResult
    public func replaceValue(_ value: Value, forKey key: CacheKey, where isCurrent: (Value) -> Bool) -> Bool {
        let old = state.withLock { state -> Value? in
            guard let found = state.nodes[key], found.cost - found.grownBy == Self.cost(of: value) else { return nil }
            let node = unsafeDowncast(found, to: Node.self)
            guard isCurrent(node.value) else { return nil }
            defer { node.value = value }
            node.value.leftCache()
            // What the old value grew by goes with it: the new one starts at its stored cost.
            Self.recharge(node, by: -node.grownBy, &state)
            return node.value
        }
        // Released outside the lock, like everything the cache lets go of.
        return withExtendedLifetime(old) { old != nil }
    }

    @discardableResult
    public func charge(_ bytes: Int, growthOf key: CacheKey, where isCurrent: (Value) -> Bool) -> Bool {
        precondition(bytes >= 0, "an entry's growth is not negative")
        var evicted: [CacheNode] = []
        let charged = state.withLock { state -> Bool in
            guard let node = state.nodes[key], isCurrent(Self.value(of: node)) else { return false }
            Self.recharge(node, by: bytes, &state)
            while state.protected.bytes > protectedCapacity, let demoted = state.protected.oldest {
                Self.unlink(demoted, &state)
                Self.push(demoted, .probation, &state)
            }
            // Room is made as an insert makes it, least recent first: the grown entry itself may go.
            while state.bytes > budget, let victim = state.probation.oldest ?? state.protected.oldest {
                state.nodes.removeValue(forKey: victim.key)
                Self.forget(victim, &state)
                state.metrics[victim.key.kind].evictions += 1
                evicted.append(victim)
            }
            return state.nodes[key] === node
        }
        withExtendedLifetime(evicted) {}
        return charged
    }

    public func firstValue<T>(of source: SourceURL, _ pick: (Value) -> T?) -> T? {
        state.withLock { state in
            for key in state.bySource[source] ?? [] {
                if let node = state.nodes[key], let picked = pick(Self.value(of: node)) { return picked }
            }
            return nil
        }
    }

    @discardableResult
    public func removeAll(of source: SourceURL) -> CacheRemoval {
        let removed = state.withLock { state -> [CacheNode] in
            guard let keys = state.bySource[source] else { return [] }
            var nodes: [CacheNode] = []
            for key in keys {
                guard let node = state.nodes.removeValue(forKey: key) else { continue }
                Self.forget(node, &state)
                nodes.append(node)
            }
            return nodes
        }
        // Released outside the lock: freeing large buffers is not free.
        return withExtendedLifetime(removed) {
            CacheRemoval(entries: removed.count, bytes: removed.reduce(0) { $0 + $1.cost })
        }
    }

    public func countHit(_ kind: CacheKind) { keptHits.add(kind.index) }

    public var metrics: CacheMetrics {
        var metrics = state.withLock { $0.metrics }
        for kind in CacheKind.allCases { metrics[kind].hits += keptHits[kind.index] }
        return metrics
    }

    /// Whether `key` is in the protected segment (for tests of the policy).
    func isProtected(_ key: CacheKey) -> Bool {
        state.withLock { $0.nodes[key]?.segment == .protected }
    }

    /// Walks both lists and recomputes the sums: for tests of the accounting.
    public func auditedBytes() -> (listed: Int, counted: Int, nodes: Int) {
        state.withLock { state in
            var sum = 0
            var count = 0
            for list in [state.probation, state.protected] {
                var listed = 0
                var node = list.oldest
                while let current = node {
                    listed += current.cost
                    count += 1
                    node = current.newer
                }
                precondition(listed == list.bytes, "segment bytes out of step")
                sum += listed
            }
            precondition(state.protected.bytes <= protectedCapacity, "protected segment over its share")
            let indexed = state.bySource.values.reduce(0) { $0 + $1.count }
            precondition(indexed == state.nodes.count, "source index out of step")
            return (sum, state.bytes, count)
        }
    }

    /// Every node of this cache was made by `insert` as a `Node`: the downcast cannot fail.
    private static func value(of node: CacheNode) -> Value {
        unsafeDowncast(node, to: Node.self).value
    }

    // MARK: - The policy (the lock is held)

    /// A hit: a variant (or info document) in probation is promoted to protected (demoting protected's least recent
    /// entries past its share); anything else moves to the recent end of its own segment.
    private func touch(_ node: CacheNode, _ state: inout State) {
        // Info documents are small answers asked for again and again, as thumbnails are.
        let answers = node.key.kind == .variant || node.key.kind == .info
        let promote = node.segment == .probation && answers && node.cost <= protectedCapacity
        let target: CacheSegment = promote ? .protected : node.segment
        if node.segment == target {
            // Already the most recent of its segment: nothing to move (the common case of a hot entry).
            let newest = target == .probation ? state.probation.newest : state.protected.newest
            if newest === node { return }
            // Pushed within the last quarter of all pushes, so fewer than a quarter of the entries
            // are newer than it in its segment (only a push puts one in front): moving it would
            // change no eviction until three quarters of the cache had gone. Skipped, as memcached
            // skips re-bumping a recently bumped item — a hot thumbnail's hit then rewrites no
            // links (each a retain and a release, and cache lines other threads' hits read).
            if state.nodes.count >= Self.approximateRecencyFrom,
                state.pushes &- node.pushed < UInt64(state.nodes.count / 4)
            {
                return
            }
        }
        Self.unlink(node, &state)
        Self.push(node, target, &state)
        while state.protected.bytes > protectedCapacity, let demoted = state.protected.oldest {
            Self.unlink(demoted, &state)
            Self.push(demoted, .probation, &state)
        }
    }

    /// Unlinks a node already removed from `nodes` and takes it off the accounting.
    private static func forget(_ node: CacheNode, _ state: inout State) {
        value(of: node).leftCache()
        unlink(node, &state)
        let source = node.key.source
        state.bySource[source]?.remove(node.key)
        if state.bySource[source]?.isEmpty == true { state.bySource.removeValue(forKey: source) }
        state.bytes -= node.cost
        state.metrics[node.key.kind].bytes -= node.cost
        state.metrics[node.key.kind].entries -= 1
    }

    /// Changes a node's cost in place (its value grew, or the growth left with a replaced value):
    /// its segment's sum, the total and its kind's bytes follow.
    private static func recharge(_ node: CacheNode, by bytes: Int, _ state: inout State) {
        node.cost += bytes
        node.grownBy += bytes
        if node.segment == .probation { state.probation.bytes += bytes } else { state.protected.bytes += bytes }
        state.bytes += bytes
        state.metrics[node.key.kind].bytes += bytes
    }

    private static func unlink(_ node: CacheNode, _ state: inout State) {
        func apply(_ list: inout CacheList) {
            if let older = node.older { older.newer = node.newer } else { list.oldest = node.newer }
            if let newer = node.newer { newer.older = node.older } else { list.newest = node.older }
            list.bytes -= node.cost
        }
        if node.segment == .probation { apply(&state.probation) } else { apply(&state.protected) }
        node.newer = nil
        node.older = nil
    }

    private static func push(_ node: CacheNode, _ segment: CacheSegment, _ state: inout State) {
        func apply(_ list: inout CacheList) {
            node.older = list.newest
            node.newer = nil
            if let newest = list.newest { newest.newer = node } else { list.oldest = node }
            list.newest = node
            list.bytes += node.cost
        }
        node.segment = segment
        state.pushes &+= 1
        node.pushed = state.pushes
        if segment == .probation { apply(&state.probation) } else { apply(&state.protected) }
    }
}

/// Which part of the segmented LRU a node is in.
enum CacheSegment { case probation, protected }

/// The bookkeeping part of a cache entry: key, cost, segment and recency links. Not generic on
/// purpose: `ImageCache` is instantiated in another module (the service) where its generic code is
/// not specialised, and a dictionary or list of generic nodes then hashes and copies through
/// witness tables on every hit; with this base class the lookup and the list moves are concrete.
class CacheNode: @unchecked Sendable {
    let key: CacheKey
    /// The value's cost when stored plus `grownBy`.
    var cost: Int
    /// What the value grew by after it was stored (`charge(_:growthOf:where:)`).
    var grownBy = 0
    var segment = CacheSegment.probation
    /// `CacheState.pushes` when it was last put at the recent end of a segment.
    var pushed: UInt64 = 0
    var newer: CacheNode?
    // Both links are strong: a node is always unlinked before it is dropped, which breaks the cycle.
    var older: CacheNode?

    init(key: CacheKey, cost: Int) {
        self.key = key
        self.cost = cost
    }
}

/// One segment's recency list.
struct CacheList {
    /// Least recently used end; `newest` is the other.
    var oldest: CacheNode?
    var newest: CacheNode?
    var bytes = 0
}

/// Everything `ImageCache` keeps under its one lock.
struct CacheState: ~Copyable {
    var nodes: [CacheKey: CacheNode] = [:]
    var probation = CacheList()
    var protected = CacheList()
    /// Kept under the same lock as the entries: counting a hit costs no other lock.
    var metrics: CacheMetrics
    /// Resident cost of all kinds.
    var bytes = 0
    /// Pushes onto either segment's recent end so far (a clock for `CacheNode.pushed`).
    var pushes: UInt64 = 0
    /// Every key of a source, so a purge finds all its variants whatever their sizes. Its
    /// memory is part of the per-entry overhead (one key per entry).
    var bySource: [SourceURL: Set<CacheKey>] = [:]
}
