import EaselSupport
import Foundation
import Logging

extension DiskCache {
    /// Removes `victims` (those still present), telling observers before and after.
    ///
    /// Victims are announced with `willRemove` outside the lock, then deleted only if their rows
    /// are unchanged: in one transaction, or in batches on a full disk (`removeFreeingSpace`).
    func removeVictims(_ victims: [DiskIndex.Victim], reason: RemovalReason) throws {
        guard !victims.isEmpty else { return }
        if !observers.isEmpty {
            for victim in victims { observers.emit(.willRemove(key: victim.key, reason: reason)) }
        }
        var remaining = victims[...]
        try removeFreeingSpace(
            all: { try indexCall { index in try index.transaction { try index.delete(victims) } } },
            batch: { limit in
                let batch = Array(remaining.prefix(limit))
                let removed = try indexCall { index in try index.transaction { try index.delete(batch) } }
                remaining = remaining.dropFirst(batch.count)
                return (removed, remaining.isEmpty)
            },
            afterEach: { deleted in
                deleteFiles(deleted.compactMap(\.file))
                if !observers.isEmpty {
                    for victim in deleted { observers.emit(.didRemove(key: victim.key, reason: reason)) }
                }
            })
    }

    /// Chooses victims with `select` and removes them; the choice and the removal are one
    /// transaction when nobody observes (each batch is, on a full disk), so concurrent trims
    /// never remove more than needed.
    private func trim(reason: RemovalReason, select: @escaping (DiskIndex) throws -> [DiskIndex.Victim]) throws {
        if observers.isEmpty {
            try removeFreeingSpace(
                all: {
                    try indexCall { index in
                        try? index.flushAccessTimes() // a full disk must not stop the trim that frees it
                        return try index.transaction { try index.delete(try select(index)) }
                    }
                },
                batch: { limit in
                    try indexCall { index in
                        try index.transaction {
                            let chosen = try select(index)
                            return (try index.delete(Array(chosen.prefix(limit))), chosen.count <= limit)
                        }
                    }
                },
                afterEach: { deleteFiles($0.compactMap(\.file)) })
        } else {
            let victims = try indexCall { index in
                try? index.flushAccessTimes()
                return try select(index)
            }
            try removeVictims(victims, reason: reason)
        }
        collectGarbage()
        restoreReserve()
    }

    /// Removes entries not used since `date`.
    public func trim(toDate date: Date) throws {
        let cutoff = date.timeIntervalSince1970
        try trim(reason: .trimmedByDate) { index in
            try index.victims("SELECT id, key, size, file FROM entries WHERE accessed < ?1 ORDER BY accessed", bind: { $0.bind(1, cutoff) })
        }
    }

    /// Removes entries, largest first, until at most `byteCount` bytes remain. The index file
    /// is compacted in the background if that left it mostly free.
    public func trim(toSize byteCount: Int) throws {
        try removeExpired()
        try trim(reason: .trimmedBySize) { try $0.victimsBySize(toBytes: max(0, byteCount)) }
        compactSoon()
    }

    /// Removes entries, least recently used first, until at most `byteCount` bytes remain. The
    /// index file is compacted in the background if that left it mostly free.
    public func trim(toSizeByDate byteCount: Int) throws {
        try removeExpired()
        try trim(reason: .trimmedByRecency) { try $0.victimsByAccess(toBytes: max(0, byteCount)) }
        compactSoon()
    }

    /// Removes every entry whose key begins with `prefix`, found through the index of keys (a
    /// range of it: no other entry is read). Observers see `.removed` for each.
    /// - Throws: `DiskCacheError.invalidKeyPrefix` for an empty prefix (use `removeAll`).
    public func removeValues(withKeyPrefix prefix: String) throws {
        guard !prefix.isEmpty else { throw DiskCacheError.invalidKeyPrefix }
        let upper = KeyPrefix.upperBound(of: prefix)
        try trim(reason: .removed) { index in
            if let upper {
                return try index.victims("SELECT id, key, size, file FROM entries WHERE key >= ?1 AND key < ?2",
                                         bind: { $0.bind(1, prefix); $0.bind(2, upper) })
            }
            return try index.victims("SELECT id, key, size, file FROM entries WHERE key >= ?1", bind: { $0.bind(1, prefix) })
        }
    }

    /// Removes entries whose expiry date has passed or that outlived the age limit.
    public func removeExpired() throws {
        let now = clock()
        let ageLimit = self.ageLimit
        try trim(reason: .expired) { index in
            var victims = try index.victims(
                "SELECT id, key, size, file FROM entries WHERE expires IS NOT NULL AND expires <= ?1",
                bind: { $0.bind(1, now) })
            if ageLimit > 0 {
                victims += try index.victims(
                    "SELECT id, key, size, file FROM entries WHERE accessed < ?1 AND (expires IS NULL OR expires > ?2)",
                    bind: { $0.bind(1, now - ageLimit); $0.bind(2, now) })
            }
            return victims
        }
    }

    /// Trims least recently used entries, once the byte limit is exceeded, down to the trim target.
    /// - Parameter keeping: a key that must stay (the one a set just wrote).
    func enforceByteLimit(keeping: String? = nil) throws {
        let limit = byteLimit
        guard limit > 0 else { return }
        let target = trimTarget(limit)
        try trim(reason: .trimmedByRecency) { index in
            try index.totals().bytes > limit ? try index.victimsByAccess(toBytes: target, keeping: keeping) : []
        }
    }

