import CSQLite
import EaselSupport
import Foundation
import Synchronization

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
/// next get, never missed.
///
/// Ended before anything else uses the connection (`GuardedIndex.withLock`, `transaction`,
/// checkpoints), after about 2 ms without a get (so another process's truncating checkpoint never
/// waits on an idle reader for long), and renewed at least every 50 ms under a steady stream of gets.
///
/// The mapping is SQLite's own (`csqlite_wal_index`, through the VFS): the file is never opened a
/// second time, which would drop this process's POSIX locks on it when closed, and the mapping
/// lives as long as the connection, which outlives every read of it.
struct HeldRead {
    /// The first 48 bytes of the WAL index; nil when it is not mapped (then every get runs in a
    /// transaction of its own, as before).
    var header: UnsafeRawPointer?
    /// The header as it was just before the held transaction began.
    var seen: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
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

    func current() -> (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)? {
        guard let header else { return nil }
        let value = (header.loadUnaligned(fromByteOffset: 0, as: UInt64.self), header.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                     header.loadUnaligned(fromByteOffset: 16, as: UInt64.self), header.loadUnaligned(fromByteOffset: 24, as: UInt64.self),
                     header.loadUnaligned(fromByteOffset: 32, as: UInt64.self), header.loadUnaligned(fromByteOffset: 40, as: UInt64.self))
        // Loads of the header before anything the transaction reads.
        atomicMemoryFence(ordering: .acquiring)
        return value
    }
}

extension DiskIndex {
    /// Begins (or keeps) the read transaction gets share; falls back to a transaction per
    /// statement when the header cannot be read or `BEGIN` fails.
    func holdRead(now: Double) {
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
    /// `transaction` ends the held read first.
    func withHeldRead<R>(now: Double, _ body: (DiskIndex) throws -> R) rethrows -> R {
        let (result, schedule) = try locked.withLock { index -> (R, Bool) in
            index.holdRead(now: now)
            let result = try body(index)
            guard index.heldRead.isOpen, !index.heldRead.closerScheduled else { return (result, false) }
            index.heldRead.closerScheduled = true
            return (result, true)
        }
        if schedule { scheduleCloser(after: HeldRead.idleLimit) }
        return result
    }

    private func scheduleCloser(after delay: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.closeIfIdle()
        }
    }

    private func closeIfIdle() {
        let now = WallClock.now()
        let again: Double? = locked.withLock { index in
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
        if let again { scheduleCloser(after: again) }
    }
}
