/// An IPv4 or IPv6 address, as bytes in network order.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses dotted-quad IPv4 (exactly four decimal parts) or IPv6 text (with `::` and an
    /// optional trailing dotted quad). Zone ids are refused.
    public init?(text: String) {
        if let v4 = Self.parseIPv4(Substring(text)) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            bytes = v6
        } else {
            return nil
        }
    }

    public var isIPv6: Bool { bytes.count == 16 }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = UInt8(part)
            else { return nil }
            out.append(value)
        }
        return out
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        guard text.contains(":"), !text.contains("%") else { return nil }
        var groups: [UInt16] = []
        var tail: [UInt8] = []
        var text = Substring(text)
        // A trailing dotted quad fills the last 32 bits.
        if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
            guard let v4 = parseIPv4(text[text.index(after: lastColon)...]) else { return nil }
            tail = v4
            text = text[...lastColon]
            if text.hasSuffix(":") && !text.hasSuffix("::") { text = text.dropLast() }
        }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func parseGroups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard !group.isEmpty, group.count <= 4, let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        let groupsNeeded = tail.isEmpty ? 8 : 6
        guard let head = parseGroups(halves[0]) else { return nil }
        if halves.count == 2 {
            guard let rest = parseGroups(halves[1]), head.count + rest.count < groupsNeeded else { return nil }
            groups = head + Array(repeating: 0, count: groupsNeeded - head.count - rest.count) + rest
        } else {
            guard head.count == groupsNeeded else { return nil }
            groups = head
        }
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } + tail
    }
}

extension Substring {
    fileprivate func components(separatedBy separator: String) -> [String] {
        var result: [String] = []
        var rest = self[...]
        while let range = rest.range(of: separator) {
            result.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        result.append(String(rest))
        return result
    }
}
