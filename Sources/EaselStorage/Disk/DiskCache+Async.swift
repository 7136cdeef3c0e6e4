import EaselSupport
import Foundation

// The async forms of every blocking call. Each runs its synchronous twin on `BlockingIOPool`,
// so awaiting them never blocks a thread of the cooperative pool.
extension DiskCache {
    public func data(forKey key: String) async throws -> Data? {
        try await BlockingIOPool.shared.run { try self.data(forKey: key) }
    }

    public func set(_ data: Data, forKey key: String, expiresAt: Date? = nil) async throws {
        try await BlockingIOPool.shared.run { try self.set(data, forKey: key, expiresAt: expiresAt) }
    }

    public func removeValue(forKey key: String) async throws {
        try await BlockingIOPool.shared.run { try self.removeValue(forKey: key) }
    }

    public func removeValues(withKeyPrefix prefix: String) async throws {
        try await BlockingIOPool.shared.run { try self.removeValues(withKeyPrefix: prefix) }
    }

    /// True when an unexpired value is stored for `key`: `contains(_:)` run on an I/O thread.
    public func contains(_ key: String) async throws -> Bool {
        try await BlockingIOPool.shared.run { try self.contains(key) }
    }

    /// Removes entries not used since `date`: `trim(toDate:)` run on an I/O thread.
    public func trim(toDate date: Date) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toDate: date) }
    }

    /// Removes entries, largest first, until at most `byteCount` bytes remain: `trim(toSize:)` run
    /// on an I/O thread.
    public func trim(toSize byteCount: Int) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toSize: byteCount) }
    }

    /// Removes entries, least recently used first, until at most `byteCount` bytes remain:
    /// `trim(toSizeByDate:)` run on an I/O thread.
    public func trim(toSizeByDate byteCount: Int) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toSizeByDate: byteCount) }
    }

    /// Removes expired entries and those past the age limit: `removeExpired()` run on an I/O thread.
    public func removeExpired() async throws {
        try await BlockingIOPool.shared.run { try self.removeExpired() }
    }

    /// Removes every entry: `removeAll()` run on an I/O thread (which may wait there for
    /// `withFileURL` closures to return).
    public func removeAll() async throws {
        try await BlockingIOPool.shared.run { try self.removeAll() }
    }

    /// Hands the index's free pages back to the file system and returns the bytes it shrank by:
    /// `compact()` run on an I/O thread.
    @discardableResult
    public func compact() async throws -> Int {
        try await BlockingIOPool.shared.run { try self.compact() }
    }

    /// Counts, bytes and dates of the whole cache: `statistics()` run on an I/O thread.
    public func statistics() async throws -> Statistics {
        try await BlockingIOPool.shared.run { try self.statistics() }
    }

    /// Every entry's key, size and dates, in key order: `entries()` run on an I/O thread.
    public func entries() async throws -> [Entry] {
        try await BlockingIOPool.shared.run { try self.entries() }
    }

    /// Stored bytes, read without blocking the caller's thread.
    public func currentByteCount() async -> Int {
        (try? await BlockingIOPool.shared.run { self.byteCount }) ?? 0
    }

    /// Lends the file holding `key`'s value to `body` (see the synchronous form). `body` runs on
    /// an I/O thread, so it may block.
    public func withFileURL<R: Sendable>(forKey key: String, _ body: @escaping @Sendable (StoredFile) throws -> R) async throws -> R? {
        try await BlockingIOPool.shared.run { try self.withFileURL(forKey: key, body) }
    }
}
