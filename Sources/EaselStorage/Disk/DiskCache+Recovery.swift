import EaselSupport
import CSQLite
import Foundation
import Logging
import Synchronization

extension DiskCache {
    /// Opens the index, rebuilding it from the value files when it is missing, damaged or of
    /// another schema. An exclusive lock on `open.lock` keeps two processes from rebuilding at once.
    static func openIndex(paths: Paths, files: any FileOperations, durable: Bool, mappedBytes: Int,
                          logger: Logger) throws -> DiskIndex {
        do {
            try FileManager.default.createDirectory(atPath: paths.root, withIntermediateDirectories: true)
            for directory in [paths.data, paths.tmp, paths.trash] { try files.makeDirectory(directory) }
        } catch let error as Errno {
            throw DiskCacheError.posix(error.code, operation: "mkdir", path: paths.root)
        } catch {
            throw DiskCacheError.invalidDirectory(path: paths.root)
        }
        let openLock = try FileLock.opening(paths.openLock)
        try openLock.acquire(exclusive: true)
        defer { openLock.unlock() }
        do {
            let index = try DiskIndex(path: paths.index, durable: durable, mappedBytes: mappedBytes)
            // A new index, or one whose rebuild was cut short, is filled from the value files.
            if try !index.isComplete() { try rebuild(index, paths: paths, logger: logger) }
            return index
        } catch let error as SQLiteError where error.isCorruption {
            logger.error("cache index damaged; rebuilding it from the value files", metadata: [
                "path": "\(paths.index)", "error": "\(error)"])
            let aside = paths.trash + "/index-" + randomFileName()
            try? files.makeDirectory(aside)
            for suffix in ["", "-wal", "-shm"] { try? files.rename(paths.index + suffix, to: aside + "/index.sqlite" + suffix) }
            do {
                let index = try DiskIndex(path: paths.index, durable: durable, mappedBytes: mappedBytes)
                try rebuild(index, paths: paths, logger: logger)
                return index
            } catch let error as SQLiteError {
                throw DiskCacheError.sqlite(error, path: paths.index)
            }
        } catch let error as SQLiteError {
            throw DiskCacheError.sqlite(error, path: paths.index)
        }
    }

    /// Adds a row for every intact value file not yet in the index, and marks the index
    /// complete, in one transaction. Small values kept inside a lost index are gone (this is a
    /// cache); every value stored as a file comes back, without its expiry date. When several
    /// files hold one key (a crash between replacing a value and deleting the old file), the
    /// newest wins and the others are deleted.
    static func rebuild(_ index: DiskIndex, paths: Paths, logger: Logger) throws {
        let manager = FileManager.default
        var shards: [String] = []
        if manager.fileExists(atPath: paths.data) {
            do { shards = try manager.contentsOfDirectory(atPath: paths.data) } catch {
                throw DiskCacheError.ioError(operation: "list", path: paths.data, errno: EIO)
            }
        }
        var newest: [String: (name: String, trailer: EntryFile.Trailer, modified: Double)] = [:]
        var rejected = 0
        for shard in shards {
            guard let names = try? manager.contentsOfDirectory(atPath: paths.data + "/" + shard) else { continue }
            for name in names {
                let path = paths.data + "/" + shard + "/" + name
                guard let (trailer, key, modified) = readTrailer(path) else {
                    rejected += 1
                    unlink(path)
                    continue
                }
                if let kept = newest[key] {
                    let loser = kept.modified >= modified ? name : kept.name
                    unlink(paths.file(loser))
                    if kept.modified >= modified { continue }
                }
                newest[key] = (name, trailer, modified)
            }
        }
        try index.transaction {
            let insert = try index.connection.prepare("""
                INSERT OR IGNORE INTO entries(key, size, checksum, created, accessed, expires, file)
                VALUES (?1, ?2, ?3, ?4, ?4, NULL, ?5)
                """)
            for (key, file) in newest {
                try insert.run { s in
                    s.bind(1, key)
                    s.bind(2, file.trailer.valueLength)
                    s.bind(3, Int64(bitPattern: file.trailer.valueChecksum))
                    s.bind(4, file.modified)
                    s.bind(5, file.name)
                }
            }
            try index.connection.execute("""
                UPDATE meta SET bytes = (SELECT total(size) FROM entries), count = (SELECT count(*) FROM entries),
                    last_sweep = \(WallClock.now()), complete = 1 WHERE id = 1
                """)
        }
        if !newest.isEmpty || rejected > 0 {
            logger.notice("cache index rebuilt", metadata: [
                "restored": "\(newest.count)", "rejected": "\(rejected)", "path": "\(paths.root)"])
        }
    }

