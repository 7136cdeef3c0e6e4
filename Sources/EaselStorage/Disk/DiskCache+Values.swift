import EaselSupport
import Foundation
import Logging
import Synchronization

extension DiskCache {
    private enum Lookup {
        case miss
        case value(Data)
        case file(id: Int64, name: String, size: Int, checksum: UInt64)
        case expired(DiskIndex.Victim)
        case damaged(DiskIndex.Victim)
    }

    /// The value stored for exactly `key`, or nil on a miss, an expired entry or a damaged one.
    /// - Throws: `DiskCacheError.index` only when the index cannot be read at all.
    public func data(forKey key: String) throws -> Data? {
        for attempt in 0..<2 {
            switch try lookup(key) {
            case .miss:
                return nil
            case .value(let data):
                return data
            case .expired(let victim):
                try? removeVictims([victim], reason: .expired)
                return nil
            case .damaged(let victim):
                logger.warning("damaged entry removed", metadata: ["key": "\(key.prefix(200))", "cache": "\(name)"])
                try? removeVictims([victim], reason: .damaged)
                return nil
            case .file(let id, let fileName, let size, let checksum):
                switch readFile(fileName, key: key, size: size, checksum: checksum) {
                case .success(let data):
                    return data
                case .failure(.unreadable(let code)):
                    // EIO, EMFILE and the like may pass: a miss, but the entry stays.
                    logger.warning("cache entry unreadable", metadata: [
                        "key": "\(key.prefix(200))", "cache": "\(name)", "error": "\(errnoDescription(code))"])
                    return nil
                case .failure(let problem):
                    // The entry may have been replaced or removed since the lookup: look again once.
                    let current = try index.withLock { try $0.row(forKey: key) }
                    if current?.id != id { if attempt == 0 { continue } else { return nil } }
                    logger.warning("damaged entry removed", metadata: [
                        "key": "\(key.prefix(200))", "cache": "\(name)", "problem": "\(problem)"])
                    try? removeVictims([.init(id: id, key: key, size: size, file: fileName)], reason: .damaged)
                    return nil
                }
            }
        }
        return nil
    }

    private func lookup(_ key: String) throws -> Lookup {
        lookups.add(1, ordering: .relaxed)
        let now = clock()
        let ageLimit = self.ageLimit
        let resolution = accessTimeResolution
        do {
            return try index.withHeldRead { index -> Lookup in
                var inline: Data?
                guard let row = try index.row(forKey: key, inline: { inline = $0 }) else { return .miss }
                let victim = DiskIndex.Victim(id: row.id, key: key, size: row.size, file: row.file)
                if let expires = row.expires, expires <= now { return .expired(victim) }
                if ageLimit > 0, index.lastAccess(key, stored: row.accessed) < now - ageLimit { return .expired(victim) }
                if row.file == nil {
                    // XXH3 where the row has it, else XXH64 (rows of earlier versions).
                    guard let data = inline, data.count == row.size,
                          row.xxh3.map({ Checksum.xxh3(data) == $0 }) ?? (Checksum.compute(data) == row.checksum) else {
                        return .damaged(victim)
                    }
                    if now - row.accessed >= resolution { index.recordAccess(key, now: now) }
                    return .value(data)
                }
                if now - row.accessed >= resolution { index.recordAccess(key, now: now) }
                return .file(id: row.id, name: row.file!, size: row.size, checksum: row.checksum)
            }
        } catch let error as SQLiteError {
            throw DiskCacheError.sqlite(error, path: paths.index)
        }
    }

    enum FileProblem: Error, CustomStringConvertible {
        case missing
        case unreadable(Int32)
        case truncated
        case badTrailer
        case wrongKey
        case badChecksum
        var description: String {
            switch self {
            case .missing: "file missing"
            case .unreadable(let code): "unreadable: \(errnoDescription(code))"
            case .truncated: "file shorter than its entry"
            case .badTrailer: "trailer damaged"
            case .wrongKey: "file belongs to another key"
            case .badChecksum: "checksum mismatch"
            }
        }
    }

