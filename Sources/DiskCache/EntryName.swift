internal import Crypto

/// The first 128 bits of the SHA-256 of a key or a source key: what the index is keyed by and what
/// names a file. SHA-256 because the keys come from request URLs: with a fast non-cryptographic
/// hash a client could craft a URL whose entry takes the file of a popular one. 128 bits make an
/// accidental collision among a few million entries about 1 in 10^25; `get` compares the full key
/// in the header anyway.
struct NameDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(of text: String) {
        var text = text
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        text.withUTF8 { bytes in
            withUnsafeMutableBytes(of: &digest) { SHA256.digest(UnsafeRawBufferPointer(bytes), into: $0) }
        }
        self.init(high: UInt64(bigEndian: digest.0), low: UInt64(bigEndian: digest.1))
    }
}

/// An entry's file name: the key's digest and its source key's digest in hexadecimal, then the
/// format version, `<32 hex key><32 hex source>.d1`. The source is in the name so that the
/// start-up index knows every entry's source without opening a file, and a purge by source finds
/// entries written before the restart.
struct EntryName: Hashable, Sendable {
    let key: NameDigest
    let source: NameDigest

    static let suffix = ".d\(EntryHeader.version)"
    /// Characters in a name: 64 hex digits and the suffix.
    static let length = 64 + suffix.utf8.count

    var fileName: String {
        String(unsafeUninitializedCapacity: Self.length) { buffer in
            let digits = Array("0123456789abcdef".utf8)
            var index = 0
            for word in [key.high, key.low, source.high, source.low] {
                for shift in stride(from: 60, through: 0, by: -4) {
                    buffer[index] = digits[Int((word >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            for byte in Self.suffix.utf8 {
                buffer[index] = byte
                index += 1
            }
            return index
        }
    }

    /// What a name found in the folder is.
    enum Kind: Equatable {
        case entry(EntryName)
        /// An entry of another format version: it cannot be read, so it goes.
        case otherVersion
        /// A temporary file: a crash left it (the store holds the folder's lock, so no other
        /// process is writing it).
        case temporary
        /// Not the store's (the lock file, `.`, `..`, or something an operator put there).
        case foreign
    }

    static let temporaryPrefix = ".tmp-"

    static func classify(_ name: UnsafeBufferPointer<UInt8>) -> Kind {
        if name.starts(with: temporaryPrefix.utf8) { return .temporary }
        guard name.count > 66, name[64] == UInt8(ascii: "."), name[65] == UInt8(ascii: "d"),
            name[66...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return .foreign }
        var words: [UInt64] = [0, 0, 0, 0]
        for index in 0..<64 {
            let character = name[index]
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return .foreign
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(value)
        }
        guard name[64...].elementsEqual(suffix.utf8) else { return .otherVersion }
        return .entry(
            EntryName(
                key: NameDigest(high: words[0], low: words[1]), source: NameDigest(high: words[2], low: words[3])))
    }
}