    /// Reads and verifies a value file's trailer; returns it, the key and the file's mtime.
    static func readTrailer(_ path: String) -> (EntryFile.Trailer, String, Double)? {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        guard size >= EntryFile.fixedTrailerSize else { return nil }
        var fixed = [UInt8](repeating: 0, count: EntryFile.fixedTrailerSize)
        let got = fixed.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(size - EntryFile.fixedTrailerSize)) }
        guard got == EntryFile.fixedTrailerSize,
              let trailer = fixed.withUnsafeBytes({ EntryFile.parseFixedTrailer($0, fileSize: size) }) else { return nil }
        let whole = trailer.keyLength + EntryFile.fixedTrailerSize
        var bytes = [UInt8](repeating: 0, count: whole)
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(trailer.valueLength)) }
        guard read == whole, let (verified, key) = bytes.withUnsafeBytes({ EntryFile.verifyTrailer($0, fileSize: size) }) else { return nil }
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        return (verified, key, modified)
    }

    /// Background housekeeping after open: empty the trash, delete temporary files abandoned by
    /// crashed writers, and, at most once a day, delete value files that no row names (left by a
    /// crash between renaming a file into place and committing its row).
    func scheduleMaintenance() {
        let paths = self.paths
        BlockingIOPool.shared.submit { [weak self] in
            let manager = FileManager.default
            let now = WallClock.now() // compared with file times, which are real times
            if let items = try? manager.contentsOfDirectory(atPath: paths.trash) {
                for item in items { try? manager.removeItem(atPath: paths.trash + "/" + item) }
            }
            // Writers in other processes may be mid-write: only old temporary files are abandoned.
            for name in (try? manager.contentsOfDirectory(atPath: paths.tmp)) ?? [] {
                let path = paths.tmp + "/" + name
                var info = stat()
                if stat(path, &info) == 0, now - Double(info.st_mtim.tv_sec) > 600 { unlink(path) }
            }
            self?.sweepOrphans(olderThan: 600, ifNotSweptFor: 86_400)
        }
    }

    /// Deletes value files that no index row names, that are not waiting in `garbage` for a
    /// reader to let go, and that are older than `age` seconds.
    ///
    /// Candidates are found from a snapshot, then each is checked again inside a write
    /// transaction: files are renamed into `data/` only inside the writer's transaction, so
    /// while this one holds the write lock a file without a row cannot be a set in progress.
    /// - Returns: the number of files deleted.
    @discardableResult
    package func sweepOrphans(olderThan age: Double, ifNotSweptFor interval: Double = 0) -> Int {
        let now = WallClock.now() // file times are real times, whatever clock the cache was given
        guard let known: Set<String> = try? indexCall({ index in
            let meta = try index.statement("SELECT last_sweep FROM meta WHERE id = 1")
            let lastSweep = try meta.step() ? meta.double(0) : 0
            meta.reset()
            guard now - lastSweep >= interval else { return nil }
            try index.transaction { try index.connection.execute("UPDATE meta SET last_sweep = \(now) WHERE id = 1") }
            let statement = try index.connection.prepare("SELECT file FROM entries WHERE file IS NOT NULL")
            var names = Set<String>()
            while try statement.step() { if let name = statement.string(0) { names.insert(name) } }
            return names
        }) else { return 0 }
        var candidates: [String] = []
        let manager = FileManager.default
        for shard in (try? manager.contentsOfDirectory(atPath: paths.data)) ?? [] {
            for name in (try? manager.contentsOfDirectory(atPath: paths.data + "/" + shard)) ?? [] where !known.contains(name) {
                var info = stat()
                if stat(paths.file(name), &info) == 0, now - Double(info.st_mtim.tv_sec) > age { candidates.append(name) }
            }
        }
        guard !candidates.isEmpty else { return 0 }
        return (try? indexCall { index in
            try index.transaction {
                let inEntries = try index.statement("SELECT 1 FROM entries WHERE file = ?1")
                let inGarbage = try index.statement("SELECT 1 FROM garbage WHERE file = ?1")
                var deleted = 0
                for name in candidates {
                    inEntries.bind(1, name)
                    inGarbage.bind(1, name)
                    defer { inEntries.reset(); inGarbage.reset() }
                    guard try !inEntries.step(), try !inGarbage.step() else { continue }
                    let fd = systemOpen(paths.file(name), O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { continue }
                    if flock(fd, LOCK_EX | LOCK_NB) == 0, unlink(paths.file(name)) == 0 { deleted += 1 }
                    close(fd)
                }
                return deleted
            }
        }) ?? 0
    }
}

