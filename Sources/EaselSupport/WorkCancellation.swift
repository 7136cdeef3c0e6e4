import Synchronization

/// Cancellation for synchronous work — decoding, processing, encoding — that runs on a pool
/// thread (`BlockingIOPool`), where `Task.isCancelled` cannot see the task waiting for it.
///
/// `BlockingIOPool.performCancellable` gives each job a `CancellationFlag`, raised when the
/// awaiting task is cancelled (its deadline passed, or its last requester left), and makes it
/// the current flag of the pool thread while the job runs. Long loops ask `isCancelled` every
/// band of rows and stop early; called from a task (a test, the CLI) it answers for that task.
///
/// ```swift
/// for y in 0..<height {
///     if y & 15 == 0, WorkCancellation.isCancelled { throw CodecError.cancelled }
///     …
/// }
/// ```
package enum WorkCancellation {
    /// Whether the work running on this thread has been cancelled.
    /// - Complexity: O(1): one thread-local read and one atomic load.
    package static var isCancelled: Bool {
        if let raw = current.value {
            return Unmanaged<CancellationFlag>.fromOpaque(raw).takeUnretainedValue().isRaised
        }
        return withUnsafeCurrentTask { $0?.isCancelled ?? false }
    }

    /// Runs `body` with `flag` as this thread's current flag (restoring the previous one).
    package static func run<T, Failure: Error>(with flag: CancellationFlag, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        let previous = current.value
        // Unretained: `flag` outlives the call (the caller holds it until `body` returns).
        current.value = Unmanaged.passUnretained(flag).toOpaque()
        defer { current.value = previous }
        return try withExtendedLifetime(flag) { () throws(Failure) -> T in try body() }
    }

    private static let current = ThreadSlot()
}

/// Raised once, when the work it belongs to is no longer wanted.
package final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    /// Checks left before the flag raises itself; -1: never (every flag but a test's).
    private let checksLeft: Atomic<Int>

    package init() { checksLeft = Atomic(-1) }

    /// A flag that raises itself at its check after `checks` checks: work that looked at it
    /// `checks` times is cancelled while under way (tests of where work checks).
    package init(raisingAfter checks: Int) { checksLeft = Atomic(max(0, checks)) }

    package var isRaised: Bool {
        if raised.load(ordering: .relaxed) { return true }
        guard checksLeft.load(ordering: .relaxed) >= 0 else { return false }
        guard checksLeft.wrappingSubtract(1, ordering: .relaxed).oldValue <= 0 else { return false }
        raise()
        return true
    }

    package func raise() { raised.store(true, ordering: .relaxed) }
}

extension BlockingIOPool {
    /// `perform` for CPU work that checks `WorkCancellation.isCancelled`: cancelling the
    /// awaiting task raises the job's flag, so a running job stops at its next check and a
    /// queued one starts already cancelled. The caller still gets the job's own result (its
    /// cancellation error, or its value if it finished first).
    package func performCancellable<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let flag = CancellationFlag()
        if Task.isCancelled { flag.raise() }
        let result: Result<T, Failure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                submit { continuation.resume(returning: Result { () throws(Failure) -> T in try WorkCancellation.run(with: flag, body) }) }
            }
        } onCancel: {
            flag.raise()
        }
        return try result.get()
    }
}
