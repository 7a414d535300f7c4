#if canImport(Glibc)
    import Glibc
#endif

/// One log line formatted in scratch memory the caller owns (a stack allocation on the hot path):
/// plain stores and `memcpy`, none of an array's uniqueness and capacity checks per byte, and the
/// shared log buffer's lock is then held for one copy of the finished line. Bounded: what does not
/// fit is cut off, and the line still ends with its newline.
struct LogLine: ~Copyable {
    private let base: UnsafeMutablePointer<UInt8>
    /// Room for content; one byte more is kept for the final newline.
    private let limit: Int
    private(set) var count = 0

    /// Formats into `scratch` (at least 2 bytes).
    init(_ scratch: UnsafeMutableBufferPointer<UInt8>) {
        precondition(scratch.count >= 2)
        base = scratch.baseAddress!
        limit = scratch.count - 1
    }

    /// Runs `body` with a line on `capacity` bytes of stack memory.
    static func withScratch<R>(capacity: Int, _ body: (inout LogLine) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var line = LogLine(scratch)
            return body(&line)
        }
    }

    mutating func append(_ byte: UInt8) {
        guard count < limit else { return }
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let taken = min(bytes.count, limit - count)
        guard taken > 0, let source = bytes.baseAddress else { return }
        (base + count).update(from: source, count: taken)
        count += taken
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    mutating func append(_ text: String) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { append($0) }
        if done == nil {
            for byte in text.utf8 { append(byte) }
        }
    }

    /// Appends `text` as a JSON string (quotes, backslashes and control characters escaped), which
    /// is also how a logfmt value that may hold spaces is quoted. Written straight into the line, no
    /// intermediate string; whole characters only, and always closed: it stops early rather than
    /// leave less than `reserving` bytes after its closing quote (room for what must end the line,
    /// such as a JSON object's `}`), so a long text is cut, never the line's syntax.
    mutating func appendQuoted(_ text: String, reserving: Int = 0) {
        // The closing quote and the reserve are always kept free.
        let end = limit - 1 - reserving
        guard count < end else { return }
        append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let escaped: StaticString?
            switch value {
            case 0x22: escaped = "\\\""
            case 0x5C: escaped = "\\\\"
            case 0x0A: escaped = "\\n"
            case 0x0D: escaped = "\\r"
            case 0x09: escaped = "\\t"
            default: escaped = nil
            }
            if let escaped {
                guard count + escaped.utf8CodeUnitCount <= end else { break }
                append(escaped)
            } else if value < 0x20 {
                guard count + 6 <= end else { break }
                append("\\u00")
                append(Self.hexDigit(value >> 4))
                append(Self.hexDigit(value & 0xF))
            } else {
                let width = value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x1_0000 ? 3 : 4
                guard count + width <= end else { break }
                for byte in UTF8.encode(scalar)! { append(byte) }
            }
        }
        append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt32) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + UInt8(nibble) : UInt8(ascii: "a") + UInt8(nibble - 10)
    }

    /// Appends `value` in decimal, zero-padded to `width` digits.
    mutating func appendDecimal(_ value: UInt64, width: Int = 1) {
        // Digits from the least significant end of a 20-byte scratch (UInt64.max has 20).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            for _ in (20 - start)..<max(width, 20 - start) { append(UInt8(ascii: "0")) }
            append(UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Appends `value` in lower-case hexadecimal.
    mutating func appendHex(_ value: UInt64) {
        var shift = 60
        while shift > 0 && (value >> UInt64(shift)) & 0xF == 0 { shift -= 4 }
        while shift >= 0 {
            let nibble = UInt8((value >> UInt64(shift)) & 0xF)
            append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
            shift -= 4
        }
    }

    /// Ends the line with its newline (always room for it) and returns its bytes, valid while the
    /// scratch memory is.
    mutating func finished() -> UnsafeBufferPointer<UInt8> {
        base[count] = UInt8(ascii: "\n")
        return UnsafeBufferPointer(start: base, count: count + 1)
    }

    /// The bytes so far, as text.
    var text: String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