extension DiskCache {
    /// Caps the index at `pages` database pages, so SQLite reports a full disk past it: a real
    /// SQLITE_FULL for tests of the inline-value path.
    package func limitIndexPages(to pages: Int) throws {
        try indexCall { try $0.connection.execute("PRAGMA max_page_count = \(pages)") }
    }
}

extension DiskCache {
    /// Hands the index's free pages back to the file system when at least half of it is free,
    /// e.g. after `removeAll` or a large trim (SQLite reuses free pages but never returns them
    /// by itself).
    ///
    /// Indexes created by this version release them a few hundred pages at a time
    /// (`incremental_vacuum`), with the log truncated after each step, so this works on a full
    /// disk. Older ones are rewritten once with VACUUM, which converts them, and which needs
    /// room for twice what remains.
    /// - Returns: the bytes the index file shrank by.
    /// - Throws: `DiskCacheError.diskFull` when an older index has no room to be rewritten.
    @discardableResult
    public func compact() throws -> Int {
        let path = paths.index
        defer { restoreReserve() }
        return try checkpointConnection.withLock { connection in
            if connection == nil {
                connection = try SQLiteConnection(path: path)
                try connection?.execute(synchronousWrites ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
            }
            guard let connection else { return 0 }
            sqlite3_busy_timeout(connection.handle, 5_000)
            func pragma(_ name: String) throws -> Int {
                let statement = try connection.prepare("PRAGMA \(name)")
                return try statement.step() ? statement.int(0) : 0
            }
            let pages = try pragma("page_count"), free = try pragma("freelist_count")
            guard pages > 128, free * 2 >= pages else { return 0 }
            let pageSize = try pragma("page_size")
            let before = pageSize * pages
            do {
                if try pragma("auto_vacuum") == 2 {
                    try releaseFreePages(connection, pageSize: pageSize, count: pragma)
                } else {
                    // VACUUM writes what remains into the log, after a temporary copy.
                    if let space = try? files.space(at: paths.root), space.available < 2 * (pages - free) * pageSize {
                        throw DiskCacheError.diskFull(path: path)
                    }
                    try connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
                    try connection.execute("VACUUM")
                }
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            } catch let error as SQLiteError {
                throw DiskCacheError.sqlite(error, path: path)
            }
            let after = try pragma("page_size") * (try pragma("page_count"))
            logger.info("cache index compacted", metadata: ["cache": "\(name)", "bytes": "\(before) -> \(after)"])
            return max(0, before - after)
        }
    }

    /// Releases every free page of an incrementally vacuumed index, in steps small enough for the
    /// free space (halved while SQLite reports a full disk), truncating the log after each.
    private func releaseFreePages(_ connection: SQLiteConnection, pageSize: Int, count: (String) throws -> Int) throws {
        let available = (try? files.space(at: paths.root).available) ?? 0
        var step = min(512, max(8, available / (4 * pageSize)))
        // Each pass releases `step` pages or halves `step` (failing below 8); the bound only
        // guards against writers freeing pages as fast as this releases them.
        for _ in 0..<(try count("freelist_count") / 8 + 16) {
            guard try count("freelist_count") > 0 else { return }
            do {
                try connection.execute("PRAGMA incremental_vacuum(\(step))")
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            } catch let error as SQLiteError where error.isFull && step > 8 {
                step /= 2
                try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
    }

    /// `compact()` on an I/O thread, failures only logged: run after removals that may leave
    /// the index mostly empty.
    func compactSoon() {
        BlockingIOPool.shared.submit { [weak self] in
            do { try self?.compact() } catch {
                self?.logger.notice("cache index not compacted", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Copies the WAL back into the database on a pool thread, through a connection of its own,
    /// so that no `set` pays for a checkpoint; first re-checks the free space (`updateLowSpaceMode`).
    /// Several requests while one runs collapse into it.
    func checkpointSoon() {
        // Called inside the writer's transaction: only an atomic flag here, never a lock that
        // the checkpoint itself holds.
        guard checkpointPending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let path = paths.index, durable = synchronousWrites
        BlockingIOPool.shared.submit { [weak self] in
            guard let self else { return }
            self.checkpointPending.store(false, ordering: .releasing)
            self.updateLowSpaceMode()
            self.checkpointConnection.withLock { connection in
                if connection == nil {
                    connection = try? SQLiteConnection(path: path)
                    try? connection?.execute(durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
                }
                if let connection {
                    sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                }
            }
        }
    }
}

