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
final class Admission: Sendable {
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

/// An `Accept` header's media ranges with their q-values (RFC 9110 §12.5.1), read as numbers:
/// `q=0`, `q=0.0` and `q=0.000` all mean "not acceptable".
struct AcceptHeader: Sendable {
    struct Range: Sendable, Equatable {
        var type: String
        var quality: Double
    }
    let ranges: [Range]

    init(_ header: String) {
        ranges = header.split(separator: ",").compactMap { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let type = parts.first?.lowercased(), !type.isEmpty else { return nil }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "q" else { continue }
                // A malformed q-value makes the range unusable rather than fully acceptable.
                guard let value = Double(pair[1]), value.isFinite else { return Range(type: type, quality: 0) }
                quality = min(1, max(0, value))
            }
            return Range(type: type, quality: quality)
        }
    }

    /// The q-value of the most specific range matching `type` (exact, `image/*`, `*/*`); 0 when
    /// none matches.
    func quality(of type: String) -> Double {
        let type = type.lowercased()
        let major = type.split(separator: "/").first.map { $0 + "/*" } ?? ""
        if let exact = ranges.last(where: { $0.type == type }) { return exact.quality }
        if let group = ranges.last(where: { $0.type == major }) { return group.quality }
        return ranges.last(where: { $0.type == "*/*" })?.quality ?? 0
    }

    /// The q-value of `type` named itself (no wildcard); 0 when it is not named.
    func explicitQuality(of type: String) -> Double {
        let type = type.lowercased()
        return ranges.last(where: { $0.type == type })?.quality ?? 0
    }

    /// True when `type` is named explicitly with a q-value above 0 (wildcards do not count:
    /// a client that says `image/*` may not decode every new format).
    func explicitlyAccepts(_ type: String) -> Bool {
        let type = type.lowercased()
        return ranges.contains { $0.type == type } && quality(of: type) > 0
    }
}
