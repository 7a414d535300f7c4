/// Judges the first bytes of a connection — as much of its first request head as has arrived —
/// before libmicrohttpd reads them, and holds the syntax rules the access handler applies to every
/// later request.
///
/// Why look before libmicrohttpd does: 0.9.75 skips a line that starts with a NUL byte as if it
/// were empty and then waits for a request line that never comes (a connection sending
/// `\0\1GARBAGE / HTTP/9.9` was held until the head deadline), closes a line without a space
/// without a word, and answers a bad version (400/505), an overlong line (414) or an oversized head
/// (431) with its own HTML page without a Content-Type. None of that reaches a callback, so it
/// cannot be answered any other way.
///
/// The rules are RFC 9112's, a little stricter than libmicrohttpd's (one space between the parts;
/// no control bytes anywhere in the head; no bytes outside visible ASCII in the target); they never
/// refuse what libmicrohttpd would serve correctly, except what RFC 9112 says to refuse.
enum RequestHeadCheck {
    enum Verdict: Equatable {
        /// Refuse with this answer; `headOnly` when the request line says HEAD (no body then).
        case refuse(HTTPRefusal, headOnly: Bool)
        /// The whole head is here and acceptable.
        case acceptable
        /// Acceptable as far as it goes, but the head has not ended yet: libmicrohttpd reads on.
        case incomplete
    }

    /// A method longer than any registered one (the longest, `UPDATEREDIRECTREF`, has 17 bytes)
    /// by a wide margin is not a method.
    static let maxMethodBytes = 64

