/// Byte counts as people write them: 1048576, 512K, 256M, 2G (binary units; a trailing "iB" or "B" is fine).
enum ByteCount {
    static func parse(_ text: String) -> Int? {
        var digits = text.uppercased()
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits.removeLast(suffix.count)
            break
        }
        var shift = 0
        if let last = digits.last, let index = ["K", "M", "G", "T"].firstIndex(of: String(last)) {
            shift = 10 * (index + 1)
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let value = Int(digits) else { return nil }
        let result = value.multipliedReportingOverflow(by: 1 << shift)
        return result.overflow ? nil : result.partialValue
    }

    static func format(_ value: Int) -> String {
        for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] where value >= 1 << shift && value % (1 << shift) == 0 {
            return "\(value >> shift)\(unit)"
        }
        return String(value)
    }
}
