internal import CCrypto

/// SHA-256 from OpenSSL's libcrypto: a digest whose collisions nobody can craft, for names that
/// untrusted input chooses (the disk cache names its files after the digest of a key made from a
/// request's URL). `EVP_Digest` is a plain C function: no shim.
public enum SHA256 {
    /// Length of a digest, in bytes.
    public static let byteCount = 32

    /// The digest of `bytes`, written to `output` (at least ``byteCount`` bytes).
    public static func digest(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= byteCount, "SHA256.digest: the output holds 32 bytes")
        var length: UInt32 = 0
        // An empty buffer may have no base address; libcrypto wants a pointer even for 0 bytes.
        let empty: UInt8 = 0
        let result = withUnsafePointer(to: empty) { fallback in
            EVP_Digest(
                bytes.baseAddress ?? UnsafeRawPointer(fallback), bytes.count,
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, EVP_sha256(), nil)
        }
        // EVP_Digest only fails on allocation failure: nothing to recover from.
        precondition(result == 1 && Int(length) == byteCount, "SHA-256 failed")
    }

    /// The digest of `bytes`.
    public static func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, count in
            digest(bytes, into: UnsafeMutableRawBufferPointer(buffer))
            count = byteCount
        }
    }
}
