import Foundation

/// A small, bounded pool of threads for blocking work (file I/O, SQLite).
///
/// The cooperative thread pool has one thread per core; blocking one of them with disk I/O stalls
/// every task in the process. Async storage calls hop here, block a pool thread instead, and
/// resume the caller when done.
package final class BlockingIOPool: Sendable {
    /// The pool shared by every cache in the process: four threads, or one per core if more.
    package static let shared = BlockingIOPool(threadCount: max(4, ProcessInfo.processInfo.activeProcessorCount))

    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var waiting = 0
    }

    private let queue = Locked(Queue())
    private static let consumed: @Sendable () -> Void = {}
    private let available = DispatchSemaphore(value: 0)

    package init(threadCount: Int) {
        precondition(threadCount > 0)
        for index in 0..<threadCount {
            let thread = Thread { [self] in self.workLoop() }
            thread.name = "easel.io.\(index)"
            thread.start()
        }
    }

    private func workLoop() {
        while true {
            available.wait()
            // No job is ever released inside the lock: releasing one can run a deinit that submits
            // work, which would take this lock again. The consumed slot gets a placeholder that
            // captures nothing, and `job` itself is released after the lock, once it has run.
            let job: (@Sendable () -> Void)? = queue.withLock { queue in
                guard queue.head < queue.jobs.count else { return nil }
                let job = queue.jobs[queue.head]
                queue.jobs[queue.head] = Self.consumed
                queue.head += 1
                if queue.head > 64, queue.head * 2 > queue.jobs.count {
                    queue.jobs.removeFirst(queue.head)
                    queue.head = 0
                }
                return job
            }
            job?()
        }
    }

    /// Runs `body` on a pool thread and returns its result to the awaiting task.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// `run` for a body with a typed error: the caller gets that error type back.
    package func perform<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    /// Enqueues `job` without waiting for it.
    /// With tracing on, the job runs under the submitter's span context (`Traces`).
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let job = Traces.carryingContext(job)
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }
}
