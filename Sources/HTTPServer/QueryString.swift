/// `application/x-www-form-urlencoded` query parsing, as libmicrohttpd does it: arguments split on
/// `&` (empty ones skipped), name and value split on the first `=`, `+` is a space, `%XX` is a
/// byte (a malformed escape is kept as written), bytes decoded as UTF-8 (invalid ones replaced).
enum QueryString {
    static func parse(_ target: String) -> [(name: String, value: String?)] {
        let bytes = Array(target.utf8)
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        var arguments: [(name: String, value: String?)] = []
        for argument in bytes[(mark + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = argument.firstIndex(of: UInt8(ascii: "=")) {
                arguments.append((decode(argument[..<equals]), decode(argument[(equals + 1)...])))
            } else {
                arguments.append((decode(argument), nil))
            }
        }
        return arguments
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), let high = hex(bytes[safe: index + 1]),
                let low = hex(bytes[safe: index + 2])
            {
                out.append(high << 4 | low)
                index += 3
                continue
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hex(_ byte: UInt8?) -> UInt8? {
        guard let byte else { return nil }
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension ArraySlice {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
