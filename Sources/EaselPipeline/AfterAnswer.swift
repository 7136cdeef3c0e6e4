import EaselSupport

/// Work a request leaves behind once it has answered: copies of a variant to the stores it
/// was not read from (a shared tier after a local encode, the disk after a shared hit).
/// `ImagePipeline.close()` waits for it, so no copy is cut off by the stores' clients
/// shutting down.
final class AfterAnswer: Sendable {
    private let pending = Locked<[UInt64: Task<Void, Never>]>([:])
    private let ids = Locked<UInt64>(0)

    /// Starts `work` outside the calling task (its cancellation does not reach it).
    func run(_ work: @escaping @Sendable () async -> Void) {
        let id = ids.withLock { id in
            id += 1
            return id
        }
        // The task removes itself under the same lock it is added under, so it cannot remove
        // itself before it is added.
        pending.withLock { pending in
            pending[id] = Task.detached { [pending = self.pending] in
                await work()
                _ = pending.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until no work is left (work started meanwhile included).
    func drain() async {
        while let next = pending.withLock({ $0.values.first }) { await next.value }
    }
}
