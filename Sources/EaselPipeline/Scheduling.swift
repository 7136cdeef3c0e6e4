import EaselSupport
import EaselStorage
import Foundation

/// The current priority of a piece of shared work (the highest of its requesters'), with one
/// observer: the stage the work is waiting in (a queue ticket, a shared fetch) follows changes.
package final class PriorityHandle: Sendable {
    private struct State {
        var priority: ImageRequest.Priority
        var observer: (@Sendable (ImageRequest.Priority) -> Void)?
    }
    private let state: Locked<State>

    init(_ priority: ImageRequest.Priority) { state = Locked(State(priority: priority)) }

    var priority: ImageRequest.Priority { state.withLock { $0.priority } }

    func set(_ priority: ImageRequest.Priority) {
        let observer = state.withLock { state -> (@Sendable (ImageRequest.Priority) -> Void)? in
            guard state.priority != priority else { return nil }
            state.priority = priority
            return state.observer
        }
        observer?(priority)
    }

    /// Makes `observer` the one told of changes (nil: nobody).
    func observe(_ observer: (@Sendable (ImageRequest.Priority) -> Void)?) {
        let old = state.withLock { state in
            defer { state.observer = observer }
            return state.observer
        }
        _ = old  // released outside the lock
    }
}

/// Runs at most `limit` operations at once. Waiting operations start by priority, and among
/// equal priorities the most recently queued first (LIFO: the rows a user scrolled to last).
/// An optional rate limit spaces the starts.
final class WorkQueue: Sendable {
    private struct Ticket {
        var priority: ImageRequest.Priority
        let sequence: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var running = 0
        var waiting: [UInt64: Ticket] = [:]
        var next: UInt64 = 0
    }
    private let state = Locked(State())
    let limit: Int
    private let rateLimiter: RateLimiter?

    /// Told how long each operation waited for its slot.
    private let onWait: (@Sendable (Duration) -> Void)?

    /// Among equal priorities: newest first (true, LIFO) or oldest first.
    private let newestFirst: Bool

    init(limit: Int, rate: (perSecond: Double, burst: Int)? = nil, newestFirst: Bool = true,
         onWait: (@Sendable (Duration) -> Void)? = nil) {
        precondition(limit > 0)
        self.limit = limit
        self.newestFirst = newestFirst
        rateLimiter = rate.map { RateLimiter(perSecond: $0.perSecond, burst: $0.burst) }
        self.onWait = onWait
    }

    /// Operations waiting for a slot.
    var waitingCount: Int { state.withLock { $0.waiting.count } }
    var runningCount: Int { state.withLock { $0.running } }

    /// Runs `body` in a slot; waits for one first. Throws `.cancelled` if the task is cancelled
    /// while waiting.
    func run<T: Sendable>(priority: PriorityHandle,
                          _ body: () async throws(PipelineError) -> T) async throws(PipelineError) -> T {
        let start = ContinuousClock.now
        try await acquire(priority: priority)
        defer { release() }
        onWait?(ContinuousClock.now - start)
        if let rateLimiter { try await rateLimiter.wait() }
        return try await body()
    }

    private func acquire(priority handle: PriorityHandle) async throws(PipelineError) {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        // The decision to run or to wait and the ticket's insertion happen under one lock: a
        // release in between would otherwise find no ticket and lose the slot.
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.running < limit, state.waiting.isEmpty {
                        state.running += 1
                        return true
                    }
                    state.waiting[id] = Ticket(priority: handle.priority, sequence: id, continuation: continuation)
                    return nil
                }
                if let outcome {
                    continuation.resume(returning: outcome)
                    return
                }
                handle.observe { [weak self] priority in
                    self?.state.withLock { $0.waiting[id]?.priority = priority }
                }
                // A change made before the observer was registered.
                let priority = handle.priority
                state.withLock { $0.waiting[id]?.priority = priority }
            }
        } onCancel: {
            let ticket = state.withLock { $0.waiting.removeValue(forKey: id) }
            ticket?.continuation.resume(returning: false)
        }
        handle.observe(nil)
        if !granted { throw .cancelled }
    }

    private func release() {
        let next = state.withLock { state -> Ticket? in
            let newestFirst = self.newestFirst
            guard let best = state.waiting.max(by: { a, b in
                if a.value.priority != b.value.priority { return a.value.priority < b.value.priority }
                return newestFirst ? a.value.sequence < b.value.sequence : a.value.sequence > b.value.sequence
            }) else {
                state.running -= 1
                return nil
            }
            state.waiting.removeValue(forKey: best.key)
            return best.value  // the slot passes to it: `running` stays
        }
        next?.continuation.resume(returning: true)
    }
}

/// A token bucket: `burst` starts at once, then `perSecond`.
final class RateLimiter: Sendable {
    private struct State {
        var tokens: Double
        var last: ContinuousClock.Instant
    }
    private let state: Locked<State>
    private let perSecond: Double
    private let burst: Double

    init(perSecond: Double, burst: Int) {
        precondition(perSecond > 0 && perSecond.isFinite, "a download rate is a positive number per second")
        self.perSecond = perSecond
        self.burst = Double(max(1, burst))
        state = Locked(State(tokens: Double(max(1, burst)), last: .now))
    }

