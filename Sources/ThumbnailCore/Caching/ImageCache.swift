import Synchronization

/// One memory budget for originals, decoded copies and variants: least-recently-used eviction by
/// cost.
///
/// Cost = payload bytes + a fixed per-entry overhead, and the sum never exceeds `budget`. An entry
/// costing more than `maxEntryCost` (a fixed fraction of the budget) is not stored: one huge
/// source must not flush everything else. One lock; the private helpers assume it is held.
/// (Not NSCache: it is not LRU and evicts when it likes.)
public final class ImageCache<Value: CacheCosted>: ImageCaching, Sendable {
    public static var perEntryOverhead: Int { 256 }
    public static var maxEntryFraction: Int { 8 }

    public let budget: Int
    public let maxEntryCost: Int

    private final class Node: @unchecked Sendable {
        let key: CacheKey
        let value: Value
        let cost: Int
        var newer: Node?
        // Both links are strong: a node is always unlinked before it is dropped, which breaks the cycle.
        var older: Node?

        init(key: CacheKey, value: Value, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    private struct State: ~Copyable {
        var nodes: [CacheKey: Node] = [:]
        /// Least recently used end; `newest` is the other.
        var oldest: Node?
        var newest: Node?
        /// Kept under the same lock as the entries: counting a hit costs no other lock.
        var metrics: CacheMetrics
        /// Resident cost of all kinds.
        var bytes = 0
        /// Every key of a source, so a purge finds all its variants whatever their sizes. Its
        /// memory is part of the per-entry overhead (one key per entry).
        var bySource: [SourceURL: Set<CacheKey>] = [:]
    }

    private let state: Mutex<State>

    public init(budget: Int) {
        self.budget = max(0, budget)
        self.maxEntryCost = self.budget / Self.maxEntryFraction
        self.state = Mutex(State(metrics: CacheMetrics(budget: self.budget)))
    }

    public static func cost(of value: Value) -> Int { value.payloadBytes + perEntryOverhead }

    public func value(forKey key: CacheKey) -> Value? {
        state.withLock { state in
            guard let node = state.nodes[key] else {
                state.metrics[key.kind].misses += 1
                return nil
            }
            state.metrics[key.kind].hits += 1
            if state.newest !== node {
                Self.unlink(node, &state)
                Self.pushNewest(node, &state)
            }
            return node.value
        }
    }

    public func peek(_ key: CacheKey) -> Value? {
        state.withLock { $0.nodes[key]?.value }
    }

    /// Stores `value`, evicting the least recently used entries to make room. Returns false
    /// (and stores nothing) when the entry alone is over `maxEntryCost`.
    @discardableResult
    public func insert(_ value: Value, forKey key: CacheKey) -> Bool {
        let cost = Self.cost(of: value)
        // Evicted values are released outside the lock: freeing large buffers is not free.
        var evicted: [Node] = []
        let stored = state.withLock { state -> Bool in
            if let old = state.nodes.removeValue(forKey: key) {
                Self.forget(old, &state)
                evicted.append(old)
            }
            guard cost <= maxEntryCost else {
                state.metrics[key.kind].rejected += 1
                return false
            }
            while state.bytes + cost > budget, let victim = state.oldest {
                state.nodes.removeValue(forKey: victim.key)
                Self.forget(victim, &state)
                state.metrics[victim.key.kind].evictions += 1
                evicted.append(victim)
            }
            let node = Node(key: key, value: value, cost: cost)
            state.nodes[key] = node
            state.bySource[key.source, default: []].insert(key)
            Self.pushNewest(node, &state)
            state.bytes += cost
            state.metrics[key.kind].bytes += cost
            state.metrics[key.kind].entries += 1
            return true
        }
        withExtendedLifetime(evicted) {}
        return stored
    }

    public func removeValue(forKey key: CacheKey) {
        let removed = state.withLock { state -> Node? in
            guard let node = state.nodes.removeValue(forKey: key) else { return nil }
            Self.forget(node, &state)
            return node
        }
        withExtendedLifetime(removed) {}
    }

    @discardableResult
    public func removeAll(of source: SourceURL) -> CacheRemoval {
        let removed = state.withLock { state -> [Node] in
            guard let keys = state.bySource[source] else { return [] }
            var nodes: [Node] = []
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

    public var metrics: CacheMetrics { state.withLock { $0.metrics } }

    /// Walks the list and recomputes the sum: for tests of the accounting.
    public func auditedBytes() -> (listed: Int, counted: Int, nodes: Int) {
        state.withLock { state in
            var sum = 0
            var count = 0
            var node = state.oldest
            while let current = node {
                sum += current.cost
                count += 1
                node = current.newer
            }
            let indexed = state.bySource.values.reduce(0) { $0 + $1.count }
            precondition(indexed == state.nodes.count, "source index out of step")
            return (sum, state.bytes, count)
        }
    }

    /// Unlinks a node already removed from `nodes` and takes it off the accounting.
    private static func forget(_ node: Node, _ state: inout State) {
        unlink(node, &state)
        let source = node.key.source
        state.bySource[source]?.remove(node.key)
        if state.bySource[source]?.isEmpty == true { state.bySource.removeValue(forKey: source) }
        state.bytes -= node.cost
        state.metrics[node.key.kind].bytes -= node.cost
        state.metrics[node.key.kind].entries -= 1
    }

    private static func unlink(_ node: Node, _ state: inout State) {
        if let older = node.older { older.newer = node.newer } else { state.oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { state.newest = node.older }
        node.newer = nil
        node.older = nil
    }

    private static func pushNewest(_ node: Node, _ state: inout State) {
        node.older = state.newest
        node.newer = nil
        if let newest = state.newest { newest.newer = node } else { state.oldest = node }
        state.newest = node
    }
}
