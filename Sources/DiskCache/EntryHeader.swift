/// The header at the start of every entry file, and its byte layout (format 1).
///
/// ```
/// offset size  field (integers little-endian)
///  0      4    magic "thdc"
///  4      2    format version (1)
///  6      2    fixed part's size (64): a later version may grow it, older readers refuse it
///  8      4    header size: fixed part + the variable fields below
/// 12      4    CRC-32C of the header's bytes with this field read as 0
/// 16      8    body size
/// 24      4    CRC-32C of the body
/// 28      4    reserved (0)
/// 32      8    expires: wall-clock seconds since 1970 UTC (EntryMeta.expires)
/// 40      8    stored at: wall-clock seconds when `put` wrote it (kept by an update)
/// 48      2×6  lengths of: key, source key, content type, ETag, Last-Modified, extra
///              (0xFFFF for an absent ETag or Last-Modified)
/// 60      4    reserved (0)
/// 64      …    key, source key, content type, ETag, Last-Modified, extra (UTF-8 / bytes)
/// header size  the body
/// ```
///
/// The header has its own checksum so that an update can replace it without reading the body,
/// and so that the key is trusted before anything else is. The file's size must be exactly header
/// size + body size: a torn write or a truncated file never passes.
struct EntryHeader: Equatable {
    static let magic: [UInt8] = Array("thdc".utf8)
    static let version: UInt16 = 1
    static let fixedBytes = 64
    private static let absent: UInt16 = 0xFFFF

    var key: String
    var sourceKey: String
    var meta: EntryMeta
    var storedAt: Int64
    var bodyBytes: Int
    var bodyChecksum: UInt32

    /// Why bytes are not a header (or the file not an entry): each is a corrupt file, dropped.
    enum Fault: Error, Equatable {
        case tooShort, badMagic, badVersion, badLengths, badChecksum
    }

    /// Whether every field is within `EntryMeta.Limits`.
    var isWithinLimits: Bool {
        typealias Limits = EntryMeta.Limits
        return key.utf8.count <= Limits.keyBytes && sourceKey.utf8.count <= Limits.keyBytes
            && meta.contentType.utf8.count <= Limits.contentTypeBytes
            && (meta.etag?.utf8.count ?? 0) <= Limits.validatorBytes
            && (meta.lastModified?.utf8.count ?? 0) <= Limits.validatorBytes && meta.extra.count <= Limits.extraBytes
    }

