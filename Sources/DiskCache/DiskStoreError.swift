internal import Glibc
public import Primitives

/// Why a folder cannot be a disk cache: thrown by `DiskStore.init`, meant to stop the service
/// at start with a line an operator can act on.
public struct DiskStoreError: Error, CustomStringConvertible, Equatable {
    public enum Reason: Sendable, Equatable {
        /// The path exists and is not a directory.
        case notADirectory
        /// It was missing and could not be made (a parent that is a file, no permission, …).
        case cannotCreate(SystemError)
        /// It cannot be opened or read (no permission to search or list it).
        case cannotOpen(SystemError)
        /// It is on a file system mounted read-only.
        case readOnlyFileSystem
        /// Files cannot be made in it (permissions, quota, …).
        case notWritable(SystemError)
        /// Another store holds it: two instances must never share one folder. The holder's
        /// process id when the kernel says (`/proc/locks`).
        case locked(holder: Int32?)
        /// The budget is not a positive number of bytes.
        case invalidBudget
    }

    public let directory: String
    public let reason: Reason

    public init(directory: String, reason: Reason) {
        self.directory = directory
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .notADirectory: what = "is not a directory"
        case .cannotCreate(let error): what = "is missing and cannot be made (\(error))"
        case .cannotOpen(let error): what = "cannot be opened (\(error))"
        case .readOnlyFileSystem: what = "is on a read-only file system"
        case .notWritable(let error): what = "is not writable (\(error))"
        case .locked(let holder):
            what =
                "is in use by another thumbd (\(holder.map { "pid \($0)" } ?? "pid unknown")): two instances cannot share one folder"
        case .invalidBudget: what = "needs a budget of at least one filesystem block"
        }
        return "disk cache folder \(directory) \(what)"
    }
}