    /// Reads and verifies a value file: trailer, key, length and checksum.
    func readFile(_ fileName: String, key: String, size: Int, checksum: UInt64) -> Result<Data, FileProblem> {
        let path = paths.file(fileName)
        let fd: Int32
        do { fd = try files.openForReading(path) } catch {
            return .failure(error == .noSuchFile ? .missing : .unreadable(error.code))
        }
        defer { SystemCalls.close(fd) }
        let keyLength = key.utf8.count
        let trailerSize = keyLength + EntryFile.fixedTrailerSize
        var data = Data(count: size)
        var trailer = [UInt8](repeating: 0, count: trailerSize + 1)
        do {
            let got = try data.withUnsafeMutableBytes { try files.read(fd, into: $0, at: 0) }
            guard got == size else { return .failure(.truncated) }
            // One byte more than expected tells a longer (wrong) file from the right one.
            let tail = try trailer.withUnsafeMutableBytes { try files.read(fd, into: $0, at: size) }
            guard tail == trailerSize else { return .failure(tail < trailerSize ? .truncated : .badTrailer) }
        } catch {
            return .failure(.unreadable(Errno.code(of: error)))
        }
        let verified = trailer.withUnsafeBytes { raw in
            EntryFile.verifyTrailer(UnsafeRawBufferPointer(rebasing: raw[0..<trailerSize]), fileSize: size + trailerSize)
        }
        guard let (fields, storedKey) = verified else { return .failure(.badTrailer) }
        guard storedKey == key, fields.valueLength == size, fields.valueChecksum == checksum else { return .failure(.wrongKey) }
        guard Checksum.compute(data) == checksum else { return .failure(.badChecksum) }
        return .success(data)
    }

    /// True when a value is stored for `key` and has not expired. Does not read the value.
    public func contains(_ key: String) throws -> Bool {
        lookups.add(1, ordering: .relaxed)
        let now = clock()
        let ageLimit = self.ageLimit
        do {
            return try index.withHeldRead { index in
                guard let row = try index.row(forKey: key) else { return false }
                if let expires = row.expires, expires <= now { return false }
                if ageLimit > 0, index.lastAccess(key, stored: row.accessed) < now - ageLimit { return false }
                return true
            }
        } catch let error as SQLiteError {
            throw DiskCacheError.sqlite(error, path: paths.index)
        }
    }

    /// Stores `data` for `key`, replacing any earlier value, then enforces the byte limit.
    ///
    /// The value becomes visible to every reader, in every process, all at once: either the old
    /// value or the new one is read, never a mixture.
    /// - Parameters:
    ///   - data: the value.
    ///   - key: its key (any string).
    ///   - expiresAt: after this date the entry is never returned and is removed by trims.
    /// - Throws: `DiskCacheError.diskFull`, `.permissionDenied` or `.ioError` when the write
    ///   fails (the cache is unchanged and reads go on); `.valueTooLarge` when the value alone
    ///   exceeds the byte limit.
    public func set(_ data: Data, forKey key: String, expiresAt: Date? = nil) throws {
        let limit = byteLimit
        if limit > 0, data.count > limit { throw DiskCacheError.valueTooLarge(size: data.count, limit: limit) }
        // XXH64 in every row (and in a value file's trailer): processes of earlier versions
        // verify with it. Inline values also carry XXH3, which is what gets verify here (they
        // pay for a checksum on every read; a set pays for both once).
        let checksum = Checksum.compute(data)
        let xxh3 = data.count > inlineLimit ? nil : Checksum.xxh3(data)
        observers.emit(.willAdd(key: key, size: data.count))

        var fileName: String?
        var tmpPath = ""
        if data.count > inlineLimit { (fileName, tmpPath) = try writeValueFile(data, key: key, checksum: checksum) }

        let now = clock()
        let expires = expiresAt?.timeIntervalSince1970
        // Without observers, entries over the byte limit are evicted in the same transaction;
        // with observers they are evicted afterwards, so `willRemove` can precede the removal.
        let evictHere = limit > 0 && observers.isEmpty
        let outcome: (replaced: DiskIndex.Row?, evicted: [DiskIndex.Victim], overLimit: Bool)
        func store() throws -> (replaced: DiskIndex.Row?, evicted: [DiskIndex.Victim], overLimit: Bool) {
            try index.withLock { index in
                try index.transaction {
                    if let fileName { try self.moveIntoPlace(tmpPath, fileName) }
                    let old = try data.withUnsafeBytes { bytes in
                        try index.store(key: key, size: data.count, checksum: checksum, xxh3: xxh3, dates: (now, expires),
                                        file: fileName, inline: fileName == nil ? bytes : nil)
                    }
                    index.pendingAccess[CacheKey(key)] = nil
                    guard limit > 0, try index.totals().bytes > limit else { return (old, [], false) }
                    guard evictHere else { return (old, [], true) }
                    try index.writeAccessTimes() // so that recent reads count in the LRU order
                    let victims = try index.victimsByAccess(toBytes: self.trimTarget(limit), keeping: key)
                    return (old, try index.delete(victims), false)
                }
            }
        }
        do {
            do {
                outcome = try store()
            } catch let error as SQLiteError where error.isFull && logHoldsPages() {
                // The log may still hold pages that other writers have finished with (this
                // cache's background compaction, another instance or process on the same
                // index): once they commit, a truncating checkpoint gives that space back.
                // One more try after it, with the value file back where the first try took it
                // (if it cannot go back, the first failure stands).
                if let fileName, (try? files.rename(paths.file(fileName), to: tmpPath)) == nil { throw error }
                try? indexCall { try $0.checkpointAndTruncate() }
                outcome = try store()
            }
        } catch {
            if let fileName {
                try? files.unlink(tmpPath)
                try? files.unlink(paths.file(fileName))
            }
            switch error {
            case let error as SQLiteError: throw DiskCacheError.sqlite(error, path: paths.index)
            case let error as Errno: throw DiskCacheError.posix(error.code, operation: "rename", path: paths.data)
            default: throw error
            }
        }
        deleteFiles(([outcome.replaced?.file] + outcome.evicted.map(\.file)).compactMap { $0 })
        observers.emit(.didAdd(key: key, size: data.count))
        if outcome.overLimit {
            do { try enforceByteLimit(keeping: key) } catch {
                logger.warning("could not trim to the byte limit", metadata: ["error": "\(error)", "cache": "\(name)"])
            }
        }
    }

