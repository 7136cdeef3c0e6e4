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
    public let channel: any Channel

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
    init(limit: Int) { self.limit = limit }
    var count: Int { current.withLock { $0 } }
    func enter() -> Bool {
        current.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }
    func leave() { current.withLock { $0 -= 1 } }
}

/// The client closed its connection before its answer was ready: nothing is sent, and metrics
/// count it under 499 (nginx's "client closed request"), apart from the server's own errors.
struct ClientGone: Error {
    static let status = 499
}

