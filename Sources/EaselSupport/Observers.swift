import Synchronization

/// Identifies a registered observer so it can be removed.
public struct ObserverToken: Hashable, Sendable {
    package let id: UInt64
}

/// A set of event handlers, called synchronously, in registration order, outside any cache lock.
@usableFromInline
package final class Observers<Event: Sendable>: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var handlers: [(id: UInt64, handler: @Sendable (Event) -> Void)] = []
    }

    private let state = Locked(State())
    private let count = Atomic<Int>(0)

    /// True when nobody listens, so callers can skip building events.
    @usableFromInline
    package var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    package init() {}

    package func add(_ handler: @escaping @Sendable (Event) -> Void) -> ObserverToken {
        state.withLock { state in
            state.nextID += 1
            state.handlers.append((state.nextID, handler))
            count.store(state.handlers.count, ordering: .relaxed)
            return ObserverToken(id: state.nextID)
        }
    }

    package func remove(_ token: ObserverToken) {
        // The handler is released after the lock: its captures' deinits may use these observers.
        let removed = state.withLock { state in
            let removed = state.handlers.filter { $0.id == token.id }
            state.handlers.removeAll { $0.id == token.id }
            count.store(state.handlers.count, ordering: .relaxed)
            return removed
        }
        _ = removed
    }

    @usableFromInline
    package func emit(_ event: @autoclosure () -> Event) {
        guard !isEmpty else { return }
        let handlers = state.withLock { $0.handlers.map(\.handler) }
        let event = event()
        for handler in handlers { handler(event) }
    }

    /// The events as an async sequence; the registration ends when the stream is dropped.
    package func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let token = add { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.remove(token) }
        return stream
    }
}
