import EaselSupport
import Foundation
import Synchronization

/// A thread-safe in-memory LRU cache with count, cost and age limits.
///
/// ```swift
/// let cache = MemoryCache<String, Data>()          // cost limit: 20% of the memory limit
/// cache.set(data, forKey: "a", cost: data.count)
/// let hit = cache.value(forKey: "a")
/// ```
///
/// Get, set and remove are O(1): entries sit in a doubly linked list (most recently used at the
/// head) stored in one array, found through a dictionary. Evictions happen on the thread that
/// caused them and are reported to observers with their reason, outside the lock.
///
/// **Shards.** A large cache (no count limit or one of 4,096 and more, and no cost limit or one
/// of 64 MiB and more) is split by key hash into shards, each its own lock and LRU list, so hits
/// on different keys from different cores take different locks and no lock is shared by every
/// hit. The count and cost limits stay limits of the whole cache (totals kept in atomics): a set
/// that goes over them evicts the least recently used entries of its own shard first, then of the
/// others. A hit on a sharded cache stamps its entry instead of moving it in the list (no write
/// to memory that hits on other keys read); an entry that reaches the tail having been used since
/// it got there goes back to the head instead of being evicted. So eviction is close to least
/// recently used, not exact; trims (`trim(toCount:)`, `trim(toCost:)`, memory pressure, lowered
/// limits) evict the least recently used tail of all shards each time. Smaller caches keep one
/// exact LRU order; `Configuration.shardCount` chooses explicitly.
///
/// A value whose cost alone exceeds the cost limit is refused (and an older value for its key is
/// removed) instead of evicting everything else.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The limits a cache starts with, and how it is sharded.
    public struct Configuration: Sendable {
        /// Maximum number of entries; 0 means no limit.
        public var countLimit: Int
        /// Maximum total cost; 0 means no limit. Defaults to `MemoryCacheDefaults.costLimit` (a fifth of the memory the process may use).
        public var costLimit: Int
        /// Entries not used for this many seconds are never returned and are trimmed. 0: none.
        public var ageLimit: TimeInterval
        /// Whether `MemoryPressureMonitor.shared` may shed this cache's entries.
        public var respondsToMemoryPressure: Bool
        /// Number of shards (rounded up to a power of two, at most 256); nil chooses: one for a
        /// small cache, sixteen per core (at least 64, at most 256) for a large one, so that two
        /// cores rarely want one shard at once. One shard keeps one exact LRU order.
        public var shardCount: Int?

        /// Settings with these defaults: no count limit, `MemoryCacheDefaults.costLimit`, no age
        /// limit, deaf to memory pressure, and the shard count chosen from the limits.
        public init(countLimit: Int = 0, costLimit: Int = MemoryCacheDefaults.costLimit,
                    ageLimit: TimeInterval = 0, respondsToMemoryPressure: Bool = false, shardCount: Int? = nil) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.respondsToMemoryPressure = respondsToMemoryPressure
            self.shardCount = shardCount
        }

        /// The number of shards this configuration makes.
        public var effectiveShardCount: Int {
            if let shardCount { return Self.powerOfTwo(atLeast: min(max(shardCount, 1), 256)) }
            if countLimit > 0 && countLimit < 4_096 { return 1 }
            if costLimit > 0 && costLimit < 64 << 20 { return 1 }
            let cores = ProcessInfo.processInfo.activeProcessorCount
            return Self.powerOfTwo(atLeast: min(max(cores * 16, 64), 256))
        }

        private static func powerOfTwo(atLeast value: Int) -> Int {
            var power = 1
            while power < value { power <<= 1 }
            return power
        }
    }

    /// Why an entry was evicted.
    public typealias EvictionReason = MemoryCacheEvictionReason

    /// One evicted entry.
    public struct Eviction: Sendable {
        /// The key the entry was stored under.
        public let key: Key
        /// The value the entry held.
        public let value: Value
        /// Why the entry was evicted.
        public let reason: EvictionReason

        @usableFromInline
        init(key: Key, value: Value, reason: EvictionReason) {
            self.key = key
            self.value = value
            self.reason = reason
        }
    }

    // `@usableFromInline` with `@inlinable` get and set: a client's `MemoryCache<String, Data>`
    // is then specialised in the client's module instead of running through generic metadata
    // (measured: StorageBenchmarks "MemoryCache get hit").
    /// Retained by this cache for its whole life (released in deinit), and reached unretained
    /// (`Unmanaged`): a hit then writes no reference count that hits on other shards share.
    @usableFromInline let shards: [Unmanaged<Locked<MemoryCacheShard<Key, Value>>>]
    @usableFromInline let shardMask: Int
    /// Totals over all shards, changed only under the lock of the shard that changed.
    @usableFromInline let totalCount = Atomic<Int>(0)
    @usableFromInline let totalCostOfEntries = Atomic<Int>(0)
    @usableFromInline let countLimitValue: Atomic<Int>
    @usableFromInline let costLimitValue: Atomic<Int>
    /// Numbers sets, so trims can tell which of two entries stored in one clock tick came first.
    @usableFromInline let setSequence = Atomic<UInt64>(0)
    /// Where a set that went over the limits starts evicting in the other shards (rotates).
    @usableFromInline let nextShardToEvict = Atomic<Int>(0)
    @usableFromInline let observers = Observers<Eviction>()
    private let pressureToken: Locked<ObserverToken?> = Locked(nil)
    @usableFromInline let clock: @Sendable () -> Double
    private let ageTrim: Locked<Task<Void, Never>?> = Locked(nil)

    /// An empty cache with `configuration`'s limits; it registers with
    /// `MemoryPressureMonitor.shared` when `respondsToMemoryPressure` is set.
    public convenience init(configuration: Configuration = .init()) {
        self.init(configuration: configuration, clock: { WallClock.now() })
    }

    /// A cache whose notion of "now" (seconds since 1970) comes from `clock`; tests use it to
    /// move time without waiting.
    package init(configuration: Configuration, clock: @escaping @Sendable () -> Double) {
        self.clock = clock
        let shardCount = configuration.effectiveShardCount
        let ageLimit = max(0, configuration.ageLimit)
        shards = (0..<shardCount).map { _ in
            .passRetained(Locked(MemoryCacheShard(list: LRUList(ageLimit: ageLimit, lazyPromotion: shardCount > 1))))
        }
        shardMask = shardCount - 1
        countLimitValue = Atomic(max(0, configuration.countLimit))
        costLimitValue = Atomic(max(0, configuration.costLimit))
        restartAgeTrim(ageLimit)
        if configuration.respondsToMemoryPressure {
            let token = MemoryPressureMonitor.shared.addHandler { [weak self] level in self?.handleMemoryPressure(level) }
            pressureToken.withLock { $0 = token }
        }
    }

    deinit {
        for shard in shards { shard.release() }
        ageTrim.withLock { $0?.cancel() }
        if let token = pressureToken.withLock({ $0 }) { MemoryPressureMonitor.shared.removeHandler(token) }
    }

    /// The shard that holds `key`. High bits of the hash, so a shard's keys still spread over its
    /// dictionary's buckets.
    @inlinable
    func shard(for key: Key) -> Unmanaged<Locked<MemoryCacheShard<Key, Value>>> {
        if shardMask == 0 { return shards[0] }
        return shards[Int(truncatingIfNeeded: UInt(bitPattern: key.hashValue) >> 40) & shardMask]
    }

    /// Runs `body` under the lock of `shard`, without retaining it (the cache keeps it alive).
    @inlinable
    func withLock<R>(_ shard: Unmanaged<Locked<MemoryCacheShard<Key, Value>>>,
                     _ body: (inout MemoryCacheShard<Key, Value>) throws -> R) rethrows -> R {
        try shard._withUnsafeGuaranteedRef { try $0.withLock(body) }
    }

    // MARK: Access

    /// The value for `key`, marking it most recently used; nil when absent or expired.
    /// - Complexity: O(1); takes only the lock of the key's shard.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = clock()
        var expired: Eviction?
        let value = withLock(shard(for: key)) { shard -> Value? in
            guard let index = shard.list.index(of: key) else { return nil }
            if shard.list.isExpired(index, now: now) {
                let (key, value) = remove(at: index, from: &shard)
                expired = Eviction(key: key, value: value, reason: .expired)
                return nil
            }
            return shard.list.touch(index, now: now)
        }
        if let expired { observers.emit(expired) }
        return value
    }

    /// Stores `value` for `key` with a `cost`, evicting least recently used entries as needed.
    /// A value whose cost exceeds the cost limit is not stored, and any older value for `key` is
    /// removed (without an eviction event).
    /// - Parameters:
    ///   - value: the value.
    ///   - key: its key.
    ///   - cost: what it counts against the cost limit (bytes, say); 0 counts nothing.
    ///   - expiresAt: after this date the entry is never returned.
    /// - Returns: false when the value was refused for its cost.
    /// - Complexity: O(1) plus O(evicted).
    @inlinable @discardableResult
    public func set(_ value: Value, forKey key: Key, cost: Int = 0, expiresAt: Date? = nil) -> Bool {
        let cost = max(0, cost)
        let costLimit = costLimitValue.load(ordering: .relaxed)
        if costLimit > 0 && cost > costLimit {
            removeValue(forKey: key)
            return false
        }
        let now = clock()
        let sequence = shardMask == 0 ? 0 : setSequence.add(1, ordering: .relaxed).newValue
        let shard = shard(for: key)
        // The replaced value and the evicted ones are released after the lock, in case their
        // deinit uses this cache.
        let (replaced, evicted) = withLock(shard) { shard in
            let (count, totalCost) = (shard.list.count, shard.list.totalCost)
            let replaced = shard.list.insert(value, forKey: key, cost: cost, now: now,
                                             expires: expiresAt?.timeIntervalSince1970 ?? .infinity, sequence: sequence)
            account(count: shard.list.count - count, cost: shard.list.totalCost - totalCost)
            return (replaced, evictWhileOverLimits(from: &shard, keeping: 1))
        }
        _ = replaced
        if shardMask != 0, overLimitReason() != nil {
            emit(evicted + evictFromOtherShards(than: shard))
        } else {
            emit(evicted)
        }
        return true
    }

    /// Subscript access: reading marks the entry used; assigning nil removes it.
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue { set(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        withLock(shard(for: key)) { shard in shard.list.index(of: key).map { remove(at: $0, from: &shard).1 } }
    }

    /// Removes every entry (no eviction events: nothing was evicted).
    public func removeAll() {
        for shard in shards {
            let old = withLock(shard) { shard in
                account(count: -shard.list.count, cost: -shard.list.totalCost)
                return shard.list.removeAll()
            }
            _ = old // released here, outside the lock
        }
    }

    /// Whether a live entry exists for `key`, without marking it used.
    public func contains(_ key: Key) -> Bool {
        let now = clock()
        return withLock(shard(for: key)) { shard in shard.list.index(of: key).map { !shard.list.isExpired($0, now: now) } ?? false }
    }

    // MARK: Limits and trims

    /// The number of entries held, expired ones not yet evicted included.
    public var count: Int { totalCount.load(ordering: .relaxed) }
    /// The sum of the costs of the entries held.
    public var totalCost: Int { totalCostOfEntries.load(ordering: .relaxed) }
    /// The number of shards (1: one exact LRU order).
    public var shardCount: Int { shards.count }

    /// Maximum number of entries; 0 means no limit. Lowering it evicts least recently used
    /// entries at once (reason `countLimit`); a negative value is stored as 0.
    public var countLimit: Int {
        get { countLimitValue.load(ordering: .relaxed) }
        set {
            let limit = max(0, newValue)
            countLimitValue.store(limit, ordering: .relaxed)
            emit(evictOldest(reason: .countLimit) { limit > 0 && $0.count > limit })
        }
    }

    /// Maximum total cost; 0 means no limit. Lowering it evicts least recently used entries at
    /// once (reason `costLimit`); a negative value is stored as 0.
    public var costLimit: Int {
        get { costLimitValue.load(ordering: .relaxed) }
        set {
            let limit = max(0, newValue)
            costLimitValue.store(limit, ordering: .relaxed)
            emit(evictOldest(reason: .costLimit) { limit > 0 && $0.cost > limit })
        }
    }

    /// Entries unused for this many seconds are never returned; while set, a background task
    /// evicts them every `min(ageLimit, 60)` seconds (at least every second). 0: no limit.
    public var ageLimit: TimeInterval {
        get { withLock(shards[0]) { $0.list.ageLimit } }
        set {
            let limit = max(0, newValue)
            for shard in shards { withLock(shard) { $0.list.ageLimit = limit } }
            restartAgeTrim(limit)
        }
    }

    private func restartAgeTrim(_ limit: TimeInterval) {
        ageTrim.withLock { task in
            task?.cancel()
            task = nil
            guard limit > 0 else { return }
            let period = min(max(limit, 1), 60)
            task = Task.detached(priority: .background) { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(period))
                    guard !Task.isCancelled, let cache = self else { return }
                    cache.removeExpired()
                }
            }
        }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        emit(evictOldest(reason: .trimmedToCount) { $0.count > max(0, count) })
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        emit(evictOldest(reason: .trimmedToCost) { $0.cost > max(0, cost) })
    }

    /// Evicts entries not used since `date`.
    /// - Complexity: O(evicted + shards), since each shard's list is ordered by last use.
    public func trim(toDate date: Date) {
        let cutoff = date.timeIntervalSince1970
        emit(eachShard { shard in
            evict(from: &shard, reason: .trimmedByDate) { $0.lastAccessOfLeastRecent() < cutoff }
        })
    }

    /// Evicts every entry past the age limit or its own expiry date.
    public func removeExpired() {
        let now = clock()
        emit(eachShard { shard in
            let (count, totalCost) = (shard.list.count, shard.list.totalCost)
            let evicted = shard.list.removeExpired(now: now)
            account(count: shard.list.count - count, cost: shard.list.totalCost - totalCost)
            return evicted
        })
    }

    /// Sheds entries under memory pressure: half the cost on a warning, everything when critical.
    public func handleMemoryPressure(_ level: MemoryPressureLevel) {
        switch level {
        case .normal:
            return
        case .warning:
            let target = totalCost / 2, countTarget = count / 2
            emit(evictOldest(reason: .memoryPressure) { $0.cost > target || $0.count > countTarget })
        case .critical:
            emit(eachShard { shard in evict(from: &shard, reason: .memoryPressure) { $0.count > 0 } })
        }
    }

    // MARK: Observing

    /// Calls `handler` for every eviction, after the cache's lock is released.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (Eviction) -> Void) -> ObserverToken {
        observers.add(handler)
    }

    /// Unregisters the handler that `addObserver(_:)` returned `token` for; an unknown token is
    /// ignored.
    public func removeObserver(_ token: ObserverToken) { observers.remove(token) }

    /// Every eviction from now on, as an async sequence.
    public func evictions() -> AsyncStream<Eviction> { observers.stream() }

    @usableFromInline
    func emit(_ evicted: [(Key, Value, EvictionReason)]) {
        guard !evicted.isEmpty, !observers.isEmpty else { return }
        for (key, value, reason) in evicted { observers.emit(Eviction(key: key, value: value, reason: reason)) }
    }
}

/// Why a `MemoryCache` entry was evicted.
public enum MemoryCacheEvictionReason: Sendable, Hashable {
    /// The entry count went over `countLimit`, by a set or by lowering the limit.
    case countLimit
    /// The total cost went over `costLimit`, by a set or by lowering the limit.
    case costLimit
    /// Its expiry date or the age limit passed.
    case expired
    /// `trim(toCount:)`.
    case trimmedToCount
    /// `trim(toCost:)`.
    case trimmedToCost
    /// `trim(toDate:)`.
    case trimmedByDate
    /// `handleMemoryPressure(_:)` at the warning or critical level.
    case memoryPressure
}

/// Defaults shared by every `MemoryCache`.
public enum MemoryCacheDefaults {
    /// 20% of the memory this process may use: the cgroup v2 `memory.max` when set, else
    /// physical memory. Costs are then read as bytes.
    public static let costLimit: Int = Int(min(processMemoryLimit() / 5, UInt64(Int.max)))
}
