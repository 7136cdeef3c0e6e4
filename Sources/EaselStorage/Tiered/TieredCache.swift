import EaselSupport
import Foundation
import Logging

/// A two-level cache, memory over disk, for any value that converts to and from bytes
/// (Haneke's `Cache<T>`).
///
/// ```swift
/// let cache = try TieredCache<String>(name: "greetings")
/// try cache.addFormat(.init(name: "upper", diskCapacity: 10_000_000) { $0.uppercased() })
/// let value = try await cache.fetch(key: "hi", formatName: "upper") { "hello" }   // "HELLO"
/// ```
///
/// Each named format transforms a value before it is cached and has its own memory cache and
/// its own `DiskCache` (under `<root>/<name>/<format>`) with its own byte limit. Concurrent
/// `fetch` calls for one key and format share a single fetch; it is cancelled only when every
/// caller waiting on it has been cancelled.
public final class TieredCache<Value: DataConvertible & DataRepresentable & Sendable>: Sendable {
    /// A named transformation applied before caching, with its own capacities.
    public struct Format: Sendable {
        /// The format's name: how calls select it, and its disk cache's directory name.
        public let name: String
        /// Byte limit of this format's disk cache; 0 means no limit.
        public let diskCapacity: Int
        /// Cost limit of this format's memory cache (cost = encoded size in bytes).
        public let memoryCapacity: Int
        /// Applied to a value before it is cached (by `set` and after a fetch); an error it throws
        /// fails that call. The identity by default.
        public let transform: @Sendable (Value) throws -> Value

        /// A format with, by default, no disk limit, a quarter of `MemoryCacheDefaults.costLimit`
        /// in memory and no transformation.
        public init(name: String, diskCapacity: Int = 0, memoryCapacity: Int = MemoryCacheDefaults.costLimit / 4,
                    transform: @escaping @Sendable (Value) throws -> Value = { $0 }) {
            self.name = name
            self.diskCapacity = diskCapacity
            self.memoryCapacity = memoryCapacity
            self.transform = transform
        }
    }

    /// The format every cache starts with: values stored as given, no disk limit.
    public static var originalFormatName: String { "original" }

    private struct Level: Sendable {
        let format: Format
        let memory: MemoryCache<CacheKey, Value>
        let disk: DiskCache
    }

    /// The cache's name, which names its directory under the root directory.
    public let name: String
    private let root: URL
    private let logger: Logger
    private let levels: Locked<[String: Level]> = Locked([:])
    /// Concurrent fetches of one key and format share one (the support module's `Coalescer`;
    /// fetches have no priorities here).
    private let inFlight = Coalescer<CacheKey, Value, any Error, Int>(cancelled: CancellationError(), lowest: 0)

    /// Creates the cache `name` under `rootDirectory` (default `DiskCache.defaultRootDirectory`)
    /// with the `original` format.
    public init(name: String, rootDirectory: URL? = nil, logger: Logger = Logger(label: "easel.tiered-cache")) throws {
        self.name = name
        self.root = (rootDirectory ?? DiskCache.defaultRootDirectory).appendingPathComponent(DiskCache.safeDirectoryName(name))
        self.logger = logger
        try addFormat(Format(name: Self.originalFormatName))
    }

    /// Opens the cache on an I/O thread (see `DiskCache.open`), for callers in async code.
    public static func open(name: String, rootDirectory: URL? = nil,
                            logger: Logger = Logger(label: "easel.tiered-cache")) async throws -> TieredCache {
        try await BlockingIOPool.shared.run { try TieredCache(name: name, rootDirectory: rootDirectory, logger: logger) }
    }

    /// Adds (or replaces) a format, opening its disk cache on an I/O thread.
    public func addFormat(_ format: Format) async throws {
        try await BlockingIOPool.shared.run { try self.addFormat(format) }
    }

