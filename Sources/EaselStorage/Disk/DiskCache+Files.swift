import EaselSupport
import Foundation
import Logging

extension DiskCache {
    /// Deletes value files no longer referenced by the index. A file someone is reading through
    /// `withFileURL` (it holds a shared `flock` on it) is left alone and recorded in the
    /// `garbage` table, to be deleted by a later trim once it is released.
    func deleteFiles(_ names: [String]) {
        guard !names.isEmpty else { return }
        var busy: [String] = []
        for name in names {
            let path = paths.file(name)
            guard let fd = try? SystemCalls.open(path, .read) else { continue } // already gone
            defer { SystemCalls.close(fd) }
            if (try? SystemCalls.lock(fd, exclusive: true, wait: false)) == true {
                do { try files.unlink(path) } catch where error != .noSuchFile { busy.append(name) } catch {}
            } else {
                busy.append(name)
            }
        }
        if !busy.isEmpty {
            do { try indexCall { try $0.addGarbage(busy) } } catch {
                logger.warning("could not record files for later deletion", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Retries deleting files that were in use when their entries were removed.
    func collectGarbage() {
        guard let pending = try? indexCall({ try $0.garbage() }), !pending.isEmpty else { return }
        var deleted: [String] = []
        for name in pending {
            let path = paths.file(name)
            guard let fd = try? SystemCalls.open(path, .read) else { deleted.append(name); continue }
            defer { SystemCalls.close(fd) }
            if (try? SystemCalls.lock(fd, exclusive: true, wait: false)) == true, (try? files.unlink(path)) != nil { deleted.append(name) }
        }
        if !deleted.isEmpty { _ = try? indexCall { try $0.removeGarbage(deleted) } }
    }

    /// Deletes everything under `trash/` on a background thread.
    func emptyTrash() {
        let trash = paths.trash
        BlockingIOPool.shared.submit { Self.deleteTrash(trash) }
    }

    /// Deletes everything under `trash`, now.
    static func deleteTrash(_ trash: String) {
        let manager = FileManager.default
        guard let items = try? manager.contentsOfDirectory(atPath: trash) else { return }
        for item in items { try? manager.removeItem(atPath: trash + "/" + item) }
    }

    /// A value file lent to a `withFileURL` closure.
    public struct StoredFile: Sendable {
        /// The file's location; valid only inside the closure.
        public let url: URL
        /// The value occupies bytes `0..<valueLength`; a trailer (key, length, checksum) follows.
        public let valueLength: Int
    }

    /// Lends the file holding `key`'s value to `body`; while `body` runs, the file is neither
    /// removed nor replaced, by this process or any other (a replacement writes a new file; a
    /// removal or trim leaves this one until `body` returns; `removeAll` waits).
    ///
    /// Small values kept inside the index are first moved to a file of their own, and stay there.
    /// The value is verified before `body` is called. Returns nil on a miss.
    /// - Warning: do not call `removeAll()` from `body`: it waits for `body` to return.
    public func withFileURL<R>(forKey key: String, _ body: (StoredFile) throws -> R) throws -> R? {
        for _ in 0..<3 {
            guard try contains(key), let row = try indexCall({ try $0.row(forKey: key) }) else { return nil }
            guard let fileName = row.file else {
                // Outside the locks below: promotion may remove an expired or damaged entry,
                // and observers of that removal may call this cache.
                try promoteToFile(key: key, rowID: row.id)
                continue
            }
            let attempt: FileAttempt<R> = try {
                let pinLock = try FileLock.opening(paths.pinLock)
                try pinLock.acquire(exclusive: false)
                defer { pinLock.unlock() }
                let path = paths.file(fileName)
                guard let lock = try? FileLock.opening(path, create: false, writable: false) else { return .retry }
                try lock.acquire(exclusive: false)
                defer { lock.unlock() }
                // A deleter may have unlinked the file before our lock: check it is still in place.
                guard let held = SystemCalls.identity(of: lock.descriptor), held == SystemCalls.identity(ofPath: path) else { return .retry }
                guard case .success = readFile(fileName, key: key, size: row.size, checksum: row.checksum) else { return .damaged }
                return .lent(try body(StoredFile(url: URL(fileURLWithPath: path), valueLength: row.size)))
            }()
            switch attempt {
            case .lent(let result): return result
            case .retry: continue
            case .damaged:
                _ = try data(forKey: key) // verifies again, and removes the entry if it is damaged
                return nil
            }
        }
        return nil
    }

    /// One try at lending a file.
    enum FileAttempt<R> {
        case lent(R)
        case retry
        case damaged
    }

    /// Moves an inline value into a file of its own (for `withFileURL`).
    private func promoteToFile(key: String, rowID: Int64) throws {
        guard let value = try data(forKey: key) else { return }
        let name = Self.randomFileName()
        let tmpPath = paths.tmp + "/" + name
        let checksum = Checksum.compute(value)
        let trailer = EntryFile.trailer(key: key, valueLength: value.count, valueChecksum: checksum)
        do {
            try value.withUnsafeBytes { bytes in
                try trailer.withUnsafeBytes { try files.createFile(at: tmpPath, writing: [bytes, $0], sync: synchronousWrites) }
            }
        } catch {
            throw DiskCacheError.posix(Errno.code(of: error), operation: "write", path: tmpPath)
        }
        let destination = paths.file(name)
        do {
            try indexCall { index in
                try index.transaction {
                    guard let row = try index.row(forKey: key), row.id == rowID, row.file == nil else { return }
                    try files.makeDirectory(paths.data)
                    try files.makeDirectory(paths.directory(of: name))
                    try files.rename(tmpPath, to: destination)
                    // The row names the file now: its XXH64 is the trailer's (as before), and a
                    // value file has no XXH3.
                    try index.statement(index.hasXXH3 ? "UPDATE entries SET file = ?1, checksum = ?3, xxh3 = NULL WHERE id = ?2"
                                                      : "UPDATE entries SET file = ?1, checksum = ?3 WHERE id = ?2").run { s in
                        s.bind(1, name)
                        s.bind(2, rowID)
                        s.bind(3, Int64(bitPattern: checksum))
                    }
                    try index.statement("DELETE FROM blobs WHERE id = ?1").run { $0.bind(1, rowID) }
                }
            }
        } catch {
            try? files.unlink(tmpPath)
            try? files.unlink(destination)
            if let error = error as? Errno { throw DiskCacheError.posix(error.code, operation: "rename", path: destination) }
            throw error
        }
        try? files.unlink(tmpPath) // left over only if the row changed meanwhile
    }
}
