import Foundation

/// The memory limit the process lives under, for the default cache budget.
public enum MemoryLimit {
    /// The lower of the cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) and physical memory.
    public static func effective() -> Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        let candidates = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        var limit = physical
        for path in candidates {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0
            else { continue }
            limit = min(limit, value)
        }
        return limit
    }

    /// A quarter of the effective limit, at least 64 MiB and at most 4 GiB: the rest is for
    /// libvips' working set (a 24 MP decode alone needs ~100 MiB) and the allocator.
    public static func defaultCacheBytes() -> Int {
        min(max(effective() / 4, 64 << 20), 4 << 30)
    }

    /// The work budget's default: another quarter of the effective limit, at least 64 MiB and at
    /// most 4 GiB. Cache + work take half the limit; the rest is the fixed overhead (~80 MiB: code,
    /// threads, allocator slack) and room to spare, so the process stays inside its cgroup.
    public static func defaultWorkBytes() -> Int {
        min(max(effective() / 4, 64 << 20), 4 << 30)
    }
}
