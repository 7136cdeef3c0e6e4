
/// Runs at most one operation per key at a time and shares its result with every caller that
/// asks for the key meanwhile.
///
/// A cancelled caller stops waiting at once with `CancellationError`; the shared operation is
/// cancelled only when every caller waiting on it has been cancelled.
final class InFlightFetches<Value: Sendable>: Sendable {
    private final class Shared: Sendable {
        struct State {
            var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
            var cancelledBeforeWaiting: Set<UInt64> = []
            var nextID: UInt64 = 0
            var result: Result<Value, any Error>?
            var task: Task<Void, Never>?
        }

        let state = Locked(State())

        func reserveID() -> UInt64 { state.withLock { $0.nextID += 1; return $0.nextID } }

        func wait(id: UInt64, continuation: CheckedContinuation<Value, any Error>) {
            let immediate: Result<Value, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                if state.cancelledBeforeWaiting.remove(id) != nil { return .failure(CancellationError()) }
                state.waiters[id] = continuation
                return nil
            }
            if let immediate { continuation.resume(with: immediate) }
        }

        /// Returns true when this was the last waiter and the operation was cancelled.
        @discardableResult
        func cancel(id: UInt64) -> Bool {
            let (continuation, taskToCancel) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
                guard state.result == nil else { return (nil, nil) }
                guard let continuation = state.waiters.removeValue(forKey: id) else {
                    state.cancelledBeforeWaiting.insert(id)
                    return (nil, nil)
                }
                return (continuation, state.waiters.isEmpty ? state.task : nil)
            }
            continuation?.resume(throwing: CancellationError())
            taskToCancel?.cancel()
            return taskToCancel != nil
        }

        func finish(_ result: Result<Value, any Error>) {
            let waiters = state.withLock { state in
                state.result = result
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(with: result) }
        }
    }

    private let running: Locked<[String: Shared]> = Locked([:])

    /// The number of keys with an operation under way (for tests and metrics).
    var count: Int { running.withLock { $0.count } }

    func run(key: String, _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let (shared, isNew) = running.withLock { running -> (Shared, Bool) in
            if let existing = running[key] { return (existing, false) }
            let shared = Shared()
            running[key] = shared
            return (shared, true)
        }
        let id = shared.reserveID()
        if isNew {
            let task = Task { [weak self] in
                let result: Result<Value, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                self?.running.withLock { running in
                    if running[key] === shared { running[key] = nil }
                }
                shared.finish(result)
            }
            shared.state.withLock { $0.task = task }
            // Every caller may have been cancelled before the task existed.
            if shared.state.withLock({ $0.waiters.isEmpty && !$0.cancelledBeforeWaiting.isEmpty && $0.result == nil }) {
                task.cancel()
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                shared.wait(id: id, continuation: continuation)
            }
        } onCancel: {
            // A later caller must start afresh rather than join an operation being cancelled.
            if shared.cancel(id: id) {
                running.withLock { running in
                    if running[key] === shared { running[key] = nil }
                }
            }
        }
    }
}
