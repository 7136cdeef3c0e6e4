import EaselSupport
import Foundation
import Logging

// How a disk cache lives on a file system that fills up. A full disk must never stop the trim
// or removal that would free it, yet with SQLite in WAL mode every removal writes: its pages go
// to the log first, and a checkpoint may need new blocks to copy them into the database file.
// Three defences, each covering what the one before cannot prevent:
//
// 1. The automatic byte limit (`Configuration.freeSpaceFraction`): a cache nobody limited keeps
//    to a share of the space it found, so it rarely fills the disk by itself.
// 2. A bounded log (`updateLowSpaceMode`): a busy writer's log grows until the writer
//    checkpoints it itself, 16 MB by default; on a small file system it may take a sixteenth,
//    and with little room left only a quarter of the reserve, so that the pages a checkpoint
//    still has to copy into the database file (and may need new blocks for) fit in the reserve.
// 3. The reserve (`Configuration.reservedBytes`): a file of real blocks in the cache directory.
//    When a removal finds the disk full (`removeFreeingSpace`), the reserve and the trash are
//    deleted, the log is checkpointed and truncated, and the removal runs again: in one
//    transaction if it fits, else in batches with the log truncated after each. Then the
//    reserve is allocated again before anything else can take the room. The index file itself
//    shrinks in `compact()`, a few pages at a time, so that too works on a full disk.
extension DiskCache {
    // MARK: The reserve

    /// The reserve's size on a file system: `reservedBytes`, at most a sixteenth of it.
    func reserveTarget(_ space: FileSystemSpace) -> Int { min(reservedBytes, space.total / 16) }

    /// Allocates the reserve, or the part still missing, taking at most half of the free space
    /// so that writes keep the rest. One `stat` when the reserve is whole.
    func restoreReserve() {
        guard reservedBytes > 0 else { return }
        var info = stat()
        let current = stat(paths.reserve, &info) == 0 ? Int(info.st_size) : 0
        guard current < reservedBytes, let space = try? files.space(at: paths.root) else { return }
        let size = min(reserveTarget(space), current + space.available / 2)
        guard size > current else { return }
        do { try files.allocate(paths.reserve, size: size) } catch {
            logger.notice("cache reserve not allocated", metadata: ["cache": "\(name)", "error": "\(errnoDescription(error.code))"])
        }
    }

    // MARK: Limits from the file system

    /// `fraction × (free bytes + value bytes held)`, at least 1 MiB; 0 (no limit) when the file
    /// system cannot be asked.
    func automaticByteLimit(fraction: Double) -> Int {
        guard let space = try? files.space(at: paths.root) else { return 0 }
        return max(1 << 20, Int(checked: Double(space.available + byteCount) * min(1, fraction)))
    }

    /// Bounds the index's log by the room left on its file system.
    ///
    /// The bound is a sixteenth of the file system (at most the usual 16 MB); while less than a
    /// quarter of it (at most 64 MiB) is free, a quarter of the reserve: low-space mode, left
    /// once twice that is free again. Runs at open and with every background checkpoint, that
    /// is after every 2 MiB written.
    func updateLowSpaceMode() {
        guard let space = try? files.space(at: paths.root) else { return }
        let threshold = min(64 << 20, space.total / 4)
        let (low, changed) = index.withLock { index -> (Bool, Bool) in
            let low = space.available < threshold || (index.lowSpace && space.available < 2 * threshold)
            let changed = low != index.lowSpace
            index.lowSpace = low
            index.limitLog(to: low ? max(reserveTarget(space), 1 << 20) / 4 : space.total / 16)
            return (low, changed)
        }
        if changed {
            logger.notice(low ? "little disk space left: the cache index checkpoints often" : "disk space available again",
                          metadata: ["cache": "\(name)", "available": "\(space.available)"])
        }
    }

    // MARK: Removals on a full disk

    /// Runs a removal so that a full disk cannot stop it.
    ///
    /// `all` removes everything in one transaction. If the disk is full, the reserve and the
    /// trash are freed and the log truncated, and `all` runs again; if it still does not fit,
    /// `batch(limit)` runs repeatedly, each time one transaction removing at most `limit` entries
    /// and saying whether it finished, with the log truncated after each and `limit` halved
    /// while a batch does not fit. `afterEach` receives what each transaction removed.
    /// - Throws: `DiskCacheError.diskFull` only when not even a single entry could be removed.
    func removeFreeingSpace(
        all: () throws -> [DiskIndex.Victim],
        batch: (Int) throws -> (removed: [DiskIndex.Victim], finished: Bool),
        afterEach: ([DiskIndex.Victim]) -> Void
    ) throws {
        do {
            afterEach(try all())
            settleLog()
            return
        } catch DiskCacheError.diskFull {}
        makeRoomForRemovals()
        defer { afterRoomWasMade() }
        do {
            afterEach(try all())
            return
        } catch DiskCacheError.diskFull {}
        // Each pass either removes `limit` ≥ 1 entries or halves `limit`, and fails at 1.
        var limit = 256
        while true {
            do {
                let result = try batch(limit)
                afterEach(result.removed)
                try? indexCall { try $0.checkpointAndTruncate() }
                if result.finished { return }
                limit = min(limit * 2, 256)
            } catch DiskCacheError.diskFull where limit > 1 {
                limit /= 2
                try? indexCall { try $0.checkpointAndTruncate() }
            }
        }
    }

    /// `work`, run again after making room when the disk is full (for removals that write a
    /// few pages whatever they remove, such as `removeAll`).
    func withRoomForRemoval(_ work: () throws -> Void) throws {
        do {
            try work()
            settleLog()
        } catch DiskCacheError.diskFull {
            makeRoomForRemovals()
            defer { afterRoomWasMade() }
            try work()
        }
    }

    /// On a nearly full disk, empties the log after a removal that fitted in it, so that the pages
    /// it freed can be written again: the log can only restart once a checkpoint has copied all
    /// of it, which may need new blocks, from the reserve if need be.
    private func settleLog() {
        guard index.withLock({ $0.lowSpace }) else { return }
        do {
            try indexCall { try $0.checkpointAndTruncate() }
        } catch DiskCacheError.diskFull {
            makeRoomForRemovals()
            afterRoomWasMade()
        } catch {}
    }

    /// Frees what can be freed without writing to the index: the reserve, the trash, and the
    /// log (a checkpoint copies it into the database file, using the reserve's blocks if needed).
    private func makeRoomForRemovals() {
        let released = (try? files.unlink(paths.reserve)) != nil
        logger.warning("disk full: freeing the reserve so that removals can give space back", metadata: [
            "cache": "\(name)", "reserve": "\(released ? "freed" : "none")"])
        Self.deleteTrash(paths.trash)
        try? indexCall { try $0.checkpointAndTruncate() }
    }

    /// Gives the log's space back and allocates the reserve again, before anything else can.
    private func afterRoomWasMade() {
        try? indexCall { try $0.checkpointAndTruncate() }
        restoreReserve()
    }
}
