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

    public func contains(_ key: String) async throws -> Bool {
        try await BlockingIOPool.shared.run { try self.contains(key) }
    }

    public func trim(toDate date: Date) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toDate: date) }
    }

    public func trim(toSize byteCount: Int) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toSize: byteCount) }
    }

    public func trim(toSizeByDate byteCount: Int) async throws {
        try await BlockingIOPool.shared.run { try self.trim(toSizeByDate: byteCount) }
    }

    public func removeExpired() async throws {
        try await BlockingIOPool.shared.run { try self.removeExpired() }
    }

    public func removeAll() async throws {
        try await BlockingIOPool.shared.run { try self.removeAll() }
    }

    @discardableResult
    public func compact() async throws -> Int {
        try await BlockingIOPool.shared.run { try self.compact() }
    }

    public func statistics() async throws -> Statistics {
        try await BlockingIOPool.shared.run { try self.statistics() }
    }

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
