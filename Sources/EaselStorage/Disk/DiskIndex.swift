import EaselSupport
import CSQLite
import Foundation

/// The disk cache's persistent index: one SQLite database in WAL mode, shared safely by every
/// process that opens the directory. Not thread safe by itself; `DiskCache` keeps it behind a
/// lock (`Locked`) and runs every change in a `BEGIN IMMEDIATE` transaction.
///
/// Entries up to the inline limit keep their value in the `blobs` table, under the entry's id
/// (a table of its own, because SQLite rewrites a whole record on UPDATE: recording an access
/// date must not rewrite a 100 KB value); larger ones name a
/// file under `data/` in `file`. `meta` keeps the running byte and entry counts, changed in the
/// same transaction as the rows, so opening never has to sum or stat anything.
final class DiskIndex {
    /// Unchanged by the `xxh3` column (see `addXXH3Column`): a process of an earlier version may
    /// use the same index at the same time, before and after the column is added, and may be
    /// started again on it (a rollback).
    static let schemaVersion: Int32 = 3

    struct Row {
        var id: Int64
        var size: Int
        /// XXH64 of the value, in every row (value files' trailers carry it too, and processes
        /// of earlier versions verify inline values with it).
        var checksum: UInt64
        var accessed: Double
        var expires: Double?
        var file: String?
        /// XXH3-64 of an inline value, in rows this version wrote (nil in others): what a get
        /// verifies when present, about 3× as fast as XXH64 on 100 KB.
        var xxh3: UInt64? = nil
    }

    /// An entry chosen for removal, identified by its row id so a concurrent replacement of the
    /// same key is never removed by mistake (ids come from AUTOINCREMENT: never reused).
    struct Victim: Sendable {
        var id: Int64
        var key: String
        var size: Int
        var file: String?
    }

    let connection: SQLiteConnection
    private let lookup: SQLiteStatement
    private let lookupWithValue: SQLiteStatement
    private let upsert: SQLiteStatement
    private let insertBlob: SQLiteStatement
    private let deleteBlob: SQLiteStatement
    private let deleteByID: SQLiteStatement
    private let victimRow: SQLiteStatement
    private let addTotals: SQLiteStatement
    private let readTotals: SQLiteStatement
    private let touch: SQLiteStatement
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    let rollback: SQLiteStatement
    /// `BEGIN` (deferred) and `COMMIT` for the read transaction gets share (`HeldRead`).
    let beginDeferred: SQLiteStatement
    let endTransaction: SQLiteStatement
    var heldRead = HeldRead()

    /// Statements prepared on first use and kept, for SQL not known at `init`.
    private var prepared: [String: SQLiteStatement] = [:]

