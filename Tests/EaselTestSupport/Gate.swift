import EaselSupport
import EaselStorage
import Foundation

/// Opens once; `wait` returns when it is open or throws `CancellationError` when its task is
/// cancelled first.
public final class Gate: Sendable {
    private struct State {
        var open = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var next: UInt64 = 0
    }
    private let state = Locked(State())

    public init() {}

    public func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    public func wait() async throws {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now: Bool? = state.withLock { state in
                    if state.open { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if now == true { continuation.resume() }
                if now == false { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}

