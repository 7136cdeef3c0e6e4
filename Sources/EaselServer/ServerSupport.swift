import EaselPipeline
import EaselSupport
import EaselStorage
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The request context of the server's routes: Hummingbird's, plus the connection, so that a
/// request can notice its client leaving.
public struct EaselRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's connection (to notice the client leaving, and for its address).
    public let channel: any Channel
    /// The client's address (a traced request's span records it).
    var remoteAddress: SocketAddress? { channel.remoteAddress }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// A continuation resumed exactly once, by whichever comes first.
final class OnceContinuation: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var done = false
    }
    private let state = Locked(State())

    func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }
}

/// Counts requests being made (not served from memory); refuses past the limit.
final class Admission: WorkAdmission {
    private let current = Locked(0)
    let limit: Int
    /// Told the new count after each change (the server's queue gauge).
    private let onChange: @Sendable (Int) -> Void
    init(limit: Int, onChange: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.limit = limit
        self.onChange = onChange
    }
    var count: Int { current.withLock { $0 } }
    func enter() -> Bool {
        let entered = current.withLock { count -> Int? in
            guard count < limit else { return nil }
            count += 1
            return count
        }
        guard let entered else { return false }
        onChange(entered)
        return true
    }
    func leave() { onChange(current.withLock { count in
        count -= 1
        return count
    }) }
}

/// The client closed its connection before its answer was ready: nothing is sent, and metrics
/// count it under 499 (nginx's "client closed request"), apart from the server's own errors.
struct ClientGone: Error {
    static let status = 499
}

