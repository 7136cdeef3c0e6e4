/// The current priority of a piece of shared work (the highest of its requesters'), with one
/// observer: the stage the work is waiting in (a queue ticket, a shared fetch) follows changes.
package final class PriorityHandle<Priority: Comparable & Sendable>: Sendable {
    private struct State {
        var priority: Priority
        var observer: (@Sendable (Priority) -> Void)?
    }
    private let state: Locked<State>

    package init(_ priority: Priority) { state = Locked(State(priority: priority)) }

    package var priority: Priority { state.withLock { $0.priority } }

    package func set(_ priority: Priority) {
        let observer = state.withLock { state -> (@Sendable (Priority) -> Void)? in
            guard state.priority != priority else { return nil }
            state.priority = priority
            return state.observer
        }
        observer?(priority)
    }

    /// Makes `observer` the one told of changes (nil: nobody).
    package func observe(_ observer: (@Sendable (Priority) -> Void)?) {
        let old = state.withLock { state in
            defer { state.observer = observer }
            return state.observer
        }
        _ = old  // released outside the lock
    }
}

/// Work shared by every concurrent requester of one key — the one coordination primitive of
/// Easel (the pipeline's fetches, decodes and encodes, `TieredCache`'s fetches, the image table
/// cache's family work):
///
/// - it runs once per key at a time, and each requester gets its result;
/// - its priority is the highest of its requesters' (`PriorityHandle`), following changes;
/// - a requester that leaves (its task is cancelled, or `cancel`) gets `cancelled` at once; the
///   work is cancelled when its last requester leaves, and forgotten at once, so a later
///   requester starts afresh instead of joining it; so does one that comes after it finished;
/// - requesters may carry a tag (which output they want): the work can read the tags still
///   waiting, and requesters can be cancelled by tag.
///
/// All state sits behind one lock; continuations are resumed and tasks cancelled after it.
package final class Coalescer<Key: Hashable & Sendable, Value: Sendable, Failure: Error, Priority: Comparable & Sendable>: Sendable {
    package typealias Handle = PriorityHandle<Priority>

    private struct Waiter {
        var priority: Priority
        let tag: String
        let deliver: @Sendable (Result<Value, Failure>) -> Void
    }
    private struct Entry {
        let generation: UInt64
        var waiters: [UInt64: Waiter] = [:]
        var task: Task<Void, Never>?
        let handle: Handle
    }
    private struct State {
        var entries: [Key: Entry] = [:]
        var keys: [UInt64: Key] = [:]
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
    }
    private let state = Locked(State())
    private let cancelled: Failure
    private let lowest: Priority
    private let onStop: (@Sendable (Key, Set<String>) -> Void)?

    /// - Parameters:
    ///   - cancelled: what a requester that leaves gets.
    ///   - lowest: the priority of work with no requester left.
    ///   - onStop: told, before the leaving requesters are answered, when work is stopped because
    ///     its last requester left (with the tags of the requesters that left).
    package init(cancelled: Failure, lowest: Priority, onStop: (@Sendable (Key, Set<String>) -> Void)? = nil) {
        self.cancelled = cancelled
        self.lowest = lowest
        self.onStop = onStop
    }

    /// Work in flight.
    package var count: Int { state.withLock { $0.entries.count } }
    /// Requesters waiting.
    package var waiterCount: Int { state.withLock { $0.keys.count } }

    /// An identifier for a requester that has none of its own (unique within this coalescer;
    /// requesters that bring their own, e.g. a pipeline's request IDs, use those).
    package func makeWaiterID() -> UInt64 {
        state.withLock { state in
            state.nextWaiter &+= 1
            return state.nextWaiter | 1 << 63
        }
    }

    /// The tags of the requesters waiting for `key`'s work.
    package func tags(for key: Key) -> Set<String> {
        state.withLock { Set($0.entries[key]?.waiters.values.map(\.tag) ?? []) }
    }

    /// Joins the work for `key`, starting it with `work` if there is none; the result (or
    /// `cancelled`) arrives once, through `deliver`, on an arbitrary thread. `waiter` identifies
    /// this requester for `setPriority` and `cancel`. The requester is registered before this
    /// returns.
    package func join(key: Key, waiter: UInt64, priority: Priority, tag: String = "",
                      work: @escaping @Sendable (Handle) async -> Result<Value, Failure>,
                      deliver: @escaping @Sendable (Result<Value, Failure>) -> Void) {
        let (start, raised) = state.withLock { state -> ((UInt64, Handle)?, (Handle, Priority)?) in
            state.keys[waiter] = key
            let new = Waiter(priority: priority, tag: tag, deliver: deliver)
            if var entry = state.entries[key] {
                let before = maximum(entry)
                entry.waiters[waiter] = new
                state.entries[key] = entry
                return (nil, priority > before ? (entry.handle, priority) : nil)
            }
            state.generation += 1
            let handle = Handle(priority)
            state.entries[key] = Entry(generation: state.generation, waiters: [waiter: new], handle: handle)
            return ((state.generation, handle), nil)
        }
        if let (handle, priority) = raised { handle.set(priority) }
        if let (generation, handle) = start {
            let task = Task {
                let result = await work(handle)
                self.finish(key, generation, result)
            }
            let orphaned = state.withLock { state -> Bool in
                guard state.entries[key]?.generation == generation else { return true }
                state.entries[key]!.task = task
                return false
            }
            if orphaned { task.cancel() }
        }
    }

    /// Joins the work for `key` (see `join`) and waits for its result; cancelling the calling
    /// task makes this requester leave.
    package func value(for key: Key, waiter: UInt64, priority: Priority, tag: String = "",
                       work: @escaping @Sendable (Handle) async -> Result<Value, Failure>) async -> Result<Value, Failure> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
                join(key: key, waiter: waiter, priority: priority, tag: tag, work: work) { continuation.resume(returning: $0) }
                if Task.isCancelled { cancel(waiter: waiter) }
            }
        } onCancel: {
            cancel(waiter: waiter)
        }
    }

    private func maximum(_ entry: Entry) -> Priority { entry.waiters.values.map(\.priority).max() ?? lowest }

    private func finish(_ key: Key, _ generation: UInt64, _ result: Result<Value, Failure>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.entries[key]?.generation == generation, let entry = state.entries.removeValue(forKey: key) else { return [] }
            for id in entry.waiters.keys { state.keys.removeValue(forKey: id) }
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.deliver(result) }
    }

    /// This requester leaves: it gets `cancelled`; the work stops if nobody else waits.
    package func cancel(waiter: UInt64) {
        leave { state in
            guard let key = state.keys[waiter], state.entries[key]?.waiters[waiter] != nil else { return nil }
            return (key, [waiter])
        }
    }

    /// Every requester of `key` tagged `tag` leaves (see `cancel(waiter:)`).
    package func cancel(key: Key, tag: String) {
        leave { state in
            guard let entry = state.entries[key] else { return nil }
            return (key, entry.waiters.filter { $0.value.tag == tag }.map(\.key))
        }
    }

    private func leave(_ choose: (State) -> (Key, [UInt64])?) {
        let (removed, stopped, lowered) = state.withLock { state -> ([Waiter], (Key, Task<Void, Never>?)?, (Handle, Priority)?) in
            guard let (key, ids) = choose(state), var entry = state.entries[key], !ids.isEmpty else { return ([], nil, nil) }
            var removed: [Waiter] = []
            for id in ids {
                state.keys.removeValue(forKey: id)
                if let waiter = entry.waiters.removeValue(forKey: id) { removed.append(waiter) }
            }
            if entry.waiters.isEmpty {
                state.entries.removeValue(forKey: key)
                return (removed, (key, entry.task), nil)
            }
            state.entries[key] = entry
            return (removed, nil, (entry.handle, maximum(entry)))
        }
        if let (key, task) = stopped {
            task?.cancel()
            onStop?(key, Set(removed.map(\.tag)))
        }
        if let (handle, priority) = lowered { handle.set(priority) }
        for waiter in removed { waiter.deliver(.failure(cancelled)) }
    }

    /// Changes this requester's priority (and so maybe the work's).
    package func setPriority(waiter: UInt64, _ priority: Priority) {
        let change = state.withLock { state -> (Handle, Priority)? in
            guard let key = state.keys[waiter], var entry = state.entries[key], entry.waiters[waiter] != nil else { return nil }
            entry.waiters[waiter]!.priority = priority
            state.entries[key] = entry
            return (entry.handle, maximum(entry))
        }
        if let (handle, priority) = change { handle.set(priority) }
    }
}