    /// The prepared statement for `sql`, reset and ready to bind.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let statement = prepared[sql] {
            statement.reset()
            return statement
        }
        let statement = try connection.prepare(sql)
        prepared[sql] = statement
        return statement
    }

    /// Access times recorded by reads and not yet written (key → time).
    var pendingAccess: [CacheKey: Double] = [:]
    var lastFlush = WallClock.now()

    /// Estimated bytes appended to the WAL since the last checkpoint was requested.
    private var walBytesSinceCheckpoint = 0
    /// Called (under the cache's lock) every `checkpointBytes` of writes; it must only schedule.
    var checkpointDue: (@Sendable () -> Void)?
    /// Small enough that a checkpoint never has much to copy, measured with the peer workload
    /// (`Benchmarks/peers`): checkpointing only every 128 commits of 100 KB values doubled the
    /// mean set time.
    static let checkpointBytes = 2 << 20
    static let pageSize = 8192
    static let autocheckpointPages = 2000

    /// Whether `DiskCache.updateLowSpaceMode` found the file system nearly full.
    var lowSpace = false
    /// Pages the log may hold before the writer checkpoints it itself (see `limitLog`).
    private var logLimitPages = autocheckpointPages

    /// Opens the index at `path`.
    /// - Parameters:
    ///   - durable: fsync on commit (survives power loss). Without it nothing is ever fsynced:
    ///     a killed process loses nothing, and a power loss can at worst damage the index, which
    ///     is then rebuilt from the value files.
    ///   - mappedBytes: how much of the database SQLite may read through `mmap`.
    init(path: String, durable: Bool = false, mappedBytes: Int = 0) throws {
        connection = try SQLiteConnection(path: path)
        try Self.configure(connection, durable: durable, mappedBytes: mappedBytes)
        try Self.createOrCheckSchema(connection, path: path)
        hasXXH3 = Self.addXXH3Column(connection)
        let xxh3 = hasXXH3 ? "xxh3" : "NULL"  // only `entries` has a column of that name
        lookup = try connection.prepare("SELECT id, size, checksum, accessed, expires, file, \(xxh3) FROM entries WHERE key = ?1")
        // A get's one statement: the row and, for an inline entry up to `blobReadThreshold`
        // bytes, its value (column 7; a larger one is read with `sqlite3_blob_read`), and whether
        // its blob row exists (column 8).
        lookupWithValue = try connection.prepare("""
            SELECT e.id, e.size, e.checksum, e.accessed, e.expires, e.file, \(xxh3),
                   CASE WHEN e.size <= \(Self.blobReadThreshold) THEN b.value END, b.id IS NOT NULL
            FROM entries e LEFT JOIN blobs b ON b.id = e.id AND e.file IS NULL WHERE e.key = ?1
            """)
        upsert = try connection.prepare(hasXXH3 ? """
            INSERT OR REPLACE INTO entries(key, size, checksum, created, accessed, expires, file, xxh3)
            VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)
            """ : """
            INSERT OR REPLACE INTO entries(key, size, checksum, created, accessed, expires, file)
            VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)
            """)
        insertBlob = try connection.prepare("INSERT OR REPLACE INTO blobs(id, value) VALUES (?1, ?2)")
        deleteBlob = try connection.prepare("DELETE FROM blobs WHERE id = ?1")
        // Read, then delete: RETURNING would buffer through an ephemeral table (measured slower).
        victimRow = try connection.prepare("SELECT size, file FROM entries WHERE id = ?1")
        deleteByID = try connection.prepare("DELETE FROM entries WHERE id = ?1")
        addTotals = try connection.prepare("UPDATE meta SET bytes = bytes + ?1, count = count + ?2 WHERE id = 1")
        readTotals = try connection.prepare("SELECT bytes, count FROM meta WHERE id = 1")
        touch = try connection.prepare("UPDATE entries SET accessed = ?2 WHERE key = ?1 AND accessed < ?2")
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        beginDeferred = try connection.prepare("BEGIN")
        endTransaction = try connection.prepare("COMMIT")
        _ = try totals()
        heldRead.find(in: connection)
    }

    /// The connection's settings: page size and incremental vacuum (a new database), the mapped
    /// bytes, WAL, how durable commits are, fast secure delete and the checkpoint backstop.
    private static func configure(_ connection: SQLiteConnection, durable: Bool, mappedBytes: Int) throws {
            sqlite3_busy_timeout(connection.handle, 30_000)
            // Takes effect only for a new database (before WAL mode is set). 8 KiB pages measured
            // best for 10–100 KB values: fewer overflow pages per value than 4 KiB, less write
            // amplification for small rows than 16 KiB.
            try connection.execute("PRAGMA page_size=\(Self.pageSize)")
            // Lets `DiskCache.compact` hand free pages back a few at a time, which needs little room
            // even on a full disk (VACUUM needs room for everything that remains). Set only in a new
            // database: on an existing one the pragma writes a page. Older indexes convert on a VACUUM.
            if try integerPragma("page_count", connection) == 0 {
                try connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
            }
            try connection.execute("PRAGMA mmap_size=\(max(0, mappedBytes))")
            // Fails with SQLITE_NOTADB on a damaged file: the caller rebuilds.
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute(durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
            // Debian builds SQLite with secure_delete on, which rewrites every freed page: a trim of
            // 40 MB would write 40 MB. FAST still zeroes deleted cells on pages written anyway.
            try connection.execute("PRAGMA secure_delete=FAST")
            // Checkpoints normally run on a background connection (`DiskCache.checkpointSoon`);
            // this is only the backstop that bounds the WAL if they cannot keep up.
            try connection.execute("PRAGMA wal_autocheckpoint=\(Self.autocheckpointPages)")
    }

    /// Creates the schema in a new database; refuses an index of another schema version.
    private static func createOrCheckSchema(_ connection: SQLiteConnection, path: String) throws {
            let version = try userVersion(connection)
            if version == 0 {
                try connection.execute("""
                    BEGIN IMMEDIATE;
                    CREATE TABLE IF NOT EXISTS entries(
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        key TEXT NOT NULL UNIQUE,
                        size INTEGER NOT NULL,
                        checksum INTEGER NOT NULL,
                        created REAL NOT NULL,
                        accessed REAL NOT NULL,
                        expires REAL,
                        file TEXT,
                        xxh3 INTEGER);
                    CREATE TABLE IF NOT EXISTS blobs(id INTEGER PRIMARY KEY, value BLOB NOT NULL);
                    CREATE INDEX IF NOT EXISTS entries_by_access ON entries(accessed);
                    CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries(expires) WHERE expires IS NOT NULL;
                    CREATE TABLE IF NOT EXISTS meta(id INTEGER PRIMARY KEY CHECK (id = 1),
                        bytes INTEGER NOT NULL, count INTEGER NOT NULL, last_sweep REAL NOT NULL,
                        complete INTEGER NOT NULL);
                    INSERT OR IGNORE INTO meta(id, bytes, count, last_sweep, complete) VALUES (1, 0, 0, 0, 0);
                    CREATE TABLE IF NOT EXISTS garbage(file TEXT PRIMARY KEY);
                    PRAGMA user_version = \(Self.schemaVersion);
                    COMMIT;
                    """)
            } else if version != Self.schemaVersion {
                // Not damage: another version of Easel may be using this index right now, so it is
                // never moved aside here.
                throw DiskCacheError.incompatibleIndex(path: path, found: Int(version), expected: Int(Self.schemaVersion))
            }
    }

    /// Whether rows carry `xxh3` (false only where the column could not be added).
    let hasXXH3: Bool

    /// Adds `entries.xxh3` to an index made before it existed, unless another process did. A
    /// nullable column with no default: adding it rewrites nothing, rows of earlier versions (and
    /// rows earlier versions write later, which never name it) read as NULL and are verified with
    /// XXH64, and those processes' statements, which name their columns, prepare again and go on.
    /// Best effort: where it cannot be written (a full disk, a read-only file) the index is used
    /// without it, every value verified with XXH64.
    private static func addXXH3Column(_ connection: SQLiteConnection) -> Bool {
        func present() -> Bool {
            guard let statement = try? connection.prepare("SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'xxh3'") else {
                return false
            }
            defer { statement.reset() }
            return (try? statement.step()) == true && statement.int(0) == 1
        }
        if present() { return true }
        do {
            try connection.execute("BEGIN IMMEDIATE")
            if !present() { try connection.execute("ALTER TABLE entries ADD COLUMN xxh3 INTEGER") }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
        }
        return present()
    }

    private static func userVersion(_ connection: SQLiteConnection) throws -> Int32 {
        Int32(try integerPragma("user_version", connection))
    }

    private static func integerPragma(_ name: String, _ connection: SQLiteConnection) throws -> Int {
        let statement = try connection.prepare("PRAGMA \(name)")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int(0)
    }

    // MARK: Transactions

    /// Runs `body` in one write transaction; rolls back if it throws.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        endHeldRead()
        try begin.run()
        do {
            let result = try body()
            try commit.run()
            noteWrite(bytes: 0)
            return result
        } catch {
            try? rollback.run()
            throw error
        }
    }

    /// Bounds the log to about `bytes`: past it the writer checkpoints by itself, instead of
    /// leaving it to the background connection, and the file is cut back to it after each
    /// restart. The pages a checkpoint copies into the database file may need as many new
    /// blocks, so on a nearly full disk this must stay below the reserve.
    func limitLog(to bytes: Int) {
        endHeldRead()
        let pages = max(16, min(Self.autocheckpointPages, bytes / Self.pageSize))
        guard pages != logLimitPages else { return }
        logLimitPages = pages
        sqlite3_wal_autocheckpoint(connection.handle, Int32(pages))
        try? connection.execute("PRAGMA journal_size_limit=\(pages * Self.pageSize)")
    }

    /// How long `checkpointAndTruncate` waits for another connection's checkpoint: as long as
    /// the busy timeout waits for any other lock.
    static let checkpointLockTimeout: Double = 30

    /// Copies the whole log into the database and truncates it to zero bytes, giving its space
    /// back.
    ///
    /// While another connection checkpoints (this cache's background compaction, another
    /// instance or process), SQLite answers SQLITE_BUSY at once, without calling the busy
    /// handler; and a truncating checkpoint holds that lock while it waits for the writer lock,
    /// which removals made batch after batch keep taking, so the log would only grow (on a full
    /// disk, until a trim itself failed for want of space). That lock is waited for here, as
    /// the busy timeout waits for the others; nothing is held while waiting.
    /// - Throws: `SQLiteError` when a reader or a full disk kept it from completing.
    func checkpointAndTruncate() throws {
        endHeldRead()
        let deadline = HeldRead.monotonicNow() + Self.checkpointLockTimeout
        var pause: UInt32 = 500  // microseconds, doubling to 10 ms
        var rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        while rc & 0xFF == SQLITE_BUSY, HeldRead.monotonicNow() < deadline {
            usleep(pause)
            pause = min(pause * 2, 10_000)
            rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        }
        guard rc == SQLITE_OK else { throw connection.error(rc) }
        walBytesSinceCheckpoint = 0
    }

    /// Counts bytes written (plus a page per commit) and asks for a checkpoint when due.
    func noteWrite(bytes: Int) {
        walBytesSinceCheckpoint += bytes + Self.pageSize
        if walBytesSinceCheckpoint >= Self.checkpointBytes {
            walBytesSinceCheckpoint = 0
            checkpointDue?()
        }
    }

    // MARK: Rows

    /// Inline values larger than this are read with `sqlite3_blob_read`, straight from the
    /// pages into the returned buffer; smaller ones come with the row (one statement), where
    /// opening a blob handle would cost more than the copy it saves.
    static let blobReadThreshold = 16 * 1024

    /// The row for `key`; `inline` receives an inline value, or nil when it is damaged (its blob
    /// row missing or of another length). A read that fails (I/O, memory) throws: the entry stays.
    func row(forKey key: String, inline: ((Data?) -> Void)? = nil) throws -> Row? {
        let statement = inline == nil ? lookup : lookupWithValue
        defer { statement.reset() }
        statement.bind(1, key)
        guard try statement.step() else { return nil }
        let row = Row(
            id: statement.int64(0), size: statement.int(1), checksum: UInt64(bitPattern: statement.int64(2)),
            accessed: statement.double(3), expires: statement.optionalDouble(4), file: statement.string(5),
            xxh3: statement.optionalInt64(6).map { UInt64(bitPattern: $0) })
        guard row.file == nil, let inline else { return row }
        guard statement.int(8) == 1 else {
            inline(nil)
            return row
        }
        if row.size <= Self.blobReadThreshold {
            inline(statement.blob(7).map { Data($0) })
        } else {
            inline(try readBlob(id: row.id, size: row.size))
        }
        return row
    }

    /// The inline value of row `id` read from its pages into a new buffer (one copy, where the
    /// column would take two: SQLite assembling the overflow chain, then the `Data`); nil when its
    /// length is not `size` (damaged). Runs while the lookup statement holds the read.
    private func readBlob(id: Int64, size: Int) throws -> Data? {
        var handle: OpaquePointer?
        let opened = sqlite3_blob_open(connection.handle, "main", "blobs", "value", id, 0, &handle)
        defer { if let handle { sqlite3_blob_close(handle) } }
        guard opened == SQLITE_OK, let handle else { throw connection.error(opened) }
        guard Int(sqlite3_blob_bytes(handle)) == size else { return nil }
        guard size > 0 else { return Data() }
        // Not `Data(count:)`: that zeroes what the read overwrites at once.
        guard let buffer = malloc(size) else { throw connection.error(SQLITE_NOMEM) }
        let status = sqlite3_blob_read(handle, buffer, Int32(size), 0)
        guard status == SQLITE_OK else {
            free(buffer)
            throw connection.error(status)
        }
        return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
    }

    /// Inserts or replaces the row for `key`; returns the replaced row's size and file, if any.
    /// - Parameter xxh3: the inline value's XXH3 (nil for a value file).
    /// - Parameter dates: when it is stored, and when it expires (nil: never, beyond the age limit).
    func store(key: String, size: Int, checksum: UInt64, xxh3: UInt64?, dates: (now: Double, expires: Double?),
               file: String?, inline: UnsafeRawBufferPointer?) throws -> Row? {
        let (now, expires) = dates
        let old = try row(forKey: key)
        try upsert.run { s in
            s.bind(1, key)
            s.bind(2, size)
            s.bind(3, Int64(bitPattern: checksum))
            s.bind(4, now)
            s.bind(5, expires)
            s.bind(6, file)
            if hasXXH3 { s.bind(7, xxh3.map { Int64(bitPattern: $0) }) }
        }
        if let old, old.file == nil { try deleteBlob.run { $0.bind(1, old.id) } }
        if file == nil {
            let id = sqlite3_last_insert_rowid(connection.handle)
            try insertBlob.run { s in
                s.bind(1, id)
                s.bindBlob(2, inline ?? UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        try addTotals.run { s in
            s.bind(1, size - (old?.size ?? 0))
            s.bind(2, old == nil ? 1 : 0)
        }
        if file == nil { noteWrite(bytes: size) }
        return old
    }

    /// Deletes the rows of `victims` that still exist; returns those actually deleted, with the
    /// size and file their rows held at deletion (a promotion may have given one a file since).
    func delete(_ victims: [Victim]) throws -> [Victim] {
        var deleted: [Victim] = []
        var bytes = 0
        for victim in victims {
            victimRow.bind(1, victim.id)
            defer { victimRow.reset() }
            guard try victimRow.step() else { continue }
            let removed = Victim(id: victim.id, key: victim.key, size: victimRow.int(0), file: victimRow.string(1))
            victimRow.reset()
            try deleteByID.run { $0.bind(1, victim.id) }
            if removed.file == nil { try deleteBlob.run { $0.bind(1, removed.id) } }
            deleted.append(removed)
            bytes += removed.size
        }
        if !deleted.isEmpty {
            try addTotals.run { s in
                s.bind(1, -bytes)
                s.bind(2, -deleted.count)
            }
        }
        return deleted
    }

    /// False until a rebuild from the value files has finished (see `DiskCache.rebuild`), so a
    /// rebuild cut short by a crash is done again at the next open.
    func isComplete() throws -> Bool {
        let statement = try statement("SELECT complete FROM meta WHERE id = 1")
        defer { statement.reset() }
        return try statement.step() && statement.int(0) != 0
    }

    /// Total value bytes and entry count, as kept in `meta`.
    func totals() throws -> (bytes: Int, count: Int) {
        defer { readTotals.reset() }
        guard try readTotals.step() else { throw SQLiteError(code: SQLITE_CORRUPT, message: "meta row missing") }
        return (readTotals.int(0), readTotals.int(1))
    }

    /// Victims chosen by an arbitrary query returning `id, key, size, file`.
    func victims(_ sql: String, bind: (SQLiteStatement) -> Void = { _ in }, until stop: ((Victim) -> Bool)? = nil) throws -> [Victim] {
        let statement = try statement(sql)
        defer { statement.reset() }
        bind(statement)
        var result: [Victim] = []
        while try statement.step() {
            let victim = Victim(id: statement.int64(0), key: statement.string(1) ?? "", size: statement.int(2), file: statement.string(3))
            if let stop, stop(victim) { break }
            result.append(victim)
        }
        return result
    }

    /// Victims, oldest access first, until the remaining bytes would be at most `target`;
    /// `keeping` (the key a set just wrote) is never chosen.
    func victimsByAccess(toBytes target: Int, keeping: String? = nil) throws -> [Victim] {
        var excess = try totals().bytes - target
        guard excess > 0 else { return [] }
        let statement = try statement("SELECT id, key, size, file FROM entries ORDER BY accessed ASC, id ASC")
        defer { statement.reset() }
        var result: [Victim] = []
        while excess > 0, try statement.step() {
            let victim = Victim(id: statement.int64(0), key: statement.string(1) ?? "", size: statement.int(2), file: statement.string(3))
            guard victim.key != keeping else { continue }
            result.append(victim)
            excess -= victim.size
        }
        return result
    }

    /// Victims, largest first, until the remaining bytes would be at most `target`.
    func victimsBySize(toBytes target: Int) throws -> [Victim] {
        var excess = try totals().bytes - target
        guard excess > 0 else { return [] }
        return try victims("SELECT id, key, size, file FROM entries ORDER BY size DESC, accessed ASC", until: { victim in
            guard excess > 0 else { return true }
            excess -= victim.size
            return false
        })
    }

    // MARK: Access times

    /// Remembers that `key` was read at `now`; written in batches by `flushAccessTimes`.
    func recordAccess(_ key: String, now: Double) {
        pendingAccess[CacheKey(key)] = now
        if pendingAccess.count >= 512 || now - lastFlush > 5 {
            try? flushAccessTimes(now: now)
        }
    }

    /// Writes pending access times. Failure (a full disk) only loses recency information.
    func flushAccessTimes(now: Double = WallClock.now()) throws {
        lastFlush = now
        guard !pendingAccess.isEmpty else { return }
        try transaction { try writeAccessTimes() }
    }

    /// Writes pending access times inside the caller's transaction.
    func writeAccessTimes() throws {
        let pending = pendingAccess
        pendingAccess.removeAll(keepingCapacity: true)
        for (key, time) in pending {
            try touch.run { s in
                s.bind(1, key.string)
                s.bind(2, time)
            }
        }
    }

    /// The last use of `key` known to this process: the stored date or a newer pending one.
    func lastAccess(_ key: String, stored: Double) -> Double {
        max(stored, pendingAccess[CacheKey(key)] ?? stored)
    }

    // MARK: Garbage (files that could not be deleted yet)

    func addGarbage(_ files: [String]) throws {
        let insert = try statement("INSERT OR IGNORE INTO garbage(file) VALUES (?1)")
        for file in files { try insert.run { $0.bind(1, file) } }
    }

    func garbage() throws -> [String] {
        let select = try statement("SELECT file FROM garbage LIMIT 1000")
        defer { select.reset() }
        var files: [String] = []
        while try select.step() { if let file = select.string(0) { files.append(file) } }
        return files
    }

    func removeGarbage(_ files: [String]) throws {
        let delete = try statement("DELETE FROM garbage WHERE file = ?1")
        for file in files { try delete.run { $0.bind(1, file) } }
    }
}