    func wait() async throws(PipelineError) {
        while true {
            let delay = state.withLock { state -> Double in
                let now = ContinuousClock.now
                let elapsed = now - state.last
                state.last = now
                state.tokens = min(burst, state.tokens + elapsed.seconds * perSecond)
                if state.tokens >= 1 {
                    state.tokens -= 1
                    return 0
                }
                return (1 - state.tokens) / perSecond
            }
            if delay == 0 { return }
            do { try await Task.sleep(for: .seconds(delay)) } catch { throw .cancelled }
        }
    }
}

/// Work shared by every concurrent requester of one key: it runs once, each requester gets its
/// result, its priority is the highest of theirs, and it is cancelled when the last one leaves.
package final class Coalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Waiter {
        var priority: ImageRequest.Priority
        let continuation: CheckedContinuation<Result<Value, PipelineError>, Never>
    }
    private struct Entry {
        let generation: UInt64
        var waiters: [UInt64: Waiter] = [:]
        var task: Task<Void, Never>?
        let handle: PriorityHandle
        var maximum: ImageRequest.Priority { waiters.values.map(\.priority).max() ?? .veryLow }
    }
    private struct State {
        var entries: [Key: Entry] = [:]
        var keys: [UInt64: Key] = [:]
        var generation: UInt64 = 0
    }
    private let state = Locked(State())

    package init() {}

    /// Work in flight.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Joins the work for `key`, starting it with `work` if there is none. `waiter` identifies
    /// this requester for `setPriority` and `cancel` (unique across the process).
    package func value(for key: Key, waiter: UInt64, priority: ImageRequest.Priority,
                       work: @escaping @Sendable (PriorityHandle) async -> Result<Value, PipelineError>) async -> Result<Value, PipelineError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, PipelineError>, Never>) in
                let (start, raised) = state.withLock { state -> ((UInt64, PriorityHandle)?, (PriorityHandle, ImageRequest.Priority)?) in
                    state.keys[waiter] = key
                    let new = Waiter(priority: priority, continuation: continuation)
                    if var entry = state.entries[key] {
                        let before = entry.maximum
                        entry.waiters[waiter] = new
                        state.entries[key] = entry
                        return (nil, priority > before ? (entry.handle, priority) : nil)
                    }
                    state.generation += 1
                    let handle = PriorityHandle(priority)
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
                if Task.isCancelled { cancel(waiter: waiter) }
            }
        } onCancel: {
            cancel(waiter: waiter)
        }
    }

    private func finish(_ key: Key, _ generation: UInt64, _ result: Result<Value, PipelineError>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.entries[key]?.generation == generation, let entry = state.entries.removeValue(forKey: key) else { return [] }
            for id in entry.waiters.keys { state.keys.removeValue(forKey: id) }
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: result) }
    }

    /// This requester leaves: it gets `.cancelled`; the work stops if nobody else waits.
    func cancel(waiter: UInt64) {
        let (removed, stopped, lowered) = state.withLock { state -> (Waiter?, Task<Void, Never>?, (PriorityHandle, ImageRequest.Priority)?) in
            guard let key = state.keys.removeValue(forKey: waiter), var entry = state.entries[key],
                  let removed = entry.waiters.removeValue(forKey: waiter) else { return (nil, nil, nil) }
            if entry.waiters.isEmpty {
                state.entries.removeValue(forKey: key)
                return (removed, entry.task, nil)
            }
            state.entries[key] = entry
            return (removed, nil, (entry.handle, entry.maximum))
        }
        stopped?.cancel()
        if let (handle, priority) = lowered { handle.set(priority) }
        removed?.continuation.resume(returning: .failure(.cancelled))
    }

    /// Changes this requester's priority (and so maybe the work's).
    func setPriority(waiter: UInt64, _ priority: ImageRequest.Priority) {
        let change = state.withLock { state -> (PriorityHandle, ImageRequest.Priority)? in
            guard let key = state.keys[waiter], var entry = state.entries[key], entry.waiters[waiter] != nil else { return nil }
            entry.waiters[waiter]!.priority = priority
            state.entries[key] = entry
            return (entry.handle, entry.maximum)
        }
        if let (handle, priority) = change { handle.set(priority) }
    }
}

/// Runs `body`, failing with `.timedOut` once `limit` has passed (the body is then cancelled).
package func withDeadline<T: Sendable>(_ limit: Duration,
                                       _ body: @escaping @Sendable () async throws(PipelineError) -> T) async throws(PipelineError) -> T {
    let result: Result<T, PipelineError> = await withTaskGroup(of: Result<T, PipelineError>?.self) { group in
        group.addTask {
            do throws(PipelineError) { return .success(try await body()) } catch { return .failure(error) }
        }
        group.addTask {
            do { try await Task.sleep(for: limit) } catch { return nil }  // cancelled: the body ended first
            return .failure(.timedOut(seconds: limit.seconds))
        }
        var first: Result<T, PipelineError>?
        while first == nil, let next = await group.next() { first = next }
        group.cancelAll()
        return first ?? .failure(.cancelled)
    }
    return try result.get()
}