    /// RFC 9110 `tchar`: what a method or a field name may be made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Visible ASCII: what a request target may contain as sent (anything else must be
    /// percent-encoded).
    static func isTargetByte(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

    /// A method as libmicrohttpd hands it over: 1 to ``maxMethodBytes`` token bytes.
    static func isMethod(_ method: some Collection<UInt8>) -> Bool {
        !method.isEmpty && method.count <= maxMethodBytes && method.allSatisfy(isTokenByte)
    }

    /// A field name: a token.
    static func isFieldName(_ name: some Collection<UInt8>) -> Bool {
        !name.isEmpty && name.allSatisfy(isTokenByte)
    }

    /// A request target as sent: not empty, visible ASCII only.
    static func isTarget(_ target: some Collection<UInt8>) -> Bool {
        // Checked on every request: over contiguous bytes when the collection has them (a native
        // String's UTF-8 view does), not through the generic iterator.
        if let verdict = target.withContiguousStorageIfAvailable({ bytes in
            !bytes.isEmpty && bytes.allSatisfy(isTargetByte)
        }) {
            return verdict
        }
        return !target.isEmpty && target.allSatisfy(isTargetByte)
    }

    static func check(_ bytes: UnsafeRawBufferPointer, limits: HeadLimits) -> Verdict {
        var reader = Reader(bytes: bytes)
        // RFC 9112 §2.2: ignore empty lines before the request line (libmicrohttpd does too).
        while let byte = reader.peek(), byte == 13 || byte == 10 { reader.skip() }
        let start = reader.position
        guard reader.peek() != nil else { return .incomplete }
        let headOnly = reader.starts(with: "HEAD ")

        func refuse(_ refusal: HTTPRefusal) -> Verdict { .refuse(refusal, headOnly: headOnly) }

        // method SP
        while let byte = reader.peek(), byte != UInt8(ascii: " ") {
            guard isTokenByte(byte), reader.position - start < maxMethodBytes else { return refuse(.malformed) }
            reader.skip()
        }
        guard reader.peek() != nil else { return .incomplete }
        guard reader.position > start else { return refuse(.malformed) }
        reader.skip()

        // request-target SP
        let targetStart = reader.position
        while let byte = reader.peek(), byte != UInt8(ascii: " ") {
            guard isTargetByte(byte) else { return refuse(.malformed) }
            guard reader.position - targetStart < limits.maxTargetBytes else { return refuse(.targetTooLong) }
            reader.skip()
        }
        guard reader.peek() != nil else { return .incomplete }
        guard reader.position > targetStart else { return refuse(.malformed) }
        let arguments = Self.argumentCount(UnsafeRawBufferPointer(rebasing: bytes[targetStart..<reader.position]))
        reader.skip()

        // HTTP-version: "HTTP/" DIGIT "." DIGIT, then CRLF (or a bare LF, which RFC 9112 allows).
        let versionStart = reader.position
        for expected in "HTTP/0.0".utf8 {
            guard let byte = reader.peek() else { return .incomplete }
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard expected == UInt8(ascii: "0") ? isDigit : byte == expected else { return refuse(.malformed) }
            reader.skip()
        }
        let major = bytes[versionStart + 5]
        switch reader.endOfLine() {
        case .malformed: return refuse(.malformed)
        case .incomplete: return .incomplete
        case .ended: break
        }
        guard major == UInt8(ascii: "1") else { return refuse(.versionNotSupported) }

        // Header lines, up to the blank line.
        var fields = arguments
        var framing = BodyFraming()
        while true {
            guard reader.position - start <= limits.maxHeadBytes else { return refuse(.headTooLarge) }
            guard let lineEnd = reader.nextLineFeed() else {
                return bytes.count - start > limits.maxHeadBytes ? refuse(.headTooLarge) : .incomplete
            }
            var line = UnsafeRawBufferPointer(rebasing: bytes[reader.position..<lineEnd])
            if line.last == 13 { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            reader.move(to: lineEnd + 1)
            if line.isEmpty {
                guard reader.position - start <= limits.maxHeadBytes else { return refuse(.headTooLarge) }
                return framing.isAmbiguous ? refuse(.ambiguousFraming) : .acceptable
            }
            // No control bytes in a field line (NUL would cut it short in libmicrohttpd's C strings).
            guard line.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else { return refuse(.malformed) }
            // A continuation line (obs-fold) is left to libmicrohttpd, which joins it to the previous one.
            if line.first == UInt8(ascii: " ") || line.first == 9 { continue }
            // field-name ":" value, the name a token: RFC 9112 §5.1 wants a 400 for whitespace
            // before the colon (a proxy and this server could read different fields otherwise).
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), isFieldName(line[..<colon]) else {
                return refuse(.malformed)
            }
            framing.add(name: line[..<colon], value: line[(colon + 1)...])
            fields += 1
            guard fields <= limits.maxFields else { return refuse(.headTooLarge) }
        }
    }

    /// Query arguments as libmicrohttpd counts them: non-empty pieces between `&` after the `?`.
    static func argumentCount(_ target: UnsafeRawBufferPointer) -> Int {
        guard let mark = target.firstIndex(of: UInt8(ascii: "?")) else { return 0 }
        // Counted in one pass (this runs for every new connection): a piece starts at a byte that
        // is not `&` right after the `?` or an `&`.
        var count = 0
        var atStart = true
        for byte in target[(mark + 1)...] {
            if byte == UInt8(ascii: "&") {
                atStart = true
            } else if atStart {
                count += 1
                atStart = false
            }
        }
        return count
    }
}

/// A cursor over the peeked bytes.
private struct Reader {
    enum LineEnd { case ended, incomplete, malformed }

    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skip() { position += 1 }

    mutating func move(to index: Int) { position = index }

    func starts(with text: String) -> Bool {
        UnsafeRawBufferPointer(rebasing: bytes[position...]).starts(with: text.utf8)
    }

    /// Consumes CRLF or LF at the cursor.
    mutating func endOfLine() -> LineEnd {
        switch peek() {
        case nil: return .incomplete
        case 10:
            skip()
        case 13:
            guard position + 1 < bytes.count else { return .incomplete }
            guard bytes[position + 1] == 10 else { return .malformed }
            position += 2
        default: return .malformed
        }
        return .ended
    }

    func nextLineFeed() -> Int? {
        UnsafeRawBufferPointer(rebasing: bytes[position...]).firstIndex(of: 10).map { $0 + position }
    }
}
