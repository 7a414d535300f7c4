import Foundation

/// Facts about the machine that defaults depend on.
public enum System {
    public static var coreCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
}
