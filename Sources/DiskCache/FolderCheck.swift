internal import Glibc
internal import Primitives

/// The checks that turn a folder thumbd cannot use into a clear error at start rather than a
/// cache that silently stores nothing.
enum FolderCheck {
    /// Makes the folder (and missing parents) if needed and opens it; refuses anything that is not
    /// a directory and a read-only file system.
    static func open(_ path: String) throws(DiskStoreError) -> FileDescriptor {
        func fail(_ reason: DiskStoreError.Reason) -> DiskStoreError { DiskStoreError(directory: path, reason: reason) }
        guard !path.isEmpty else { throw fail(.cannotOpen(SystemError(operation: "open", code: ENOENT))) }
        var status = stat()
        // Following a symbolic link: a link to a folder is a folder.
        if path.withCString({ stat($0, &status) }) == 0 {
            guard status.isDirectory else { throw fail(.notADirectory) }
        } else if errno == ENOENT {
            try makeFolders(path)
        } else {
            throw fail(.cannotOpen(SystemError(operation: "stat", code: errno)))
        }
        let folder: FileDescriptor
        do {
            folder = try FileCalls.open(path: path, flags: O_RDONLY | O_DIRECTORY)
        } catch {
            throw fail(error.code == ENOTDIR ? .notADirectory : .cannotOpen(error))
        }
        var system = statvfs()
        if fstatvfs(folder.rawValue, &system) == 0, system.f_flag & UInt(ST_RDONLY) != 0 {
            throw fail(.readOnlyFileSystem)
        }
        return folder
    }

    /// `mkdir -p`: each missing component, in turn.
    private static func makeFolders(_ path: String) throws(DiskStoreError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if prefix.withCString({ mkdir($0, 0o755) }) != 0, errno != EEXIST {
                let error = SystemError(operation: "mkdir", code: errno)
                throw DiskStoreError(
                    directory: path, reason: error.code == EROFS ? .readOnlyFileSystem : .cannotCreate(error))
            }
        }
    }

    /// The size every file's allocation is a multiple of (`f_bsize`; 4096 on ext4, xfs and tmpfs).
    static func blockSize(of folder: FileDescriptor) -> Int {
        var system = statvfs()
        guard fstatvfs(folder.rawValue, &system) == 0, system.f_bsize >= 512 else { return 4096 }
        return Int(system.f_bsize)
    }

    /// Makes and removes a file: the permissions (or a quota) may forbid it even when the file
    /// system is writable and the lock file exists.
    static func probeWritable(_ folder: FileDescriptor, path: String) throws(DiskStoreError) {
        let name = EntryName.temporaryPrefix + "probe"
        do {
            _ = try FileCalls.open(name, in: folder, flags: O_WRONLY | O_CREAT | O_TRUNC)
            try FileCalls.unlink(name, in: folder)
        } catch {
            throw DiskStoreError(
                directory: path, reason: error.code == EROFS ? .readOnlyFileSystem : .notWritable(error))
        }
    }
}