    /// Adds (or replaces) a format. Its disk cache is opened now, on the calling thread.
    public func addFormat(_ format: Format) throws {
        var configuration = DiskCache.Configuration(byteLimit: format.diskCapacity)
        configuration.logger = logger
        let disk = try DiskCache(name: format.name, rootDirectory: root, configuration: configuration)
        let memory = MemoryCache<CacheKey, Value>(configuration: .init(costLimit: format.memoryCapacity))
        // A replaced format's caches are released after the lock.
        let replaced = levels.withLock { $0.updateValue(Level(format: format, memory: memory, disk: disk), forKey: format.name) }
        _ = replaced
    }

    /// The format registered under `name`.
    public func format(named name: String) -> Format? { levels.withLock { $0[name]?.format } }

    private func level(_ formatName: String) throws -> Level {
        guard let level = levels.withLock({ $0[formatName] }) else { throw TieredCacheError.unknownFormat(formatName) }
        return level
    }

    /// The cached value: memory first, then disk (promoting a disk hit to memory). Nil on a miss.
    public func value(forKey key: String, formatName: String = originalFormatName) async throws -> Value? {
        let level = try level(formatName)
        if let value = level.memory.value(forKey: CacheKey(key)) { return value }
        guard let data = try await level.disk.data(forKey: key) else { return nil }
        do {
            let value = try Value.convertFromData(data)
            level.memory.set(value, forKey: CacheKey(key), cost: data.count)
            return value
        } catch {
            logger.warning("cached bytes do not convert; dropping them", metadata: ["key": "\(key.prefix(200))", "error": "\(error)"])
            try? await level.disk.removeValue(forKey: key)
            return nil
        }
    }

    /// Applies the format's transform to `value` and stores the result in memory and on disk.
    /// - Returns: the transformed value.
    @discardableResult
    public func set(_ value: Value, forKey key: String, formatName: String = originalFormatName) async throws -> Value {
        let level = try level(formatName)
        let transformed = try level.format.transform(value)
        let data = try transformed.asData()
        level.memory.set(transformed, forKey: CacheKey(key), cost: data.count)
        try await level.disk.set(data, forKey: key)
        return transformed
    }

    /// The cached value, or the fetcher's value (transformed and cached) on a miss.
    /// Concurrent calls for the same key and format share one fetch.
    public func fetch(formatName: String = originalFormatName, fetcher: some Fetcher<Value>) async throws -> Value {
        let key = fetcher.key
        if let cached = try await value(forKey: key, formatName: formatName) { return cached }
        return try await inFlight.value(for: CacheKey(formatName + "\u{0}" + key), waiter: inFlight.makeWaiterID(), priority: 0) { _ in
            do {
                if let cached = try await self.value(forKey: key, formatName: formatName) { return .success(cached) }
                let fetched = try await fetcher.fetch()
                try Task.checkCancellation()
                return .success(try await self.set(fetched, forKey: key, formatName: formatName))
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// `fetch(formatName:fetcher:)` with the fetcher given as a closure.
    public func fetch(key: String, formatName: String = originalFormatName,
                      _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await fetch(formatName: formatName, fetcher: ClosureFetcher(key: key, body))
    }

    /// Removes `key` from one format, or from every format when `formatName` is nil.
    public func remove(key: String, formatName: String? = nil) async throws {
        let targets = try formatName.map { [try level($0)] } ?? levels.withLock { Array($0.values) }
        for level in targets {
            level.memory.removeValue(forKey: CacheKey(key))
            try await level.disk.removeValue(forKey: key)
        }
    }

    /// Empties every format, in memory and on disk.
    public func removeAll() async throws {
        for level in levels.withLock({ Array($0.values) }) {
            level.memory.removeAll()
            try await level.disk.removeAll()
        }
    }

    /// The disk cache behind `formatName` (for limits, trims and statistics).
    public func diskCache(formatName: String = originalFormatName) throws -> DiskCache { try level(formatName).disk }

    /// The memory cache in front of `formatName` (keys compared byte for byte, see `CacheKey`).
    public func memoryCache(formatName: String = originalFormatName) throws -> MemoryCache<CacheKey, Value> { try level(formatName).memory }
}

/// What a `TieredCache` call can fail with beyond its tiers' own errors.
public enum TieredCacheError: Error, Sendable, Equatable {
    /// No format is registered under this name (see `addFormat(_:)`).
    case unknownFormat(String)
}
