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
///
/// With a byte `budget`, each operation also names its estimated peak bytes (`cost`): it starts
/// only while the bytes of those running and its own fit in the budget, and waits otherwise, in
/// the same order (the first in order that does not fit holds those behind it: priority is
/// kept). One whose cost alone is over the budget is refused (`.overMemoryBudget`). Work that
/// continues a request already under way (its encode, once its decode is done: `continuing`)
/// goes ahead of new work of its priority, so that answers finish rather than all wait on every
/// decode.
final class WorkQueue: Sendable {
    private struct Ticket {
        var priority: ImageRequest.Priority
        let sequence: UInt64
        let cost: Int
        let continuing: Bool
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var running = 0
        /// The costs of the operations running.
        var reserved = 0
        /// The most `reserved` has been.
        var peakReserved = 0
        var waiting: [UInt64: Ticket] = [:]
        var next: UInt64 = 0

        mutating func start(cost: Int) {
            running += 1
            reserved += cost
            peakReserved = max(peakReserved, reserved)
        }
    }
    private let state = Locked(State())
    let limit: Int
    /// The most bytes the running operations' costs may add up to; nil: no budget.
    let budget: Int?
    private let rateLimiter: RateLimiter?

    /// Told how long each operation waited for its slot.
    private let onWait: (@Sendable (Duration) -> Void)?

    /// Among equal priorities: newest first (true, LIFO) or oldest first.
    private let newestFirst: Bool

    init(limit: Int, rate: (perSecond: Double, burst: Int)? = nil, newestFirst: Bool = true, budget: Int? = nil,
         onWait: (@Sendable (Duration) -> Void)? = nil) {
        precondition(limit > 0 && (budget ?? 1) > 0)
        self.limit = limit
        self.budget = budget
        self.newestFirst = newestFirst
        rateLimiter = rate.map { RateLimiter(perSecond: $0.perSecond, burst: $0.burst) }
        self.onWait = onWait
    }

    /// Operations waiting for a slot.
    var waitingCount: Int { state.withLock { $0.waiting.count } }
    var runningCount: Int { state.withLock { $0.running } }
    /// The estimated bytes of the operations running, and the most they have been.
    var reservedBytes: (now: Int, peak: Int) { state.withLock { ($0.reserved, $0.peakReserved) } }

    /// Runs `body` in a slot; waits for one (and, with a budget, for `cost` bytes) first.
    /// Throws `.cancelled` if the task is cancelled while waiting, `.overMemoryBudget` when
    /// `cost` alone is over the budget.
    func run<T: Sendable>(priority: PriorityHandle, cost: Int = 0, continuing: Bool = false,
                          _ body: () async throws(PipelineError) -> T) async throws(PipelineError) -> T {
        let start = ContinuousClock.now
        let cost = budget == nil ? 0 : max(0, cost)
        if let budget, cost > budget { throw .overMemoryBudget(needed: cost, budget: budget) }
        try await acquire(priority: priority, cost: cost, continuing: continuing)
        defer { release(cost: cost) }
        onWait?(ContinuousClock.now - start)
        if let rateLimiter { try await rateLimiter.wait() }
        return try await body()
    }

    private func acquire(priority handle: PriorityHandle, cost: Int, continuing: Bool) async throws(PipelineError) {
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
                    if mayStart(handle.priority, cost: cost, continuing: continuing, state) {
                        state.start(cost: cost)
                        return true
                    }
                    state.waiting[id] = Ticket(priority: handle.priority, sequence: id, cost: cost, continuing: continuing,
                                               continuation: continuation)
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
            // The ticket leaves; those it held back (it did not fit the budget) may start now.
            let (ticket, started) = state.withLock { state in (state.waiting.removeValue(forKey: id), drain(&state)) }
            ticket?.continuation.resume(returning: false)
            for other in started { other.continuation.resume(returning: true) }
        }
        handle.observe(nil)
        if !granted { throw .cancelled }
    }

    /// Whether work of `priority` and `cost` may start now: a free slot, its bytes within the
    /// budget and nothing of its rank or higher waiting (its priority; at equal priority,
    /// continuing work ranks first); background work only when nothing else runs or waits.
    private func mayStart(_ priority: ImageRequest.Priority, cost: Int, continuing: Bool, _ state: State) -> Bool {
        guard state.running < limit, fits(cost, state) else { return false }
        if priority == .veryLow { return state.running == 0 && state.waiting.isEmpty }
        return !state.waiting.values.contains { $0.priority > priority || ($0.priority == priority && ($0.continuing || !continuing)) }
    }

    private func fits(_ cost: Int, _ state: State) -> Bool { budget.map { state.reserved + cost <= $0 } ?? true }

    /// A waiting ticket's new priority: raised out of the background with a slot free, it
    /// starts; lowered, the tickets it held back may start before it.
    private func reprioritise(_ id: UInt64, _ priority: ImageRequest.Priority) {
        let started = state.withLock { state -> [Ticket] in
            guard state.waiting[id] != nil else { return [] }
            state.waiting[id]?.priority = priority
            return drain(&state)
        }
        for ticket in started { ticket.continuation.resume(returning: true) }
    }

    /// Ends an operation of `cost`, and starts those waiting that may start now.
    private func release(cost: Int) {
        let started = state.withLock { state -> [Ticket] in
            state.running -= 1
            state.reserved -= cost
            return drain(&state)
        }
        for ticket in started { ticket.continuation.resume(returning: true) }
    }

    /// Takes the waiting tickets that may start now, best first: while a slot is free and the
    /// best fits the budget (the first that does not fit holds the rest), background work only
    /// once nothing runs. The caller resumes them outside the lock.
    private func drain(_ state: inout State) -> [Ticket] {
        var started: [Ticket] = []
        while state.running < limit, let best = best(state.waiting), fits(best.cost, state),
              best.priority > .veryLow || state.running == 0 {
            state.waiting.removeValue(forKey: best.sequence)
            state.start(cost: best.cost)
            started.append(best)
        }
        return started
    }

    /// The waiting ticket to start next: the highest priority, then continuing work, then the
    /// newest (or oldest).
    private func best(_ waiting: [UInt64: Ticket]) -> Ticket? {
        let newestFirst = self.newestFirst
        return waiting.values.max { a, b in
            if a.priority != b.priority { return a.priority < b.priority }
            if a.continuing != b.continuing { return b.continuing }
            return newestFirst ? a.sequence < b.sequence : a.sequence > b.sequence
        }
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
