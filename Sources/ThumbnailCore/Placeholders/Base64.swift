/// Standard base64 (RFC 4648 §4: `+` and `/`, padded with `=`), as ThumbHash's reference code
/// writes its hashes and as `data:` URIs carry bytes. Core has no Foundation; the service's
/// `Base64URL` is the other alphabet, for signatures.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let left = bytes.count - index
            let first = UInt32(bytes[index]) << 16
            let second: UInt32 = left > 1 ? UInt32(bytes[index + 1]) << 8 : 0
            let third: UInt32 = left > 2 ? UInt32(bytes[index + 2]) : 0
            let group = first | second | third
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(left > 1 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            out.append(left > 2 ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }
}
