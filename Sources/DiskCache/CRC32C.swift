/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slicing-by-8: the checksum of every
/// entry's header and body.
///
/// Why a CRC and not SHA-256 (libcrypto's): the checksum guards against torn writes and bit rot,
/// not against an attacker (whoever can write the folder can write a valid checksum too), and it
/// is taken on every disk hit. Both ran at 1.2 GB/s here, but SHA-256 only with the CPU's SHA
/// extensions (0.24 GB/s without them); a table CRC runs the same on every x86 and ARM server
/// (docs/architecture.md, "The disk tier's store"). CRC-32C is what ext4, iSCSI and SCTP use for
/// the same job and detects every burst error up to 32 bits. Public for the bench
/// (`thumbd-bench disk`), which times it against SHA-256.
public enum CRC32C {
    /// Eight tables of 256 entries, one after the other: table k gives the CRC of a byte followed
    /// by k zero bytes, so eight bytes are folded per step with eight lookups. Made once, never
    /// freed (8 KiB). Written once, before anyone can read it, then only read: safe to share.
    nonisolated(unsafe) private static let tables: UnsafePointer<UInt32> = {
        let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for table in 1..<8 {
                crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
                tables[table * 256 + byte] = crc
            }
        }
        return UnsafePointer(tables)
    }()

    /// The CRC of `bytes`; pass an earlier result as `crc` to continue it over more bytes
    /// (`checksum(b, continuing: checksum(a)) == checksum(a + b)`).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        guard var pointer = bytes.baseAddress else { return ~crc }
        var remaining = bytes.count
        let t = tables
        while remaining >= 8 {
            let word = UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
            let low = UInt32(truncatingIfNeeded: word) ^ crc
            let high = UInt32(truncatingIfNeeded: word >> 32)
            let first =
                t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
            let second =
                t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
            crc = first ^ second
            pointer += 8
            remaining -= 8
        }
        while remaining > 0 {
            crc = (crc >> 8) ^ t[Int((crc ^ UInt32(pointer.load(as: UInt8.self))) & 0xFF)]
            pointer += 1
            remaining -= 1
        }
        return ~crc
    }
}
