import Foundation
import Primitives
import Synchronization
import ThumbnailCore
import ThumbnailService
import Vips

// thumbd-bench: a breakdown tool for bench/run.sh (the reference is bench/floor, plain libvips).
// thumbd's own render work (`ThumbnailRenderer` with libvips), on N threads, with no HTTP, no
// fetch and no cache:
//   inprocess  every request a first size: header check, streamed from the original
//   copymiss   every request makes a reusable decoded copy and cuts from it (the rejected design)
//   newsize    copies made first (untimed), then every request cut from one
//
//   memory     one image, one render in this process: the decode-memory estimate against the
//              measured peak (RSS and libvips' tracked high-water), see MemoryMode.swift
//   disk       the disk cache's store alone: checksum cost, put/get throughput, time to open a
//              folder of N entries, see DiskMode.swift
//
//   thumbd-bench MODE --corpus DIR --threads N --seconds S --widths 200-399 [--format jpeg] [--count N]
//
// Prints one JSON line: requests, seconds, rps, cpu_seconds, cpu_ms_per_request, peak_rss_bytes.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("thumbd-bench: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? ""
// copymiss: every request makes a reusable decoded copy and cuts from it (the alternative the
// pipeline rejected for first sizes; see docs/architecture.md).
if mode == "memory" { measureDecodeMemory(Array(arguments.dropFirst())) }
if mode == "disk" { measureDiskStore(Array(arguments.dropFirst())) }
guard mode == "inprocess" || mode == "newsize" || mode == "copymiss" else {
    fail(
        "usage: thumbd-bench inprocess|copymiss|newsize --corpus DIR --threads N --seconds S --widths A-B [--format F] [--count N]"
    )
}
arguments.removeFirst()
var options: [String: String] = [:]
while arguments.count >= 2, arguments[0].hasPrefix("--") {
    options[String(arguments[0].dropFirst(2))] = arguments[1]
    arguments.removeFirst(2)
}
guard let corpus = options["corpus"] else { fail("--corpus is required") }
let threads = Int(options["threads"] ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
let seconds = Double(options["seconds"] ?? "") ?? 30
/// `--count N`: the first N requests only, whatever the time (instruction counts under callgrind).
let maxRequests = options["count"].flatMap { Int($0) }
let widthRange = (options["widths"] ?? "200-399").split(separator: "-").compactMap { Int($0) }
guard widthRange.count == 2, widthRange[0] >= 1, widthRange[0] <= widthRange[1] else { fail("--widths A-B") }
let format: RequestedFormat = options["format"].flatMap(OutputFormat.init(rawValue:)).map { .exactly($0) } ?? .source

// The same process set-up as thumbd, so the comparison is of the pipeline, not the allocator:
// glibc's malloc settings from the environment it is launched with (bench/run.sh gives it
// thumbd's GLIBC_TUNABLES; without the huge pages, this pipeline measured 1.09–1.24× the floor's
// CPU against 1.01–1.06× with them), and the trimming thread from THUMBD_MALLOC_TRIM_INTERVAL.
if case .success(.run(let configuration)) = ServiceConfiguration.load(
    arguments: [], environment: ProcessInfo.processInfo.environment)
{
    MallocTrim.start(every: configuration.processing.mallocTrimInterval)
}

let files = ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []).sorted()
    .filter { ["jpg", "jpeg", "png"].contains(($0 as NSString).pathExtension.lowercased()) }
let sources: [ImageBytes] = files.compactMap { name in
    (try? Data(contentsOf: URL(fileURLWithPath: corpus).appendingPathComponent(name))).map { ImageBytes([UInt8]($0)) }
}
guard !sources.isEmpty else { fail("no .jpg/.png files in \(corpus)") }

let renderer = ThumbnailRenderer(imaging: VipsImaging(), maxSourcePixels: 75_000_000)
/// Requests taken and failed, shared by the threads.
let counts = Mutex((taken: 0, errors: 0))
let widths = widthRange[0]...widthRange[1]

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

// newsize: decode every image once (as a first request would), then time cuts of new widths
// from the decoded copies only — what thumbd does for a new size of a recently seen photo.
let copies: [DecodedSource<VipsDecodedImage>] =
    mode == "newsize"
    ? sources.compactMap { try? renderer.renderKeepingCopy(original: $0, spec: TransformSpec(width: 399)).copy } : []

let deadline = Date().addingTimeInterval(seconds)
let cpuStart = cpuSeconds()
let start = Date()
let group = DispatchGroup()
for _ in 0..<threads {
    group.enter()
    try! DetachedThread.start(name: "bench-worker", stackSize: 8 << 20) {
        while Date() < deadline {
            let n = counts.withLock { counts in
                defer { counts.taken += 1 }
                return counts.taken
            }
            if let maxRequests, n >= maxRequests { break }
            // Images cycle, widths cycle: the same sequence the bench's cold-miss requests use.
            let width = widths.lowerBound + n % widths.count
            let source = sources[n % sources.count]
            do {
                let spec = TransformSpec(width: width, format: format)
                if mode == "newsize" {
                    _ = try renderer.render(decoded: copies[n % copies.count], spec: spec)
                } else if mode == "copymiss" {
                    _ = try renderer.renderKeepingCopy(original: source, spec: spec)
                } else {
                    _ = try renderer.render(original: source, spec: spec)
                }
            } catch {
                counts.withLock { $0.errors += 1 }
            }
        }
        group.leave()
    }
}
group.wait()
let elapsed = Date().timeIntervalSince(start)
let cpu = cpuSeconds() - cpuStart
var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)
let peak = usage.ru_maxrss * 1024  // KiB on Linux
let (counter, errors) = counts.withLock { (min($0.taken, maxRequests ?? .max), $0.errors) }
let done = counter - errors
let line =
    "{\"requests\": \(done), \"errors\": \(errors), \"seconds\": \(String(format: "%.3f", elapsed)), "
    + "\"rps\": \(String(format: "%.2f", Double(done) / elapsed)), \"cpu_seconds\": \(String(format: "%.3f", cpu)), "
    + "\"cpu_ms_per_request\": \(String(format: "%.2f", done > 0 ? cpu * 1000 / Double(done) : 0)), "
    + "\"peak_rss_bytes\": \(peak), \"threads\": \(threads), \"images\": \(sources.count)}"
print(line)
