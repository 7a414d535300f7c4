import TestSupport
import Testing

@testable import DiskCache

/// The on-disk format's pieces: the checksum, the header and the file names.
@Suite struct EntryFormatTests {
    /// The check value of the CRC-32C catalogue and RFC 3720's (iSCSI) test patterns.
    @Test func crc32cMatchesTheReferenceValues() {
        func crc(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { CRC32C.checksum($0) } }
        #expect(crc(Array("123456789".utf8)) == 0xE306_9283)
        #expect(crc([]) == 0)
        #expect(crc([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(crc([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(crc((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(crc((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    /// Continuing a CRC over a second piece gives the CRC of both, at every split (the 8-byte
    /// steps and the tail).
    @Test func crc32cContinues() {
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let whole = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        for split in 0...bytes.count {
            let joined = bytes.withUnsafeBytes { buffer in
                CRC32C.checksum(
                    UnsafeRawBufferPointer(rebasing: buffer[split...]),
                    continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[..<split])))
            }
            #expect(joined == whole)
        }
    }

    @Test func aHeaderRoundTrips() throws {
        let header = EntryHeader(
            key: "variant https://example.com/a.jpg w=300", sourceKey: "https://example.com/a.jpg",
            meta: EntryMeta(contentType: "image/avif", etag: "W/\"x\"", lastModified: nil, expires: -1, extra: [9, 8]),
            storedAt: 1_750_000_000, bodyBytes: 12345, bodyChecksum: 0xDEAD_BEEF)
        let bytes = header.encoded()
        let decoded = try bytes.withUnsafeBytes { try EntryHeader.decode($0) }
        #expect(decoded.header == header)
        #expect(decoded.size == bytes.count)
        #expect(try bytes.withUnsafeBytes { try EntryHeader.size(fromFixedPart: $0) } == bytes.count)
        // Every single-bit change of the header is caught.
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x04
            #expect(throws: EntryHeader.Fault.self) { try changed.withUnsafeBytes { try EntryHeader.decode($0) } }
        }
        #expect(throws: EntryHeader.Fault.tooShort) {
            try bytes.dropLast().withUnsafeBytes { try EntryHeader.decode($0) }
        }
    }

    @Test func namesCarryBothDigests() {
        let name = EntryName(key: NameDigest(of: "key"), source: NameDigest(of: "source"))
        let text = name.fileName
        #expect(text.utf8.count == EntryName.length)
        #expect(text.hasSuffix(".d1"))
        // The first 16 bytes of SHA-256("key") in hexadecimal.
        #expect(text.hasPrefix("2c70e12b7a0646f92279f427c7b38e73"))
        let parsed = Array(text.utf8).withUnsafeBufferPointer { EntryName.classify($0) }
        #expect(parsed == .entry(name))
        func kind(_ text: String) -> EntryName.Kind {
            Array(text.utf8).withUnsafeBufferPointer { EntryName.classify($0) }
        }
        #expect(kind(".tmp-12") == .temporary)
        #expect(kind(".lock") == .foreign)
        #expect(kind(String(text.dropLast()) + "2") == .otherVersion)
        #expect(kind(text.uppercased()) == .foreign)
        #expect(kind(String(text.dropFirst())) == .foreign)
    }
}
