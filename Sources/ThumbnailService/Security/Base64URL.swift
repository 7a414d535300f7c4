import Foundation

/// base64url without padding (RFC 4648 §5), as signatures are written.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// nil unless `text` is the one spelling of its bytes: every character of the url-safe
    /// alphabet, and the bits the last character has to spare zero (RFC 4648 §3.5). A decoder that
    /// ignores them takes four spellings of one 32-byte signature, each verifying, and each another
    /// entry in a cache in front of thumbd.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard let bytes = decodeLeniently(text), encode(bytes).utf8.elementsEqual(text) else { return nil }
        return bytes
    }

    private static func decodeLeniently(_ text: some Collection<UInt8>) -> [UInt8]? {
        var standard: [UInt8] = []
        standard.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map { Array($0) }
    }
}
