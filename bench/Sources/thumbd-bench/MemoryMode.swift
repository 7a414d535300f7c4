import Foundation
import ThumbnailCore
import ThumbnailService
import Vips

// thumbd-bench memory FILE [--width N] [--path first|copy]
//
// One render of FILE in a fresh process (bench/decode-memory.sh runs one process per corpus image,
// so no image sees another's heap): the decode-memory estimate the work budget charges
// (`DecodeMemory`), against the measured peak of the render — the rise of the peak RSS (VmHWM,
// reset just before through /proc/self/clear_refs) above the RSS before it, and libvips' tracked
// high-water. Prints one JSON line. `--path copy` measures the reusable-copy decode (1024 px box),
// `--path cut` a cut from that copy (decoded first, outside the measurement).

/// The resident set in bytes, or the peak (`VmHWM`) with `peak`.
func residentBytes(peak: Bool) -> Int {
    let key = peak ? "VmHWM:" : "VmRSS:"
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(key) {
        let kib = line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
        return (kib.flatMap { Int($0) } ?? 0) * 1024
    }
    return 0
}

func measureDecodeMemory(_ arguments: [String]) -> Never {
    guard let file = arguments.first, let data = FileManager.default.contents(atPath: file) else {
        fail("usage: thumbd-bench memory FILE [--width N] [--path first|copy]")
    }
    var options: [String: String] = [:]
    var rest = Array(arguments.dropFirst())
    while rest.count >= 2, rest[0].hasPrefix("--") {
        options[String(rest[0].dropFirst(2))] = rest[1]
        rest.removeFirst(2)
    }
    if case .success(.run(let configuration)) = ServiceConfiguration.load(
        arguments: [], environment: ProcessInfo.processInfo.environment)
    {
        MallocTrim.start(every: configuration.processing.mallocTrimInterval)
    }
    let width = Int(options["width"] ?? "") ?? 300
    let path = options["path"] ?? "first"
    guard ["first", "copy", "cut"].contains(path) else { fail("--path first|copy|cut") }
    let bytes = ImageBytes([UInt8](data))
    let renderer = ThumbnailRenderer(imaging: VipsImaging(), maxSourcePixels: 1_000_000_000)
    let spec = TransformSpec(width: width, format: .exactly(.jpeg))
    guard let info = try? renderer.inspect(bytes) else { fail("cannot read the header of \(file)") }
    let box = ThumbnailRenderer<VipsImaging>.copyBox(for: info)
    var copy: DecodedSource<VipsDecodedImage>? = nil
    if path == "cut" {
        copy = try? VipsImaging().decode(
            bytes, info: info, fittingWidth: box.width, height: box.height, deadline: .none)
        guard copy != nil else { fail("cannot decode a copy of \(file)") }
    }
    let estimate: Int
    switch path {
    case "copy": estimate = renderer.copyEstimate(info)
    case "cut": estimate = renderer.cutEstimate(copy!, spec: spec)
    default: estimate = renderer.estimate(info, spec: spec)
    }
    let trackedBefore = Vips.trackedMemoryHighWater()
    // Reset the peak RSS to the current RSS, so VmHWM afterwards is this render's peak.
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let before = residentBytes(peak: false)
    do {
        switch path {
        case "copy":
            _ = try VipsImaging().decode(
                bytes, info: info, fittingWidth: box.width, height: box.height, deadline: .none)
        case "cut": _ = try renderer.render(decoded: copy!, spec: spec)
        default: _ = try renderer.render(original: bytes, spec: spec)
        }
    } catch {
        fail("render of \(file) failed: \(error)")
    }
    let peak = residentBytes(peak: true)
    let tracked = Vips.trackedMemoryHighWater()
    let measured = max(peak - before, 0)
    let name = (file as NSString).lastPathComponent
    print(
        "{\"file\": \"\(name)\", \"format\": \"\(info.format.rawValue)\", \"width\": \(info.width), "
            + "\"height\": \(info.height), \"bands\": \(info.bands), \"interlaced\": \(info.interlaced), "
            + "\"path\": \"\(path)\", \"output_width\": \(width), "
            + "\"estimate_bytes\": \(estimate), \"rss_rise_bytes\": \(measured), "
            + "\"vips_tracked_high_water_bytes\": \(max(tracked, trackedBefore)), "
            + "\"ratio\": \(String(format: "%.3f", Double(estimate) / Double(max(measured, 1))))}")
    exit(0)
}
