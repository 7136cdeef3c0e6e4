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
/// all peers at once, so the relay ends within about 6.5 s; every peer that answered has
/// removed the source from its memory, tables and disk before that answer. A peer that did not
/// answer is named in the purge's answer (202 Accepted, header `Easel-Purge-Unreached`), and the
/// relay keeps trying it in the background every `retryInterval` (5 s) for `retryHorizon`
/// (15 minutes): a peer that was down or restarting gets the purge within about 5 s of coming back,
/// before its disk can serve the purged image for long. At most `maximumPending` (1,000) relays
/// wait; past it the oldest is dropped with a log line.
final class PurgeRelay: Sendable {
    static let relayHeader = "X-Easel-Purge-Relay"
    static let surrogateHeader = "Surrogate-Key"

    let peers: [String]
    let banURLs: [String]
    /// CDN purge-by-tag endpoints (`DeliverySettings.purgeByTag`).
    let tagEndpoints: [DeliverySettings.PurgeEndpoint]
    private let token: String
    private let client: HTTPClient
    private let logger = Logger(label: "easel.purge")
    static let attemptTimeout: TimeAmount = .seconds(2)
    static let pauses: [Duration] = [.milliseconds(100), .milliseconds(300)]

    static let retryInterval: Duration = .seconds(5)
    static let retryHorizon: Duration = .seconds(15 * 60)
    static let maximumPending = 1_000

    /// Relays that could not reach their peer, by peer URL + path, with when they give up;
    /// retried in the background.
    private struct Waiting {
        var peer: String
        var url: String
        var until: ContinuousClock.Instant
    }
    private struct Pending {
        var relays: [String: Waiting] = [:]
        var order: [String] = []
        var retrying: Task<Void, Never>?
        var closed = false
    }
    private let pending = Locked(Pending())

    init(peers: [String], banURLs: [String], tagEndpoints: [DeliverySettings.PurgeEndpoint] = [], token: String) {
        self.peers = peers.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.banURLs = banURLs
        self.tagEndpoints = tagEndpoints
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

    /// Keeps trying a relay whose peer could not be reached, in the background (see the type's
    /// comment).
    private func retryLater(peer: String, url: String) {
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
            state.relays[url] = Waiting(peer: peer, url: url, until: ContinuousClock.now + Self.retryHorizon)
            // The retry loop outlives the purge that starts it: it carries no request's ID.
            if state.retrying == nil { state.retrying = RequestID.$current.withValue(nil) { Task { [self] in await retryLoop() } } }
        }
    }

    private func forget(_ url: String) {
        pending.withLock { state in
            state.relays[url] = nil
            state.order.removeAll { $0 == url }
        }
    }

    /// Every `retryInterval`: expired relays are dropped, then each peer (all at once) is tried
    /// with its oldest relay; a peer that takes it gets the rest of its relays in order, one
    /// that does not is left until the next round. Ends (under the lock, so that a relay added
    /// meanwhile starts a new loop) when none is left or on shutdown.
    private func retryLoop() async {
        while true {
            try? await Task.sleep(for: Self.retryInterval)
            guard await retryRound(endingTheLoop: true) else { return }
        }
    }

    /// One round of retries now, as the background loop makes every `retryInterval` (tests call
    /// it rather than wait for the timer). False when nothing is left or on shutdown; only the
    /// loop (`endingTheLoop`) then marks itself ended, under the lock.
    @discardableResult
    func retryRound(endingTheLoop: Bool = false) async -> Bool {
        do {
            let now = ContinuousClock.now
            let due = pending.withLock { state -> [String: [Waiting]]? in
                for url in state.order where state.relays[url].map({ now > $0.until }) ?? true {
                    state.relays[url] = nil
                    logger.error("gave up relaying a purge", metadata: ["url": "\(url)"])
                }
                state.order.removeAll { state.relays[$0] == nil }
                if state.closed || state.relays.isEmpty {
                    if endingTheLoop { state.retrying = nil }
                    return nil
                }
                return Dictionary(grouping: state.order.compactMap { state.relays[$0] }, by: \.peer)
            }
            guard let due else { return false }
            await withTaskGroup(of: Void.self) { group in
                for (_, relays) in due {
                    group.addTask { [self] in
                        for relay in relays {
                            switch await send(.DELETE, to: relay.url, headers: [("Authorization", "Bearer " + token), (Self.relayHeader, "1")],
                                              attempts: 1) {
                            case .delivered:
                                logger.info("purge relayed after a retry", metadata: ["url": "\(relay.url)"])
                                forget(relay.url)
                            case .refused:
                                forget(relay.url)  // logged by send; retrying will not help
                            case .unreachable:
                                return  // still down: its other relays wait for the next round
                            }
                        }
                    }
                }
            }
        }
        return true
    }

