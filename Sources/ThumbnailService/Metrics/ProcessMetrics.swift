import Foundation
import Glibc
internal import Primitives

/// The process as the kernel sees it, read from `/proc/self` at scrape time — the standard
/// `process_*` metrics of Prometheus' client libraries. Reads of procfs are answered from kernel
/// memory (no disk, microseconds), so they may run on a polling thread once per scrape.
struct ProcessMetrics: Sendable, Equatable {
    var residentBytes = 0
    var virtualBytes = 0
    var cpuSeconds = 0.0
    var openFDs = 0
    var maxFDs = 0
    /// Unix seconds.
    var startTime = 0.0

    static func read() -> ProcessMetrics {
        var metrics = ProcessMetrics()
        let ticks = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        // Fields after the command name (which may hold spaces and parentheses, so split after
        // the last ')'): state is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
        if let stat = text(of: "/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Double { fields.count > number - 3 ? Double(fields[number - 3]) ?? 0 : 0 }
            metrics.cpuSeconds = (field(14) + field(15)) / ticks
            metrics.virtualBytes = Int(field(23))
            metrics.residentBytes = Int(field(24)) * sysconf(Int32(_SC_PAGESIZE))
            metrics.startTime = bootTime + field(22) / ticks
        }
        metrics.openFDs = openDescriptors()
        var limit = rlimit()
        if getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 { metrics.maxFDs = Int(clamping: limit.rlim_cur) }
        return metrics
    }

    private static let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

    /// Boot time in Unix seconds (`btime` of /proc/stat): process start times count from it.
    private static let bootTime: Double = {
        guard let stat = text(of: "/proc/stat") else { return 0 }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return line.split(separator: " ").last.flatMap { Double($0) } ?? 0
        }
        return 0
    }()

    /// Entries of /proc/self/fd, less the one the listing itself holds open.
    private static func openDescriptors() -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        return max(0, entries.count - 1)
    }

    /// A small procfs file, whole (procfs reports size 0, so read until the end).
    private static func text(of path: String) -> String? {
        let raw = open(path, O_RDONLY | O_CLOEXEC)
        guard raw >= 0 else { return nil }
        let file = FileDescriptor(adopting: raw)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(file.rawValue, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return withExtendedLifetime(file) { String(decoding: bytes, as: UTF8.self) }
    }
}
