/// The storage behind `MemoryCache`: a doubly linked list kept in one array (most recently used
/// at `head`), a dictionary from key to slot, and a free list of slots. Not thread safe; the
/// cache keeps it behind a mutex.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var accessed: Double
        @usableFromInline var expires: Double
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(key: Key?, value: Value?, cost: Int, accessed: Double, expires: Double, previous: Int, next: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessed = accessed
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

    @inlinable
    init(ageLimit: Double) {
        self.ageLimit = ageLimit
    }

    @inlinable
    var count: Int { slots.count }

    /// Last use of the least recently used entry (infinity when empty).
    @inlinable
    var lastAccessOfLeastRecent: Double { tail < 0 ? .infinity : nodes[tail].accessed }

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
        nodes[index].accessed = now
        if head != index {
            unlink(index)
            pushFront(index)
        }
        return nodes[index].value
    }

    @inlinable
    /// Inserts or replaces; returns the replaced value so the caller can release it outside its lock.
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, now: Double, expires: Double) -> Value? {
        if let index = slots[key] {
            totalCost += cost - nodes[index].cost
            let old = nodes[index].value
            nodes[index].value = value
            nodes[index].cost = cost
            nodes[index].accessed = now
            nodes[index].expires = expires
            if head != index {
                unlink(index)
                pushFront(index)
            }
            return old
        }
        let node = Node(key: key, value: value, cost: cost, accessed: now, expires: expires, previous: -1, next: -1)
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
    mutating func evict<Reason>(reason: Reason, while shouldEvict: (Self) -> Bool) -> [(Key, Value, Reason)] {
        var evicted: [(Key, Value, Reason)] = []
        while tail >= 0, shouldEvict(self) {
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
            evicted = evict(reason: .expired) { $0.lastAccessOfLeastRecent < cutoff }
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