    /// A value too large to keep inline, written with its trailer to a new file in `tmp` (moved
    /// into place by the index's transaction): its name, and its path in `tmp`.
    private func writeValueFile(_ data: Data, key: String, checksum: UInt64) throws -> (name: String, tmpPath: String) {
        let name = Self.randomFileName()
        let tmpPath = paths.tmp + "/" + name
        let trailer = EntryFile.trailer(key: key, valueLength: data.count, valueChecksum: checksum)
        do {
            try data.withUnsafeBytes { value in
                try trailer.withUnsafeBytes { trailer in
                    try files.createFile(at: tmpPath, writing: [value, trailer], sync: synchronousWrites)
                }
            }
        } catch {
            throw DiskCacheError.posix(Errno.code(of: error), operation: "write", path: tmpPath)
        }
        return (name, tmpPath)
    }

    /// Whether the index's write-ahead log has any bytes (a full disk's set retries only then).
    private func logHoldsPages() -> Bool {
        var info = stat()
        return stat(paths.index + "-wal", &info) == 0 && info.st_size > 0
    }

    /// Renames a finished temporary file into `data/`, creating its subdirectory on first use.
    private func moveIntoPlace(_ tmpPath: String, _ fileName: String) throws(Errno) {
        let destination = paths.file(fileName)
        do {
            try files.rename(tmpPath, to: destination)
        } catch where error == .noSuchFile {
            try files.makeDirectory(paths.data)
            try files.makeDirectory(paths.directory(of: fileName))
            try files.rename(tmpPath, to: destination)
        }
    }

    /// Removes the value for `key`, if any.
    public func removeValue(forKey key: String) throws {
        let victim: DiskIndex.Victim? = try indexCall { index in
            try index.row(forKey: key).map { .init(id: $0.id, key: key, size: $0.size, file: $0.file) }
        }
        if let victim { try removeVictims([victim], reason: .removed) }
    }

    /// Runs `body` on the index under its lock, mapping SQLite failures to `DiskCacheError`.
    func indexCall<R>(_ body: (DiskIndex) throws -> R) throws -> R {
        do {
            return try index.withLock { index in try body(index) }
        } catch let error as SQLiteError {
            throw DiskCacheError.sqlite(error, path: paths.index)
        }
    }

    static func randomFileName() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(high) + hex(low)
    }
}