    /// Relays `DELETE path` to every peer, bans `surrogateKey` in every CDN and calls every
    /// purge-by-tag endpoint with it; returns what could not be reached.
    func relay(path: String, surrogateKey: String) async -> [String] {
        await withTaskGroup(of: String?.self) { group in
            for peer in peers {
                group.addTask {
                    let outcome = await self.send(.DELETE, to: peer + path, headers: [
                        ("Authorization", "Bearer " + self.token), (Self.relayHeader, "1")])
                    if outcome == .unreachable { self.retryLater(peer: peer, url: peer + path) }
                    return outcome == .delivered ? nil : peer
                }
            }
            for url in banURLs {
                group.addTask {
                    await self.send(.init(rawValue: "BAN"), to: url, headers: [(Self.surrogateHeader, surrogateKey)]) == .delivered ? nil : url
                }
            }
            for endpoint in tagEndpoints {
                group.addTask {
                    let url = endpoint.url.replacingOccurrences(of: "{tag}", with: surrogateKey)
                    let body = endpoint.body?.replacingOccurrences(of: "{tag}", with: surrogateKey)
                    return await self.send(HTTPMethod(rawValue: endpoint.method ?? "POST"), to: url,
                                           headers: (endpoint.headers ?? [:]).sorted { $0.key < $1.key }, body: body) == .delivered ? nil : endpoint.url
                }
            }
            var unreached: [String] = []
            for await failed in group { if let failed { unreached.append(failed) } }
            return unreached.sorted()
        }
    }

    private enum Outcome { case delivered, refused, unreachable }

    /// Delivered once a 2xx comes back; refused on a 4xx (a wrong token, or a peer that does not
    /// serve that route: 404 is not success, and retrying will not help); unreachable after
    /// `attempts` connection failures, timeouts or 5xx answers.
    private func send(_ method: HTTPMethod, to url: String, headers: [(String, String)], body: String? = nil,
                      attempts: Int = pauses.count + 1) async -> Outcome {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            if request.headers["Content-Type"].isEmpty { request.headers.add(name: "Content-Type", value: "application/json") }
            request.body = .bytes(ByteBuffer(string: body))
        }
        for attempt in 0..<attempts {
            if attempt > 0 { try? await Task.sleep(for: Self.pauses[attempt - 1]) }
            do {
                let response = try await client.execute(request, timeout: Self.attemptTimeout)
                _ = try? await response.body.collect(upTo: 64 << 10)
                if (200..<300).contains(response.status.code) { return .delivered }
                logger.warning("purge relay refused", metadata: ["url": "\(url)", "status": "\(response.status.code)"])
                if (400..<500).contains(response.status.code) { return .refused }
            } catch {
                logger.warning("purge relay failed", metadata: ["url": "\(url)", "attempt": "\(attempt + 1)", "error": "\(error)"])
            }
        }
        return .unreachable
    }

    /// The surrogate key of a source identity: `easel-` and 16 hex digits of its checksum. One
    /// token per source, the same on every instance.
    static func surrogateKey(forSource source: String) -> String {
        let value = Checksum.compute(Array(source.utf8))
        let hex = String(value, radix: 16)
        return "easel-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
