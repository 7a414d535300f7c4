internal import CCrypto

/// HMAC-SHA256 from OpenSSL's libcrypto (Debian `libssl-dev`): signatures are checked with a real
/// crypto library, never a hand-written one. `HMAC()` and `CRYPTO_memcmp()` are plain C functions,
/// so no shim is needed.
public enum HMACSHA256 {
    /// Length of a code, in bytes.
    public static let byteCount = 32

    /// The authentication code of `message` under `key`.
    public static func code(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(message)
        let result = key.withUnsafeBytes { keyBytes in
            bytes.withUnsafeBytes { messageBytes in
                output.withUnsafeMutableBufferPointer { out in
                    HMAC(
                        EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
                        messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                        out.baseAddress, &length)
                }
            }
        }
        // HMAC only fails on allocation failure or an invalid digest: nothing to recover from.
        precondition(result != nil && Int(length) == byteCount, "HMAC-SHA256 failed")
        return Array(output.prefix(byteCount))
    }

    /// Whether `a` and `b` are equal, in time that depends only on their length (OpenSSL's
    /// `CRYPTO_memcmp`), so a forger learns nothing from how long a comparison took.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) }
        }
            == 0
    }
}
