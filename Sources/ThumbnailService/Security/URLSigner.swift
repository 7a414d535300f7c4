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
