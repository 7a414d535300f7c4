extension Fixtures {
    /// A complete gzip stream holding `content` (one stored deflate block), then `junk`. libvips
    /// 8.14's SVG sniffer inflates anything that starts like gzip and loops for ever once the
    /// stream has ended with input left over: this is the under-100-byte source that held a
    /// worker at 100 % CPU.
    public static func gzipThenJunk(
        _ content: [UInt8] = Array("hello".utf8), junk: [UInt8] = Array("and then some junk after the stream".utf8)
    ) -> [UInt8] {
        func littleEndian(_ value: UInt32, bytes: Int) -> [UInt8] {
            (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        precondition(content.count < 65_536, "one stored block holds at most 65,535 bytes")
        let length = UInt32(content.count)
        // ID1 ID2, CM=deflate, no flags, MTIME 0, XFL 0, OS unknown.
        let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        // BFINAL=1, BTYPE=00 (stored), then LEN and its one's complement NLEN.
        let block = [0x01] + littleEndian(length, bytes: 2) + littleEndian(~length, bytes: 2) + content
        let trailer = littleEndian(crc32(content), bytes: 4) + littleEndian(length, bytes: 4)
        return header + block + trailer + junk
    }
}
