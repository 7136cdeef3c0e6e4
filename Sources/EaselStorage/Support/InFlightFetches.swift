import EaselSupport
/// Runs at most one operation per key at a time and shares its result with every caller that
/// asks for the key meanwhile.
///
/// - A caller that is cancelled stops waiting at once, with `CancellationError`.
/// - The operation is cancelled only when every caller waiting on it has been cancelled; it is
///   then forgotten at once, so a later caller starts a fresh one instead of joining it.
/// - A caller that joins after the operation finished (but before it was forgotten) starts a
///   fresh one too.
///
/// All state sits behind one lock; continuations are resumed and tasks cancelled after it is
/// released.
final class InFlightFetches<Value: Sendable>: Sendable {
    private struct Operation {
        var key: CacheKey
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        /// Callers that joined and have not yet been answered or cancelled.
        var live = 0
        /// Callers cancelled before they started waiting.
        var cancelledEarly: Set<UInt64> = []
        var result: Result<Value, any Error>?
        var cancelled = false
        var task: Task<Void, Never>?
    }

    private struct State {
        var current: [CacheKey: UInt64] = [:]
        var operations: [UInt64: Operation] = [:]
        var nextID: UInt64 = 0

        mutating func forgetIfDone(_ generation: UInt64) {
            guard let operation = operations[generation], operation.live == 0,
                  operation.result != nil || operation.cancelled else { return }
            operations[generation] = nil
        }
    }

    private let state = Locked(State())

    /// The number of keys with an operation under way (for tests and metrics).
    var count: Int { state.withLock { $0.current.count } }

    func run(key: CacheKey, _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let (caller, generation, isNew) = state.withLock { state -> (UInt64, UInt64, Bool) in
            state.nextID += 1
            let caller = state.nextID
            if let generation = state.current[key], let existing = state.operations[generation],
               existing.result == nil, !existing.cancelled {
                state.operations[generation]!.live += 1
                return (caller, generation, false)
            }
            state.operations[caller] = Operation(key: key, live: 1)
            state.current[key] = caller
            return (caller, caller, true)
        }
        if isNew {
            let task = Task { [weak self] in
                let result: Result<Value, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                self?.finish(generation, with: result)
            }
            let cancelledAlready = state.withLock { state -> Bool in
                guard state.operations[generation]?.cancelled == false else { return true }
                state.operations[generation]!.task = task
                return false
            }
            if cancelledAlready { task.cancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = state.withLock { state -> Result<Value, any Error>? in
                    guard var operation = state.operations[generation] else { return .failure(CancellationError()) }
                    if operation.cancelledEarly.remove(caller) != nil {
                        state.operations[generation] = operation
                        state.forgetIfDone(generation)
                        return .failure(CancellationError())
                    }
                    if let result = operation.result {
                        operation.live -= 1
                        state.operations[generation] = operation
                        state.forgetIfDone(generation)
                        return result
                    }
                    operation.waiters[caller] = continuation
                    state.operations[generation] = operation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            cancel(caller: caller, generation: generation)
        }
    }

    private func cancel(caller: UInt64, generation: UInt64) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
            guard var operation = state.operations[generation], operation.result == nil else { return (nil, nil) }
            let continuation = operation.waiters.removeValue(forKey: caller)
            if continuation == nil { operation.cancelledEarly.insert(caller) }
            operation.live -= 1
            var task: Task<Void, Never>?
            if operation.live == 0 {
                operation.cancelled = true
                task = operation.task
                if state.current[operation.key] == generation { state.current[operation.key] = nil }
            }
            state.operations[generation] = operation
            return (continuation, task)
        }
        continuation?.resume(throwing: CancellationError())
        task?.cancel()
    }

    private func finish(_ generation: UInt64, with result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard var operation = state.operations[generation] else { return [] }
            if state.current[operation.key] == generation { state.current[operation.key] = nil }
            operation.result = result
            let waiters = Array(operation.waiters.values)
            operation.waiters.removeAll()
            operation.live -= waiters.count
            operation.task = nil
            state.operations[generation] = operation
            state.forgetIfDone(generation)
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
