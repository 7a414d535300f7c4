import Foundation
import Synchronization

/// Request ids: the client's `X-Request-Id` when it is short and plain (so a trace crosses the
/// proxy), otherwise a per-process random prefix and a counter.
final class RequestIDs: Sendable {
    private let prefix: String
    private let counter = Atomic<UInt64>(0)

    init() {
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    func next(incoming: String?) -> String {
        if let incoming, (1...64).contains(incoming.utf8.count),
            incoming.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x2E
                    || $0 == 0x5F
            })
        {
            return incoming
        }
        let value = counter.add(1, ordering: .relaxed).newValue
        return prefix + "-" + String(value, radix: 16)
    }
}
