import Crypto
import DiskCache
import Foundation

// thumbd-bench disk --dir DIR [--entries N] [--body BYTES] [--gets N] [--synced N] [--phase P]
//
// The disk cache's store alone, no HTTP, on one thread. Phase `all` (the default): what a
// checksum costs per MB (CRC-32C as the store takes it, against SHA-256 from libcrypto) and what
// naming a key costs, then N puts of BYTES-byte bodies into a new folder under DIR, the time to
// open that folder again (the store's names-and-stat index, three times, and the index's resident
// memory), the time the rejected alternative (each file's header read as well) takes, random gets
// and file opens, and --synced puts with fsync (the price of `syncEachWrite`); the folders it makes
// are removed. Warm page cache: dropping the machine's caches would disturb whatever else runs.
//
// For a cold cache, the phases one at a time on DIR itself, with the file system mounted again in
// between (bench/disk-cold.sh): `fill` (the puts; DIR is kept), `open` (one opening), `headers`
// (the header-reading pass). Each prints one JSON line.

func measureDiskStore(_ arguments: [String]) -> Never {
    var options: [String: String] = [:]
    var rest = arguments[...]
    while rest.count >= 2, rest.first!.hasPrefix("--") {
        options[String(rest.first!.dropFirst(2))] = rest.dropFirst().first!
        rest = rest.dropFirst(2)
    }
    guard let root = options["dir"] else {
        fail("usage: thumbd-bench disk --dir DIR [--entries N] [--body BYTES] [--gets N] [--synced N] [--phase P]")
    }
    let bench = DiskBench(
        entries: Int(options["entries"] ?? "") ?? 10_000, bodyBytes: Int(options["body"] ?? "") ?? 20_480)
    switch options["phase"] ?? "all" {
    case "fill": bench.fill(root)
    case "open": bench.timeOpening(root, times: 1)
    case "headers": bench.timeHeaderReads(root)
    case "all":
        let folder = "\(root)/disk-bench-\(getpid())"
        bench.timeChecksums()
        bench.fill(folder)
        bench.timeOpening(folder, times: 3)
        bench.timeHeaderReads(folder)
        bench.timeReads(folder, count: Int(options["gets"] ?? "") ?? 20_000)
        bench.timeSyncedPuts(folder + "-synced", count: Int(options["synced"] ?? "") ?? 500)
        try? FileManager.default.removeItem(atPath: folder)
        try? FileManager.default.removeItem(atPath: folder + "-synced")
    default: fail("--phase all|fill|open|headers")
    }
    bench.report()
    exit(0)
}

final class DiskBench {
    let entries: Int
    let bodyBytes: Int
    private var results: [String: String]
    private let meta = EntryMeta(
        contentType: "image/webp", etag: "\"5f3a-1c9e\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT",
        expires: 1_900_000_000, extra: [UInt8](repeating: 7, count: 24))
    private let payload: [UInt8]

