import AsyncHTTPClient
import EaselSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Carries a purge beyond this instance: to every peer (the same `DELETE`, with the admin token
/// and `X-Easel-Purge-Relay: 1`, so that a peer purges its own tiers and relays no further), and
/// as a `BAN` to each CDN URL, naming the source's surrogate key.
///
/// Bound: each peer gets up to three tries of at most two seconds each, 0.1 s and 0.3 s apart,
/// all peers at once, so a purge is answered within about 6.5 s; every peer that answered has
/// removed the source from its memory, tables and disk before that answer. A peer that did not
/// answer is named in the purge's answer (202 Accepted, header `Easel-Purge-Unreached`), and the
/// relay keeps trying it in the background every `retryInterval` (5 s) for `retryHorizon`
/// (15 minutes): a peer that was down or restarting gets the purge within 5 s of coming back,
/// before its disk can serve the purged image for long. At most `maximumPending` (1,000) relays
/// wait; past it the oldest is dropped with a log line.
final class PurgeRelay: Sendable {
    static let relayHeader = "X-Easel-Purge-Relay"
    static let surrogateHeader = "Surrogate-Key"

    let peers: [String]
    let banURLs: [String]
    private let token: String
    private let client: HTTPClient
    private let logger = Logger(label: "easel.purge")
    static let attemptTimeout: TimeAmount = .seconds(2)
    static let pauses: [Duration] = [.milliseconds(100), .milliseconds(300)]

    static let retryInterval: Duration = .seconds(5)
    static let retryHorizon: Duration = .seconds(15 * 60)
    static let maximumPending = 1_000

    /// Relays that failed, by peer URL + path, with when they gave up; retried in the background.
    private struct Pending {
        var relays: [String: (url: String, until: ContinuousClock.Instant)] = [:]
        var order: [String] = []
        var retrying: Task<Void, Never>?
        var closed = false
    }
    private let pending = Locked(Pending())

    init(peers: [String], banURLs: [String], token: String) {
        self.peers = peers.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.banURLs = banURLs
        self.token = token
        client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(1))))
    }

    func shutdown() async {
        let task = pending.withLock { state in
            state.closed = true
            return state.retrying
        }
        task?.cancel()
        await task?.value
        try? await client.shutdown()
    }

    /// Relays not yet delivered (for tests and logs).
    var pendingCount: Int { pending.withLock { $0.relays.count } }

    /// Keeps trying a relay that failed, in the background (see the type's comment).
    private func retryLater(_ url: String) {
        pending.withLock { state in
            guard !state.closed else { return }
            if state.relays[url] == nil {
                state.order.append(url)
                if state.order.count > Self.maximumPending {
                    let dropped = state.order.removeFirst()
                    state.relays[dropped] = nil
                    logger.error("too many purges waiting for peers: dropped one", metadata: ["url": "\(dropped)"])
                }
            }
            state.relays[url] = (url, ContinuousClock.now + Self.retryHorizon)
            if state.retrying == nil { state.retrying = Task { [self] in await retryLoop() } }
        }
    }

    /// Every `retryInterval`, one try of each waiting relay; ends (under the lock, so that a
    /// relay added meanwhile starts a new loop) when none is left or on shutdown.
    private func retryLoop() async {
        while true {
            try? await Task.sleep(for: Self.retryInterval)
            let due = pending.withLock { state -> [(url: String, until: ContinuousClock.Instant)]? in
                if state.closed || state.relays.isEmpty {
                    state.retrying = nil
                    return nil
                }
                return state.order.compactMap { state.relays[$0] }
            }
            guard let due else { return }
            for (url, until) in due {
                let delivered = await send(.DELETE, to: url, headers: [("Authorization", "Bearer " + token), (Self.relayHeader, "1")],
                                           attempts: 1)
                let expired = ContinuousClock.now > until
                guard delivered || expired else { continue }
                if delivered { logger.info("purge relayed after a retry", metadata: ["url": "\(url)"]) }
                else { logger.error("gave up relaying a purge", metadata: ["url": "\(url)"]) }
                pending.withLock { state in
                    state.relays[url] = nil
                    state.order.removeAll { $0 == url }
                }
            }
        }
    }

    /// Relays `DELETE path` to every peer and bans `surrogateKey` in every CDN; returns what could
    /// not be reached.
    func relay(path: String, surrogateKey: String) async -> [String] {
        await withTaskGroup(of: String?.self) { group in
            for peer in peers {
                group.addTask {
                    let delivered = await self.send(.DELETE, to: peer + path, headers: [
                        ("Authorization", "Bearer " + self.token), (Self.relayHeader, "1")])
                    if !delivered { self.retryLater(peer + path) }
                    return delivered ? nil : peer
                }
            }
            for url in banURLs {
                group.addTask {
                    await self.send(.init(rawValue: "BAN"), to: url, headers: [(Self.surrogateHeader, surrogateKey)]) ? nil : url
                }
            }
            var unreached: [String] = []
            for await failed in group { if let failed { unreached.append(failed) } }
            return unreached.sorted()
        }
    }

    /// True once a 2xx comes back (404 from a peer is not success: it does not serve that route).
    private func send(_ method: HTTPMethod, to url: String, headers: [(String, String)], attempts: Int = pauses.count + 1) async -> Bool {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        for attempt in 0..<attempts {
            if attempt > 0 { try? await Task.sleep(for: Self.pauses[attempt - 1]) }
            do {
                let response = try await client.execute(request, timeout: Self.attemptTimeout)
                _ = try? await response.body.collect(upTo: 64 << 10)
                if (200..<300).contains(response.status.code) { return true }
                logger.warning("purge relay refused", metadata: ["url": "\(url)", "status": "\(response.status.code)"])
                if (400..<500).contains(response.status.code) { return false }  // a wrong token or route: retrying will not help
            } catch {
                logger.warning("purge relay failed", metadata: ["url": "\(url)", "attempt": "\(attempt + 1)", "error": "\(error)"])
            }
        }
        return false
    }

    /// The surrogate key of a source identity: `easel-` and 16 hex digits of its checksum. One
    /// token per source, the same on every instance.
    static func surrogateKey(forSource source: String) -> String {
        let value = Checksum.compute(Array(source.utf8))
        let hex = String(value, radix: 16)
        return "easel-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
