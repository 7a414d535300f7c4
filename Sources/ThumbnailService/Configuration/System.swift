import Foundation

/// Facts about the machine that defaults depend on.
public enum System {
    public static var coreCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The kernel's transparent-huge-page mode, the bracketed word of
    /// `/sys/kernel/mm/transparent_hugepage/enabled` ("always", "madvise", "never"); nil when the
    /// file is missing or unreadable.
    static var transparentHugePageMode: String? {
        guard let text = try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8),
            let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]")
        else { return nil }
        return String(text[text.index(after: open)..<close])
    }
}
