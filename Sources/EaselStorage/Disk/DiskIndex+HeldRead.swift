import CSQLite
import EaselSupport
import Foundation

/// A read transaction kept open across gets.
///
/// Every statement run outside a transaction opens and closes a read transaction of its own, and
/// in WAL mode that costs a lock and an unlock of the `-shm` file with `fcntl` plus a read of its
/// header: about half of a warm 10 KB get. Gets instead leave their transaction open
/// (`GuardedIndex.withHeldRead`), and the next get keeps using it while nothing was committed
/// since — which it tells by the WAL-index header (the first 48 bytes of the `-shm` file, read
/// through the connection's own mapping of it: SQLite rewrites them at every commit, with a new
/// frame count and checksum, and at every log restart, with a new salt). The header is read
/// before the transaction starts, so a commit that lands in between is seen as a change at the
/// next get, never missed. The checkpoint progress (`nBackfill`, at byte 96) is compared too:
/// a transaction begun before a checkpoint holds a read mark that keeps other processes' writers
/// from restarting the log, so after any checkpoint progress the next get begins a new one.
///
/// Ended before anything else uses the connection (`GuardedIndex.withLock`, `transaction`,
/// checkpoints), when a get throws, about 2 ms after the last get (a timer, so another process's
/// truncating checkpoint never waits on an idle reader for long), and renewed by the first get
/// after it is 50 ms old. Those times are monotonic (`DispatchTime`), not the cache's clock.
///
/// The mapping is SQLite's own (`csqlite_wal_index`, through the VFS): the file is never opened a
/// second time, which would drop this process's POSIX locks on it when closed, and the mapping
/// lives as long as the connection, which outlives every read of it.
struct HeldRead {
    /// The first 48 bytes of the WAL index; nil when it is not mapped (then every get runs in a
    /// transaction of its own, as before).
    var header: UnsafeRawPointer?
    /// The WAL-index header (bytes 0..<48) and checkpoint progress (`nBackfill`, bytes 96..<100).
    struct Header: Equatable {
        var words: SIMD8<UInt64>
        var backfill: UInt32
    }

    /// The header as it was just before the held transaction began.
    var seen = Header(words: .zero, backfill: 0)
    var isOpen = false
    var openedAt = 0.0
    var lastUse = 0.0
    var closerScheduled = false

    static let idleLimit = 0.002
    static let ageLimit = 0.05
    static let headerBytes = 48

    /// Finds `connection`'s mapping of its WAL index; leaves `header` nil when there is none.
    mutating func find(in connection: SQLiteConnection) {
        header = csqlite_wal_index(connection.handle).map { UnsafeRawPointer($0) }
    }

    func current() -> Header? {
        guard let header else { return nil }
        // Relaxed atomic loads (csqlite_wal_words), as SQLite itself reads memory that other
        // connections write; the transaction's own reads re-read the header under SQLite's locks.
        var words = SIMD8<UInt64>.zero
        var backfill: UInt32 = 0
        withUnsafeMutableBytes(of: &words) { buffer in
            csqlite_wal_words(header, buffer.baseAddress!.assumingMemoryBound(to: UInt64.self), &backfill)
        }
        return Header(words: words, backfill: backfill)
    }

    /// Seconds on a monotonic clock.
    static func monotonicNow() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

extension DiskIndex {
    /// Begins (or keeps) the read transaction gets share; falls back to a transaction per
    /// statement when the header cannot be read or `BEGIN` fails.
    /// - Throws: `SQLiteError` when the connection is stuck in a transaction it cannot leave
    ///   (a read there could see an old snapshot: an error, never stale data).
    func holdRead(now: Double) throws {
        // SQLite may have ended the transaction by itself (a rollback after an I/O error), or be
        // inside one this code does not know of (a failed rollback): trust SQLite's own state.
        let inTransaction = sqlite3_get_autocommit(connection.handle) == 0
        if heldRead.isOpen, !inTransaction { heldRead.isOpen = false }
        if !heldRead.isOpen, inTransaction {
            try? rollback.run()
            if sqlite3_get_autocommit(connection.handle) == 0 {
                throw SQLiteError(code: SQLITE_ERROR, message: "the index connection is stuck in a transaction")
            }
        }
        if heldRead.isOpen {
            if let header = heldRead.current(), header == heldRead.seen, now - heldRead.openedAt < HeldRead.ageLimit {
                heldRead.lastUse = now
                return
            }
            endHeldRead()
        }
        guard let header = heldRead.current() else { return }
        do { try beginDeferred.run() } catch { return }
        heldRead.seen = header
        heldRead.isOpen = true
        heldRead.openedAt = now
        heldRead.lastUse = now
    }

    /// Ends the held read transaction, if one is open.
    func endHeldRead() {
        guard heldRead.isOpen else { return }
        heldRead.isOpen = false
        do { try endTransaction.run() } catch {
            // A read transaction has nothing to lose: make sure it is gone.
            try? rollback.run()
        }
    }
}

/// The index behind its lock. `withLock` ends a held read transaction before `body` uses the
/// connection; only gets (`withHeldRead`) keep one open, and a timer ends it once they stop.
final class GuardedIndex: Sendable {
    private let locked: Locked<DiskIndex>

    init(_ index: DiskIndex) {
        locked = Locked(index)
    }

    func withLock<R>(_ body: (DiskIndex) throws -> R) rethrows -> R {
        try locked.withLock { index in
            index.endHeldRead()
            return try body(index)
        }
    }

    /// `body` inside the read transaction gets share (see `HeldRead`). `body` may still write:
    /// `transaction` ends the held read first. A `body` that throws ends it too.
    func withHeldRead<R>(_ body: (DiskIndex) throws -> R) rethrows -> R {
        let (result, schedule) = try locked.withLock { index -> (R, Bool) in
            try index.holdRead(now: HeldRead.monotonicNow())
            let result: R
            do { result = try body(index) } catch {
                index.endHeldRead()
                throw error
            }
            guard index.heldRead.isOpen, !index.heldRead.closerScheduled else { return (result, false) }
            index.heldRead.closerScheduled = true
            return (result, true)
        }
        if schedule { scheduleCloser(after: HeldRead.idleLimit) }
        return result
    }

    /// The check runs on the timer's thread but never waits for the lock: a writer may hold it
    /// through a busy wait, and a thread of Dispatch's shared pool must not block on that. A taken
    /// lock means the index is in use — which ends the held read, or is a get that keeps it
    /// fresh — so the timer simply looks again later.
    private func scheduleCloser(after delay: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.closeIfIdle()
        }
    }

    private func closeIfIdle() {
        let now = HeldRead.monotonicNow()
        let attempt: Double?? = locked.withLockIfAvailable { index -> Double? in
            guard index.heldRead.isOpen else {
                index.heldRead.closerScheduled = false
                return nil
            }
            let idle = now - index.heldRead.lastUse
            if idle >= HeldRead.idleLimit {
                index.endHeldRead()
                index.heldRead.closerScheduled = false
                return nil
            }
            return HeldRead.idleLimit - idle
        }
        guard let outcome = attempt else { return scheduleCloser(after: HeldRead.idleLimit) }
        if let again = outcome { scheduleCloser(after: again) }
    }
}
