/// The storage behind `MemoryCache`: a doubly linked list kept in one array (most recently used
/// at `head`), a dictionary from key to slot, and a free list of slots. Not thread safe; each
/// shard of the cache keeps one behind its mutex.
///
/// With `lazyPromotion` (the shards of a sharded cache), a hit only stamps its entry: the list
/// is not touched, so a hit writes no memory that hits on other keys read. The stamp is honoured
/// when the entry reaches the tail: an entry used since it was placed there goes back to the
/// head instead of being evicted ("second chance"), which keeps eviction close to least recently
/// used. Without it (one shard) every hit moves its entry to the head: exact LRU order.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var accessed: Double
        /// When the entry was put where it is in the list (equal to `accessed` unless a lazy
        /// hit stamped it since).
        @usableFromInline var placed: Double
        /// Order of the set that stored the entry, among all shards: breaks ties of `accessed`
        /// (sets within one tick of the clock) when trims compare shards.
        @usableFromInline var sequence: UInt64 = 0
        @usableFromInline var expires: Double
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(key: Key?, value: Value?, cost: Int, accessed: Double, expires: Double, previous: Int, next: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessed = accessed
            self.placed = accessed
            self.expires = expires
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var nodes: [Node] = []
    @usableFromInline var free: [Int] = []
    @usableFromInline var slots: [Key: Int] = [:]
    @usableFromInline var head = -1
    @usableFromInline var tail = -1

    @usableFromInline var totalCost = 0
    @usableFromInline var ageLimit: Double
    @usableFromInline let lazyPromotion: Bool

    @inlinable
    init(ageLimit: Double, lazyPromotion: Bool = false) {
        self.ageLimit = ageLimit
        self.lazyPromotion = lazyPromotion
    }

    @inlinable
    var count: Int { slots.count }

    /// Last use of the least recently used entry (infinity when empty), after `settleTail`.
    @inlinable
    mutating func lastAccessOfLeastRecent() -> Double {
        settleTail()
        return tail < 0 ? .infinity : nodes[tail].accessed
    }

    /// The least recently used entry's last use and set order, after `settleTail`; nil when empty.
    @inlinable
    mutating func leastRecentOrder() -> (accessed: Double, sequence: UInt64)? {
        settleTail()
        return tail < 0 ? nil : (nodes[tail].accessed, nodes[tail].sequence)
    }

    /// Moves entries used since they were placed from the tail back to the head, so that the
    /// tail is an entry unused since it got there (a no-op without lazy promotion).
    @inlinable
    mutating func settleTail() {
        guard lazyPromotion else { return }
        var budget = slots.count
        while tail >= 0, budget > 0, nodes[tail].accessed > nodes[tail].placed {
            let index = tail
            unlink(index)
            pushFront(index)
            nodes[index].placed = nodes[index].accessed
            budget -= 1
        }
    }

    @inlinable
    func index(of key: Key) -> Int? { slots[key] }

    @inlinable
    func isExpired(_ index: Int, now: Double) -> Bool {
        let node = nodes[index]
        return node.expires <= now || (ageLimit > 0 && node.accessed < now - ageLimit)
    }

    /// Marks the entry used now and returns its value.
    @inlinable
    mutating func touch(_ index: Int, now: Double) -> Value? {
        if lazyPromotion {
            // Once marked as used since placed, a newer stamp changes nothing unless an age
            // limit reads it: skipping the write keeps a hot entry's line shared between cores.
            if ageLimit > 0 || nodes[index].accessed <= nodes[index].placed { nodes[index].accessed = now }
            return nodes[index].value
        }
        nodes[index].accessed = now
        nodes[index].placed = now
        if head != index {
            unlink(index)
            pushFront(index)
        }
        return nodes[index].value
    }

    @inlinable
    /// Inserts or replaces; returns the replaced value so the caller can release it outside its lock.
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, now: Double, expires: Double, sequence: UInt64 = 0) -> Value? {
        if let index = slots[key] {
            totalCost += cost - nodes[index].cost
            let old = nodes[index].value
            nodes[index].value = value
            nodes[index].cost = cost
            nodes[index].accessed = now
            nodes[index].placed = now
            nodes[index].sequence = sequence
            nodes[index].expires = expires
            if head != index {
                unlink(index)
                pushFront(index)
            }
            return old
        }
        var node = Node(key: key, value: value, cost: cost, accessed: now, expires: expires, previous: -1, next: -1)
        node.sequence = sequence
        let index: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            index = reused
        } else {
            nodes.append(node)
            index = nodes.count - 1
        }
        slots[key] = index
        totalCost += cost
        pushFront(index)
        return nil
    }

    @discardableResult
    @inlinable
    mutating func remove(at index: Int) -> (Key, Value) {
        unlink(index)
        let key = nodes[index].key!
        let value = nodes[index].value!
        nodes[index].key = nil
        nodes[index].value = nil
        totalCost -= nodes[index].cost
        slots[key] = nil
        free.append(index)
        return (key, value)
    }

    /// Empties the list and hands back the old storage (keys and values) so that it is released
    /// outside the lock.
    @inlinable
    mutating func removeAll() -> ([Key: Int], [Node]) {
        let old = (slots, nodes)
        nodes = []
        free.removeAll()
        slots = [:]
        head = -1
        tail = -1
        totalCost = 0
        return old
    }

    /// Evicts from the least recently used end while `shouldEvict` holds.
    @inlinable
    mutating func evict<Reason>(reason: Reason, while shouldEvict: (inout Self) -> Bool) -> [(Key, Value, Reason)] {
        var evicted: [(Key, Value, Reason)] = []
        while true {
            settleTail()
            guard tail >= 0, shouldEvict(&self) else { break }
            let (key, value) = remove(at: tail)
            evicted.append((key, value, reason))
        }
        return evicted
    }

    /// Removes entries past the age limit (from the old end) and entries past their own expiry.
    @inlinable
    mutating func removeExpired(now: Double) -> [(Key, Value, MemoryCacheEvictionReason)] {
        var evicted: [(Key, Value, MemoryCacheEvictionReason)] = []
        if ageLimit > 0 {
            let cutoff = now - ageLimit
            evicted = evict(reason: .expired) { $0.lastAccessOfLeastRecent() < cutoff }
        }
        var index = head
        while index >= 0 {
            let next = nodes[index].next
            if nodes[index].expires <= now {
                let (key, value) = remove(at: index)
                evicted.append((key, value, .expired))
            }
            index = next
        }
        return evicted
    }

    @inlinable
    mutating func unlink(_ index: Int) {
        let previous = nodes[index].previous, next = nodes[index].next
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
        nodes[index].previous = -1
        nodes[index].next = -1
    }

    @inlinable
    mutating func pushFront(_ index: Int) {
        nodes[index].next = head
        nodes[index].previous = -1
        if head >= 0 { nodes[head].previous = index }
        head = index
        if tail < 0 { tail = index }
    }
}
