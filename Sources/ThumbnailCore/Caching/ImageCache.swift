import Synchronization

/// One memory budget for originals and variants: least-recently-used eviction by cost.
///
/// Cost = payload bytes + a fixed per-entry overhead, and the sum never exceeds `budget`. An entry
/// costing more than `maxEntryCost` (a fixed fraction of the budget) is not stored: one huge
/// source must not flush everything else. One lock; the private helpers assume it is held.
/// (Not NSCache: it is not LRU and evicts when it likes.)
public final class ImageCache: Sendable {
    public struct Statistics: Sendable, Equatable {
        public var bytes = 0
        public var count = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        public var rejected = 0
    }

    public static let perEntryOverhead = 256
    public static let maxEntryFraction = 8

    public let budget: Int
    public let maxEntryCost: Int

    private final class Node: @unchecked Sendable {
        let key: String
        let value: CachedImage
        let cost: Int
        /// Something derived from `value` that lives and dies with the entry (the HTTP layer keeps
        /// its ready-made response here), so it is never kept past eviction.
        var attachment: AnyObject?
        var newer: Node?
        // Both links are strong: a node is always unlinked before it is dropped, which breaks the cycle.
        var older: Node?

        init(key: String, value: CachedImage, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    private struct State: ~Copyable {
        var nodes: [String: Node] = [:]
        /// Least recently used end; `newest` is the other.
        var oldest: Node?
        var newest: Node?
        var stats = Statistics()
    }

    private let state = Mutex(State())

    public init(budget: Int) {
        self.budget = max(0, budget)
        self.maxEntryCost = self.budget / Self.maxEntryFraction
    }

    public static func cost(of value: CachedImage) -> Int { value.bytes.count + perEntryOverhead }

    /// The value, marked most recently used; counts a hit or a miss.
    public func value(forKey key: String) -> CachedImage? {
        lookup(key)?.value
    }

    /// Like `value(forKey:)`, with the entry's attachment (see `attach`).
    public func lookup(_ key: String) -> (value: CachedImage, attachment: AnyObject?)? {
        state.withLock { state in
            guard let node = state.nodes[key] else {
                state.stats.misses += 1
                return nil
            }
            state.stats.hits += 1
            if state.newest !== node {
                Self.unlink(node, &state)
                Self.pushNewest(node, &state)
            }
            return (node.value, node.attachment)
        }
    }

    /// Attaches `object` to the entry under `key` if it still holds the same bytes. The
    /// attachment is dropped with the entry; its memory is not counted (keep it small).
    public func attach(_ object: AnyObject, toKey key: String, ifBytes bytes: ImageBytes) {
        state.withLock { state in
            guard let node = state.nodes[key], node.value.bytes === bytes else { return }
            node.attachment = object
        }
    }

    /// Looks without counting or reordering.
    public func peek(_ key: String) -> CachedImage? {
        state.withLock { $0.nodes[key]?.value }
    }

    /// Stores `value`, evicting the least recently used entries to make room. Returns false
    /// (and stores nothing) when the entry alone is over `maxEntryCost`.
    @discardableResult
    public func insert(_ value: CachedImage, forKey key: String) -> Bool {
        let cost = Self.cost(of: value)
        // Evicted values are released outside the lock: freeing large buffers is not free.
        var evicted: [Node] = []
        let stored = state.withLock { state -> Bool in
            if let old = state.nodes.removeValue(forKey: key) {
                Self.unlink(old, &state)
                state.stats.bytes -= old.cost
                state.stats.count -= 1
                evicted.append(old)
            }
            guard cost <= maxEntryCost else {
                state.stats.rejected += 1
                return false
            }
            while state.stats.bytes + cost > budget, let victim = state.oldest {
                state.nodes.removeValue(forKey: victim.key)
                Self.unlink(victim, &state)
                state.stats.bytes -= victim.cost
                state.stats.count -= 1
                state.stats.evictions += 1
                evicted.append(victim)
            }
            let node = Node(key: key, value: value, cost: cost)
            state.nodes[key] = node
            Self.pushNewest(node, &state)
            state.stats.bytes += cost
            state.stats.count += 1
            return true
        }
        withExtendedLifetime(evicted) {}
        return stored
    }

    public func removeValue(forKey key: String) {
        let removed = state.withLock { state -> Node? in
            guard let node = state.nodes.removeValue(forKey: key) else { return nil }
            Self.unlink(node, &state)
            state.stats.bytes -= node.cost
            state.stats.count -= 1
            return node
        }
        withExtendedLifetime(removed) {}
    }

    public var statistics: Statistics { state.withLock { $0.stats } }

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
            return (sum, state.stats.bytes, count)
        }
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
