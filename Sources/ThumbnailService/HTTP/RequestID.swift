import Synchronization

/// A request's id: the client's `X-Request-Id` when it is short and plain (so a trace crosses the
/// proxy), otherwise a per-process random prefix and a counter. Formatted only when needed: the
/// hot path writes it into the log line directly.
public struct RequestID: Sendable, CustomStringConvertible {
    let incoming: String?
    let prefix: String
    let number: UInt64

    public var description: String {
        if let incoming { return incoming }
        return LogLine.withScratch(capacity: 64) { line in
            append(to: &line)
            return line.text
        }
    }

    func append(to line: inout LogLine) {
        if let incoming {
            line.append(incoming)
            return
        }
        line.append(prefix)
        line.append(UInt8(ascii: "-"))
        line.appendHex(number)
    }
}

final class RequestIDs: Sendable {
    private let prefix: String
    private let counter = Atomic<UInt64>(0)

    init() {
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    func next(incoming: String?) -> RequestID {
        if let incoming, (1...64).contains(incoming.utf8.count),
            incoming.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x2E
                    || $0 == 0x5F
            })
        {
            return RequestID(incoming: incoming, prefix: prefix, number: 0)
        }
        return RequestID(incoming: nil, prefix: prefix, number: counter.add(1, ordering: .relaxed).newValue)
    }
}
