public import Primitives

/// What a `put` or an `update` did.
public enum DiskPutResult: Sendable, Equatable {
    /// Written and renamed into place: a `get` finds it from now on, and after a restart.
    case stored
    /// Refused: the entry is over `maxEntryBytes`, or a key or a field is over its bound
    /// (`EntryMeta.Limits`).
    case tooLarge
    /// Refused: another call is writing this key, or the room it needs is held by writes in
    /// progress. Nothing is wrong; the caller may simply not store it.
    case busy
    /// Refused: writes are stopped after a disk fault (see `DiskStoreMetrics.writesDisabled`).
    case writesDisabled
    /// The key was removed or its source purged while it was being written: not stored, so a
    /// purge is never undone by a write that began before it.
    case cancelled
    /// `update` only: nothing is stored under the key (or its file was corrupt and is dropped).
    case notFound
    /// The write failed; its temporary file is removed. `stoppedWrites`: the failure was a disk
    /// fault and writes are stopped from now on (log it once, here).
    case failed(SystemError, stoppedWrites: Bool)
}
