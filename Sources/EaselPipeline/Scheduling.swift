import EaselSupport
import EaselStorage
import Foundation

/// The priority of shared pipeline work (see `EaselSupport.PriorityHandle`).
package typealias PriorityHandle = EaselSupport.PriorityHandle<ImageRequest.Priority>

/// The pipeline's shared work: `EaselSupport.Coalescer` with pipeline errors and priorities.
package typealias WorkCoalescer<Key: Hashable & Sendable, Value: Sendable> = Coalescer<Key, Value, PipelineError, ImageRequest.Priority>

extension Coalescer where Failure == PipelineError, Priority == ImageRequest.Priority {
    /// Requesters that leave get `.cancelled`.
    package convenience init() { self.init(cancelled: .cancelled, lowest: .veryLow) }
}

/// Runs at most `limit` operations at once. Waiting operations start by priority, and among
/// equal priorities the most recently queued first (LIFO: the rows a user scrolled to last).
/// An optional rate limit spaces the starts.
///
/// Background work (`.veryLow`: a family's formats after an answer) starts only when nothing
/// else runs or waits, so that under load it never takes a core an answer needs; raised to a
/// higher priority while it waits (a request joined it), it starts like any other.
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
                    if Self.mayStart(handle.priority, state, limit: limit) {
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
                handle.observe { [weak self] priority in self?.reprioritise(id, priority) }
                // A change made before the observer was registered.
                reprioritise(id, handle.priority)
            }
        } onCancel: {
            let ticket = state.withLock { $0.waiting.removeValue(forKey: id) }
            ticket?.continuation.resume(returning: false)
        }
        handle.observe(nil)
        if !granted { throw .cancelled }
    }

    /// Whether work of `priority` may start now: a free slot and nothing of its priority or
    /// higher waiting; background work only when nothing else runs or waits.
    private static func mayStart(_ priority: ImageRequest.Priority, _ state: State, limit: Int) -> Bool {
        guard state.running < limit else { return false }
        if priority == .veryLow { return state.running == 0 && state.waiting.isEmpty }
        return !state.waiting.values.contains { $0.priority >= priority }
    }

    /// A waiting ticket's new priority; raised out of the background with a slot free, it starts.
    private func reprioritise(_ id: UInt64, _ priority: ImageRequest.Priority) {
        let started = state.withLock { state -> Ticket? in
            guard var ticket = state.waiting.removeValue(forKey: id) else { return nil }
            ticket.priority = priority
            if priority > .veryLow, Self.mayStart(priority, state, limit: limit) {
                state.running += 1
                return ticket
            }
            state.waiting[id] = ticket
            return nil
        }
        started?.continuation.resume(returning: true)
    }

    private func release() {
        let next = state.withLock { state -> Ticket? in
            let newestFirst = self.newestFirst
            guard let best = state.waiting.max(by: { a, b in
                if a.value.priority != b.value.priority { return a.value.priority < b.value.priority }
                return newestFirst ? a.value.sequence < b.value.sequence : a.value.sequence > b.value.sequence
            }), best.value.priority > .veryLow || state.running == 1 else {
                // (Background work waits for the last running operation to end.)
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

/// Runs `body` within a request's bounds (`withTimeLimit`, one task group): it fails with
/// `.timedOut` once `deadline` has passed, and with `.cancelled` as soon as `abandonWhen` returns
/// (a client that left); either way `body` is cancelled. Without either bound, `body` runs as it is.
package func bounded<T: Sendable>(by deadline: Duration?, abandonWhen: (@Sendable () async -> Void)? = nil,
                                  _ body: @escaping @Sendable () async throws(PipelineError) -> T) async throws(PipelineError) -> T {
    try await withTimeLimit(deadline, timedOut: .timedOut(seconds: deadline?.seconds ?? 0), cancelled: .cancelled,
                            abandonWhen: abandonWhen, body)
}
