/// Work left behind to finish outside the task that started it: copies of a variant to the
/// stores it was not read from (the pipeline's work after an answer), the removal of a damaged
/// shared object. Its owner's `close()` drains it, so no such work is cut off by the clients it
/// uses shutting down.
package final class BackgroundTasks: Sendable {
    private let pending = Locked<[UInt64: Task<Void, Never>]>([:])
    private let ids = Locked<UInt64>(0)

    package init() {}

    /// Starts `work` outside the calling task (its cancellation does not reach it).
    package func run(_ work: @escaping @Sendable () async -> Void) {
        let id = ids.withLock { id in
            id += 1
            return id
        }
        // The task removes itself under the same lock it is added under, so it cannot remove
        // itself before it is added.
        // A detached task inherits no task-locals: the request's trace is carried by hand, so
        // the copies it makes after the answer are its spans, not stray traces of their own.
        let trace = Traces.carry()
        pending.withLock { pending in
            pending[id] = Task.detached { [pending = self.pending] in
                await trace.run(work)
                _ = pending.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until no work is left (work started meanwhile included).
    package func drain() async {
        while let next = pending.withLock({ $0.values.first }) { await next.value }
    }
}