    /// Bytes to trim down to once `limit` is exceeded.
    func trimTarget(_ limit: Int) -> Int { Int(checked: Double(limit) * trimRatio) }

    /// Removes every entry at once: the data directory is renamed into `trash/` in the same
    /// transaction that empties the index, and the trash is deleted in the background. Emptying
    /// the index writes a few pages whatever it held, which the reserve covers on a full disk.
    ///
    /// Waits until every `withFileURL` closure, in any process, has returned.
    public func removeAll() throws {
        observers.emit(.willRemoveAll)
        try withRoomForRemoval { try emptyIndexAndTrashData() }
        emptyTrash()
        compactSoon()
        observers.emit(.didRemoveAll)
    }

    /// The work of `removeAll`, under the pin lock (released before any event is emitted, so
    /// observers may call `withFileURL` or `removeAll` themselves).
    private func emptyIndexAndTrashData() throws {
        let pinLock = try FileLock.opening(paths.pinLock)
        try pinLock.acquire(exclusive: true)
        defer { pinLock.unlock() }
        let trashName = paths.trash + "/" + Self.randomFileName()
        try indexCall { index in
            index.pendingAccess.removeAll()
            try index.transaction {
                try index.connection.execute("DELETE FROM entries; DELETE FROM blobs; DELETE FROM garbage; UPDATE meta SET bytes = 0, count = 0 WHERE id = 1")
                do {
                    try files.makeDirectory(paths.trash)
                    try files.rename(paths.data, to: trashName)
                    try files.makeDirectory(paths.data)
                } catch let error as Errno where error == .noSuchFile {
                    try? files.makeDirectory(paths.data)
                } catch let error as Errno {
                    throw DiskCacheError.posix(error.code, operation: "removeAll", path: paths.data)
                }
            }
        }
    }

    /// Counts, bytes and dates of the whole cache, from the index alone (no value is read and no
    /// entry is listed).
    public struct Statistics: Sendable, Hashable {
        /// Entries in the index, expired ones not yet removed included.
        public var entryCount: Int
        /// Value bytes: what `byteLimit` counts.
        public var valueBytes: Int
        /// Entries whose value is kept inside the index rather than in its own file.
        public var inlineEntryCount: Int
        /// Entries stored with an expiry date (the age limit does not count).
        public var entriesWithExpiry: Int
        /// The earliest access date of any entry; nil when the cache is empty.
        public var oldestAccess: Date?
        /// The latest access date of any entry; nil when the cache is empty.
        public var newestAccess: Date?
        /// Size of the index file and its write-ahead log, inline values included.
        public var indexFileBytes: Int
    }

    /// Reads the cache's statistics from the index, after writing out pending access dates.
    public func statistics() throws -> Statistics {
        let aggregates = try indexCall { index -> (Int, Int, Int, Int, Double?, Double?) in
            try? index.flushAccessTimes()
            let statement = try index.statement("""
                SELECT count(*), total(size), count(*) - count(file), count(expires), min(accessed), max(accessed) FROM entries
                """)
            defer { statement.reset() }
            guard try statement.step() else { return (0, 0, 0, 0, nil, nil) }
            return (statement.int(0), statement.int(1), statement.int(2), statement.int(3),
                    statement.optionalDouble(4), statement.optionalDouble(5))
        }
        let fileBytes = ["", "-wal"].reduce(0) { total, suffix in
            var info = stat()
            return stat(paths.index + suffix, &info) == 0 ? total + Int(info.st_size) : total
        }
        return Statistics(
            entryCount: aggregates.0, valueBytes: aggregates.1, inlineEntryCount: aggregates.2,
            entriesWithExpiry: aggregates.3, oldestAccess: aggregates.4.map(Date.init(timeIntervalSince1970:)),
            newestAccess: aggregates.5.map(Date.init(timeIntervalSince1970:)), indexFileBytes: fileBytes)
    }

    /// Every entry's key, size and dates, without reading any value, in key order.
    public func entries() throws -> [Entry] {
        var result: [Entry] = []
        try forEachEntry { result.append($0) }
        return result
    }

    /// Calls `body` for every entry, without reading values. Runs on a snapshot: changes made
    /// meanwhile (by `body` or anyone else) do not disturb the enumeration.
    public func forEachEntry(_ body: (Entry) throws -> Void) throws {
        let snapshot: [Entry] = try indexCall { index in
            try? index.flushAccessTimes()
            let statement = try index.connection.prepare(
                "SELECT key, size, created, accessed, expires, file IS NULL FROM entries ORDER BY key")
            var entries: [Entry] = []
            while try statement.step() {
                entries.append(Entry(
                    key: statement.string(0) ?? "", size: statement.int(1),
                    createdAt: Date(timeIntervalSince1970: statement.double(2)),
                    accessedAt: Date(timeIntervalSince1970: statement.double(3)),
                    expiresAt: statement.optionalDouble(4).map(Date.init(timeIntervalSince1970:)),
                    isInline: statement.int(5) != 0))
            }
            return entries
        }
        for entry in snapshot { try body(entry) }
    }
}