    /// The encoded header (call only when `isWithinLimits`).
    func encoded() -> [UInt8] {
        let fields: [[UInt8]?] = [
            Array(key.utf8), Array(sourceKey.utf8), Array(meta.contentType.utf8), meta.etag.map { Array($0.utf8) },
            meta.lastModified.map { Array($0.utf8) }, meta.extra,
        ]
        let size = Self.fixedBytes + fields.reduce(0) { $0 + ($1?.count ?? 0) }
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { out in
            Self.magic.withUnsafeBytes { out.copyMemory(from: $0) }
            out.storeBytes(of: Self.version.littleEndian, toByteOffset: 4, as: UInt16.self)
            out.storeBytes(of: UInt16(Self.fixedBytes).littleEndian, toByteOffset: 6, as: UInt16.self)
            out.storeBytes(of: UInt32(size).littleEndian, toByteOffset: 8, as: UInt32.self)
            out.storeBytes(of: UInt64(bodyBytes).littleEndian, toByteOffset: 16, as: UInt64.self)
            out.storeBytes(of: bodyChecksum.littleEndian, toByteOffset: 24, as: UInt32.self)
            out.storeBytes(of: meta.expires.littleEndian, toByteOffset: 32, as: Int64.self)
            out.storeBytes(of: storedAt.littleEndian, toByteOffset: 40, as: Int64.self)
            var offset = Self.fixedBytes
            for (index, field) in fields.enumerated() {
                let length = field.map { UInt16($0.count) } ?? Self.absent
                out.storeBytes(of: length.littleEndian, toByteOffset: 48 + 2 * index, as: UInt16.self)
                guard let field, !field.isEmpty else { continue }
                field.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[offset...]).copyMemory(from: $0) }
                offset += field.count
            }
            let checksum = CRC32C.checksum(UnsafeRawBufferPointer(out))
            out.storeBytes(of: checksum.littleEndian, toByteOffset: 12, as: UInt32.self)
        }
        return bytes
    }

    /// `decode` for bytes in an array.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(Fault) -> (header: EntryHeader, size: Int) {
        let result = bytes.withUnsafeBytes { buffer -> Result<(header: EntryHeader, size: Int), Fault> in
            do throws(Fault) { return .success(try decode(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// `size(fromFixedPart:)` for bytes in an array.
    static func size(fromFixedPart bytes: ArraySlice<UInt8>) throws(Fault) -> Int {
        let result = bytes.withUnsafeBytes { buffer -> Result<Int, Fault> in
            do throws(Fault) { return .success(try size(fromFixedPart: buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The header's size as its fixed part says, checked against the limits: how many bytes to read
    /// before `decode`. `prefix` holds at least the fixed part.
    static func size(fromFixedPart prefix: UnsafeRawBufferPointer) throws(Fault) -> Int {
        guard prefix.count >= fixedBytes else { throw .tooShort }
        guard prefix.prefix(4).elementsEqual(magic) else { throw .badMagic }
        guard prefix.loadUnaligned(fromByteOffset: 4, as: UInt16.self).littleEndian == version,
            prefix.loadUnaligned(fromByteOffset: 6, as: UInt16.self).littleEndian == UInt16(fixedBytes)
        else { throw .badVersion }
        let size = Int(prefix.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian)
        guard size >= fixedBytes, size <= EntryMeta.Limits.maxHeaderBytes else { throw .badLengths }
        return size
    }

    /// Decodes and checks a whole header (`bytes` may go on with the body).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Fault) -> (header: EntryHeader, size: Int) {
        let size = try size(fromFixedPart: bytes)
        guard bytes.count >= size else { throw .tooShort }
        let header = UnsafeRawBufferPointer(rebasing: bytes[..<size])
        let stored = header.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian
        // The checksum was taken with its own field at 0: three runs, no copy.
        var checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[..<12]))
        checksum = withUnsafeBytes(of: UInt32(0)) { CRC32C.checksum($0, continuing: checksum) }
        checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[16...]), continuing: checksum)
        guard checksum == stored else { throw .badChecksum }

        var fields: [UnsafeRawBufferPointer?] = []
        var offset = fixedBytes
        for index in 0..<6 {
            let length = header.loadUnaligned(fromByteOffset: 48 + 2 * index, as: UInt16.self).littleEndian
            if length == absent {
                // Only the validators may be absent.
                guard index == 3 || index == 4 else { throw .badLengths }
                fields.append(nil)
                continue
            }
            guard offset + Int(length) <= size else { throw .badLengths }
            fields.append(UnsafeRawBufferPointer(rebasing: header[offset..<(offset + Int(length))]))
            offset += Int(length)
        }
        guard offset == size else { throw .badLengths }
        let bodyBytes = header.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        guard bodyBytes <= UInt64(Int.max - size) else { throw .badLengths }
        func text(_ index: Int) -> String? { fields[index].map { String(decoding: $0, as: UTF8.self) } }
        let meta = EntryMeta(
            contentType: text(2) ?? "", etag: text(3), lastModified: text(4),
            expires: header.loadUnaligned(fromByteOffset: 32, as: Int64.self).littleEndian,
            extra: fields[5].map { [UInt8]($0) } ?? [])
        let decoded = EntryHeader(
            key: text(0) ?? "", sourceKey: text(1) ?? "", meta: meta,
            storedAt: header.loadUnaligned(fromByteOffset: 40, as: Int64.self).littleEndian,
            bodyBytes: Int(bodyBytes),
            bodyChecksum: header.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian)
        return (decoded, size)
    }
}
