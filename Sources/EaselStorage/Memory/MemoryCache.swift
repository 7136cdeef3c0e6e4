import Foundation

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
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public struct Configuration: Sendable {
        /// Maximum number of entries; 0 means no limit.
        public var countLimit: Int
        /// Maximum total cost; 0 means no limit. Defaults to `MemoryCache.defaultCostLimit`.
        public var costLimit: Int
        /// Entries not used for this many seconds are never returned and are trimmed. 0: none.
        public var ageLimit: TimeInterval
        /// Whether `MemoryPressureMonitor.shared` may shed this cache's entries.
        public var respondsToMemoryPressure: Bool

        public init(countLimit: Int = 0, costLimit: Int = MemoryCacheDefaults.costLimit,
                    ageLimit: TimeInterval = 0, respondsToMemoryPressure: Bool = false) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.respondsToMemoryPressure = respondsToMemoryPressure
        }
    }

    /// Why an entry was evicted.
    public typealias EvictionReason = MemoryCacheEvictionReason

    /// One evicted entry.
    public struct Eviction: Sendable {
        public let key: Key
        public let value: Value
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
    @usableFromInline let state: Locked<LRUList<Key, Value>>
    @usableFromInline let observers = Observers<Eviction>()
    private let pressureToken: Locked<ObserverToken?> = Locked(nil)
    @usableFromInline let clock: @Sendable () -> Double
    private let ageTrim: Locked<Task<Void, Never>?> = Locked(nil)

    public convenience init(configuration: Configuration = .init()) {
        self.init(configuration: configuration, clock: { Clock.now() })
    }

    /// A cache whose notion of "now" (seconds since 1970) comes from `clock`; tests use it to
    /// move time without waiting.
    package init(configuration: Configuration, clock: @escaping @Sendable () -> Double) {
        self.clock = clock
        state = Locked(LRUList(countLimit: max(0, configuration.countLimit), costLimit: max(0, configuration.costLimit),
                              ageLimit: max(0, configuration.ageLimit)))
        restartAgeTrim(max(0, configuration.ageLimit))
        if configuration.respondsToMemoryPressure {
            let token = MemoryPressureMonitor.shared.addHandler { [weak self] level in self?.handleMemoryPressure(level) }
            pressureToken.withLock { $0 = token }
        }
    }

    deinit {
        ageTrim.withLock { $0?.cancel() }
        if let token = pressureToken.withLock({ $0 }) { MemoryPressureMonitor.shared.removeHandler(token) }
    }

    // MARK: Access

    /// The value for `key`, marking it most recently used; nil when absent or expired.
    /// - Complexity: O(1).
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = clock()
        var expired: Eviction?
        let value = state.withLock { list -> Value? in
            guard let index = list.index(of: key) else { return nil }
            if list.isExpired(index, now: now) {
                let (key, value) = list.remove(at: index)
                expired = Eviction(key: key, value: value, reason: .expired)
                return nil
            }
            return list.touch(index, now: now)
        }
        if let expired { observers.emit(expired) }
        return value
    }

    /// Stores `value` for `key` with a `cost`, evicting least recently used entries as needed.
    /// - Parameters:
    ///   - expiresAt: after this date the entry is never returned.
    /// - Complexity: O(1) plus O(evicted).
    @inlinable
    public func set(_ value: Value, forKey key: Key, cost: Int = 0, expiresAt: Date? = nil) {
        let now = clock()
        // The replaced value and the evicted ones are released after the lock, in case their
        // deinit uses this cache.
        let (replaced, evicted) = state.withLock { list in
            let replaced = list.insert(value, forKey: key, cost: max(0, cost), now: now,
                                       expires: expiresAt?.timeIntervalSince1970 ?? .infinity)
            return (replaced, list.enforceLimits())
        }
        _ = replaced
        emit(evicted)
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
        state.withLock { list in list.index(of: key).map { list.remove(at: $0).1 } }
    }

    /// Removes every entry (no eviction events: nothing was evicted).
    public func removeAll() {
        let old = state.withLock { list in list.removeAll() }
        _ = old // released here, outside the lock
    }

    /// Whether a live entry exists for `key`, without marking it used.
    public func contains(_ key: Key) -> Bool {
        let now = clock()
        return state.withLock { list in list.index(of: key).map { !list.isExpired($0, now: now) } ?? false }
    }

    // MARK: Limits and trims

    public var count: Int { state.withLock { $0.count } }
    public var totalCost: Int { state.withLock { $0.totalCost } }

    public var countLimit: Int {
        get { state.withLock { $0.countLimit } }
        set { emit(state.withLock { $0.countLimit = max(0, newValue); return $0.enforceLimits() }) }
    }

    public var costLimit: Int {
        get { state.withLock { $0.costLimit } }
        set { emit(state.withLock { $0.costLimit = max(0, newValue); return $0.enforceLimits() }) }
    }

    /// Entries unused for this many seconds are never returned; while set, a background task
    /// evicts them every `min(ageLimit, 60)` seconds (at least every second). 0: no limit.
    public var ageLimit: TimeInterval {
        get { state.withLock { $0.ageLimit } }
        set {
            let limit = max(0, newValue)
            state.withLock { $0.ageLimit = limit }
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
        emit(state.withLock { $0.evict(reason: .trimmedToCount) { list in list.count > max(0, count) } })
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        emit(state.withLock { $0.evict(reason: .trimmedToCost) { list in list.totalCost > max(0, cost) } })
    }

    /// Evicts entries not used since `date`.
    /// - Complexity: O(evicted), since the list is ordered by last use.
    public func trim(toDate date: Date) {
        let cutoff = date.timeIntervalSince1970
        emit(state.withLock { $0.evict(reason: .trimmedByDate) { list in list.lastAccessOfLeastRecent < cutoff } })
    }

    /// Evicts every entry past the age limit or its own expiry date.
    public func removeExpired() {
        let now = clock()
        emit(state.withLock { $0.removeExpired(now: now) })
    }

    /// Sheds entries under memory pressure: half the cost on a warning, everything when critical.
    public func handleMemoryPressure(_ level: MemoryPressureLevel) {
        switch level {
        case .normal:
            return
        case .warning:
            emit(state.withLock { list in
                let target = list.totalCost / 2, countTarget = list.count / 2
                return list.evict(reason: .memoryPressure) { $0.totalCost > target || $0.count > countTarget }
            })
        case .critical:
            emit(state.withLock { $0.evict(reason: .memoryPressure) { $0.count > 0 } })
        }
    }

    // MARK: Observing

    /// Calls `handler` for every eviction, after the cache's lock is released.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (Eviction) -> Void) -> ObserverToken {
        observers.add(handler)
    }

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
    case countLimit
    case costLimit
    case expired
    case trimmedToCount
    case trimmedToCost
    case trimmedByDate
    case memoryPressure
}

/// Defaults shared by every `MemoryCache`.
public enum MemoryCacheDefaults {
    /// 20% of the memory this process may use: the cgroup v2 `memory.max` when set, else
    /// physical memory. Costs are then read as bytes.
    public static let costLimit: Int = Int(min(processMemoryLimit() / 5, UInt64(Int.max)))
}
