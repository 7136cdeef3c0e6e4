import EaselSupport
import Foundation
import Synchronization

// MARK: - Shards and limits

extension MemoryCache {
    @inlinable
    func account(count: Int, cost: Int) {
        if count != 0 { totalCount.add(count, ordering: .relaxed) }
        if cost != 0 { totalCostOfEntries.add(cost, ordering: .relaxed) }
    }

    /// Removes one entry of a shard (its lock held), keeping the totals in step.
    @inlinable
    func remove(at index: Int, from shard: inout MemoryCacheShard<Key, Value>) -> (Key, Value) {
        let totalCost = shard.list.totalCost
        let removed = shard.list.remove(at: index)
        account(count: -1, cost: shard.list.totalCost - totalCost)
        return removed
    }

    /// Which limit the whole cache is over, if any.
    @inlinable
    func overLimitReason() -> EvictionReason? {
        let countLimit = countLimitValue.load(ordering: .relaxed)
        if countLimit > 0 && totalCount.load(ordering: .relaxed) > countLimit { return .countLimit }
        let costLimit = costLimitValue.load(ordering: .relaxed)
        if costLimit > 0 && totalCostOfEntries.load(ordering: .relaxed) > costLimit { return .costLimit }
        return nil
    }

    /// Evicts a shard's least recently used entries (its lock held) while the cache is over a
    /// limit, leaving at least `keeping` entries (the one just set).
    @inlinable
    func evictWhileOverLimits(from shard: inout MemoryCacheShard<Key, Value>,
                              keeping: Int) -> [(Key, Value, EvictionReason)] {
        var evicted: [(Key, Value, EvictionReason)] = []
        while shard.list.count > keeping, let reason = overLimitReason() {
            shard.list.settleTail()
            let (key, value) = remove(at: shard.list.tail, from: &shard)
            evicted.append((key, value, reason))
        }
        return evicted
    }

    /// After a set went over a limit and its own shard had nothing left to give: the other
    /// shards, starting at a rotating one.
    @usableFromInline
    func evictFromOtherShards(than excluded: Unmanaged<Locked<MemoryCacheShard<Key, Value>>>) -> [(Key, Value, EvictionReason)] {
        var evicted: [(Key, Value, EvictionReason)] = []
        let start = nextShardToEvict.add(1, ordering: .relaxed).newValue
        for step in 0..<shards.count {
            guard overLimitReason() != nil else { break }
            let shard = shards[(start &+ step) & shardMask]
            if shard.toOpaque() == excluded.toOpaque() { continue }
            evicted += withLock(shard) { evictWhileOverLimits(from: &$0, keeping: 0) }
        }
        return evicted
    }

    /// Evicts from one shard's least recently used end while `shouldEvict` holds (the list's
    /// own eviction, with the totals kept in step).
    func evict(from shard: inout MemoryCacheShard<Key, Value>, reason: EvictionReason,
               while shouldEvict: (inout LRUList<Key, Value>) -> Bool) -> [(Key, Value, EvictionReason)] {
        let (count, totalCost) = (shard.list.count, shard.list.totalCost)
        let evicted = shard.list.evict(reason: reason, while: shouldEvict)
        account(count: shard.list.count - count, cost: shard.list.totalCost - totalCost)
        return evicted
    }

    /// Evicts the least recently used entry of all shards, one at a time, while `shouldEvict`
    /// (given the cache's totals) holds. Exact when no other thread changes the cache meanwhile.
    func evictOldest(reason: EvictionReason,
                     while shouldEvict: ((count: Int, cost: Int)) -> Bool) -> [(Key, Value, EvictionReason)] {
        var evicted: [(Key, Value, EvictionReason)] = []
        while shouldEvict((count, totalCost)) {
            var oldest: Int?
            var oldestOrder: (accessed: Double, sequence: UInt64)?
            for (index, shard) in shards.enumerated() {
                guard let order = withLock(shard, { $0.list.leastRecentOrder() }) else { continue }
                if oldestOrder.map({ order < $0 }) ?? true {
                    oldest = index
                    oldestOrder = order
                }
            }
            guard let oldest else { break }
            let removed = withLock(shards[oldest]) { shard -> (Key, Value)? in
                shard.list.settleTail()
                return shard.list.tail >= 0 ? remove(at: shard.list.tail, from: &shard) : nil
            }
            if let (key, value) = removed { evicted.append((key, value, reason)) }
        }
        return evicted
    }

    /// Runs `body` on every shard under its lock and gathers what it evicted.
    func eachShard(_ body: (inout MemoryCacheShard<Key, Value>) -> [(Key, Value, EvictionReason)]) -> [(Key, Value, EvictionReason)] {
        var evicted: [(Key, Value, EvictionReason)] = []
        for shard in shards { evicted += withLock(shard) { body(&$0) } }
        return evicted
    }
}

/// One shard of a `MemoryCache`: an LRU list behind its own lock.
@usableFromInline
struct MemoryCacheShard<Key: Hashable, Value> {
    @usableFromInline var list: LRUList<Key, Value>
    /// Keeps the next shard's object header off the cache line of this shard's list, whose head
    /// and tail change on every hit (false sharing between cores).
    @usableFromInline var padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int)
        = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    @inlinable
    init(list: LRUList<Key, Value>) { self.list = list }
}