    init(entries: Int, bodyBytes: Int) {
        self.entries = entries
        self.bodyBytes = bodyBytes
        results = ["entries": "\(entries)", "body_bytes": "\(bodyBytes)"]
        payload = (0..<bodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    }

    func report() {
        print(
            "{" + results.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}")
    }

    private func record(_ name: String, _ value: Double, digits: Int = 2) {
        results[name] = String(format: "%.\(digits)f", value)
    }

    private func seconds(_ body: () -> Void) -> Double {
        let start = ContinuousClock.now
        body()
        return (ContinuousClock.now - start).seconds
    }

    private func key(_ index: Int) -> String { "variant https://origin.example/photos/\(index).jpg w=300 q=80 f=webp" }
    private func source(_ index: Int) -> String { "https://origin.example/photos/\(index / 4).jpg" }

    private func open(_ path: String, sync: Bool = false) -> DiskStore {
        var storeOptions = DiskStoreOptions(maxEntries: 10_000_000, maxEntryBytes: 1 << 30)
        storeOptions.syncEachWrite = sync
        do { return try DiskStore(directory: path, budgetBytes: 1 << 50, options: storeOptions) } catch {
            fail("\(error)")
        }
    }

    /// 256 MiB through each checksum, over one 1 MiB buffer (in the cache, as a body just read is),
    /// and the SHA-256 of a typical key.
    func timeChecksums() {
        let buffer = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var sink: UInt32 = 0
        let crcSeconds = seconds { buffer.withUnsafeBytes { for _ in 0..<256 { sink ^= CRC32C.checksum($0) } } }
        var digest = [UInt8](repeating: 0, count: 32)
        let shaSeconds = seconds {
            buffer.withUnsafeBytes { bytes in
                digest.withUnsafeMutableBytes { for _ in 0..<256 { SHA256.digest(bytes, into: $0) } }
            }
        }
        record("crc32c_mb_per_s", 256 * 1.048576 / crcSeconds, digits: 0)
        record("sha256_mb_per_s", 256 * 1.048576 / shaSeconds, digits: 0)
        record("crc32c_us_per_20kb", crcSeconds / 256 / 1_048_576 * 20_480 * 1e6)
        record("sha256_us_per_20kb", shaSeconds / 256 / 1_048_576 * 20_480 * 1e6)
        let sampleKey = Array(key(12345).utf8)
        let hashSeconds = seconds {
            sampleKey.withUnsafeBytes { bytes in
                digest.withUnsafeMutableBytes { for _ in 0..<200_000 { SHA256.digest(bytes, into: $0) } }
            }
        }
        record("sha256_key_us", hashSeconds / 200_000 * 1e6, digits: 3)
        withExtendedLifetime((sink, digest)) {}
    }

    func fill(_ folder: String) {
        let store = open(folder)
        let putSeconds = seconds {
            for index in 0..<entries {
                guard store.put(key: key(index), sourceKey: source(index), meta: meta, body: payload) == .stored else {
                    fail("put \(index) failed: \(store.metrics)")
                }
            }
        }
        record("put_per_s", Double(entries) / putSeconds, digits: 0)
        record("put_mb_per_s", Double(entries * bodyBytes) / putSeconds / 1e6, digits: 1)
    }

    /// Opens the folder `times` times, and what its index holds in memory (the heap the last store
    /// freed is handed back first, so that the new index raises the resident set).
    func timeOpening(_ folder: String, times: Int) {
        let trim = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim").map {
            unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
        }
        var milliseconds: [Double] = []
        var indexBytes = 0
        var found = 0
        for _ in 0..<times {
            _ = trim?(0)
            let before = residentBytes(peak: false)
            var store: DiskStore?
            milliseconds.append(seconds { store = open(folder) } * 1000)
            indexBytes = residentBytes(peak: false) - before
            found = store!.metrics.entries
            store = nil
        }
        results["open_ms"] = "[" + milliseconds.map { String(format: "%.1f", $0) }.joined(separator: ", ") + "]"
        results["open_entries"] = "\(found)"
        record("index_bytes_per_entry", Double(indexBytes) / Double(max(found, 1)), digits: 0)
    }

    /// The rejected alternative: the same pass, reading each file's first 64 bytes as well.
    func timeHeaderReads(_ folder: String) {
        let elapsed = seconds {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                $0.hasSuffix(".d1")
            }
            let directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY)
            var header = [UInt8](repeating: 0, count: 64)
            var status = stat()
            for name in names {
                _ = fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW)
                let file = openat(directory, name, O_RDONLY)
                _ = header.withUnsafeMutableBytes { pread(file, $0.baseAddress, 64, 0) }
                close(file)
            }
            close(directory)
        }
        record("open_with_headers_ms", elapsed * 1000, digits: 1)
    }

    /// Random gets, then random file opens (a first pass checks each body once).
    func timeReads(_ folder: String, count: Int) {
        let store = open(folder)
        let order = (0..<count).map { _ in Int.random(in: 0..<entries) }
        var bytesRead = 0
        let getSeconds = seconds { for index in order { bytesRead += store.get(key(index))?.body.count ?? 0 } }
        guard bytesRead == count * bodyBytes else { fail("a get missed") }
        record("get_per_s", Double(count) / getSeconds, digits: 0)
        record("get_us", getSeconds / Double(count) * 1e6)
        _ = seconds { for index in order { _ = store.openFile(key(index)) } }
        let fileSeconds = seconds { for index in order { _ = store.openFile(key(index)) } }
        record("open_file_per_s", Double(count) / fileSeconds, digits: 0)
        record("open_file_us", fileSeconds / Double(count) * 1e6)
    }

    func timeSyncedPuts(_ folder: String, count: Int) {
        let store = open(folder, sync: true)
        let elapsed = seconds {
            for index in 0..<count {
                _ = store.put(key: key(index), sourceKey: source(index), meta: meta, body: payload)
            }
        }
        record("synced_put_per_s", Double(count) / elapsed, digits: 0)
    }
}
