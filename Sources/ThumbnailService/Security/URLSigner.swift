import Crypto
import Foundation

/// Signed URLs: `sig` is the last query parameter, the base64url (no padding) HMAC-SHA256 of the
/// request target's path and query as sent, up to but not including `&sig=`. Any of the keys is
/// accepted, so keys rotate without downtime (add the new one, move the signers, drop the old).
struct URLSigner: Sendable {
    /// Each at least `minimumKeyBytes`.
    let keys: [[UInt8]]

    static let minimumKeyBytes = 32
    static let marker = "&sig="

    /// `target` with its signature appended (what `thumbd sign` prints).
    static func sign(_ target: String, key: [UInt8]) -> String {
        target + marker + Base64URL.encode(HMACSHA256.code(key: key, message: Array(target.utf8)))
    }

    /// Whether `target` ends in a valid signature under any key. Says nothing about which part was
    /// wrong; every key is tried, each comparison in constant time.
    func isValid(_ target: String) -> Bool {
        let bytes = Array(target.utf8)
        let marker = Array(Self.marker.utf8)
        guard let start = Self.lastIndex(of: marker, in: bytes) else { return false }
        let value = bytes[(start + marker.count)...]
        guard value.count == 43, let mac = Base64URL.decode(value), mac.count == HMACSHA256.byteCount else {
            return false
        }
        let message = bytes[..<start]
        var valid = false
        for key in keys where HMACSHA256.constantTimeEquals(HMACSHA256.code(key: key, message: message), mac) {
            valid = true
        }
        return valid
    }

    private static func lastIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.count - needle.count
        while index >= 0 {
            if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
                return index
            }
            index -= 1
        }
        return nil
    }
}

/// base64url without padding (RFC 4648 §5), as signatures are written.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// nil unless every character is of the url-safe alphabet.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
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

/// Hex keys as the settings take them.
enum HexKey {
    static func parse(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
