internal import Glibc
internal import Primitives

/// The start-up index: one pass over the folder's names and one `fstatat` per entry, no file
/// opened. The name gives the key's and the source's digests, the size the charge, the
/// modification time the recency. Measured (docs/architecture.md, "The disk tier's store"): 100,000
/// entries in 0.4 s warm and 1.1–1.7 s cold; reading each file's header as well took 7–11 s cold.
/// An index file of its own would have to be kept in step with the folder across crashes, which
/// the names are by construction.
enum FolderScan {
    struct Found {
        let name: EntryName
        let fileBytes: Int
        /// Modification time, nanoseconds since 1970.
        let modified: Int64
    }

    struct Result {
        var entries: [Found] = []
        /// Entry files too short to hold a header (empty ones included): deleted.
        var dropped = 0
    }

    /// Indexes the folder, deleting temporary files (a crash left them: the caller holds the lock),
    /// entries of another format version and entries too short to be one.
    static func run(_ folder: FileDescriptor, path: String) throws(DiskStoreError) -> Result {
        var result = Result()
        var doomed: [String] = []
        // fdopendir takes over the descriptor and closedir closes it: a descriptor of its own, not
        // the store's (and not a `FileDescriptor`, which would close it a second time).
        let listing = openat(folder.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard listing >= 0, let directory = fdopendir(listing) else {
            let error = SystemError(operation: "opendir", code: errno)
            if listing >= 0 { _ = Glibc.close(listing) }
            throw DiskStoreError(directory: path, reason: .cannotOpen(error))
        }
        defer { closedir(directory) }
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                guard errno == 0 else {
                    throw DiskStoreError(
                        directory: path, reason: .cannotOpen(SystemError(operation: "readdir", code: errno)))
                }
                break
            }
            let kind = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { name -> (EntryName.Kind, String?) in
                    let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name)).assumingMemoryBound(
                        to: UInt8.self)
                    let kind = EntryName.classify(bytes)
                    switch kind {
                    case .temporary, .otherVersion: return (kind, String(cString: name))
                    case .entry, .foreign: return (kind, nil)
                    }
                }
            }
            switch kind.0 {
            case .foreign: continue
            case .temporary, .otherVersion: doomed.append(kind.1!)
            case .entry(let name):
                var status = stat()
                let found = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                    tuple.withMemoryRebound(to: CChar.self, capacity: 256) {
                        fstatat(folder.rawValue, $0, &status, AT_SYMLINK_NOFOLLOW) == 0
                    }
                }
                // Gone meanwhile, or not a plain file (a link or a folder with an entry's name is not
                // the store's: left alone, not followed).
                guard found, status.isRegularFile else { continue }
                guard Int(status.st_size) >= EntryHeader.fixedBytes else {
                    doomed.append(name.fileName)
                    result.dropped += 1
                    continue
                }
                result.entries.append(
                    Found(name: name, fileBytes: Int(status.st_size), modified: status.modifiedWallNanoseconds))
            }
        }
        for name in doomed {
            do {
                try FileCalls.unlink(name, in: folder)
            } catch {
                throw DiskStoreError(
                    directory: path, reason: error.code == EROFS ? .readOnlyFileSystem : .notWritable(error))
            }
        }
        return result
    }
}
